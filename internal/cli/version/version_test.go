package version

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/cmdtest"
)

func TestVersion(t *testing.T) {
	for _, argv := range []string{"", "--json"} {
		env := cmdtest.New(t)
		if err := cmdtest.Parse(NewCmdVersion(env.F, nil), argv); err != nil {
			t.Fatal(err)
		}
		want := "twasm version dev"
		if argv != "" {
			want = `"version":"dev"`
		}
		if !strings.Contains(env.Out.String(), want) {
			t.Fatalf("%q: got %q", argv, env.Out)
		}
	}
}

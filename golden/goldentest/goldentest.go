package goldentest

import (
	"context"
	"testing"

	"github.com/twasm/twasm/golden"
	"github.com/twasm/twasm/internal/normalize"
)

// Test runs Check as subtests of t: one per case, failing with the diff.
// Plugin tests declare their own -update flag and pass it in.
func Test(t *testing.T, dir, provider string, newInstance func() (normalize.Instance, error), update bool) {
	t.Helper()
	outs, err := golden.Check(context.Background(), dir, provider, newInstance, update)
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) == 0 {
		t.Fatalf("no golden cases in %s", dir)
	}
	for _, o := range outs {
		t.Run(o.Name, func(t *testing.T) {
			switch {
			case o.Err != nil:
				t.Fatal(o.Err)
			case o.Updated:
				t.Logf("updated %s", o.Golden)
			case o.Diff != "":
				t.Errorf("%s differs from the plugin's output (run with -update to accept, then review the diff):\n%s", o.Golden, o.Diff)
			}
		})
	}
}

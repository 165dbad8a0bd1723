package cli_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// TestJSONConvention: every --json output is JSON Lines: each line one
// compact JSON object with snake_case keys.
func TestJSONConvention(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	id := clitest.Record(t, storage, "claude", clitest.Example())
	file := clitest.TranscriptPath(storage, id)
	snake := regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	for _, args := range [][]string{
		{"ls"}, {"tree", id}, {"view", id}, {"tools", id}, {"stats", id}, {"stats", "--all"}, {"validate", file, file},
		{"version"}, {"plugins", "list"}, {"tail", id}, {"usage"}, {"usage", "--by", "session", "--breakdown"}, {"prices"},
		{"record", "--provider", "claude", "--input", clitest.Example()},
		{"import", "--provider", "claude", clitest.Example()},
	} {
		r := clitest.RunOK(t, clitest.Plain(), append(append([]string{"--storage", storage}, args...), "--json")...)
		lines := strings.Split(strings.TrimSuffix(r.Out, "\n"), "\n")
		if r.Out == "" || len(lines) == 0 {
			t.Errorf("%v: no output", args)
			continue
		}
		for _, l := range lines {
			var m map[string]json.RawMessage
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Errorf("%v: line %q is not a JSON object: %v", args, l, err)
				break
			}
			for k := range m {
				if !snake.MatchString(k) {
					t.Errorf("%v: key %q is not snake_case", args, k)
				}
			}
		}
	}
}

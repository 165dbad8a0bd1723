package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/twasm/twasm/golden"
	"github.com/twasm/twasm/internal/cli/iostreams"
	"github.com/twasm/twasm/internal/testing/cmdtest"
)

// mainResult is what one in-process run of the command line left.
type mainResult struct {
	code     int
	out, err string
}

func (r mainResult) String() string {
	return fmt.Sprintf("exit %d\nstdout: %s\nstderr: %s", r.code, r.out, r.err)
}

// runMain runs the command line in process over in-memory streams, with
// an environment of its own (HOME in a directory of the test's).
func runMain(t *testing.T, home string, args ...string) mainResult {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	vars := map[string]string{"HOME": home}
	code := Main(context.Background(), args, ios, func(k string) string { return vars[k] })
	return mainResult{code, out.String(), errOut.String()}
}

// TestReadCommandsOnGoldenRuns records every golden input of claude and
// codex (the bundled wasm plugins, in process) and runs every read
// command on every run, plain and --json: each exits 0, says something
// (tools may have no call to list), and --json is JSON Lines. What the
// commands say is pinned by their own packages' tests; this is the
// breadth of real runs, sub-agents, dangling calls and cut streams among
// them.
func TestReadCommandsOnGoldenRuns(t *testing.T) {
	for _, provider := range []string{"claude", "codex"} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			home, storage := t.TempDir(), t.TempDir()
			cases, err := golden.Cases(filepath.Join("..", "..", "testdata", "golden", provider))
			if err != nil {
				t.Fatal(err)
			}
			var ids, files, names []string
			for _, c := range cases {
				in := c.Input // what golden check feeds: no expectation, .fault file or README
				r := runMain(t, home, "--storage", storage, "record", "--provider", provider, "--json", "--input", in)
				var s struct {
					RunID      string `json:"run_id"`
					Transcript string `json:"transcript"`
				}
				if r.code != 0 || json.Unmarshal([]byte(r.out), &s) != nil || s.RunID == "" {
					t.Fatalf("record %s: %v", filepath.Base(in), r)
				}
				ids, files, names = append(ids, s.RunID), append(files, s.Transcript), append(names, filepath.Base(in))
			}
			if len(ids) == 0 {
				t.Fatalf("no golden inputs for %s", provider)
			}
			if r := runMain(t, home, append([]string{"validate", "--json"}, files...)...); r.code != 0 || !cmdtest.IsJSONLines(r.out) {
				t.Errorf("validate --json: %v", r)
			}
			if r := runMain(t, home, "--storage", storage, "stats", "--all", "--json"); r.code != 0 || !json.Valid([]byte(r.out)) {
				t.Errorf("stats --all --json: %v", r)
			}
			if r := runMain(t, home, "--storage", storage, "stats", "--all"); r.code != 0 || r.out == "" {
				t.Errorf("stats --all: %v", r)
			}
			// The commands run at once, two at a time: readers of one
			// storage share it (and the index) without a lock of theirs.
			sem := make(chan struct{}, 2)
			var wg sync.WaitGroup
			for i, id := range ids {
				for _, cmd := range []string{"tree", "view", "tools", "stats", "validate"} {
					for _, asJSON := range []bool{false, true} {
						wg.Add(1)
						go func() {
							defer wg.Done()
							sem <- struct{}{}
							defer func() { <-sem }()
							args := []string{"--storage", storage, cmd}
							if asJSON {
								args = append(args, "--json")
							}
							r := runMain(t, home, append(args, id)...)
							name := names[i]
							switch {
							case r.code != 0:
								t.Errorf("%s: %s: %v", name, strings.Join(args[2:], " "), r)
							case strings.TrimSpace(r.out) == "" && cmd != "tools":
								t.Errorf("%s: %s: empty stdout", name, strings.Join(args[2:], " "))
							case asJSON && r.out != "" && !cmdtest.IsJSONLines(r.out):
								t.Errorf("%s: %s: stdout is not JSON: %s", name, strings.Join(args[2:], " "), r.out)
							}
						}()
					}
				}
			}
			wg.Wait()
		})
	}
}

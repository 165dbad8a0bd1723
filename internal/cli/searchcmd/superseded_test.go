package searchcmd

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/testing/cmdtest"
	"github.com/twasm/twasm/internal/testing/viewstest"
	"github.com/twasm/twasm/lifecycle"
)

// TestSearchMarksSuperseded: --superseded finds the hits of the runs
// another holds again, and marks each of them, in JSON ("superseded":
// true) and in text ("(superseded)"), as serve's list marks such a run:
// a run recorded from claude's output whose session sync archived
// (views.Superseded, index.Held), a run whose end names the run that
// holds it again (the index's superseded table) and its child run. A
// hit of a run that stands is not marked, and without --superseded no
// hit is. Before, every hit of --superseded looked alike.
func TestSearchMarksSuperseded(t *testing.T) {
	recorded, synced := viewstest.RunID(0x71), viewstest.RunID(0x72)
	for _, tc := range []struct {
		argv string
		want map[string]bool // each hit's run: marked
	}{
		{"--json --every xylophone", map[string]bool{synced: false}},
		{"--json --every careful reviewer", nil}, // the fixture's root run: left out
		{"--json --every --superseded xylophone", map[string]bool{recorded: true, synced: false}},
		{"--json --every --superseded careful reviewer", map[string]bool{viewstest.Root: true}},
		{"--json --every --superseded --tool shell TODO", map[string]bool{viewstest.Child: true}},
		{"--every --superseded xylophone", map[string]bool{recorded: true, synced: false}},
		{"--every --superseded --tool shell TODO", map[string]bool{viewstest.Child: true}},
	} {
		t.Run(tc.argv, func(t *testing.T) {
			env := cmdtest.New(t)
			viewstest.WriteFile(t, filepath.Join(env.Dir, recorded+".jsonl"), viewstest.ClaudeTwice(t, recorded, "s-7", false).Bytes(t))
			viewstest.WriteFile(t, filepath.Join(env.Dir, synced+".jsonl"), viewstest.ClaudeTwice(t, synced, "s-7", true).Bytes(t))
			// The fixture's root run ends saying the synced run holds it
			// again (as a repaired archive's end does).
			root := viewstest.RootRun(t)
			evs := root.Events()
			evs[len(evs)-1].Step().Extra = map[string]json.RawMessage{lifecycle.SupersededByField: json.RawMessage(`"` + synced + `"`)}
			viewstest.WriteFile(t, filepath.Join(env.Dir, viewstest.Root+".jsonl"), root.Bytes(t))
			if err := cmdtest.Parse(NewCmdSearch(env.F, nil), tc.argv); err != nil && (tc.want != nil || !errors.Is(err, cmdutil.ErrSilent)) {
				t.Fatal(err)
			}
			got := map[string]bool{}
			if strings.HasPrefix(tc.argv, "--json") {
				for _, h := range cmdtest.JSONLines[struct {
					RunID      string `json:"run_id"`
					Superseded bool   `json:"superseded"`
				}](t, env.Out.Bytes()) {
					got[h.RunID] = got[h.RunID] || h.Superseded
				}
			} else {
				// A hit is two lines: the run's short id first.
				lines := strings.Split(strings.TrimSpace(env.Out.String()), "\n")
				for i := 0; i+1 < len(lines); i += 2 {
					for id := range tc.want {
						if strings.HasPrefix(lines[i], id[:8]+" ") {
							got[id] = got[id] || strings.Contains(lines[i], "(superseded)")
						}
					}
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("hits in runs %v, want %v:\n%s", got, tc.want, env.Out)
			}
			for id, want := range tc.want {
				if m, ok := got[id]; !ok || m != want {
					t.Errorf("run %s: found %v, marked superseded %v, want marked %v:\n%s", id, ok, m, want, env.Out)
				}
			}
		})
	}
}

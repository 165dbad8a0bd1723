package ls

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/cli/iostreams"
	"github.com/twasm/twasm/internal/testing/cmdtest"
	"github.com/twasm/twasm/internal/testing/renormtest"
	"github.com/twasm/twasm/internal/views"
)

// TestSupersededNotListed: a session recorded and rebuilt by renormalize
// is listed once, as stats and usage count it once (before, ls listed the
// original beside its rebuild), from the index and from the transcripts;
// the one listed is the rebuild unless the original's tree was written
// after it; --superseded lists both, and --children leaves out the
// superseded run's sub-agent run with it.
func TestSupersededNotListed(t *testing.T) {
	env := cmdtest.New(t)
	ctx := context.Background()
	orig := renormtest.Record(t, env, filepath.Join("..", "..", ".."))
	rebuilt := renormtest.Rebuild(t, env, orig)
	origTree, err := env.F.LoadTree(orig)
	if err != nil {
		t.Fatal(err)
	}
	origSub := origTree.Runs()[1].RunID
	file := func(id string) string { return renormtest.File(env, id) }

	ls := func(t *testing.T, digests bool, set func(*Options)) ([]views.RunSummary, string) {
		t.Helper()
		ios, _, out, errOut := iostreams.Test()
		o := &Options{IO: ios, List: env.F.ListRuns, Dir: env.F.TranscriptDir, Logger: env.F.Logger, Now: time.Now, JSON: true}
		if digests {
			o.Digests = env.F.RunDigests
		}
		set(o)
		if err := runLs(ctx, o); err != nil {
			t.Fatal(err)
		}
		var rows []views.RunSummary
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			var r views.RunSummary
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatal(err, out.String())
			}
			rows = append(rows, r)
		}
		return rows, errOut.String()
	}
	ids := func(rows []views.RunSummary) map[string]bool {
		m := map[string]bool{}
		for _, r := range rows {
			m[r.RunID] = true
		}
		return m
	}
	for _, tc := range []struct {
		name   string
		touch  string // the file written last
		listed string
		gone   string
	}{
		{"the rebuild stands for the original", rebuilt, rebuilt, orig},
		{"an original whose sub-run was written after its rebuild stands", origSub, orig, rebuilt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			later := time.Now().Add(time.Hour)
			if err := os.Chtimes(file(tc.touch), later, later); err != nil {
				t.Fatal(err)
			}
			for _, digests := range []bool{false, true} {
				rows, _ := ls(t, digests, func(*Options) {})
				if got := ids(rows); len(rows) != 1 || !got[tc.listed] {
					t.Errorf("digests %v: listed %v, want only %s", digests, got, tc.listed)
				}
				rows, _ = ls(t, digests, func(o *Options) { o.Superseded = true })
				if got := ids(rows); len(rows) != 2 || !got[orig] || !got[rebuilt] {
					t.Errorf("digests %v, --superseded: listed %v, want %s and %s", digests, got, orig, rebuilt)
				}
				rows, _ = ls(t, digests, func(o *Options) { o.Children = true })
				got := ids(rows)
				if len(rows) != 2 || !got[tc.listed] || got[tc.gone] {
					t.Errorf("digests %v, --children: listed %v, want %s and its sub-agent run only", digests, got, tc.listed)
				}
				if tc.gone == orig && got[origSub] {
					t.Errorf("digests %v, --children: the superseded original's sub-agent run %s is listed", digests, origSub)
				}
			}
		})
	}
}

package stats

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/cli/iostreams"
	"github.com/twasm/twasm/internal/testing/cmdtest"
	"github.com/twasm/twasm/internal/testing/renormtest"
	"github.com/twasm/twasm/internal/views"
)

// statsAll is what stats --all --json says of env's storage, counted
// from the index's digests or from the transcripts.
func statsAll(t *testing.T, env *cmdtest.Env, digests bool) views.Stats {
	t.Helper()
	ios, _, out, _ := iostreams.Test()
	o := &Options{IO: ios, Load: env.F.LoadTree, List: env.F.ListRuns, All: true, JSON: true}
	if digests {
		o.Digests = env.F.RunDigests
	}
	if err := runStats(t.Context(), o); err != nil {
		t.Fatal(err)
	}
	var st views.Stats
	if err := json.Unmarshal(out.Bytes(), &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestRenormalizedCountedOnce: a session recorded and then rebuilt by
// renormalize is counted once by stats --all, from the transcripts and
// from the index (before, the original and its rebuild were both
// counted: twice the runs, twice the tokens), and the one counted is the
// rebuild, unless the original or its sub-run was written after it (a
// sync that went on archiving into the original).
func TestRenormalizedCountedOnce(t *testing.T) {
	env := cmdtest.New(t)
	orig := renormtest.Record(t, env, filepath.Join("..", "..", ".."))
	once := statsAll(t, env, false)
	if once.Runs != 2 || once.SubRuns != 1 || once.UsageInAll == nil {
		t.Fatalf("one recorded session with its sub-agent: %+v", once)
	}
	rebuilt := renormtest.Rebuild(t, env, orig)
	file := func(id string) string { return renormtest.File(env, id) }
	origTree, err := env.F.LoadTree(orig)
	if err != nil {
		t.Fatal(err)
	}
	origSub := origTree.Runs()[1].RunID // the original's sub-agent run
	for _, tc := range []struct {
		name    string
		touch   string // the file written last
		counted string
	}{
		{"the rebuild stands for the original", rebuilt, rebuilt},
		// A sync that archived more into a sub-agent file's run of the
		// session: before, the rebuild stood and the growth went
		// uncounted.
		{"an original whose sub-run was written after its rebuild stands", origSub, orig},
		{"an original written after its rebuild stands", orig, orig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			later := time.Now().Add(time.Hour)
			if err := os.Chtimes(file(tc.touch), later, later); err != nil {
				t.Fatal(err)
			}
			for _, digests := range []bool{false, true} {
				st := statsAll(t, env, digests)
				a, _ := json.Marshal(st.UsageInAll)
				b, _ := json.Marshal(once.UsageInAll)
				if st.Runs != once.Runs || st.SubRuns != once.SubRuns || !bytes.Equal(a, b) || st.Superseded != 2 {
					t.Errorf("index %v: runs %d (%d sub-runs, %d left out), usage %s; want the session once: runs %d (%d), usage %s, 2 left out",
						digests, st.Runs, st.SubRuns, st.Superseded, a, once.Runs, once.SubRuns, b)
				}
			}
			ids, err := env.F.ListRuns()
			if err != nil {
				t.Fatal(err)
			}
			heads := map[string]views.RunHead{}
			for _, id := range ids {
				n, err := env.F.LoadTree(id)
				if err != nil {
					t.Fatal(err)
				}
				if n.ParentRunID == "" {
					heads[id] = views.RunHead{RunID: id, RenormalizedFrom: n.RenormalizedFrom}
				}
			}
			sup := views.Superseded(heads, views.TreeTime(func(id string) []string {
				n, err := env.F.LoadTree(id)
				if err != nil {
					t.Fatal(err)
				}
				var files []string
				for _, r := range n.Runs() {
					files = append(files, r.File)
				}
				return files
			}))
			if len(sup) != 1 || sup[tc.counted] {
				t.Errorf("superseded %v; %s should be counted", sup, tc.counted)
			}
		})
	}
}

// TestRenormalizeKilledCountedOnce: a renormalize killed while it wrote
// the rebuild (its transcript cut at any line before run.completed: the
// run.started naming the original, a step left open) leaves a rebuild
// that holds part of the session. It stands for nothing: stats --all,
// from the transcripts and from the index, counts the original, whole,
// once, and leaves the cut rebuild out. Before, the cut rebuild stood for
// the original (written after it): the session's tokens were counted
// short.
func TestRenormalizeKilledCountedOnce(t *testing.T) {
	env := cmdtest.New(t)
	orig := renormtest.Record(t, env, filepath.Join("..", "..", ".."))
	once := statsAll(t, env, false)
	want, _ := json.Marshal(once.UsageInAll)
	rebuilt := renormtest.Rebuild(t, env, orig)
	whole, err := os.ReadFile(renormtest.File(env, rebuilt))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(bytes.TrimSuffix(whole, []byte("\n")), []byte("\n"))
	// Cut after the link to the rebuilt sub-run (which the rebuild
	// writes before it begins that run), up to before run.completed.
	link := slices.IndexFunc(lines, func(l []byte) bool { return bytes.Contains(l, []byte(`"type":"step.call_workflow.started"`)) })
	if link < 0 {
		t.Fatalf("the rebuild links no sub-run:\n%s", whole)
	}
	for at := link + 1; at < len(lines); at++ {
		if err := os.WriteFile(renormtest.File(env, rebuilt), bytes.Join(lines[:at], nil), 0o600); err != nil {
			t.Fatal(err)
		}
		later := time.Now().Add(time.Duration(at) * time.Minute)
		if err := os.Chtimes(renormtest.File(env, rebuilt), later, later); err != nil {
			t.Fatal(err)
		}
		for _, digests := range []bool{false, true} {
			st := statsAll(t, env, digests)
			got, _ := json.Marshal(st.UsageInAll)
			if st.Runs != once.Runs || !bytes.Equal(got, want) {
				t.Errorf("the rebuild cut at line %d of %d (index %v): runs %d, usage %s; want the original once: runs %d, usage %s",
					at, len(lines), digests, st.Runs, got, once.Runs, want)
			}
		}
	}
}

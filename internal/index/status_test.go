package index

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/internal/journal"
	"github.com/twasm/twasm/internal/testing/viewstest"
	"github.com/twasm/twasm/internal/views"
)

// viewStatuses is each run's status as the views see it.
func viewStatuses(t *testing.T, root string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(root, "transcripts"))
	require.NoError(t, err)
	m := map[string]string{}
	for _, e := range ents {
		run, err := views.LoadFile(filepath.Join(root, "transcripts", e.Name()))
		require.NoError(t, err)
		if views.CheckTranscript(run) != nil {
			continue
		}
		m[run.ID] = views.BuildRun(run).Status
	}
	return m
}

func indexStatuses(t *testing.T, ix *Index) map[string]string {
	t.Helper()
	runs, err := ix.Runs(context.Background())
	require.NoError(t, err)
	m := map[string]string{}
	for _, r := range runs {
		m[r.RunID] = r.Status
	}
	return m
}

// The index says what the views say of every run's status (an archived
// session that may still grow: its latest part's; a run without
// run.completed otherwise: running), whether it read a file whole or in
// two pieces.
func TestRunStatusAgreesWithViews(t *testing.T) {
	for _, s := range viewstest.Storages() {
		t.Run(s.Name, func(t *testing.T) {
			root := t.TempDir()
			s.Write(t, root)
			want := viewStatuses(t, root)
			ix, _ := openUpdated(t, root)
			got := indexStatuses(t, ix)
			for id, st := range want {
				assert.Equal(t, st, got[id], "run %s read whole", id)
			}

			// Each file read again in two pieces: cut at a line in its
			// middle, indexed, then the rest appended.
			root2 := t.TempDir()
			require.NoError(t, os.MkdirAll(filepath.Join(root2, "transcripts"), 0o700))
			full := map[string][]byte{}
			ents, _ := os.ReadDir(filepath.Join(root, "transcripts"))
			for _, e := range ents {
				b, err := os.ReadFile(filepath.Join(root, "transcripts", e.Name()))
				require.NoError(t, err)
				full[e.Name()] = b
				lines := strings.SplitAfter(string(b), "\n")
				half := strings.Join(lines[:len(lines)/2], "")
				viewstest.WriteFile(t, filepath.Join(root2, "transcripts", e.Name()), []byte(half))
			}
			ix2, _ := openUpdated(t, root2)
			for name, b := range full {
				viewstest.WriteFile(t, filepath.Join(root2, "transcripts", name), b)
			}
			st, err := ix2.Check(context.Background()) // grown behind the journal's back
			require.NoError(t, err)
			if s.Name != "not transcripts" { // a file indexed at 0 bytes is read from the start
				assert.Zero(t, st.Reindexed, "grown files are read from where the index stopped")
			}
			got = indexStatuses(t, ix2)
			for id, s := range want {
				assert.Equal(t, s, got[id], "run %s read in two pieces", id)
			}
		})
	}
}

// A search by status finds an open session by its latest part's status.
func TestSearchOpenSessionByStatus(t *testing.T) {
	root := t.TempDir()
	viewstest.Storages()[2].Write(t, root) // synced sessions
	ix, _ := openUpdated(t, root)
	hits := search(t, ix, Query{Text: "prompt", Status: "incomplete", Limit: 100})
	runs := map[string]bool{}
	for _, h := range hits {
		runs[h.RunID] = true
		assert.Equal(t, "incomplete", h.RunStatus)
	}
	assert.Equal(t, map[string]bool{viewstest.RunID(2): true}, runs)
}

// Derived gives back what was computed while the file is unchanged,
// computes a changed, new or unreadable file again, and forgets runs no
// longer listed.
func TestDerived(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	viewstest.WriteStore(t, root)
	ix, _, err := Open(ctx, root)
	require.NoError(t, err)
	defer ix.Close()
	calls := map[string]int{}
	compute := func(path string) ([]byte, error) {
		calls[filepath.Base(path)]++
		b, err := os.ReadFile(path)
		if err != nil {
			return []byte("gone"), nil
		}
		return []byte{byte(len(b) % 251)}, nil
	}
	ids := []string{viewstest.Root, viewstest.Child}
	d1, st, err := ix.Derived(ctx, "k/1", ids, compute)
	require.NoError(t, err)
	assert.Equal(t, DerivedStats{Computed: 2}, st)
	d2, st, err := ix.Derived(ctx, "k/1", ids, compute)
	require.NoError(t, err)
	assert.Equal(t, DerivedStats{Cached: 2}, st)
	assert.Equal(t, d1, d2)
	// Another kind is its own cache.
	_, st, err = ix.Derived(ctx, "k/2", ids, compute)
	require.NoError(t, err)
	assert.Equal(t, 2, st.Computed)

	// Changed behind its back: computed again.
	p := filepath.Join(root, "transcripts", viewstest.Child+".jsonl")
	b, _ := os.ReadFile(p)
	viewstest.WriteFile(t, p, append(b, '\n'))
	_, st, err = ix.Derived(ctx, "k/1", ids, compute)
	require.NoError(t, err)
	assert.Equal(t, DerivedStats{Cached: 1, Computed: 1}, st)

	// A run no longer listed is dropped; one without a file is computed
	// every time (nothing to check it against).
	_, st, err = ix.Derived(ctx, "k/1", []string{viewstest.Root, viewstest.Other}, compute)
	require.NoError(t, err)
	assert.Equal(t, DerivedStats{Cached: 1, Computed: 1, Removed: 1}, st)
	_, st, err = ix.Derived(ctx, "k/1", []string{viewstest.Root, viewstest.Other}, compute)
	require.NoError(t, err)
	assert.Equal(t, DerivedStats{Cached: 1, Computed: 1}, st)

	// A compute error is returned; a cancelled context stops.
	boom := errors.New("boom")
	_, _, err = ix.Derived(ctx, "k/3", ids, func(string) ([]byte, error) { return nil, boom })
	assert.ErrorIs(t, err, boom)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, _, err = ix.Derived(cctx, "k/1", ids, compute)
	assert.Error(t, err)
}

// DerivedCurrent, after an Update, takes which files changed from the
// index (what the change journal told it) rather than a stat of each:
// a change the journal names is computed again, a run being written is
// stat'ed every time, and a change behind the journal's back is seen
// by Derived's stats (and by DerivedCurrent after `twasm index --check`).
func TestDerivedCurrent(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	dir := viewstest.WriteStore(t, root)
	ix, _, err := Open(ctx, root)
	require.NoError(t, err)
	defer ix.Close()
	compute := func(path string) ([]byte, error) {
		b, err := os.ReadFile(path)
		return []byte{byte(len(b) % 251)}, err
	}
	ids := []string{viewstest.Root, viewstest.Child}
	current := func(stage string, want DerivedStats) {
		t.Helper()
		_, err := ix.Update(ctx)
		require.NoError(t, err)
		d, st, err := ix.DerivedCurrent(ctx, "k/1", ids, compute)
		require.NoError(t, err, stage)
		assert.Equal(t, want, st, stage)
		fresh, _, err := ix.Derived(ctx, "k/2", ids, compute)
		require.NoError(t, err)
		if want.Cached == 2 && stage != "behind the journal's back" {
			assert.Equal(t, fresh, d, "%s: what the files give", stage)
		}
	}
	grow := func(id string) {
		p := filepath.Join(dir, id+".jsonl")
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		viewstest.WriteFile(t, p, append(b, '\n'))
	}
	current("first", DerivedStats{Computed: 2})
	current("unchanged", DerivedStats{Cached: 2})

	// Written through the journal: computed again.
	w, err := journal.Begin(dir, viewstest.Root)
	require.NoError(t, err)
	grow(viewstest.Root)
	require.NoError(t, w.End())
	current("journaled", DerivedStats{Cached: 1, Computed: 1})
	current("journaled, again", DerivedStats{Cached: 2})

	// Being written (an open entry, no close yet): stat'ed every time,
	// so a write after the update is seen.
	w, err = journal.Begin(dir, viewstest.Child)
	require.NoError(t, err)
	current("open", DerivedStats{Cached: 2})
	grow(viewstest.Child)
	_, st, err := ix.DerivedCurrent(ctx, "k/1", ids, compute)
	require.NoError(t, err)
	assert.Equal(t, DerivedStats{Cached: 1, Computed: 1}, st, "written while open")
	require.NoError(t, w.End())
	current("closed", DerivedStats{Cached: 2})

	// Behind the journal's back: the index, and so DerivedCurrent, does
	// not see it; Derived's stats and Check do.
	grow(viewstest.Root)
	current("behind the journal's back", DerivedStats{Cached: 2})
	_, st, err = ix.Derived(ctx, "k/1", ids, compute)
	require.NoError(t, err)
	assert.Equal(t, DerivedStats{Cached: 1, Computed: 1}, st, "Derived stats every file")
	_, err = ix.Check(ctx)
	require.NoError(t, err)
	_, st, err = ix.DerivedCurrent(ctx, "k/1", ids, compute)
	require.NoError(t, err)
	assert.Equal(t, DerivedStats{Cached: 2}, st, "after Check, the entry Derived stored is current")
}

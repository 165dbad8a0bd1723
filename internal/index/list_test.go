package index

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/internal/testing/viewstest"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// DerivedOf computes and keeps the runs asked for, and leaves the other
// runs' entries (a page of a listing is not the whole storage).
func TestDerivedOf(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	viewstest.WriteStore(t, root)
	ix, _, err := Open(ctx, root)
	require.NoError(t, err)
	defer ix.Close()
	compute := func(path string) ([]byte, error) { return []byte(filepath.Base(path)), nil }
	_, st, err := ix.Derived(ctx, "k/1", []string{viewstest.Root, viewstest.Child}, compute)
	require.NoError(t, err)
	assert.Equal(t, 2, st.Computed)
	d, st, err := ix.DerivedOf(ctx, "k/1", []string{viewstest.Child}, compute)
	require.NoError(t, err)
	assert.Equal(t, DerivedStats{Cached: 1}, st)
	assert.Equal(t, map[string][]byte{viewstest.Child: []byte(viewstest.Child + ".jsonl")}, d)
	_, st, err = ix.Derived(ctx, "k/1", []string{viewstest.Root, viewstest.Child}, compute)
	require.NoError(t, err)
	assert.Equal(t, DerivedStats{Cached: 2}, st, "the root's entry was kept")
}

// List pages newest first by a key a run added meanwhile does not
// shift, and takes a run's project from its first agent step result
// (project, else cwd: what record adds).
func TestListPages(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	dir := filepath.Join(root, "transcripts")
	write := func(id string, at time.Time, result map[string]any) {
		b := viewstest.NewBuilder(id, "")
		b.Add(viewstest.Started("r"))
		raw, _ := json.Marshal(result)
		b.Add(viewstest.Step(transcript.StepCompleted, "agent", 0, &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent, Result: raw}))
		for _, ev := range b.Events() {
			ev.Timestamp = at
		}
		viewstest.WriteFile(t, filepath.Join(dir, id+".jsonl"), b.Bytes(t))
	}
	viewstest.WriteStore(t, root)
	t0 := viewstest.T0.Add(time.Hour)
	ids := []string{"10000000-0000-4000-8000-000000000001", "10000000-0000-4000-8000-000000000002", "10000000-0000-4000-8000-000000000003"}
	write(ids[0], t0, map[string]any{"provider": "claude", "status": "ok", "cwd": "/home/me/a"})
	write(ids[1], t0, map[string]any{"provider": "claude", "status": "ok", "project": "/home/me/b", "cwd": "/home/me/b/sub"})
	write(ids[2], t0.Add(time.Minute), map[string]any{"provider": "claude", "status": "ok"})
	ix, _, err := Open(ctx, root)
	require.NoError(t, err)
	defer ix.Close()
	_, err = ix.Update(ctx)
	require.NoError(t, err)

	var got []string
	after := ""
	for {
		page, more, err := ix.List(ctx, ListQuery{After: after, Limit: 2})
		require.NoError(t, err)
		for _, r := range page {
			got = append(got, r.RunID)
		}
		if !more {
			break
		}
		after = page[len(page)-1].Cursor
		if len(got) == 2 { // a run added between two pages, newer than all
			write("10000000-0000-4000-8000-000000000009", t0.Add(time.Hour), map[string]any{"provider": "codex"})
			_, err = ix.Update(ctx)
			require.NoError(t, err)
		}
	}
	assert.Equal(t, []string{ids[2], ids[0], ids[1], viewstest.Root}, got, "newest first, ties by id, each once")

	// A child run's project is not one of the listing's.
	child := viewstest.NewBuilder("10000000-0000-4000-8000-00000000000c", ids[0])
	child.Add(viewstest.Started("c"))
	raw, _ := json.Marshal(map[string]any{"provider": "claude", "status": "ok", "cwd": "/home/me/child"})
	child.Add(viewstest.Step(transcript.StepCompleted, "agent", 0, &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent, Result: raw}))
	viewstest.WriteFile(t, filepath.Join(dir, "10000000-0000-4000-8000-00000000000c.jsonl"), child.Bytes(t))
	_, err = ix.Update(ctx)
	require.NoError(t, err)
	f, err := ix.Facets(ctx, false)
	require.NoError(t, err)
	assert.Equal(t, []string{"/home/me/a", "/home/me/b"}, f.Projects)
	projects, err := ix.Projects(ctx)
	require.NoError(t, err)
	assert.Equal(t, f.Projects, projects, "the projects sync looks in are the listing's")
	page, _, err := ix.List(ctx, ListQuery{Project: "/home/me/b"})
	require.NoError(t, err)
	require.Len(t, page, 1)
	assert.Equal(t, ids[1], page[0].RunID)
	_, _, err = ix.List(ctx, ListQuery{After: "nope"})
	assert.Error(t, err)
}

// TestSearchProject: a search by project finds the runs of the
// directories given and below them, a sub-run without a project of its
// own by its parent's, and nothing of a directory that only starts alike
// (/src/app is not /src/apple); with words and with the filter alone.
func TestSearchProject(t *testing.T) {
	root := t.TempDir()
	runs := viewstest.ProjectStorage(t, root, viewstest.T0)
	ix, _ := openUpdated(t, root)
	id := func(i int) string { return runs[i].ID }
	child := runs[3].Child
	tests := []struct {
		dirs []string
		want []string
	}{
		{[]string{"/src/app"}, []string{id(0), id(1), id(3), child}},
		{[]string{"/src/app/web"}, []string{id(1)}},
		{[]string{"/src/apple"}, []string{id(2)}},
		{[]string{"/src/ap"}, nil},
		{[]string{"/"}, []string{id(0), id(1), id(2), id(3), child}},
		{[]string{"/tmp/app", "/src/apple"}, []string{id(2)}},
	}
	for _, tc := range tests {
		for _, text := range []string{"flaky", ""} {
			hits := search(t, ix, Query{Text: text, Projects: tc.dirs, Every: true, Limit: 100})
			var got []string
			for _, h := range hits {
				if !slices.Contains(got, h.RunID) {
					got = append(got, h.RunID)
				}
			}
			slices.Sort(got)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%v %q: runs %v, want %v", tc.dirs, text, got, want)
			}
		}
	}
}

// TestListErrorsAsRead: a run's Errors (its documents whose own outcome
// is error, calls left out), counted as the index reads them, are what
// reading the whole transcript counts, when the run is read in parts
// (the count of the parts before is kept) and when it is read again
// from its start.
func TestListErrorsAsRead(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	store := recorder.NewStore(root)
	failed := func(ctx context.Context, s *lifecycle.Step, call string) error {
		if err := s.Record(ctx, &transcript.Event{Type: transcript.ToolCall, Payload: &transcript.ToolPayload{Name: "Bash", CallID: call, Fidelity: transcript.FidelityAgentEmitted}}); err != nil {
			return err
		}
		return s.Record(ctx, &transcript.Event{Type: transcript.ToolResult, Payload: &transcript.ToolPayload{Name: "Bash", CallID: call, Output: "no", Status: transcript.StatusError, Fidelity: transcript.FidelityAgentEmitted}})
	}
	run, err := lifecycle.Start(ctx, store, lifecycle.RunOptions{Name: "errors"})
	require.NoError(t, err)
	require.NoError(t, run.StepAt(ctx, "one", 0, transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
		return failed(ctx, s, "c1")
	}))
	require.NoError(t, run.Detach())
	path := filepath.Join(root, "transcripts", run.RunID()+".jsonl")
	ix, _, err := Open(ctx, root)
	require.NoError(t, err)
	defer ix.Close()
	errorsListed := func(want int) {
		t.Helper()
		listed, _, err := ix.List(ctx, ListQuery{})
		require.NoError(t, err)
		require.Len(t, listed, 1)
		scanned, err := scanErrors(path)
		require.NoError(t, err)
		assert.Equal(t, want, scanned, "the transcript's errors")
		assert.Equal(t, want, listed[0].Errors)
	}
	_, err = ix.Update(ctx)
	require.NoError(t, err)
	errorsListed(1)

	run, err = lifecycle.Attach(ctx, store, run.RunID(), lifecycle.RunOptions{})
	require.NoError(t, err)
	require.NoError(t, run.StepAt(ctx, "two", 0, transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
		return failed(ctx, s, "c2")
	}))
	require.NoError(t, run.Finish(ctx, errors.New("the build broke")))
	st, err := ix.Update(ctx)
	require.NoError(t, err)
	require.Equal(t, 0, st.Reindexed, "grown: read from where the first update stopped")
	errorsListed(3) // two failed results and the run's error

	// Read again from the start (the first line rewritten): counted anew.
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, append([]byte("\n"), b...), 0o600))
	st, err = ix.Check(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, st.Reindexed)
	errorsListed(3)
}

// TestListLeavesOutSuperseded: a run whose end says another holds it
// again (a damaged archive sync repaired) is not listed, nor its child
// run, unless asked (ListQuery.Superseded), as search leaves it out.
func TestListLeavesOutSuperseded(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	dir := filepath.Join(root, "transcripts")
	viewstest.WriteStore(t, root)
	old, repaired, child := viewstest.RunID(0x51), viewstest.RunID(0x52), viewstest.RunID(0x53)
	at := viewstest.T0.Add(time.Hour)
	write := func(id, parent string, by string) {
		b := viewstest.NewBuilder(id, parent)
		b.Add(viewstest.Started("s"))
		end := viewstest.Completed("s", "ok", "")
		if by != "" {
			raw, _ := json.Marshal(by)
			end.Payload.(*transcript.StepPayload).Extra = map[string]json.RawMessage{lifecycle.SupersededByField: raw}
		}
		b.Add(end)
		for _, ev := range b.Events() {
			ev.Timestamp = at
		}
		viewstest.WriteFile(t, filepath.Join(dir, id+".jsonl"), b.Bytes(t))
	}
	write(old, "", repaired)
	write(child, old, "")
	write(repaired, "", "")
	ix, _, err := Open(ctx, root)
	require.NoError(t, err)
	defer ix.Close()
	_, err = ix.Update(ctx)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		q    ListQuery
		want []string
	}{
		{"default", ListQuery{}, []string{repaired, viewstest.Root}},
		{"children", ListQuery{Children: true}, []string{repaired, viewstest.Root, viewstest.Child}},
		{"superseded", ListQuery{Superseded: true}, []string{old, repaired, viewstest.Root}},
		{"superseded and children", ListQuery{Superseded: true, Children: true}, []string{old, repaired, child, viewstest.Root, viewstest.Child}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page, _, err := ix.List(ctx, tc.q)
			require.NoError(t, err)
			var got []string
			for _, r := range page {
				got = append(got, r.RunID)
			}
			assert.ElementsMatch(t, tc.want, got)
		})
	}
}

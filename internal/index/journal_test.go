package index

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/internal/journal"
	"github.com/twasm/twasm/internal/testing/viewstest"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// say writes one assistant message with text in a step of run.
func say(t testing.TB, run *lifecycle.Run, step, text string) {
	t.Helper()
	require.NoError(t, run.StepAt(context.Background(), step, 0, transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
		return s.AssistantMessage(ctx, transcript.TextBlock(text))
	}))
}

// appendBehindItsBack appends a complete line to a run's transcript
// without the recorder, as a tool that keeps no journal would.
func appendBehindItsBack(t *testing.T, root, id string, seq int, text string) {
	t.Helper()
	line := fmt.Sprintf(`{"seq":%d,"run_id":"%s","type":"message.assistant","path":"x","iteration":0,"timestamp":"2026-01-01T00:00:00.000Z","payload":{"role":"assistant","blocks":[{"type":"text","fidelity":"agent_emitted","text":%q}]}}`+"\n", seq, id, text)
	f, err := os.OpenFile(filepath.Join(root, "transcripts", id+".jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(line)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// found counts the runs where word is found.
func found(t *testing.T, ix *Index, word string) int {
	t.Helper()
	runs := map[string]bool{}
	for _, h := range search(t, ix, Query{Text: word, Every: true, Limit: 1000}) {
		runs[h.RunID] = true
	}
	return len(runs)
}

// Update learns from the journal what the recorder wrote, and checks no
// other file: a line appended behind its back is found by Check alone.
func TestUpdateReadsTheJournal(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	store := recorder.NewStore(root)
	a := record(t, root, "first prompt", "first answer", "Bash", "ls", "out", false)
	ix, _ := openUpdated(t, root)

	appendBehindItsBack(t, root, a, 100, "unjournaled walrus")
	st, err := ix.Update(ctx)
	require.NoError(t, err)
	assert.Zero(t, st.Checked, "a finished run no writer named is not looked at")
	assert.Zero(t, found(t, ix, "walrus"))
	st, err = ix.Check(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Indexed)
	assert.Equal(t, 1, found(t, ix, "walrus"), "Check looks at every file")

	// A run being written is checked on every update until its writer
	// closes it: each line is found as soon as it is written.
	run, err := lifecycle.Start(ctx, store, lifecycle.RunOptions{Name: "long"})
	require.NoError(t, err)
	for i, w := range []string{"heron", "egret", "ibis"} {
		say(t, run, fmt.Sprintf("s%d", i), "the "+w)
		_, err = ix.Update(ctx)
		require.NoError(t, err)
		assert.Equal(t, 1, found(t, ix, w), "line %d of a run being written", i)
	}
	require.NoError(t, run.Finish(ctx, nil))
	_, err = ix.Update(ctx)
	require.NoError(t, err)
	assert.Empty(t, watchRows(t, ix), "the writer closed: nothing watched")
	runs, err := ix.Runs(ctx)
	require.NoError(t, err)
	assert.Len(t, runs, 2)

	// Grown by another writer later: its entries name it.
	run, err = lifecycle.Start(ctx, store, lifecycle.RunOptions{Name: "detached"})
	require.NoError(t, err)
	say(t, run, "first", "a first cormorant")
	require.NoError(t, run.Detach())
	_, err = ix.Update(ctx)
	require.NoError(t, err)
	run, err = lifecycle.Attach(ctx, store, run.RunID(), lifecycle.RunOptions{})
	require.NoError(t, err)
	say(t, run, "later", "a late pelican")
	require.NoError(t, run.Detach())
	_, err = ix.Update(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, found(t, ix, "pelican"))
	assert.Equal(t, 1, found(t, ix, "cormorant"))
}

func watchRows(t *testing.T, ix *Index) []string {
	t.Helper()
	return queryStrings(t, ix, `SELECT nonce || ' ' || run_id FROM watch`)
}

// queryStrings returns the one column of the rows q selects.
func queryStrings(t *testing.T, ix *Index, q string, args ...any) []string {
	t.Helper()
	rows, err := ix.db.Query(q, args...)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		out = append(out, s)
	}
	require.NoError(t, rows.Err())
	return out
}

// Writers racing the searches: every line a writer has written (Record
// returned) is found by a search that starts after it, new runs
// included, while other writers keep writing.
func TestUpdateWritersRacingSearch(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	store := recorder.NewStore(root)
	record(t, root, "seed", "seed", "Bash", "ls", "out", false)
	ix, _ := openUpdated(t, root)
	const writers, lines = 3, 12
	written := make(chan string)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			var run *lifecycle.Run
			for i := range lines {
				if i%4 == 0 { // a new run every few lines
					if run != nil {
						assert.NoError(t, run.Finish(ctx, nil))
					}
					var err error
					if run, err = lifecycle.Start(ctx, store, lifecycle.RunOptions{Name: "racer"}); !assert.NoError(t, err) {
						return
					}
				}
				word := fmt.Sprintf("racew%dl%dx", w, i)
				if !assert.NoError(t, run.StepAt(ctx, word, 0, transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
					return s.AssistantMessage(ctx, transcript.TextBlock(word))
				})) {
					return
				}
				written <- word
			}
			assert.NoError(t, run.Finish(ctx, nil))
		})
	}
	go func() { wg.Wait(); close(written) }()
	n := 0
	for word := range written {
		_, err := ix.Update(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, found(t, ix, word), "written before the search began: %s", word)
		n++
	}
	assert.Equal(t, writers*lines, n)
	_, err := ix.Update(ctx)
	require.NoError(t, err)
	for w := range writers {
		for i := range lines {
			assert.Equal(t, 1, found(t, ix, fmt.Sprintf("racew%dl%dx", w, i)))
		}
	}
	assert.Empty(t, watchRows(t, ix))
}

// A journal that does not continue where the index stopped (cut by a
// crash and grown again, a torn line, deleted) makes Update check every
// file: a write whose entry was lost is found.
func TestUpdateJournalNotContinued(t *testing.T) {
	tests := []struct {
		name   string
		break_ func(t *testing.T, path string)
	}{
		{"cut by a crash and grown again", func(t *testing.T, path string) {
			st, err := os.Stat(path)
			require.NoError(t, err)
			require.NoError(t, os.Truncate(path, st.Size()/2))
		}},
		{"cut to nothing", func(t *testing.T, path string) {
			require.NoError(t, os.Truncate(path, 0))
		}},
		{"a torn entry", func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			require.NoError(t, err)
			_, err = f.WriteString("o 1234")
			require.NoError(t, err)
			require.NoError(t, f.Close())
		}},
		{"deleted", func(t *testing.T, path string) {
			require.NoError(t, os.Remove(path))
		}},
		{"rewritten", func(t *testing.T, path string) {
			b, err := os.ReadFile(path) // the same entries, other nonces
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, bytes.ReplaceAll(b, []byte("\n"), []byte("z\n")), 0o600))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			root := t.TempDir()
			a := record(t, root, "one", "one", "Bash", "ls", "out", false)
			for range 3 {
				record(t, root, "more", "more", "Bash", "ls", "out", false)
			}
			ix, _ := openUpdated(t, root)
			tc.break_(t, journal.Path(filepath.Join(root, "transcripts")))
			appendBehindItsBack(t, root, a, 100, "lost kittiwake")
			// Writers go on: the journal grows past where the index stopped.
			for range 3 {
				record(t, root, "after", "after", "Bash", "ls", "out", false)
			}
			st, err := ix.Update(ctx)
			require.NoError(t, err)
			assert.Equal(t, 1, found(t, ix, "kittiwake"), "the write whose entry was lost")
			assert.Equal(t, 3, found(t, ix, "after"))
			assert.Equal(t, 7, st.Runs, "every file checked")
			st, err = ix.Update(ctx)
			require.NoError(t, err)
			assert.Zero(t, st.Checked, "the journal is continued again: %v", watchRows(t, ix))
		})
	}
}

// Transcripts an older twasm wrote, which keeps no journal: a storage
// with none is checked whole; a new run added to a storage with one is
// found by the listing, and watched while it grows unfinished.
func TestUpdateTranscriptsWithoutJournal(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	a := record(t, root, "old", "written by an old twasm", "Bash", "ls", "out", false)
	require.NoError(t, os.Remove(journal.Path(filepath.Join(root, "transcripts"))))
	ix, st := openUpdated(t, root)
	assert.Equal(t, 1, st.Indexed)
	assert.Equal(t, 1, found(t, ix, "old"))

	// A new run written without the journal, in pieces, unfinished.
	b := record(t, t.TempDir(), "x", "x", "Bash", "ls", "out", false) // only its id
	path := filepath.Join(root, "transcripts", b+".jsonl")
	start := fmt.Sprintf(`{"seq":1,"run_id":"%s","type":"run.started","path":"","iteration":0,"timestamp":"2026-01-01T00:00:00.000Z","payload":{"name":"old record","kind":"workflow"}}`+"\n", b)
	require.NoError(t, os.WriteFile(path, []byte(start), 0o600))
	appendBehindItsBack(t, root, b, 2, "first puffin")
	_, err := ix.Update(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, found(t, ix, "puffin"))
	appendBehindItsBack(t, root, b, 3, "then a guillemot")
	_, err = ix.Update(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, found(t, ix, "guillemot"), "an unfinished run found by the listing is watched")
	end := fmt.Sprintf(`{"seq":4,"run_id":"%s","type":"run.completed","path":"","iteration":0,"timestamp":"2026-01-01T00:00:01.000Z","payload":{"status":"ok"}}`+"\n", b)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(end)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = ix.Update(ctx)
	require.NoError(t, err)
	assert.Empty(t, watchRows(t, ix), "finished: no longer watched")
	runs, err := ix.Runs(ctx)
	require.NoError(t, err)
	require.Len(t, runs, 2)
	_ = a
}

// Building the index checks every file: no run is watched for it, not
// even sessions that may grow (a rebuild must not leave every search a
// stat per session).
func TestBuildWatchesNothing(t *testing.T) {
	root := t.TempDir()
	viewstest.Storages()[2].Write(t, root) // synced sessions, open
	ix, st := openUpdated(t, root)
	require.NotZero(t, st.Indexed)
	assert.Empty(t, watchRows(t, ix))
	st, err := ix.Update(context.Background())
	require.NoError(t, err)
	assert.Zero(t, st.Checked)
}

// The runs an update checks besides the journal's are found by index,
// not by a scan of every run: the query plan reads runs_partial.
func TestWatchedReadsNoEveryRun(t *testing.T) {
	root := t.TempDir()
	record(t, root, "one", "one", "Bash", "ls", "out", false)
	ix, _ := openUpdated(t, root)
	rows, err := ix.db.Query(`EXPLAIN QUERY PLAN ` + watchedQuery)
	require.NoError(t, err)
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		require.NoError(t, rows.Scan(&id, &parent, &notused, &detail))
		plan = append(plan, detail)
		assert.NotRegexp(t, `^SCAN runs`, detail)
	}
	assert.Contains(t, strings.Join(plan, "\n"), "runs_partial")
}

package index

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// ftsRows is how many rows fts holds (its docsize table has one a row).
func ftsRows(t *testing.T, ix *Index) int {
	t.Helper()
	var n int
	require.NoError(t, ix.db.QueryRowContext(context.Background(), `SELECT count(*) FROM fts_docsize`).Scan(&n))
	return n
}

// TestSearchRanksARunsTextOnce: bm25 counts a text its run repeats
// verbatim once (docs.fid), so the ranks are those of the run's distinct
// texts. One run says "alpha beta" eight times, another says alpha four
// times in 24 words (a row's length counts its two tags too: 4 and 26
// tokens). Counted eight times, the short text pulls bm25's mean length
// down to 6.4 tokens, and its one alpha in 4 tokens scores above four in
// 26 (bm25's term-frequency part 1.184 against 1.110; the word is in
// every row, so both share one IDF); counted once, the mean length is 15
// and the long text ranks first (1.502 against 1.429). Every repeat is
// still a hit (Every), folded into one otherwise (Also).
func TestSearchRanksARunsTextOnce(t *testing.T) {
	root := t.TempDir()
	repeats := recordSteps(t, root, func(ctx context.Context, s *lifecycle.Step) error {
		for range 8 {
			if err := s.AssistantMessage(ctx, transcript.TextBlock("alpha beta")); err != nil {
				return err
			}
		}
		return nil
	})
	long := recordSteps(t, root, func(ctx context.Context, s *lifecycle.Step) error {
		words := strings.Fields("alpha one two three four five alpha six seven eight nine ten alpha eleven twelve thirteen fourteen fifteen alpha sixteen seventeen eighteen nineteen twenty")
		require.Len(t, words, 24)
		return s.AssistantMessage(ctx, transcript.TextBlock(strings.Join(words, " ")))
	})
	ix, st := openUpdated(t, root)
	assert.Equal(t, 9, st.Docs)
	assert.Equal(t, 2, ftsRows(t, ix), "one fts row for the eight repeats, one for the long text")

	hits := search(t, ix, Query{Text: "alpha"})
	require.Len(t, hits, 2)
	assert.Equal(t, long, hits[0].RunID, "the long text first: bm25 over the runs' distinct texts")
	assert.Equal(t, repeats, hits[1].RunID)
	assert.Equal(t, 7, hits[1].Also, "the other seven repeats folded into the hit")

	every := search(t, ix, Query{Text: "alpha", Every: true})
	require.Len(t, every, 9)
	seqs := map[uint64]bool{}
	for _, h := range every[1:] {
		assert.Equal(t, repeats, h.RunID)
		assert.Equal(t, "alpha beta", strings.NewReplacer("«", "", "»", "").Replace(h.Snippet))
		seqs[h.Seq] = true
	}
	assert.Len(t, seqs, 8, "each repeat found at its own place")
}

// TestRepeatedTextSharedWithinItsRun: a document whose text, kind, role
// and tool its run already holds shares that fts row (docs.fid), whether
// the run is read whole or grows after it was indexed (the rows the run
// has are read then), and is found by its own fields (its step); the
// same text in another run keeps a row of its own. A run read again or
// removed takes its rows along, none left behind and none missing.
func TestRepeatedTextSharedWithinItsRun(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	store := recorder.NewStore(root)
	const text = "gamma delta epsilon"
	id := detachedRun(t, store, "grows", text)
	other := recordSteps(t, root, func(ctx context.Context, s *lifecycle.Step) error {
		return s.AssistantMessage(ctx, transcript.TextBlock(text))
	})
	ix, _ := openUpdated(t, root)
	assert.Equal(t, 2, ftsRows(t, ix))

	// Grown by the same text in step two: read from where indexing
	// stopped, it shares step one's row.
	finishRun(t, store, id, text)
	st, err := ix.Update(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, st.Indexed)
	require.Equal(t, 0, st.Reindexed)
	assert.Equal(t, 2, ftsRows(t, ix), "the repeat shares its run's row")
	shared := func(ix *Index) []string {
		return queryStrings(t, ix, `SELECT d.path || ' ' || coalesce((SELECT s.path FROM docs s WHERE s.id = d.fid), 'own')
FROM docs d JOIN runs r ON r.rid = d.rid WHERE r.run_id = ? ORDER BY d.seq`, id)
	}
	grown := shared(ix)
	assert.Equal(t, []string{"one own", "two one"}, grown)
	var paths []string
	for _, h := range search(t, ix, Query{Text: "gamma", Run: id[:8], Every: true}) {
		paths = append(paths, h.Path)
	}
	assert.ElementsMatch(t, []string{"one", "two"}, paths, "each found by its own step")
	hits := search(t, ix, Query{Text: "epsilon"})
	require.Len(t, hits, 1)
	assert.Equal(t, 2, hits[0].Also, "three documents, two runs, one text")
	wantEvery := search(t, ix, Query{Text: "gamma", Every: true})
	require.Len(t, wantEvery, 3)

	// Built from nothing: the same rows shared, the same hits in the
	// same order.
	fresh, _ := openUpdated(t, copyTranscripts(t, root))
	assert.Equal(t, grown, shared(fresh))
	assert.Equal(t, 2, ftsRows(t, fresh))
	assert.Equal(t, hitKeys(wantEvery), hitKeys(search(t, fresh, Query{Text: "gamma", Every: true})))

	// Rewritten (read again from the start) and removed: its rows go
	// with it, the other run's stay.
	path := filepath.Join(root, "transcripts", id+".jsonl")
	orig, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, append([]byte(strings.SplitAfter(string(orig), "\n")[1]), orig...), 0o600))
	st, err = ix.Check(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, st.Reindexed)
	assert.Equal(t, 2, ftsRows(t, ix))
	assert.Len(t, search(t, ix, Query{Text: "gamma", Every: true}), 3)
	require.NoError(t, os.Remove(path))
	_, err = ix.Update(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, ftsRows(t, ix), "the removed run's row gone, the other run's kept")
	hits = search(t, ix, Query{Text: "gamma", Every: true})
	require.Len(t, hits, 1)
	assert.Equal(t, other, hits[0].RunID)
}

// copyTranscripts copies root's transcripts into a new storage root
// without its index, and returns it.
func copyTranscripts(t *testing.T, root string) string {
	t.Helper()
	dst := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dst, "transcripts"), 0o700))
	files, err := filepath.Glob(filepath.Join(root, "transcripts", "*.jsonl"))
	require.NoError(t, err)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dst, "transcripts", filepath.Base(f)), b, 0o600))
	}
	return dst
}

// hitKeys are the hits' places, in order.
func hitKeys(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%s %d %s %s", h.RunID, h.Seq, h.Path, h.Kind))
	}
	return out
}

// TestSearchRanksASharedRowWhole: when the newest Query.RankAmong
// matches end among the documents of one shared fts row (a text a run
// repeats), the row is ranked with all its documents, so that the first
// page and the pages after it (which rank the fts rows above the bound)
// show each of them once and leave none out.
func TestSearchRanksASharedRowWhole(t *testing.T) {
	root := t.TempDir()
	ix, _ := openUpdated(t, root)
	ctx := context.Background()
	say := func(texts ...string) string {
		id := recordSteps(t, root, func(ctx context.Context, s *lifecycle.Step) error {
			for _, text := range texts {
				if err := s.AssistantMessage(ctx, transcript.TextBlock(text)); err != nil {
					return err
				}
			}
			return nil
		})
		_, err := ix.Update(ctx) // indexed in this order: the last newest
		require.NoError(t, err)
		return id
	}
	oldest := say("widget oldest")
	repeats := say("widget again", "widget again", "widget again", "widget again")
	newest := say("widget newest")
	for _, tc := range []struct {
		among  int
		ranked int
		want   []string // the runs of the hits, as a set with counts
	}{
		{1, 1, []string{newest}},
		{2, 2, []string{newest, repeats, repeats, repeats, repeats}},
		{3, 3, []string{newest, repeats, repeats, repeats, repeats}},
		{4, 4, []string{newest, repeats, repeats, repeats, repeats}},
		{5, 5, []string{newest, repeats, repeats, repeats, repeats}},
		{6, 0, []string{newest, repeats, repeats, repeats, repeats, oldest}},
	} {
		for _, size := range []int{1, 2, 3} {
			t.Run(fmt.Sprintf("among %d, %d a page", tc.among, size), func(t *testing.T) {
				q := Query{Text: "widget", Every: true, Limit: size, RankAmong: tc.among}
				var got []string
				seen := map[string]bool{}
				for pages := 0; ; pages++ {
					require.Less(t, pages, 20, "paging does not end")
					res, err := ix.SearchResults(ctx, q)
					require.NoError(t, err)
					if pages == 0 && size < tc.among {
						assert.Equal(t, tc.ranked, res.RankedAmong)
					}
					for _, h := range res.Hits {
						k := fmt.Sprintf("%s %d", h.RunID, h.Seq)
						assert.False(t, seen[k], "%s shown twice", k)
						seen[k] = true
						got = append(got, h.RunID)
					}
					if res.Next == nil {
						break
					}
					q.From = res.Next
				}
				if size < tc.among {
					assert.ElementsMatch(t, tc.want, got)
				}
			})
		}
	}
}

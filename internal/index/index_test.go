package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// record writes a run with a prompt, an answer, a thought, one tool call
// and result, and returns its id.
func record(t testing.TB, root, prompt, answer, tool, input, output string, fail bool) string {
	t.Helper()
	ctx := context.Background()
	var id string
	err := lifecycle.Do(ctx, recorder.NewStore(root), lifecycle.RunOptions{Name: "test " + tool}, func(ctx context.Context, r *lifecycle.Step) error {
		id = r.Run().RunID()
		return r.Step(ctx, "agent", transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
			if err := s.UserMessage(ctx, prompt, ""); err != nil {
				return err
			}
			if err := s.AssistantMessage(ctx, transcript.Block{Type: transcript.BlockThinking, Fidelity: transcript.FidelityAgentEmitted, Thinking: "pondering " + answer},
				transcript.TextBlock(answer)); err != nil {
				return err
			}
			in, _ := json.Marshal(map[string]string{"command": input, "file_path": "src/" + tool + ".go"})
			if err := s.Record(ctx, &transcript.Event{Type: transcript.ToolCall, Payload: &transcript.ToolPayload{Name: tool, CallID: "c1", Input: in, Fidelity: transcript.FidelityAgentEmitted}}); err != nil {
				return err
			}
			if err := s.Record(ctx, &transcript.Event{Type: transcript.ToolResult, Payload: &transcript.ToolPayload{Name: tool, CallID: "c1", Output: output, Status: "ok", Fidelity: transcript.FidelityAgentEmitted}}); err != nil {
				return err
			}
			if fail {
				return errors.New("the build broke")
			}
			return nil
		})
	})
	if !fail {
		require.NoError(t, err)
	}
	return id
}

func openUpdated(t *testing.T, root string) (*Index, Stats) {
	t.Helper()
	ix, _, err := Open(context.Background(), root)
	require.NoError(t, err)
	t.Cleanup(func() { ix.Close() })
	st, err := ix.Update(context.Background())
	require.NoError(t, err)
	return ix, st
}

func search(t *testing.T, ix *Index, q Query) []Hit {
	t.Helper()
	hits, err := ix.Search(context.Background(), q)
	require.NoError(t, err)
	return hits
}

func TestSearch(t *testing.T) {
	root := t.TempDir()
	a := record(t, root, "fix the flaky test", "the zebra test is fixed", "Bash", "go test ./...", "PASS ok zebra", false)
	b := record(t, root, "write docs", "docs written", "Edit", "sed -i s/a/b/ README.md", "edited", true)
	ix, st := openUpdated(t, root)
	assert.Equal(t, 2, st.Indexed)

	hits := search(t, ix, Query{Text: "zebra"})
	require.Len(t, hits, 3) // answer, thinking, tool output
	for _, h := range hits {
		assert.Equal(t, a, h.RunID)
		assert.Equal(t, "agent", h.Path)
		assert.NotZero(t, h.Seq)
		assert.False(t, h.Time.IsZero())
		assert.Contains(t, h.Snippet, "«zebra»")
		assert.Equal(t, "fix the flaky test", h.RunTitle, "the run's first prompt")
	}
	cases := []struct {
		name string
		q    Query
		runs []string
	}{
		{"prompt", Query{Text: "flaky", Role: "user"}, []string{a}},
		{"thinking", Query{Text: "zebra", Kind: "thinking"}, []string{a}},
		{"tool output", Query{Text: "zebra", Kind: "tool_result", Tool: "Bash"}, []string{a}},
		{"command", Query{Text: "go test", Kind: "tool_call"}, []string{a}},
		{"file path", Query{Text: "src/Edit.go"}, []string{b}},
		{"error", Query{Text: "build broke"}, []string{b, b}},
		{"status", Query{Text: "docs", Status: "error"}, []string{b, b, b}}, // prompt, answer, thinking
		{"status excludes", Query{Text: "zebra", Status: "error"}, nil},
		{"run prefix", Query{Text: "test", Run: a[:8], Kind: "text"}, []string{a, a}}, // prompt and answer
		{"FTS syntax is quoted", Query{Text: `zebra OR "docs`}, nil},
		{"a word finds the words it starts", Query{Text: "zeb", Kind: "text"}, []string{a}},
		{"raw FTS", Query{Text: `zebra OR written`, Raw: true, Kind: "text", Role: "assistant"}, []string{a, b}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var runs []string
			for _, h := range search(t, ix, tc.q) {
				runs = append(runs, h.RunID)
			}
			assert.ElementsMatch(t, tc.runs, runs)
		})
	}
	runs, err := ix.Runs(context.Background())
	require.NoError(t, err)
	require.Len(t, runs, 2)
	for _, r := range runs {
		if r.RunID == b {
			assert.Equal(t, "error", r.Status)
			assert.Equal(t, 1, r.Tools)
		}
	}
}

func TestRebuiltFromTranscripts(t *testing.T) {
	root := t.TempDir()
	a := record(t, root, "p", "needle in the haystack", "Bash", "ls", "out", false)
	ix, _ := openUpdated(t, root)
	require.Len(t, search(t, ix, Query{Text: "needle"}), 2)
	require.NoError(t, ix.Close())

	// Deleted: it comes back.
	require.NoError(t, os.Remove(File(root)))
	ix, st := openUpdated(t, root)
	assert.Equal(t, 1, st.Indexed)
	require.Len(t, search(t, ix, Query{Text: "needle"}), 2)
	require.NoError(t, ix.Close())

	// Damaged: detected, rebuilt, reported.
	for _, s := range []string{"-wal", "-shm"} {
		os.Remove(File(root) + s)
	}
	require.NoError(t, os.WriteFile(File(root), []byte("this is not a database, it is a cat picture............................................................"), 0o600))
	ix2, why, err := Open(context.Background(), root)
	require.NoError(t, err)
	defer ix2.Close()
	assert.NotEmpty(t, why)
	_, err = ix2.Update(context.Background())
	require.NoError(t, err)
	hits := search(t, ix2, Query{Text: "needle"})
	require.Len(t, hits, 2)
	assert.Equal(t, a, hits[0].RunID)
}

// detachedRun starts a run whose step "one" says text and detaches it
// (a session that may grow), and returns its id.
func detachedRun(t *testing.T, store recorder.Store, name, text string) string {
	t.Helper()
	ctx := context.Background()
	run, err := lifecycle.Start(ctx, store, lifecycle.RunOptions{Name: name})
	require.NoError(t, err)
	require.NoError(t, run.StepAt(ctx, "one", 0, transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
		return s.AssistantMessage(ctx, transcript.TextBlock(text))
	}))
	require.NoError(t, run.Detach())
	return run.RunID()
}

// finishRun grows the detached run id by a step "two" that says text,
// and finishes it.
func finishRun(t *testing.T, store recorder.Store, id, text string) {
	t.Helper()
	ctx := context.Background()
	run, err := lifecycle.Attach(ctx, store, id, lifecycle.RunOptions{})
	require.NoError(t, err)
	require.NoError(t, run.StepAt(ctx, "two", 0, transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
		return s.AssistantMessage(ctx, transcript.TextBlock(text))
	}))
	require.NoError(t, run.Finish(ctx, nil))
}

func TestIncrementalAndChangedBehindItsBack(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	store := recorder.NewStore(root)
	id := detachedRun(t, store, "open", "first albatross")
	ix, st := openUpdated(t, root)
	assert.Equal(t, 1, st.Indexed)
	st, err := ix.Update(ctx)
	require.NoError(t, err)
	assert.Equal(t, 0, st.Indexed, "unchanged: skipped")
	rid := runNumber(t, ix, id)

	// Grown: only the new part is read.
	finishRun(t, store, id, "second albatross")
	st, err = ix.Update(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Indexed)
	assert.Equal(t, 0, st.Reindexed)
	assert.Len(t, search(t, ix, Query{Text: "albatross"}), 2)
	assert.Equal(t, rid, runNumber(t, ix, id), "a grown run keeps its number")

	path := filepath.Join(root, "transcripts", id+".jsonl")
	orig, err := os.ReadFile(path)
	require.NoError(t, err)
	// Written behind the journal's back (no writer said so): Check
	// looks at every file. A line being written is not indexed until it
	// is complete.
	extra := `{"seq":99,"run_id":"` + id + `","type":"message.assistant","path":"x","iteration":0,"timestamp":"2026-01-01T00:00:00.000Z","payload":{"role":"assistant","blocks":[{"type":"text","fidelity":"agent_emitted","text":"third albatross"}]}}` + "\n"
	require.NoError(t, os.WriteFile(path, append(append([]byte(nil), orig...), extra[:40]...), 0o600))
	_, err = ix.Check(ctx)
	require.NoError(t, err)
	assert.Len(t, search(t, ix, Query{Text: "albatross"}), 2)
	require.NoError(t, os.WriteFile(path, append(append([]byte(nil), orig...), extra...), 0o600))
	st, err = ix.Check(ctx)
	require.NoError(t, err)
	assert.Equal(t, 0, st.Reindexed, "grown from the partial line on")
	assert.Len(t, search(t, ix, Query{Text: "albatross"}), 3)

	// Rewritten behind its back (the line at the indexed offset no longer
	// holds the seq indexed): read again from the start.
	require.NoError(t, os.WriteFile(path, append(append([]byte(extra), orig...), extra...), 0o600))
	st, err = ix.Check(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Reindexed)
	assert.Len(t, search(t, ix, Query{Text: "albatross", Every: true}), 4)
	assert.Equal(t, rid, runNumber(t, ix, id), "a run read again keeps its number")
	assertNoOrphans(t, ix)

	// Removed: it leaves the index.
	require.NoError(t, os.Remove(path))
	st, err = ix.Update(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Removed)
	assert.Empty(t, search(t, ix, Query{Text: "albatross"}))
	assertNoOrphans(t, ix)
	var docs int
	require.NoError(t, ix.db.QueryRowContext(ctx, `SELECT count(*) FROM docs`).Scan(&docs))
	assert.Zero(t, docs, "the run's documents leave with it")
}

// runNumber is a run's number in the index (runs.rid), by which its
// documents name it.
func runNumber(t *testing.T, ix *Index, id string) int64 {
	t.Helper()
	var rid int64
	require.NoError(t, ix.db.QueryRowContext(context.Background(), `SELECT rid FROM runs WHERE run_id = ?`, id).Scan(&rid))
	return rid
}

// assertNoOrphans checks that every document names a run of the index
// (a document whose number names none would never be found, and would
// be taken for another run's if its number were given again).
func assertNoOrphans(t *testing.T, ix *Index) {
	t.Helper()
	var n int
	require.NoError(t, ix.db.QueryRowContext(context.Background(), `SELECT count(*) FROM docs WHERE rid NOT IN (SELECT rid FROM runs)`).Scan(&n))
	assert.Zero(t, n, "documents of no run")
}

// TestUpdateReadsTheRunInItsTransaction: a writer that read what the
// index knew of a run before another process indexed it (its row, or
// that there was none) reads it again once it holds the write lock, so
// that it neither indexes the run a second time nor gives its
// documents another number than the run's: the file unchanged since the
// other process read it is left as it is, and the part added since is
// read from where that process stopped.
func TestUpdateReadsTheRunInItsTransaction(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	store := recorder.NewStore(root)
	id := detachedRun(t, store, "raced", "first pelican")
	path := filepath.Join(root, "transcripts", id+".jsonl")
	other, _ := openUpdated(t, root) // the other process
	ix, _, err := Open(ctx, root)
	require.NoError(t, err)
	defer ix.Close()
	stale := func() Stats {
		t.Helper()
		var st Stats
		b := &batch{ix: ix}
		defer b.rollback()
		require.NoError(t, ix.updateFile(ctx, b, path, id, nil, &st))
		require.NoError(t, b.commit())
		return st
	}
	docs := func() int {
		t.Helper()
		var n int
		require.NoError(t, ix.db.QueryRowContext(ctx, `SELECT count(*) FROM docs`).Scan(&n))
		return n
	}
	rid := runNumber(t, ix, id)

	st := stale()
	assert.Equal(t, 0, st.Indexed, "indexed meanwhile by the other process: left as it is")
	assert.Equal(t, 1, docs())

	finishRun(t, store, id, "second pelican")
	st = stale()
	assert.Equal(t, 1, st.Indexed)
	assert.Equal(t, 0, st.Reindexed, "grown: read from where the other process stopped")
	assert.Equal(t, 2, docs())
	assert.Equal(t, rid, runNumber(t, ix, id))
	assertNoOrphans(t, ix)
	hits := search(t, other, Query{Text: "pelican", Every: true})
	require.Len(t, hits, 2)
	for _, h := range hits {
		assert.Equal(t, id, h.RunID)
	}
}

func TestMatchExpr(t *testing.T) {
	for in, want := range map[string]string{
		"zebra":                   `"zebra"*`,
		"  go   test ":            `"go"* "test"*`,
		`"exit status 1" foo`:     `"exit status 1" "foo"*`,
		`a"b`:                     `"a""b"*`,
		`"unclosed phrase`:        `"unclosed phrase"`,
		"src/main.go NOT-an-op*:": `"src/main.go"* "NOT-an-op*:"*`,
	} {
		assert.Equal(t, want, MatchExpr(in), in)
	}
}

// TestSearchPhrases: a "quoted phrase", and a word FTS5 splits into
// several tokens (src/main.go), match where their tokens follow one
// another in one document, whatever punctuation is between them and
// with Latin diacritics folded; the last token of a word is a prefix, a
// phrase's never. Tokens that are all in a document (or all in a run)
// but not in order are no match. FTS5 answers this from the positions it
// keeps (detail=full): a schema that kept none (detail=column) would
// have to check each candidate's text against these cases.
func TestSearchPhrases(t *testing.T) {
	root := t.TempDir()
	adjacent := record(t, root, "p1", "open /etc/x: No such file or directory", "Bash", "cat /etc/x", "exit 1", false)
	apart := record(t, root, "p2", "no file, such luck; such files are no more", "Bash", "true", "ok", false)
	split := record(t, root, "p3", "there is no such thing", "Bash", "true", "file written", false)
	accents := record(t, root, "p4", "Le CAFÉ crème est prêt à src/main.golden", "Bash", "true", "ok", false)
	ix, _ := openUpdated(t, root)
	cases := []struct {
		name, text string
		runs       []string
	}{
		{"phrase present", `"no such file"`, []string{adjacent}},
		{"tokens present, not adjacent", `"luck file"`, nil},
		{"tokens in another order", `"file such"`, []string{apart}},
		{"across punctuation", `"x no such"`, []string{adjacent}},
		{"across punctuation in the phrase", `"no. such, file!"`, []string{adjacent}},
		{"a phrase in one of a run's documents", `"no such thing"`, []string{split}},
		{"tokens spread over a run's documents", `"such thing file"`, nil},
		{"words, not a phrase, in any order", `file such`, []string{adjacent, apart}},
		{"diacritics folded in the text", `"cafe creme"`, []string{accents}},
		{"diacritics folded in the query", `"Café Crème est"`, []string{accents}},
		{"a phrase's last token is no prefix", `"no such fil"`, nil},
		{"a word's last token is a prefix", `main.gold`, []string{accents}},
		{"a word's other tokens are not", `mai.golden`, nil},
		{"a word split into tokens is a phrase", `such.fi`, []string{adjacent, apart}},
		{"a word whose tokens are apart", `file.such.luck`, []string{apart}},
		{"a word whose tokens are not in order", `luck.file`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var runs []string
			for _, h := range search(t, ix, Query{Text: tc.text, Every: true}) {
				if !slices.Contains(runs, h.RunID) {
					runs = append(runs, h.RunID)
				}
			}
			assert.ElementsMatch(t, tc.runs, runs, tc.text)
		})
	}
}

// TestUpdateRunsFollowsChildRuns: UpdateRuns indexes the runs it is given
// and the child runs their lines link to, and no other run; a link that
// is not a run id is not followed.
func TestUpdateRunsFollowsChildRuns(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	other := record(t, root, "unrelated prompt", "zebra", "Read", "cat", "out", false)
	var parent string
	err := lifecycle.Do(ctx, recorder.NewStore(root), lifecycle.RunOptions{Name: "parent"}, func(ctx context.Context, r *lifecycle.Step) error {
		parent = r.Run().RunID()
		return r.CallWorkflow(ctx, "sub-agent", func(ctx context.Context, s *lifecycle.Step) error {
			return s.AssistantMessage(ctx, transcript.TextBlock("giraffe in the child"))
		})
	})
	require.NoError(t, err)
	// A hostile link in a line of the parent, to a transcript outside
	// transcripts/: not followed.
	outside, err := os.ReadFile(filepath.Join(root, "transcripts", other+".jsonl"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "y.jsonl"), outside, 0o600))
	f, err := os.OpenFile(filepath.Join(root, "transcripts", parent+".jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"seq":99,"run_id":"` + parent + `","child_run_id":"../y","type":"step.call_workflow.started","path":"evil","iteration":0,"timestamp":"2026-01-01T00:00:00.000Z","payload":{"name":"x","kind":"call_workflow"}}` + "\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())

	ix, _, err := Open(ctx, root)
	require.NoError(t, err)
	defer ix.Close()
	st, err := ix.UpdateRuns(ctx, []string{parent})
	require.NoError(t, err)
	assert.Equal(t, 2, st.Runs, "the parent and its child")
	assert.Len(t, search(t, ix, Query{Text: "giraffe", Limit: 10}), 1)
	assert.Empty(t, search(t, ix, Query{Text: "zebra", Limit: 10}), "a run not linked is left to Update")
	st, err = ix.Update(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Indexed, "only %s was left", other)
	assert.NotEmpty(t, search(t, ix, Query{Text: "zebra", Limit: 10}))
}

// recordSteps writes a run whose agent step fn fills, and returns its id.
func recordSteps(t testing.TB, root string, fn func(ctx context.Context, s *lifecycle.Step) error) string {
	t.Helper()
	var id string
	err := lifecycle.Do(context.Background(), recorder.NewStore(root), lifecycle.RunOptions{Name: "test"}, func(ctx context.Context, r *lifecycle.Step) error {
		id = r.Run().RunID()
		return r.Step(ctx, "agent", transcript.KindAgent, fn)
	})
	require.NoError(t, err)
	return id
}

func bashCall(ctx context.Context, s *lifecycle.Step, id, command, output, status string) error {
	in, _ := json.Marshal(map[string]string{"command": command})
	if err := s.Record(ctx, &transcript.Event{Type: transcript.ToolCall, Payload: &transcript.ToolPayload{Name: "Bash", CallID: id, Input: in, Command: command, Fidelity: transcript.FidelityAgentEmitted}}); err != nil {
		return err
	}
	return s.Record(ctx, &transcript.Event{Type: transcript.ToolResult, Payload: &transcript.ToolPayload{Name: "Bash", CallID: id, Output: output, Status: status, Fidelity: transcript.FidelityAgentEmitted}})
}

// --status is a tool call's own outcome (the README's `search --tool Bash
// --status error pytest`), injected text ranks below real text and is
// folded when it repeats, and filters alone list what they select.
func TestSearchOutcomesInjectedAndFilters(t *testing.T) {
	root := t.TempDir()
	const boiler = "When a command fails with permission denied, never retry it with sudo."
	var boilerRuns []string
	for i := range 4 {
		boilerRuns = append(boilerRuns, recordSteps(t, root, func(ctx context.Context, s *lifecycle.Step) error {
			if err := s.UserMessage(ctx, "task "+string(rune('a'+i)), boiler); err != nil {
				return err
			}
			return bashCall(ctx, s, "c1", "pytest -q", "1 passed", "ok")
		}))
	}
	failed := recordSteps(t, root, func(ctx context.Context, s *lifecycle.Step) error {
		if err := s.UserMessage(ctx, "run the tests", ""); err != nil {
			return err
		}
		if err := bashCall(ctx, s, "c1", "pytest tests/test_io.py", "open /srv/data: permission denied", "error"); err != nil {
			return err
		}
		return bashCall(ctx, s, "c2", "ls /srv", "data", "ok")
	})
	ix, _ := openUpdated(t, root)

	// The failed call is found by its outcome though its run ended ok.
	hits := search(t, ix, Query{Text: "pytest", Tool: "Bash", Status: "error"})
	require.NotEmpty(t, hits)
	for _, h := range hits {
		assert.Equal(t, failed, h.RunID)
		assert.Equal(t, "error", h.Status)
		assert.Equal(t, "ok", h.RunStatus)
	}
	assert.Equal(t, "tool_call", hits[0].Kind)
	// The four passing calls are one hit, folded, or four with Every.
	ok := search(t, ix, Query{Text: "pytest", Tool: "Bash", Status: "ok"})
	require.Len(t, ok, 1)
	assert.Equal(t, 3, ok[0].Also)
	assert.Len(t, search(t, ix, Query{Text: "pytest", Tool: "Bash", Status: "ok", Every: true}), 4)
	// Filters without words: every failed call, newest first.
	hits = search(t, ix, Query{Kind: "tool_call", Status: "error"})
	require.Len(t, hits, 1)
	assert.Contains(t, hits[0].Snippet, "pytest tests/test_io.py")

	// Real text first; the instructions repeated in four sessions once.
	hits = search(t, ix, Query{Text: "permission denied"})
	require.Len(t, hits, 2, "%+v", hits)
	assert.Equal(t, failed, hits[0].RunID)
	assert.False(t, hits[0].Injected)
	assert.True(t, hits[1].Injected)
	assert.Equal(t, 3, hits[1].Also)
	assert.Contains(t, boilerRuns, hits[1].RunID)

	_, err := ix.Search(context.Background(), Query{})
	assert.ErrorContains(t, err, "empty query")
}

// TestSearchRanksAmongTheNewest: a query whose words and filters match
// more documents than Query.RankAmong ranks only the newest that many
// (the last indexed) and says so (Results.RankedAmong); a filter counts
// before the bound, so a filtered search still finds its old hits; a
// query asking for every row, or matching fewer, ranks every match, as
// before.
func TestSearchRanksAmongTheNewest(t *testing.T) {
	root := t.TempDir()
	words := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot"}
	ix, _ := openUpdated(t, root)
	ctx := context.Background()
	var runs []string
	for _, w := range words {
		// prompt, answer and thinking hold widget: 3 documents a run,
		// indexed in this order (the newest last).
		runs = append(runs, record(t, root, "widget "+w+" prompt", "widget "+w+" answer", "Bash", "ls", "done", false))
		_, err := ix.Update(ctx)
		require.NoError(t, err)
	}
	first, last, beforeLast := runs[0], runs[len(runs)-1], runs[len(runs)-2]
	all := func(q Query) Query { q.Limit, q.Every, q.RankAmong = 1<<30, true, -1; return q }
	for _, tc := range []struct {
		name   string
		q      Query
		ranked int
		runs   []string // the runs hits may come from
		n      int      // how many hits
	}{
		{"common word: the newest 5 ranked", Query{Text: "widget", Limit: 4, Every: true, RankAmong: 5}, 5, []string{last, beforeLast}, 4},
		{"folding reads 8 rows a hit", Query{Text: "widget", Limit: 1, RankAmong: 10}, 10, runs[2:], 1},
		{"filter counted before the bound", Query{Text: "widget", Run: first[:8], Limit: 1, Every: true, RankAmong: 2}, 2, []string{first}, 1},
		{"filter under the bound: every match", Query{Text: "widget", Run: first[:8], Limit: 2, Every: true, RankAmong: 5}, 0, []string{first}, 2},
		{"filter under the bound, newest run", Query{Text: "widget", Run: last[:8], Limit: 3, Every: true, RankAmong: 5}, 0, []string{last}, 3},
		{"as many rows asked as the bound: every match", Query{Text: "widget", Limit: 5, Every: true, RankAmong: 5}, 0, runs, 5},
		{"rare word: every match", Query{Text: "charlie", Limit: 2, Every: true, RankAmong: 2}, 0, []string{runs[2]}, 2},
		{"default bound above the matches", Query{Text: "widget", Limit: 4, Every: true}, 0, runs, 4},
		{"no words: no ranking", Query{Run: first[:8], Limit: 1, RankAmong: 1}, 0, []string{first}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := ix.SearchResults(ctx, tc.q)
			require.NoError(t, err)
			assert.Equal(t, tc.ranked, res.RankedAmong)
			require.Len(t, res.Hits, tc.n)
			for _, h := range res.Hits {
				assert.Contains(t, tc.runs, h.RunID)
			}
			if tc.ranked == 0 {
				// Not bounded: the first hits of ranking every match.
				every := search(t, ix, all(tc.q))
				require.GreaterOrEqual(t, len(every), tc.n)
				if tc.q.Every {
					assert.Equal(t, every[:tc.n], res.Hits)
				}
			}
		})
	}
}

// TestSearchPagesAsOneQuery: paging a search by its cursor (Results.Next
// to Query.From) gives exactly the hits of one query asking for all of
// them, in the same order, each once: with folding (a page never shows
// again what a page before showed or folded), with every hit, with a
// filter and no words, and with the matches ranked among the newest (a
// page after the first ranks the first's matches).
func TestSearchPagesAsOneQuery(t *testing.T) {
	root := t.TempDir()
	for _, w := range []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf"} {
		// The same answer and thought in every run (folded, equal ranks).
		record(t, root, "widget "+w+" prompt", "widget done", "Bash", "widget ls", "widget listed", false)
	}
	ix, _ := openUpdated(t, root)
	ctx := context.Background()
	key := func(h Hit) string { return fmt.Sprintf("%s %d %s %d", h.RunID, h.Seq, h.Kind, h.Iteration) }
	for _, tc := range []struct {
		name string
		q    Query
		all  int // the hits of the one query
	}{
		{"folded", Query{Text: "widget"}, 1000},
		{"every", Query{Text: "widget", Every: true}, 1000},
		{"no words", Query{Role: "user", Every: true}, 1000},
		{"filtered", Query{Text: "widget", Role: "assistant", Every: true}, 1000},
		{"ranked among the newest", Query{Text: "widget", Every: true, RankAmong: 20}, 19},
	} {
		for _, size := range []int{1, 2, 3, 5} {
			t.Run(fmt.Sprintf("%s/%d a page", tc.name, size), func(t *testing.T) {
				one := tc.q
				one.Limit = tc.all
				want, err := ix.SearchResults(ctx, one)
				require.NoError(t, err)
				require.Greater(t, len(want.Hits), size, "too few hits to page")
				var got []string
				q := tc.q
				q.Limit = size
				for pages := 0; ; pages++ {
					require.Less(t, pages, 100, "paging does not end")
					res, err := ix.SearchResults(ctx, q)
					require.NoError(t, err)
					require.LessOrEqual(t, len(res.Hits), size)
					assert.Equal(t, want.RankedAmong, res.RankedAmong)
					for _, h := range res.Hits {
						got = append(got, key(h))
					}
					if res.Next == nil || (tc.q.RankAmong > 0 && len(got) >= len(want.Hits)) {
						break
					}
					// The cursor goes through a URL as text.
					q.From, err = ParseCursor(res.Next.String())
					require.NoError(t, err)
					assert.Equal(t, len(got), q.From.Shown)
				}
				if tc.q.RankAmong > 0 {
					got = got[:min(len(got), len(want.Hits))] // the one query asks for fewer than are ranked
				}
				var w []string
				for _, h := range want.Hits {
					w = append(w, key(h))
				}
				assert.Equal(t, w, got)
			})
		}
	}
}

// TestBlockFieldsNotCarriedOver: a block's fields are its own line's. The
// lines are decoded into one reused line whose blocks encoding/json does
// not zero, so an assistant's answer after a system prompt took the
// prompt's origin (an origin left out when empty) and ranked as injected.
func TestBlockFieldsNotCarriedOver(t *testing.T) {
	root := t.TempDir()
	recordSteps(t, root, func(ctx context.Context, s *lifecycle.Step) error {
		if err := s.UserMessage(ctx, "the task", "the system prompt"); err != nil {
			return err
		}
		return s.AssistantMessage(ctx, transcript.TextBlock("the zebra answer"), transcript.TextBlock("a quagga too"))
	})
	ix, _ := openUpdated(t, root)
	for _, word := range []string{"zebra", "quagga"} {
		hits := search(t, ix, Query{Text: word})
		require.Len(t, hits, 1, word)
		assert.Equal(t, "assistant", hits[0].Role, word)
		assert.False(t, hits[0].Injected, "%s: the answer took the origin of the block before it", word)
	}
	hits := search(t, ix, Query{Text: "system"})
	require.Len(t, hits, 1)
	assert.True(t, hits[0].Injected)
}

// TestTextHash: the hash search folds documents by is XXH64 of the
// text, the same in every process (it is stored), and tells apart the
// texts here.
func TestTextHash(t *testing.T) {
	seen := map[int64]string{}
	for _, s := range []string{"", "a", "b", "the same instructions in every session", "the same instructions in every session.", "déjà vu \x00\xff", strings.Repeat("x\n", 1<<19)} {
		h := textHash(s)
		assert.Equal(t, int64(xxhash.Sum64([]byte(s))), h, "%.20q", s)
		assert.NotContains(t, seen, h, "%.20q", s)
		seen[h] = s
	}
	assert.Equal(t, int64(-1205034819632174695), textHash(""), "XXH64 of nothing, seed 0")
}

// TestSetCacheKiB: the connection's page cache is the one asked (sync's
// live indexer takes a small one), and a size below 1 KiB is 1.
func TestSetCacheKiB(t *testing.T) {
	ctx := context.Background()
	ix, _, err := Open(ctx, t.TempDir())
	require.NoError(t, err)
	defer ix.Close()
	for _, tc := range []struct{ kib, want int }{{256, -256}, {0, -1}} {
		require.NoError(t, ix.SetCacheKiB(ctx, tc.kib))
		var got int
		require.NoError(t, ix.db.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&got))
		assert.Equal(t, tc.want, got)
	}
}

// cancelAfter is a context that is cancelled once its Err has been
// asked n times, by anyone (database/sql asks too, from its own
// goroutines). Its Done is nil: the driver does not watch it.
type cancelAfter struct {
	context.Context
	n     int64
	calls atomic.Int64
}

func (c *cancelAfter) Err() error {
	if c.calls.Add(1) > c.n {
		return context.Canceled
	}
	return nil
}

// TestUpdateCancelledWithinAFile: the statements of a line run without
// the caller's cancellation, so an update checks its context before
// each line: cancelled at any point, it stops inside the file and keeps
// nothing of it, and the next update indexes the run once, as an update
// never cancelled does.
func TestUpdateCancelledWithinAFile(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	record(t, root, "fix the flaky test", "the zebra test is fixed", "Bash", "go test ./...", "PASS ok zebra", false)
	want := func() []Hit {
		ix, _ := openUpdated(t, root)
		defer ix.Close()
		defer Remove(root)
		return search(t, ix, Query{Text: "zebra OR flaky", Raw: true})
	}()
	require.Len(t, want, 4)
	withinFile := 0
	for n := 0; ; n++ {
		ix, _, err := Open(ctx, root)
		require.NoError(t, err)
		st, err := ix.Update(&cancelAfter{Context: ctx, n: int64(n)})
		if err == nil {
			ix.Close()
			require.NoError(t, Remove(root))
			break
		}
		require.ErrorIs(t, err, context.Canceled, "cancelled after %d checks", n)
		if n > 0 {
			withinFile++ // the check before the file passed
		}
		runs, err := ix.Runs(ctx)
		require.NoError(t, err)
		assert.Empty(t, runs, "cancelled after %d checks: nothing of the file kept", n)
		st, err = ix.Update(ctx)
		require.NoError(t, err)
		assert.Equal(t, Stats{Runs: 1, Indexed: 1, Docs: st.Docs, Checked: 1}, st)
		got := search(t, ix, Query{Text: "zebra OR flaky", Raw: true})
		assert.Equal(t, len(want), len(got), "cancelled after %d checks", n)
		for i := range min(len(want), len(got)) {
			assert.Equal(t, want[i].Seq, got[i].Seq)
			assert.Equal(t, want[i].Snippet, got[i].Snippet)
		}
		ix.Close()
		require.NoError(t, Remove(root))
	}
	assert.Greater(t, withinFile, 3, "an update is cancelled between the lines of a file")
}

// TestToolCallText checks the text a tool call's document holds: its
// name, its command, and its input's keys and scalar values unescaped,
// one a line, the command left out where the input holds it again.
func TestToolCallText(t *testing.T) {
	cases := []struct {
		name, tool, command, input, want string
	}{
		{"escapes undone", "Write", "", `{"content":"package main\n\nimport \"fmt\"\n\u003cdiv\u003e","file_path":"a.go"}`,
			"Write\ncontent\npackage main\n\nimport \"fmt\"\n<div>\nfile_path\na.go\n"},
		{"the command once", "Bash", "go test ./...", `{"command":"go test ./...","description":"run the tests"}`,
			"Bash\ngo test ./...\ncommand\ndescription\nrun the tests\n"},
		{"a key equal to the command kept", "Bash", "ls", `{"ls":"ls"}`, "Bash\nls\nls\n"},
		{"scalars as written", "T", "", `{"n":-1.5e3,"ok":true,"no":false,"x":null,"list":[1,"two",{"k":[]}]}`,
			"T\nn\n-1.5e3\nok\ntrue\nno\nfalse\nx\nnull\nlist\n1\ntwo\nk\n"},
		{"not an object", "T", "", `"just a string"`, "T\njust a string\n"},
		{"escaped quotes and backslashes", "T", "", `{"p":"C:\\","q":"say \"hi\\\""}`, "T\np\nC:\\\nq\nsay \"hi\\\"\n"},
		{"spaces between tokens", "T", "c", "{ \"a\" :\t\"c\" ,\n\"b\" : [ 2 ] }", "T\nc\na\nb\n2\n"},
		{"no input", "T", "cmd", ``, "T\ncmd"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, toolCallText(tc.tool, tc.command, []byte(tc.input)))
		})
	}
}

// TestSearchToolCallInput checks that the words of a tool call's input
// are found as they are written, not as its JSON escapes them: a word
// after a line break ("\nimport": the token "nimport" before schema 11)
// or after an escaped "<" ("\u003csection": "u003csection").
func TestSearchToolCallInput(t *testing.T) {
	root := t.TempDir()
	// record's input is {"command":...,"file_path":"src/Write.go"}, as
	// json.Marshal escapes it ("\n", "\"", "\u003c").
	id := record(t, root, "write it", "written", "Write", "package main\n\nimport \"fmt\"\n<section>", "ok", false)
	ix, _ := openUpdated(t, root)
	for _, word := range []string{"import", "section", `"package main import fmt"`} {
		hits := search(t, ix, Query{Text: word, Kind: "tool_call"})
		require.Len(t, hits, 1, word)
		assert.Equal(t, id, hits[0].RunID)
		assert.Contains(t, hits[0].Snippet, "«", word)
	}
}

// TestPendingBudgetNotKept checks that the budget of pending terms an
// Index writes with (Open's 4 MiB) is its own: FTS5 keeps its settings
// in the database, read by every connection, and what an update leaves
// there is FTS5's own 1 MiB, whatever budget it wrote with, so that
// another process (sync's live indexer) does not take the larger one.
func TestPendingBudgetNotKept(t *testing.T) {
	for _, kib := range []int{0, 1024, 8192} {
		t.Run(fmt.Sprint(kib), func(t *testing.T) {
			root := t.TempDir()
			record(t, root, "fix the flaky test", "fixed", "Bash", "go test ./...", "PASS", false)
			ix, _, err := Open(context.Background(), root)
			require.NoError(t, err)
			defer ix.Close()
			if kib > 0 {
				ix.SetPendingKiB(kib)
			}
			st, err := ix.Update(context.Background())
			require.NoError(t, err)
			require.Equal(t, 1, st.Indexed)
			var v int
			err = ix.db.QueryRow(`SELECT v FROM fts_config WHERE k = 'hashsize'`).Scan(&v)
			if errors.Is(err, sql.ErrNoRows) {
				v = defaultPendingBytes // never set: FTS5's own
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, defaultPendingBytes, v)
			assert.Len(t, search(t, ix, Query{Text: "flaky"}), 1)
		})
	}
}

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

// TestSearchRanksByRelevance: hits come by bm25, not by time: the text
// where a word is more often, or that is shorter, first, though the
// other is newer. An index that scored every row alike (FTS5's bm25 on a
// contentless table with detail=column: it finds a row's instances of a
// word by tokenizing the row's text again, which it does not have, so
// every score is 0) would give the newer first.
func TestSearchRanksByRelevance(t *testing.T) {
	cases := []struct{ name, relevant, newer string }{
		{"term frequency", "zebra one zebra two zebra three", "zebra one two three four five"},
		{"length", "zebra one", "zebra one two three four five six seven eight nine"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			var runs []string
			for _, text := range []string{tc.relevant, tc.newer} {
				runs = append(runs, recordSteps(t, root, func(ctx context.Context, s *lifecycle.Step) error {
					return s.AssistantMessage(ctx, transcript.TextBlock(text))
				}))
			}
			ix, _ := openUpdated(t, root)
			hits := search(t, ix, Query{Text: "zebra"})
			require.Len(t, hits, 2)
			at := map[string]time.Time{hits[0].RunID: hits[0].Time, hits[1].RunID: hits[1].Time}
			require.True(t, at[runs[0]].Before(at[runs[1]]), "the relevant text is the older")
			assert.Equal(t, runs, []string{hits[0].RunID, hits[1].RunID}, "the relevant text first")
		})
	}
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

// TestRepeatedCallSharedWhileWaiting: a tool call still waiting for its
// result when its run grows (its call id still set in docs) shares its
// row with the same call made again in the part read later.
func TestRepeatedCallSharedWhileWaiting(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	store := recorder.NewStore(root)
	call := func(id string) func(ctx context.Context, s *lifecycle.Step) error {
		return func(ctx context.Context, s *lifecycle.Step) error {
			in, _ := json.Marshal(map[string]string{"command": "make lint"})
			return s.Record(ctx, &transcript.Event{Type: transcript.ToolCall, Payload: &transcript.ToolPayload{Name: "Bash", CallID: id, Input: in, Command: "make lint", Fidelity: transcript.FidelityAgentEmitted}})
		}
	}
	run, err := lifecycle.Start(ctx, store, lifecycle.RunOptions{Name: "waits"})
	require.NoError(t, err)
	require.NoError(t, run.StepAt(ctx, "one", 0, transcript.KindAgent, call("c1")))
	require.NoError(t, run.Detach())
	ix, _ := openUpdated(t, root)
	require.Equal(t, []string{"c1"}, queryStrings(t, ix, `SELECT call_id FROM docs`), "the call waits")

	run, err = lifecycle.Attach(ctx, store, run.RunID(), lifecycle.RunOptions{})
	require.NoError(t, err)
	require.NoError(t, run.StepAt(ctx, "two", 0, transcript.KindAgent, call("c2")))
	require.NoError(t, run.Finish(ctx, nil))
	st, err := ix.Update(ctx)
	require.NoError(t, err)
	require.Equal(t, 0, st.Reindexed)
	assert.Equal(t, 1, ftsRows(t, ix), "the second call shares the waiting one's row")
	assert.Len(t, search(t, ix, Query{Text: "lint", Every: true}), 2)
}

// TestSameTextOtherToolNotShared: the same text in one run under another
// tool (or kind, or role) keeps a row of its own, whose tags say its
// tool: a search filtered by the tool (matched in FTS5's tags column)
// finds each.
func TestSameTextOtherToolNotShared(t *testing.T) {
	root := t.TempDir()
	recordSteps(t, root, func(ctx context.Context, s *lifecycle.Step) error {
		for _, tool := range []string{"Bash", "Read", "Bash"} {
			err := s.Record(ctx, &transcript.Event{Type: transcript.ToolResult, Payload: &transcript.ToolPayload{Name: tool, CallID: "c-" + tool, Output: "zephyr done", Status: "ok", Fidelity: transcript.FidelityAgentEmitted}})
			if err != nil {
				return err
			}
		}
		return nil
	})
	ix, st := openUpdated(t, root)
	require.Equal(t, 3, st.Docs)
	assert.Equal(t, 2, ftsRows(t, ix), "Bash's output once, Read's once")
	for tool, n := range map[string]int{"Bash": 2, "Read": 1} {
		res, err := ix.SearchResults(context.Background(), Query{Text: "zephyr", Tool: tool, Every: true, Limit: 5})
		require.NoError(t, err)
		assert.Len(t, res.Hits, n, tool)
		for _, h := range res.Hits {
			assert.Equal(t, tool, h.Tool)
		}
	}
}

// copyTranscripts copies root's transcripts into a new storage root
// without its index, their times kept (Held's rule reads when a tree
// was written), and returns it.
func copyTranscripts(t *testing.T, root string) string {
	t.Helper()
	dst := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dst, "transcripts"), 0o700))
	files, err := filepath.Glob(filepath.Join(root, "transcripts", "*.jsonl"))
	require.NoError(t, err)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		info, err := os.Stat(f)
		require.NoError(t, err)
		to := filepath.Join(dst, "transcripts", filepath.Base(f))
		require.NoError(t, os.WriteFile(to, b, 0o600))
		require.NoError(t, os.Chtimes(to, info.ModTime(), info.ModTime()))
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
				got, ranked := pagedRuns(t, ix, Query{Text: "widget", Every: true, Limit: size, RankAmong: tc.among})
				if size < tc.among {
					assert.Equal(t, tc.ranked, ranked)
					assert.ElementsMatch(t, tc.want, got)
				}
			})
		}
	}
}

// injected records a message.user of one text block the agent's tooling
// injected (origin injected_context), as a plugin writes context it
// sends again every turn.
func injected(ctx context.Context, s *lifecycle.Step, text string) error {
	b := transcript.Block{Type: transcript.BlockText, Fidelity: transcript.FidelityRouter, Text: text, Origin: transcript.OriginInjected}
	return s.Record(ctx, &transcript.Event{Type: transcript.MessageUser, Payload: &transcript.MessagePayload{Role: "user", Blocks: []transcript.Block{b}}})
}

// crossRows is how many rows shared across runs the index holds (texts),
// and how many documents share them.
func crossRows(t *testing.T, ix *Index) (rows, docs int) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, ix.db.QueryRowContext(ctx, `SELECT count(*) FROM texts`).Scan(&rows))
	require.NoError(t, ix.db.QueryRowContext(ctx, `SELECT count(*) FROM docs WHERE fid < 0`).Scan(&docs))
	return rows, docs
}

// TestInjectedTextSharedAcrossRuns: a system prompt or injected context
// (crossRun) is one fts row for every run that has it (texts), whether
// a run is read whole or grows, and in any order; every document is
// still a hit of its own (its run, seq, step), found by its own
// filters. A run removed or read again leaves the row while another
// run's document shares it, and takes it with the last; a new run's
// documents, whose ids may be those of a removed run's, never match the
// kept row.
func TestInjectedTextSharedAcrossRuns(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	store := recorder.NewStore(root)
	const system = "kappa lambda house rules"
	turns := func(name string, n int) func(ctx context.Context, s *lifecycle.Step) error {
		return func(ctx context.Context, s *lifecycle.Step) error {
			for i := range n {
				if err := s.UserMessage(ctx, fmt.Sprintf("question %s%d", name, i), system); err != nil {
					return err
				}
				if err := injected(ctx, s, "kappa injected "+name); err != nil { // this run's own context
					return err
				}
			}
			return nil
		}
	}
	a := recordSteps(t, root, turns("a", 2))
	b := recordSteps(t, root, turns("b", 2))
	run, err := lifecycle.Start(ctx, store, lifecycle.RunOptions{Name: "grows"})
	require.NoError(t, err)
	require.NoError(t, run.StepAt(ctx, "one", 0, transcript.KindAgent, turns("c", 1)))
	require.NoError(t, run.Detach())
	c := run.RunID()
	ix, _ := openUpdated(t, root)
	rows, docs := crossRows(t, ix)
	assert.Equal(t, 4, rows, "the system prompt once, each run's context once")
	assert.Equal(t, 10, docs)
	assert.Equal(t, 4+5, ftsRows(t, ix), "the shared rows and the five prompts")

	// Grown by a second turn: read from where indexing stopped, it
	// shares the rows (the system prompt's with every run).
	run, err = lifecycle.Attach(ctx, store, c, lifecycle.RunOptions{})
	require.NoError(t, err)
	require.NoError(t, run.StepAt(ctx, "two", 0, transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
		if err := s.UserMessage(ctx, "question c1", system); err != nil {
			return err
		}
		return injected(ctx, s, "kappa injected c")
	}))
	require.NoError(t, run.Finish(ctx, nil))
	st, err := ix.Update(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, st.Indexed)
	require.Equal(t, 0, st.Reindexed)
	rows, docs = crossRows(t, ix)
	assert.Equal(t, 4, rows)
	assert.Equal(t, 12, docs)
	assert.Equal(t, 4+6, ftsRows(t, ix))

	every := search(t, ix, Query{Text: `"kappa lambda"`, Every: true})
	require.Len(t, every, 6, "each run's each turn a hit")
	runsOf := map[string][]string{}
	for _, h := range every {
		assert.True(t, h.Injected)
		assert.Equal(t, "user", h.Role)
		runsOf[h.RunID] = append(runsOf[h.RunID], h.Path)
	}
	assert.Len(t, runsOf[a], 2)
	assert.Len(t, runsOf[b], 2)
	assert.ElementsMatch(t, []string{"one", "two"}, runsOf[c], "each found at its own step")
	folded := search(t, ix, Query{Text: `"kappa lambda"`})
	require.Len(t, folded, 1)
	assert.Equal(t, 5, folded[0].Also)
	for _, q := range []Query{{Run: b[:8]}, {Role: "user"}, {Kind: "text"}, {Tool: "Bash"}, {Role: "assistant"}, {Run: c[:8], Since: time.Now().Add(time.Hour)}} {
		q.Text, q.Every = "kappa lambda", true
		var want []string
		for _, h := range every {
			if (q.Run == "" || strings.HasPrefix(h.RunID, q.Run)) && (q.Role == "" || q.Role == h.Role) && q.Tool == "" && q.Since.IsZero() {
				want = append(want, fmt.Sprintf("%s %d", h.RunID, h.Seq))
			}
		}
		var got []string
		for _, h := range search(t, ix, q) {
			got = append(got, fmt.Sprintf("%s %d", h.RunID, h.Seq))
		}
		assert.ElementsMatch(t, want, got, "%+v", q)
	}
	for _, name := range []string{"a", "b", "c"} {
		hits := search(t, ix, Query{Text: "injected " + name, Every: true})
		assert.Len(t, hits, map[string]int{"a": 2, "b": 2, "c": 2}[name], name)
	}

	// Built from nothing, in another order: the same rows shared, the
	// same hits.
	fresh, _ := openUpdated(t, copyTranscripts(t, root))
	rows, docs = crossRows(t, fresh)
	assert.Equal(t, []int{4, 12}, []int{rows, docs})
	assert.Equal(t, 4+6, ftsRows(t, fresh))
	assert.ElementsMatch(t, hitKeys(every), hitKeys(search(t, fresh, Query{Text: `"kappa lambda"`, Every: true})))

	// c, the newest, rewritten (read again from the start), then
	// removed: the system prompt's row stays for a and b, c's own
	// context goes.
	path := func(id string) string { return filepath.Join(root, "transcripts", id+".jsonl") }
	orig, err := os.ReadFile(path(c))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path(c), append([]byte(strings.SplitAfter(string(orig), "\n")[1]), orig...), 0o600))
	st, err = ix.Check(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, st.Reindexed)
	assert.Len(t, search(t, ix, Query{Text: `"kappa lambda"`, Every: true}), 6)
	require.NoError(t, os.Remove(path(c)))
	_, err = ix.Update(ctx)
	require.NoError(t, err)
	rows, docs = crossRows(t, ix)
	assert.Equal(t, []int{3, 8}, []int{rows, docs}, "c's context gone, the system prompt kept")
	assert.Empty(t, search(t, ix, Query{Text: "injected c"}))

	// A new run (its documents numbered where c's were) with other
	// texts: the kept row is still a's and b's alone.
	d := recordSteps(t, root, turns("d", 1))
	_, err = ix.Update(ctx)
	require.NoError(t, err)
	hits := search(t, ix, Query{Text: `"kappa lambda"`, Every: true})
	require.Len(t, hits, 5)
	var dHits int
	for _, h := range hits {
		if h.RunID == d {
			dHits++
		}
	}
	assert.Equal(t, 1, dHits)
	assert.Len(t, search(t, ix, Query{Text: "question d0", Every: true}), 1)

	// The last run that shares a row takes it along.
	for _, id := range []string{a, b, d} {
		require.NoError(t, os.Remove(path(id)))
		_, err = ix.Update(ctx)
		require.NoError(t, err)
	}
	rows, docs = crossRows(t, ix)
	assert.Equal(t, []int{0, 0}, []int{rows, docs})
	assert.Equal(t, 0, ftsRows(t, ix), "no row left behind")
	assert.Empty(t, search(t, ix, Query{Text: "kappa"}))
}

// TestSearchRanksInjectedTextOnceAcrossRuns: bm25 counts an injected
// text once in the whole index, however many runs have it. Eight runs
// are given "alpha beta" as context, one run a context of 24 words with
// four alphas (TestSearchRanksARunsTextOnce's numbers: counted eight
// times, the short text ranks first; counted once, the long one).
func TestSearchRanksInjectedTextOnceAcrossRuns(t *testing.T) {
	root := t.TempDir()
	var repeats []string
	for range 8 {
		repeats = append(repeats, recordSteps(t, root, func(ctx context.Context, s *lifecycle.Step) error {
			return injected(ctx, s, "alpha beta")
		}))
	}
	long := recordSteps(t, root, func(ctx context.Context, s *lifecycle.Step) error {
		return injected(ctx, s, "alpha one two three four five alpha six seven eight nine ten alpha eleven twelve thirteen fourteen fifteen alpha sixteen seventeen eighteen nineteen twenty")
	})
	ix, st := openUpdated(t, root)
	assert.Equal(t, 9, st.Docs)
	assert.Equal(t, 2, ftsRows(t, ix))
	hits := search(t, ix, Query{Text: "alpha"})
	require.Len(t, hits, 2)
	assert.Equal(t, long, hits[0].RunID, "the long text first: bm25 over the index's distinct injected texts")
	assert.Contains(t, repeats, hits[1].RunID)
	assert.Equal(t, 7, hits[1].Also)
	var runs []string
	for _, h := range search(t, ix, Query{Text: "beta", Every: true}) {
		runs = append(runs, h.RunID)
	}
	assert.ElementsMatch(t, repeats, runs, "each run's context a hit of its run")
}

// TestSearchRanksSharedAcrossRunsLast: when more documents match than
// are ranked (Query.RankAmong), the newest are those of rows a run owns
// (what a person or the model wrote, newest first), then the rows
// shared across runs (injected text, which ranks below the rest
// anyway), however new the runs sharing them: a row shared across runs
// is numbered below every document. A bound that falls among a shared
// row's documents ranks them all, and the pages after the first show
// every hit ranked once.
func TestSearchRanksSharedAcrossRunsLast(t *testing.T) {
	root := t.TempDir()
	ix, _ := openUpdated(t, root)
	ctx := context.Background()
	update := func(id string) string {
		_, err := ix.Update(ctx) // indexed in this order: the last newest
		require.NoError(t, err)
		return id
	}
	oldest := update(recordSteps(t, root, func(ctx context.Context, s *lifecycle.Step) error {
		return s.AssistantMessage(ctx, transcript.TextBlock("widget oldest"))
	}))
	var shared []string
	for range 4 {
		shared = append(shared, update(recordSteps(t, root, func(ctx context.Context, s *lifecycle.Step) error {
			return injected(ctx, s, "widget again")
		})))
	}
	newest := update(recordSteps(t, root, func(ctx context.Context, s *lifecycle.Step) error {
		return s.AssistantMessage(ctx, transcript.TextBlock("widget newest"))
	}))
	all := append([]string{newest, oldest}, shared...)
	for _, tc := range []struct {
		among  int
		ranked int
		want   []string // the runs of the hits, as a set
	}{
		{1, 1, []string{newest}},
		{2, 2, []string{newest, oldest}},
		{3, 3, all},
		{5, 5, all},
		{6, 0, all},
	} {
		for _, size := range []int{1, 2, 3} {
			t.Run(fmt.Sprintf("among %d, %d a page", tc.among, size), func(t *testing.T) {
				got, ranked := pagedRuns(t, ix, Query{Text: "widget", Every: true, Limit: size, RankAmong: tc.among})
				if size < tc.among {
					assert.Equal(t, tc.ranked, ranked)
					assert.ElementsMatch(t, tc.want, got)
				}
			})
		}
	}
}

// pagedRuns reads every page of q's hits, checking that none is shown
// twice, and returns their runs in order and the first page's
// RankedAmong.
func pagedRuns(t *testing.T, ix *Index, q Query) (runs []string, rankedAmong int) {
	t.Helper()
	seen := map[string]bool{}
	for pages := 0; ; pages++ {
		require.Less(t, pages, 20, "paging does not end")
		res, err := ix.SearchResults(context.Background(), q)
		require.NoError(t, err)
		if pages == 0 {
			rankedAmong = res.RankedAmong
		}
		for _, h := range res.Hits {
			k := fmt.Sprintf("%s %d", h.RunID, h.Seq)
			assert.False(t, seen[k], "%s shown twice", k)
			seen[k] = true
			runs = append(runs, h.RunID)
		}
		if res.Next == nil {
			return runs, rankedAmong
		}
		q.From = res.Next
	}
}

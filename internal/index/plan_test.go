package index

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// TestWriterStatementsUseIndexes: the statements the writer runs once per
// event or per result find their rows through an index, never by reading
// a run's documents (a scan per result made the index quadratic in a
// run's length). The plan is SQLite's own, for the schema Open creates.
func TestWriterStatementsUseIndexes(t *testing.T) {
	ctx := context.Background()
	ix, _, err := Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for _, tc := range []struct {
		name, sql, want string
		args            []any
	}{
		// Through docs_run, each of the call's few documents then read
		// for its seq and status (a reused id's calls: setOutcome).
		{"a result finds its call", outcomeSQL, "INDEX docs_run (rid=? AND call_id=?)", []any{1, "call"}},
		{"a call takes its result's outcome", setStatusSQL, "USING INTEGER PRIMARY KEY (rowid=?)", []any{"ok", 1}},
		// A grown run's repeated text finds its row by the text's hash,
		// not by reading the run's documents (shared).
		{"a grown run finds its text's row", textRowSQL, "INDEX docs_run (rid=? AND call_id=? AND thash=?)", []any{1, 2, 0, "", ""}},
		{"a grown run finds a waiting call's row", textRowSQL, "INDEX docs_run (rid=? AND call_id>?)", []any{1, 2, 0, "", ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := queryPlan(t, ix, tc.sql, tc.args...)
			if !strings.Contains(got, tc.want) {
				t.Errorf("plan %q, want it %s", got, tc.want)
			}
		})
	}
}

// TestProjectsUsesIndex: the projects every sync looks in are read from
// runs_project alone, not from every row of runs (SQLite's own plan, for
// the schema Open creates).
func TestProjectsUsesIndex(t *testing.T) {
	ix, _, err := Open(context.Background(), t.TempDir())
	require.NoError(t, err)
	defer ix.Close()
	got := queryPlan(t, ix, projectsSQL)
	assert.Contains(t, got, "COVERING INDEX runs_project (parent_run_id=?)")
	assert.NotContains(t, got, "TEMP B-TREE")
}

// TestSearchProjectUsesIndexes: a search by project reads each hit's run
// by its number (docs.rid, the runs' rowid) and its parent through the
// run ids' index, never by a scan of the runs (the condition is per hit;
// SQLite's own plan, for the schema Open creates).
func TestSearchProjectUsesIndexes(t *testing.T) {
	ctx := context.Background()
	ix, _, err := Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for _, tc := range []struct {
		name string
		q    Query
	}{
		{"words", Query{Text: "flaky test", Projects: []string{"/src/app"}}},
		{"words, two forms of the directory", Query{Text: "flaky", Projects: []string{"/tmp/app", "/private/tmp/app"}, Provider: "claude"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sqlq, args := searchSQL(tc.q, MatchExpr(tc.q.Text), true, -1, 0)
			got := queryPlan(t, ix, sqlq, args...)
			for _, want := range []string{"SEARCH r USING INTEGER PRIMARY KEY (rowid=?)", "SEARCH p USING INDEX sqlite_autoindex_runs_1 (run_id=?)"} {
				if !strings.Contains(got, want) {
					t.Errorf("plan %q, want it to %s", got, want)
				}
			}
			for _, bad := range []string{"SCAN r", "SCAN p", "SCAN runs"} {
				if strings.Contains(got, bad+" ") || strings.HasSuffix(got, bad) {
					t.Errorf("plan %q has %s", got, bad)
				}
			}
		})
	}
}

// queryPlan is SQLite's plan of a statement, its steps joined by "; ".
func queryPlan(t *testing.T, ix *Index, sqlq string, args ...any) string {
	t.Helper()
	rows, err := ix.db.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+sqlq, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notUsed int
		var detail string
		if err := rows.Scan(&id, &parent, &notUsed, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "; ")
}

// TestSearchBoundReadsByID: finding and ranking a common word's newest
// matches reads the matches in FTS5's own order of ids, newest first,
// and stops there: no sort of every match (which would rank or read them
// all), with a filter or without, with tags or without.
func TestSearchBoundReadsByID(t *testing.T) {
	ctx := context.Background()
	ix, _, err := Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for _, q := range []Query{{Text: "tests"}, {Text: "test", Role: "user", Projects: []string{"/src/app"}}, {Text: "test", Kind: "tool_result", Status: "ok"}} {
		sqlq, args := newestSQL(q, ftsExpr(q, MatchExpr(q.Text), true), DefaultRankAmong, 1000)
		if got := queryPlan(t, ix, sqlq, args...); strings.Contains(got, "TEMP B-TREE") || !strings.Contains(got, "SCAN fts VIRTUAL TABLE") {
			t.Errorf("%+v: plan %q sorts, or does not read fts first", q, got)
		}
	}
}

// TestCallOutcomeOneSegment: a tool call takes its result's outcome
// whether the result is read with the call or by a later update, and
// giving it costs FTS5 no segment: an update's terms are flushed once,
// at its commit. An UPDATE that may change several rows opens a
// statement savepoint, at which FTS5 flushed its pending terms, so every
// tool result made a segment of its own (11 left after automerge, for 40
// results, before).
func TestCallOutcomeOneSegment(t *testing.T) {
	const calls = 40
	status := func(i int) string {
		if i%3 == 0 {
			return "error"
		}
		return "ok"
	}
	for _, tc := range []struct {
		name    string
		split   bool // the results come in a later update than the calls
		commits int
	}{
		{"calls and results in one read", false, 1},
		{"results read by a later update", true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			root := t.TempDir()
			store := recorder.NewStore(root)
			run, err := lifecycle.Start(ctx, store, lifecycle.RunOptions{Name: "calls"})
			require.NoError(t, err)
			call := func(ctx context.Context, s *lifecycle.Step, i int) error {
				in, _ := json.Marshal(map[string]string{"command": fmt.Sprintf("make target%d", i)})
				return s.Record(ctx, &transcript.Event{Type: transcript.ToolCall, Payload: &transcript.ToolPayload{Name: "Bash", CallID: fmt.Sprint("c", i), Input: in, Fidelity: transcript.FidelityAgentEmitted}})
			}
			result := func(ctx context.Context, s *lifecycle.Step, i int) error {
				return s.Record(ctx, &transcript.Event{Type: transcript.ToolResult, Payload: &transcript.ToolPayload{Name: "Bash", CallID: fmt.Sprint("c", i), Output: fmt.Sprint("output ", i), Status: status(i), Fidelity: transcript.FidelityAgentEmitted}})
			}
			require.NoError(t, run.StepAt(ctx, "one", 0, transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
				for i := range calls {
					if err := call(ctx, s, i); err != nil {
						return err
					}
					if !tc.split {
						if err := result(ctx, s, i); err != nil {
							return err
						}
					}
				}
				return nil
			}))
			require.NoError(t, run.Detach())
			ix, _ := openUpdated(t, root)
			if tc.split {
				run, err = lifecycle.Attach(ctx, store, run.RunID(), lifecycle.RunOptions{})
				require.NoError(t, err)
				require.NoError(t, run.StepAt(ctx, "two", 0, transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
					for i := range calls {
						if err := result(ctx, s, i); err != nil {
							return err
						}
					}
					return nil
				}))
				require.NoError(t, run.Detach())
				st, err := ix.Update(ctx)
				require.NoError(t, err)
				require.Equal(t, 0, st.Reindexed, "grown: read from where the first update stopped")
			}
			// Each call in order (one document each: its text names
			// its target) has its outcome, and no call id once it has
			// one (setStatusSQL).
			got := callDocs(t, ix)
			require.Len(t, got, calls)
			for i, c := range got {
				assert.Equal(t, status(i), c[0], "call c%d", i)
				assert.Empty(t, c[1], "call c%d settled keeps its call id", i)
			}
			var segments int
			require.NoError(t, ix.db.QueryRowContext(ctx, `SELECT count(DISTINCT segid) FROM fts_idx`).Scan(&segments))
			assert.Equal(t, tc.commits, segments, "FTS5 segments")
			// The failed results are the run's errors (counted as they
			// are read, the calls left out), whichever update read them.
			listed, _, err := ix.List(ctx, ListQuery{})
			require.NoError(t, err)
			require.Len(t, listed, 1)
			assert.Equal(t, (calls+2)/3, listed[0].Errors)
		})
	}
}

// TestDocChunks: documents go into docs a chunk at a time (docChunk, by
// one statement that lets SQLite number them), each with the id of its
// text in fts, and cost FTS5 no segment; when the run that held the
// largest ids is read again from its start in the same transaction (its
// documents removed first), SQLite would number a chunk below the ids
// its texts have in fts, and the documents go in one by one with their
// ids instead. Either way each call is found by its own words, with its
// own outcome.
func TestDocChunks(t *testing.T) {
	ctx := context.Background()
	const calls = 3*docChunk + 5 // calls and results: 6 chunks and 10 more
	status := func(i int) string {
		if i%4 == 0 {
			return "error"
		}
		return "ok"
	}
	root := t.TempDir()
	id := recordSteps(t, root, func(ctx context.Context, s *lifecycle.Step) error {
		for i := range calls {
			if err := bashCall(ctx, s, fmt.Sprint("c", i), fmt.Sprintf("make target%d", i), fmt.Sprintf("built output%d", i), status(i)); err != nil {
				return err
			}
		}
		return nil
	})
	check := func(t *testing.T, ix *Index) {
		t.Helper()
		got := callDocs(t, ix)
		require.Len(t, got, calls)
		for i, c := range got {
			assert.Equal(t, status(i), c[0], "call c%d", i)
			assert.Empty(t, c[1], "call c%d settled keeps its call id", i)
		}
		for i := range calls {
			hits := search(t, ix, Query{Text: fmt.Sprintf(`"target%d"`, i), Every: true}) // quoted: target1, not target10
			require.Len(t, hits, 1, "target%d", i)
			assert.Equal(t, "tool_call", hits[0].Kind)
			assert.Equal(t, status(i), hits[0].Status)
			assert.Contains(t, hits[0].Snippet, fmt.Sprintf("«target%d»", i))
			hits = search(t, ix, Query{Text: fmt.Sprintf(`"output%d"`, i), Every: true})
			require.Len(t, hits, 1, "output%d", i)
			assert.Equal(t, "tool_result", hits[0].Kind)
			assert.Contains(t, hits[0].Snippet, fmt.Sprintf("«output%d»", i))
		}
		assertNoOrphans(t, ix)
	}
	ix, st := openUpdated(t, root)
	require.Equal(t, 1, st.Indexed)
	check(t, ix)
	var segments int
	require.NoError(t, ix.db.QueryRowContext(ctx, `SELECT count(DISTINCT segid) FROM fts_idx`).Scan(&segments))
	assert.Equal(t, 1, segments, "FTS5 segments: the chunks made none")

	// Rewritten behind the index's back: read again from the start, its
	// documents (the largest ids) removed in the same transaction.
	path := filepath.Join(root, "transcripts", id+".jsonl")
	orig, err := os.ReadFile(path)
	require.NoError(t, err)
	first, _, _ := bytes.Cut(orig, []byte("\n"))
	require.NoError(t, os.WriteFile(path, append(append(append([]byte(nil), first...), '\n'), orig...), 0o600))
	st, err = ix.Check(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, st.Reindexed)
	check(t, ix)
}

// TestSearchFiltersInFTS: the kind, role and tool filters are part of
// what FTS5 matches (the tags column), so that a filtered search of a
// common word reads from docs only the documents the filter keeps, not
// every match of the word: for every value of each in the index, the
// documents FTS5 matches by its tag are exactly the documents that hold
// it. A word is matched in the text alone: one spelled as a tag finds
// only the text that holds it.
func TestSearchFiltersInFTS(t *testing.T) {
	root := t.TempDir()
	record(t, root, "fix the flaky test", "the zebra test is fixed", "Bash", "go test ./...", "PASS ok zebra", false)
	record(t, root, "write docs", "docs written", "Edit", "sed -i s/a/b/ README.md", "edited", true)
	tag := filterTags("text", "", "")
	record(t, root, "the tag "+tag+" as a word", "no", "Read", "cat", "x", false)
	ix, _ := openUpdated(t, root)
	ctx := context.Background()
	count := func(sqlq string, args ...any) int {
		t.Helper()
		var n int
		if err := ix.db.QueryRowContext(ctx, sqlq, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, col := range []string{"kind", "role", "tool"} {
		// docs.kind holds a code (kindCode), the others their text.
		rows, err := ix.db.QueryContext(ctx, `SELECT DISTINCT `+col+` FROM docs WHERE `+col+` != '' OR typeof(`+col+`) = 'integer'`)
		if err != nil {
			t.Fatal(err)
		}
		var values []any
		for rows.Next() {
			var v any
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			values = append(values, v)
		}
		rows.Close()
		if len(values) < 2 {
			t.Fatalf("%s: values %q, want several to tell apart", col, values)
		}
		for _, v := range values {
			var q Query
			switch col {
			case "kind":
				code, ok := v.(int64)
				if !ok || kindName(int(code)) == "" {
					t.Fatalf("kind %v: not a kind's code", v)
				}
				q.Kind = kindName(int(code))
			case "role":
				q.Role = fmt.Sprint(v)
			case "tool":
				q.Tool = fmt.Sprint(v)
			}
			want := count(`SELECT count(*) FROM docs WHERE `+col+` = ?`, v)
			got := count(`SELECT count(*) FROM fts WHERE fts MATCH ? AND rowid IN (SELECT id FROM docs WHERE `+col+` = ?)`, tagsExpr(q), v)
			all := count(`SELECT count(*) FROM fts WHERE fts MATCH ?`, tagsExpr(q))
			if got != want || all != want {
				t.Errorf("%s %v: FTS5 matches %d documents, %d of them with it, want the %d that hold it", col, v, all, got, want)
			}
		}
	}
	for _, word := range []string{tag, strings.ToUpper(tag), tag[:4], "z", "Zq"} {
		// Every hit's text holds the word (its snippet marks it), the
		// prompt among them; without the column filter every document
		// of kind text would match by its tags.
		prompts := 0
		for _, h := range search(t, ix, Query{Text: word, Every: true}) {
			if !strings.Contains(h.Snippet, "«") {
				t.Errorf("the word %q found %s %s %q, whose text does not hold it", word, h.Kind, h.Role, h.Snippet)
			}
			if h.Role == "user" {
				prompts++
			}
		}
		if prompts != 1 {
			t.Errorf("the word %q found %d prompts, want the one that holds it", word, prompts)
		}
	}
}

// TestNewestRankedAsSearchSQL: the first page of a search bounded to
// the newest matches (newestRanked: the matches read newest first, then
// sorted here) gives the rows the ranked statement gives (searchSQL,
// sorted by SQLite) over the ids newestRanked says were ranked, in the
// same order, with the same keys: so a page after it (which runs
// searchSQL) goes on where it ended. With words in every run, words in
// some, filters that are tags (kind, role, tool) and filters that are
// not (status, run), bounds below and above the matches, and a document
// ranked with injected context.
func TestNewestRankedAsSearchSQL(t *testing.T) {
	root := t.TempDir()
	for i, w := range []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"} {
		tool := "Bash"
		if i%3 == 0 {
			tool = "Read"
		}
		// widget in the prompt, the answer, the thought, the call's input
		// and its result; the same answer in every run (equal ranks, the
		// order decided by time and id).
		record(t, root, "widget "+w+" prompt "+strings.Repeat("widget ", i), "widget done", tool, "widget ls "+w, "widget listed", i%4 == 1)
	}
	recordSteps(t, root, func(ctx context.Context, s *lifecycle.Step) error {
		return s.UserMessage(ctx, "widget injected", "<env>widget</env>")
	})
	ix, _ := openUpdated(t, root)
	ctx := context.Background()
	var top int64
	require.NoError(t, ix.db.QueryRowContext(ctx, `SELECT max(id) FROM docs`).Scan(&top))
	for _, q := range []Query{
		{Text: "widget"}, {Text: "widget", Role: "user"}, {Text: "widget", Kind: "tool_result", Status: "ok"},
		{Text: "widget", Tool: "Bash"}, {Text: "widget", Status: "error"}, {Text: "alpha"}, {Text: "wid done"},
		{Text: "widget", Every: true}, {Text: "listed", Role: "tool", Kind: "tool_result"},
	} {
		for _, among := range []int{1, 2, 5, 9, 17, 1000} {
			for _, limit := range []int{1, 3} {
				q := q
				q.Limit, q.RankAmong = limit, among
				expr := ftsExpr(q, MatchExpr(q.Text), true)
				got, after, bounded, err := ix.newestRanked(ctx, q, expr, among, top)
				require.NoError(t, err)
				sqlq, args := searchSQL(q, expr, true, after, top)
				want, err := ix.searchRows(ctx, sqlq, args)
				require.NoError(t, err)
				require.Equal(t, want, got, "%+v among %d", q, among)
				// Every match of the words and filters, none bounded.
				sqlq, args = searchSQL(Query{Text: q.Text, Role: q.Role, Kind: q.Kind, Tool: q.Tool, Status: q.Status, Limit: 1 << 20, Every: true}, expr, true, -1, top)
				m, err := ix.searchRows(ctx, sqlq, args)
				require.NoError(t, err)
				matches := len(m)
				assert.Equal(t, matches > among, bounded, "%+v among %d: %d matches", q, among, matches)
				if bounded {
					assert.Len(t, got, min(among, q.rows()))
				} else {
					assert.Len(t, got, min(matches, q.rows()))
				}
			}
		}
	}
}

// TestCallOutcomeReusedID: a provider may reuse a call id for a new call
// once the first is answered (ids unique per response, not per session);
// each call takes its own result's outcome (the n-th result of an id
// answers its n-th call), whether the calls and results are read by one
// update or by several, so a search of failed calls finds the failed one
// and not the other.
func TestCallOutcomeReusedID(t *testing.T) {
	// c<cmd> is a call of id c1 running cmd, r<status> its result.
	for _, tc := range []struct {
		name  string
		reads [][]string // the events each update reads
		// old: before each later update, the settled calls get their
		// call id back, as the index an older twasm wrote keeps it.
		old bool
	}{
		{"one read", [][]string{{"cmake a", "rerror", "cmake b", "rok"}}, false},
		{"the second call read later", [][]string{{"cmake a", "rerror"}, {"cmake b", "rok"}}, false},
		{"the first result read later", [][]string{{"cmake a"}, {"rerror", "cmake b", "rok"}}, false},
		{"each event read alone", [][]string{{"cmake a"}, {"rerror"}, {"cmake b"}, {"rok"}}, false},
		{"the second call read later, an older index", [][]string{{"cmake a", "rerror"}, {"cmake b", "rok"}}, true},
		{"each event read alone, an older index", [][]string{{"cmake a"}, {"rerror"}, {"cmake b"}, {"rok"}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix := indexReads(t, tc.reads, tc.old, func(i int, ix *Index) {
				// A call waiting for its result keeps its id, by which
				// the result finds it; a settled call keeps none (unless
				// an older twasm settled it).
				for _, c := range callDocs(t, ix) {
					if c[0] == "" {
						assert.Equal(t, "c1", c[1], "a call waiting for its result, after read %d", i)
					} else if !tc.old {
						assert.Empty(t, c[1], "a settled call, after read %d", i)
					}
				}
			})
			assert.Equal(t, []string{"error", "ok"}, callStatuses(t, ix), "each call's own outcome, in order")
			hits := search(t, ix, Query{Kind: "tool_call", Status: "error"})
			require.Len(t, hits, 1)
			assert.Contains(t, hits[0].Snippet, "make a")
		})
	}
}

// TestCallOutcomeAsPairer: the index gives each call of a run the outcome
// of the result transcript.Pairer pairs with it, whether the file is read
// at once (writer.pairs) or a result is read after its call (outcomeSQL):
// the statuses are compared with the Pairer's answer on the same events.
func TestCallOutcomeAsPairer(t *testing.T) {
	// c<cmd> is a call of id c1 running cmd, r<status> its result, "|"
	// starts another step of the run (each read starts one too).
	for _, tc := range []struct {
		name  string
		reads [][]string // the events each update reads
	}{
		{"reused while open", [][]string{{"cmake a", "cmake b", "rerror", "rok"}}},
		{"reused while open, the results read later", [][]string{{"cmake a", "cmake b"}, {"rerror", "rok"}}},
		{"the result's own step first", [][]string{{"cmake a", "|", "cmake b", "rok"}}},
		{"the result's own step first, read later", [][]string{{"cmake a"}, {"cmake b", "rok"}}},
		{"another step's call when its own has none", [][]string{{"cmake a"}, {"rok"}}},
		{"a second result answers none", [][]string{{"cmake a", "rok", "rerror"}}},
		{"a second result read later", [][]string{{"cmake a", "rok"}, {"rerror"}}},
		{"a result before its call answers none", [][]string{{"rok"}, {"cmake a"}}},
		{"three calls, the second unanswered", [][]string{{"cmake a", "rok", "cmake b", "|", "cmake c", "rerror"}}},
		{"three calls, the second unanswered, read apart", [][]string{{"cmake a", "rok"}, {"cmake b"}, {"cmake c", "rerror"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The Pairer's answer: each call's result's status, "" for
			// a call it leaves dangling.
			var pairs transcript.Pairer
			var want []string
			step := 0
			for _, evs := range tc.reads {
				for _, e := range evs {
					path := fmt.Sprint("part", step)
					switch e[0] {
					case '|':
						step++
					case 'c':
						pairs.Call("c1", path, 0)
						want = append(want, "")
					default:
						if k, ok := pairs.Result("c1", path, 0); ok {
							want[k] = e[1:]
						}
					}
				}
				step++
			}
			assert.Equal(t, want, callStatuses(t, indexReads(t, tc.reads, false, nil)), "each call's outcome as the Pairer pairs them")
		})
	}
}

// indexReads records reads into one run and updates an index after each:
// c<cmd> is a call of id c1 running cmd, r<status> its result, and each
// read, and each "|" in one, starts another step (part0, part1...). With
// old, every settled call gets its call id back before each update after
// the first, as the index an older twasm wrote kept it; check, when
// given, is called after each update.
func indexReads(t *testing.T, reads [][]string, old bool, check func(i int, ix *Index)) *Index {
	t.Helper()
	ctx := context.Background()
	root := t.TempDir()
	store := recorder.NewStore(root)
	var ix *Index
	var runID string
	step := 0
	for i, evs := range reads {
		var run *lifecycle.Run
		var err error
		if i == 0 {
			run, err = lifecycle.Start(ctx, store, lifecycle.RunOptions{Name: "calls"})
			runID = run.RunID()
		} else {
			run, err = lifecycle.Attach(ctx, store, runID, lifecycle.RunOptions{})
		}
		require.NoError(t, err)
		for len(evs) > 0 {
			n := slices.Index(evs, "|")
			if n < 0 {
				n = len(evs)
			}
			require.NoError(t, run.StepAt(ctx, fmt.Sprint("part", step), 0, transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
				for _, e := range evs[:n] {
					p := &transcript.ToolPayload{Name: "Bash", CallID: "c1", Fidelity: transcript.FidelityAgentEmitted}
					typ := transcript.ToolCall
					if e[0] == 'c' {
						p.Input, _ = json.Marshal(map[string]string{"command": e[1:]})
					} else {
						typ, p.Status, p.Output, p.HasOutput = transcript.ToolResult, e[1:], e[1:], true
					}
					if err := s.Record(ctx, &transcript.Event{Type: typ, Payload: p}); err != nil {
						return err
					}
				}
				return nil
			}))
			step++
			evs = evs[min(n+1, len(evs)):]
		}
		require.NoError(t, run.Detach())
		if ix == nil {
			ix, _ = openUpdated(t, root)
		} else {
			if old {
				_, err := ix.db.ExecContext(ctx, `UPDATE docs SET call_id = 'c1' WHERE kind = ? AND status != ''`, kindCode("tool_call"))
				require.NoError(t, err)
			}
			_, err := ix.Update(ctx)
			require.NoError(t, err)
		}
		if check != nil {
			check(i, ix)
		}
	}
	return ix
}

// callStatuses returns the status of each tool call document, in seq
// order (a settled call keeps no call id: they are all c1's here).
func callStatuses(t *testing.T, ix *Index) []string {
	t.Helper()
	return queryStrings(t, ix, `SELECT status FROM docs WHERE kind = ? ORDER BY seq`, kindCode("tool_call"))
}

// callDocs is the status and call id of every tool call's document, in
// order.
func callDocs(t *testing.T, ix *Index) [][2]string {
	t.Helper()
	rows, err := ix.db.Query(`SELECT status, call_id FROM docs WHERE kind = ? ORDER BY seq`, kindCode("tool_call"))
	require.NoError(t, err)
	defer rows.Close()
	var out [][2]string
	for rows.Next() {
		var c [2]string
		require.NoError(t, rows.Scan(&c[0], &c[1]))
		out = append(out, c)
	}
	require.NoError(t, rows.Err())
	return out
}

package index

import (
	"context"
	"strings"
	"testing"
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
	}{
		{"a call takes its result's outcome", outcomeSQL, "USING INDEX docs_call (run_id=? AND call_id=?)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := queryPlan(t, ix, tc.sql, "ok", "run", "call")
			if !strings.Contains(got, tc.want) {
				t.Errorf("plan %q, want it %s", got, tc.want)
			}
		})
	}
}

// TestSearchProjectUsesIndexes: a search by project reads each hit's run
// and its parent through the runs' key, never by a scan of the runs (the
// condition is per hit; SQLite's own plan, for the schema Open creates).
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
			sqlq, args := searchSQL(tc.q, MatchExpr(tc.q.Text), true, -1)
			got := queryPlan(t, ix, sqlq, args...)
			for _, want := range []string{"SEARCH r USING INDEX sqlite_autoindex_runs_1 (run_id=?)", "SEARCH p USING INDEX sqlite_autoindex_runs_1 (run_id=?)"} {
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

// TestSearchBoundReadsByID: finding where a common word's newest matches
// start reads the matches in FTS5's own order of ids, newest first, and
// stops there: no sort of every match (which would rank or read them
// all), with a filter or without.
func TestSearchBoundReadsByID(t *testing.T) {
	ctx := context.Background()
	ix, _, err := Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for _, q := range []Query{{Text: "tests"}, {Text: "test", Role: "user", Projects: []string{"/src/app"}}} {
		sqlq, args := boundSQL(q, MatchExpr(q.Text), DefaultRankAmong)
		if got := queryPlan(t, ix, sqlq, args...); strings.Contains(got, "TEMP B-TREE") || !strings.Contains(got, "SCAN fts VIRTUAL TABLE") {
			t.Errorf("%+v: plan %q sorts, or does not read fts first", q, got)
		}
	}
}

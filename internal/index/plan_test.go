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
			rows, err := ix.db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+tc.sql, "ok", "run", "call")
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
			got := strings.Join(plan, "; ")
			if !strings.Contains(got, tc.want) {
				t.Errorf("plan %q, want it %s", got, tc.want)
			}
		})
	}
}

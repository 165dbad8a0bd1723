package index

import (
	"context"
	"database/sql"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"modernc.org/sqlite"

	"github.com/twasm/twasm/internal/testing/viewstest"
)

// connections counts the SQLite connections made to each database file,
// by its path (the DSN up to its "?"): every connection of this test
// binary goes through the hook.
var connections = struct {
	sync.Mutex
	n map[string]int
}{n: map[string]int{}}

func init() {
	sqlite.RegisterConnectionHook(func(_ sqlite.ExecQuerierContext, dsn string) error {
		path, _, _ := strings.Cut(strings.TrimPrefix(dsn, "file:"), "?")
		connections.Lock()
		connections.n[path]++
		connections.Unlock()
		return nil
	})
}

// connectionsTo is how many connections were made to path so far.
func connectionsTo(path string) int {
	connections.Lock()
	defer connections.Unlock()
	return connections.n[path]
}

// TestOpenCurrentOneConnection: the index this twasm made is opened on
// one connection (a sync opens it for the projects it knows on every
// run: the read-only check that it is the storage's index, on a
// connection of its own, then the real one, was 8% of the CPU of a
// re-sync with nothing new); an index that is damaged, foreign or of
// another schema is still rebuilt, saying why, as before. Before the
// fix the current index took 2 connections.
func TestOpenCurrentOneConnection(t *testing.T) {
	ctx := context.Background()
	sqlExec := func(stmts string) func(t *testing.T, path string) {
		return func(t *testing.T, path string) {
			db, err := sql.Open("sqlite", "file:"+path)
			require.NoError(t, err)
			_, err = db.Exec(stmts)
			require.NoError(t, err)
			require.NoError(t, db.Close())
		}
	}
	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T, path string)
		why     string // "" for none
		conns   int    // 0: more than one
		indexed int    // runs the first Update after Open indexes
	}{
		{"current index", func(t *testing.T, path string) {
			ix, _, err := Open(ctx, strings.TrimSuffix(path, "/index.db"))
			require.NoError(t, err)
			_, err = ix.Update(ctx)
			require.NoError(t, err)
			require.NoError(t, ix.Close())
		}, "", 1, 0},
		{"no index yet", func(t *testing.T, path string) {}, "", 1, 2},
		{"empty file", func(t *testing.T, path string) { viewstest.WriteFile(t, path, nil) }, "", 1, 2},
		{"not a database", func(t *testing.T, path string) {
			viewstest.WriteFile(t, path, []byte("this is not sqlite, not at all, certainly not a database header"))
		}, "not a database", 0, 2},
		{"tables missing", sqlExec(`CREATE TABLE other(x)`), "tables missing", 0, 2},
		{"another schema", sqlExec(`CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL); INSERT INTO meta VALUES('schema', '0')`), "index schema 0", 0, 2},
		{"no schema row", sqlExec(`CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)`), "index tables missing", 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			viewstest.WriteStore(t, root)
			path := File(root)
			tc.prepare(t, path)
			before := connectionsTo(path)
			ix, why, err := Open(ctx, root)
			require.NoError(t, err)
			defer ix.Close()
			conns := connectionsTo(path) - before
			if tc.why == "" {
				assert.Empty(t, why)
			} else {
				assert.Contains(t, why, tc.why)
			}
			if tc.conns > 0 {
				assert.Equal(t, tc.conns, conns, "connections Open made")
			} else {
				assert.Greater(t, conns, 1, "connections Open made: the careful path")
			}
			st, err := ix.Update(ctx)
			require.NoError(t, err)
			assert.Equal(t, tc.indexed, st.Indexed)
			assert.Equal(t, conns, connectionsTo(path)-before, "the Index keeps its one connection")
		})
	}
}

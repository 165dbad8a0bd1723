package e2e

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"
)

// agentDB is an agent's SQLite database as the agent writes it (WAL
// mode, one connection), written by the test as the agent.
type agentDB struct {
	t    *testing.T
	path string
	db   *sql.DB
}

func openAgentDB(t *testing.T, path string) *agentDB {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return &agentDB{t: t, path: path, db: db}
}

// schema creates the tables of plugin's agent, from the schema its tests
// keep (plugins/<plugin>/testdata/schema.sql).
func (a *agentDB) schema(plugin string) {
	a.t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "plugins", plugin, "testdata", "schema.sql"))
	if err != nil {
		a.t.Fatal(err)
	}
	a.exec(string(b))
}

func (a *agentDB) exec(q string, args ...any) {
	a.t.Helper()
	if _, err := a.db.Exec(q, args...); err != nil {
		a.t.Fatalf("%s: %v", q, err)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

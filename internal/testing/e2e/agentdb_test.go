package e2e

import (
	"database/sql"
	"maps"
	"testing"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// agentDB is clitest.AgentDB (an agent's SQLite database as the agent
// writes it) under the names the e2e tests use.
type agentDB struct {
	a    *clitest.AgentDB
	t    *testing.T
	path string
	db   *sql.DB
}

func openAgentDB(t *testing.T, path string) *agentDB {
	t.Helper()
	a := clitest.OpenAgentDB(t, path)
	return &agentDB{a: a, t: t, path: a.Path, db: a.DB}
}

// schema creates the tables of plugin's agent (clitest.AgentDB.Schema).
func (a *agentDB) schema(plugin string) {
	a.t.Helper()
	a.a.Schema(plugin)
}

func (a *agentDB) exec(q string, args ...any) {
	a.t.Helper()
	a.a.Exec(q, args...)
}

func mapsEqual(a, b map[string]string) bool { return maps.Equal(a, b) }

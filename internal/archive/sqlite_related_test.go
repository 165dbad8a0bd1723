package archive

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/abi"
)

// TestRelatedRows: a SQLite store's related databases (ABI 1.7) are found
// by their glob from the database's directory (climbing), read once each
// in path order, their rows grouped by the session they name, each with
// the JSON file beside its database (null when missing, not JSON or too
// large); a database that cannot be read is a problem and the others are
// read; a row without a key is dropped; a glob may name the database
// itself; the databases are not changed.
func TestRelatedRows(t *testing.T) {
	root := t.TempDir()
	main := filepath.Join(root, "global", "state.vscdb")
	require.NoError(t, os.MkdirAll(filepath.Dir(main), 0o700))
	require.NoError(t, os.WriteFile(main, nil, 0o600))
	mk := func(hash, schema string, file []byte) {
		t.Helper()
		p := filepath.Join(root, "ws", hash, "state.vscdb")
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
		db, err := sql.Open("sqlite", "file:"+p)
		require.NoError(t, err)
		_, err = db.Exec(schema)
		require.NoError(t, err)
		require.NoError(t, db.Close())
		if file != nil {
			require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(p), "w.json"), file, 0o600))
		}
	}
	mk("b", `CREATE TABLE c (id TEXT); INSERT INTO c VALUES ('s1'), ('s2'), (NULL)`, []byte("{\n \"folder\": \"file:///b\"\n}"))
	mk("a", `CREATE TABLE c (id TEXT); INSERT INTO c VALUES ('s1')`, []byte("not json"))
	mk("c", `CREATE TABLE other (x)`, nil)
	mk("d", `CREATE TABLE c (id TEXT); INSERT INTO c VALUES ('s3')`, []byte(`{"big":"`+strings.Repeat("x", maxRelatedFile)+`"}`))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "ws", "e", "state.vscdb"), 0o700)) // a directory
	before := dirSnapshot(t, filepath.Join(root, "ws", "b"))

	src := &abi.SQLiteSource{Related: []abi.SQLiteRelated{{Table: "workspace", Glob: "../ws/*/state.vscdb", Query: "SELECT id AS k FROM c", Key: "k", File: "w.json"}}}
	rows, problems := relatedRows(context.Background(), main, src)
	assert.Equal(t, map[string][]byte{
		"s1": []byte(`{"$twasm":"row","table":"workspace","key":"s1","version":0,"row":{"k":"s1","file":null}}` + "\n" +
			`{"$twasm":"row","table":"workspace","key":"s1","version":0,"row":{"k":"s1","file":{"folder":"file:///b"}}}` + "\n"),
		"s2": []byte(`{"$twasm":"row","table":"workspace","key":"s2","version":0,"row":{"k":"s2","file":{"folder":"file:///b"}}}` + "\n"),
		"s3": []byte(`{"$twasm":"row","table":"workspace","key":"s3","version":0,"row":{"k":"s3","file":null}}` + "\n"),
	}, rows)
	require.Len(t, problems, 1)
	assert.Contains(t, problems[0], filepath.Join(root, "ws", "c", "state.vscdb"))
	assert.Contains(t, problems[0], "no such table: c")
	assert.Equal(t, before, dirSnapshot(t, filepath.Join(root, "ws", "b")), "read-only")

	// A glob naming the database itself (an older Cursor's workspace
	// database, for the workspace.json beside it): read as the others.
	self := filepath.Join(root, "ws", "b", "state.vscdb")
	rows, problems = relatedRows(context.Background(), self, &abi.SQLiteSource{Related: []abi.SQLiteRelated{{Table: "workspace", Glob: "state.vscdb", Query: "SELECT id AS k FROM c", Key: "k", File: "w.json"}}})
	assert.Empty(t, problems)
	assert.Equal(t, map[string][]byte{
		"s1": []byte(`{"$twasm":"row","table":"workspace","key":"s1","version":0,"row":{"k":"s1","file":{"folder":"file:///b"}}}` + "\n"),
		"s2": []byte(`{"$twasm":"row","table":"workspace","key":"s2","version":0,"row":{"k":"s2","file":{"folder":"file:///b"}}}` + "\n"),
	}, rows)
	assert.Equal(t, before, dirSnapshot(t, filepath.Join(root, "ws", "b")), "read-only")

	// None found: nothing, no problem.
	rows, problems = relatedRows(context.Background(), main, &abi.SQLiteSource{Related: []abi.SQLiteRelated{{Table: "w", Glob: "../none/*.db", Query: "SELECT 1 AS k", Key: "k"}}})
	assert.Empty(t, rows)
	assert.Empty(t, problems)
}

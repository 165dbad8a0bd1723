package index

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/internal/testing/viewstest"
)

// An index file that is not one this twasm can use is deleted and made
// again, with the reason.
func TestOpenRebuilds(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name, why string
		prepare   func(t *testing.T, path string)
	}{
		{"not a database", "not a database", func(t *testing.T, path string) {
			viewstest.WriteFile(t, path, []byte("this is not sqlite, not at all, certainly not a database header"))
		}},
		{"another schema", "index schema 0", func(t *testing.T, path string) {
			db, err := sql.Open("sqlite", "file:"+path)
			require.NoError(t, err)
			_, err = db.Exec(`CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL); INSERT INTO meta VALUES('schema', '0')`)
			require.NoError(t, err)
			require.NoError(t, db.Close())
		}},
		{"the previous schema", "index schema 14, this twasm writes 15", func(t *testing.T, path string) {
			// Schema 14 (no held table: Held was decided by every
			// search; the tables here are fewer still): rebuilt.
			db, err := sql.Open("sqlite", "file:"+path)
			require.NoError(t, err)
			_, err = db.Exec(`CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL); INSERT INTO meta VALUES('schema', '14');
CREATE TABLE runs(rid INTEGER PRIMARY KEY, run_id TEXT NOT NULL UNIQUE); CREATE TABLE docs(id INTEGER PRIMARY KEY, rid INTEGER NOT NULL, thash INTEGER NOT NULL);
CREATE VIRTUAL TABLE fts USING fts5(text, tags, content = '', contentless_delete = 1)`)
			require.NoError(t, err)
			require.NoError(t, db.Close())
		}},
		{"tables missing", "tables missing", func(t *testing.T, path string) {
			db, err := sql.Open("sqlite", "file:"+path)
			require.NoError(t, err)
			_, err = db.Exec(`CREATE TABLE other(x)`)
			require.NoError(t, err)
			require.NoError(t, db.Close())
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			viewstest.WriteStore(t, root)
			tc.prepare(t, File(root))
			ix, why, err := Open(ctx, root)
			require.NoError(t, err)
			defer ix.Close()
			assert.Contains(t, why, tc.why)
			st, err := ix.Update(ctx)
			require.NoError(t, err)
			assert.Equal(t, 2, st.Indexed)
			info, err := os.Stat(File(root))
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
		})
	}
	// A root that cannot be made is an error.
	file := filepath.Join(t.TempDir(), "f")
	viewstest.WriteFile(t, file, nil)
	_, _, err := Open(ctx, filepath.Join(file, "sub"))
	assert.Error(t, err)
}

// TestOpenMigrates: with a migration from 14 that adds runs_project (a
// change of the SQL indexes alone, as a migration may make; schema 15
// changed more, see migrations), an index of "schema 14" (this one
// without runs_project) is brought to 15 in place: not rebuilt, its runs
// kept without reading a transcript again, the index there, the
// projects the same; an index that cannot be migrated is rebuilt,
// saying why; and without the migration (Open, today's migrations), an
// index of 14 is rebuilt.
func TestOpenMigrates(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	viewstest.WriteStore(t, root)
	ix, _, err := Open(ctx, root)
	require.NoError(t, err)
	st, err := ix.Update(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, st.Indexed)
	want, err := ix.Projects(ctx)
	require.NoError(t, err)
	require.NoError(t, ix.Close())
	schema14 := func(t *testing.T, extra string) {
		db, err := sql.Open("sqlite", "file:"+File(root))
		require.NoError(t, err)
		_, err = db.Exec(`DROP INDEX runs_project; UPDATE meta SET value = '14' WHERE key = 'schema'; ` + extra)
		require.NoError(t, err)
		require.NoError(t, db.Close())
	}
	ms := map[string]migration{"14": {"15", `CREATE INDEX runs_project ON runs(parent_run_id, project)`}}
	schema14(t, "")

	ix, why, err := openWith(ctx, root, ms)
	require.NoError(t, err)
	assert.Empty(t, why, "migrated, not rebuilt")
	var v string
	require.NoError(t, ix.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema'`).Scan(&v))
	assert.Equal(t, schemaVersion, v)
	var n int
	require.NoError(t, ix.db.QueryRowContext(ctx, `SELECT count(*) FROM runs`).Scan(&n))
	assert.Equal(t, 2, n, "the runs kept")
	assert.Contains(t, queryPlan(t, ix, projectsSQL), "COVERING INDEX runs_project")
	got, err := ix.Projects(ctx)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	st, err = ix.Update(ctx)
	require.NoError(t, err)
	assert.Equal(t, 0, st.Indexed, "no transcript read again")
	require.NoError(t, ix.Close())

	// Schema 14 with runs_project already there (made by hand): the
	// migration fails, and the index is rebuilt.
	schema14(t, `CREATE INDEX runs_project ON runs(parent_run_id, project)`)
	ix, why, err = openWith(ctx, root, ms)
	require.NoError(t, err)
	assert.Contains(t, why, "migrate 14 to 15")
	st, err = ix.Update(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2, st.Indexed)
	require.NoError(t, ix.Close())

	// Schema 14 as it is found on users' machines: rebuilt (no held
	// table).
	schema14(t, "")
	ix, why, err = Open(ctx, root)
	require.NoError(t, err)
	defer ix.Close()
	assert.Contains(t, why, "index schema 14, this twasm writes 15")
	st, err = ix.Update(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2, st.Indexed)
}

func TestIsCorrupt(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errors.New("database disk image is malformed"), true},
		{errors.New("file is not a database"), true},
		{errors.New("index damaged: tables missing"), true},
		{errors.New("context canceled"), false},
	} {
		assert.Equal(t, tc.want, IsCorrupt(tc.err), "%v", tc.err)
	}
}

// UpdateRuns reads only the runs named (and skips one with no file); lines
// that are not transcript events are skipped and counted; a line being
// written is read once it is complete.
func TestUpdateRunsAndBadLines(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	dir := viewstest.WriteStore(t, root)
	ix, _, err := Open(ctx, root)
	require.NoError(t, err)
	defer ix.Close()
	st, err := ix.UpdateRuns(ctx, []string{viewstest.Child, viewstest.Other})
	require.NoError(t, err)
	assert.Equal(t, 1, st.Runs)
	runs, err := ix.Runs(ctx)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.Equal(t, viewstest.Child, runs[0].RunID)

	id := viewstest.RunID(5)
	good := `{"seq":1,"run_id":"` + id + `","type":"run.started","path":"","iteration":0,"timestamp":"2026-01-01T00:00:00.000Z","payload":{"name":"bad lines","kind":"workflow"}}` + "\n"
	body := good +
		"\x00\x00 nul\n" +
		"not json\n" +
		`{"seq":2,"run_id":"` + id + `","path":"","payload":{}}` + "\n" +
		`{"seq":3,"run_id":"` + id + `","type":"message.user","timestamp":"yesterday","payload":{"role":"user","blocks":[{"type":"text","text":"lost"}]}}` + "\n" +
		`{"seq":4,"run_id":"` + id + `","type":"message.user","path":"","iteration":0,"timestamp":"2026-01-01T00:00:01.000Z","payload":{"role":"user","blocks":[{"type":"text","text":"zebra crossing"}]}}`
	p := filepath.Join(dir, id+".jsonl")
	viewstest.WriteFile(t, p, []byte(body))
	st, err = ix.Update(ctx)
	require.NoError(t, err)
	assert.Equal(t, 5, st.Skipped, "NUL, not JSON, no type, a bad time; and the fixture root's line that is not JSON")
	assert.Empty(t, search(t, ix, Query{Text: "zebra", Limit: 10}), "a line without its LF is not read yet")
	viewstest.WriteFile(t, p, []byte(body+"\n"))
	_, err = ix.Update(ctx)
	require.NoError(t, err)
	assert.Len(t, search(t, ix, Query{Text: "zebra", Limit: 10}), 1)
	// Gone: it leaves the index.
	require.NoError(t, os.Remove(p))
	st, err = ix.Update(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Removed)
	require.NoError(t, Remove(root))
	_, err = os.Stat(File(root))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// A line longer than the read buffer is indexed whole; null inputs and
// results and a line without a time are read; an empty or malformed
// query is refused; a cancelled update stops.
func TestLongLinesAndQueries(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	dir := filepath.Join(root, "transcripts")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	id := viewstest.RunID(6)
	long := strings.Repeat("filler ", 60_000) + "needle"
	body := `{"seq":1,"run_id":"` + id + `","type":"run.started","path":"","iteration":0,"payload":{"name":"long","kind":"workflow"}}` + "\n" +
		`{"seq":2,"run_id":"` + id + `","type":"message.assistant","path":"","iteration":0,"timestamp":"2026-01-01T00:00:01.000Z","payload":{"role":"assistant","blocks":[{"type":"text","text":"` + long + `"}]}}` + "\n" +
		`{"seq":3,"run_id":"` + id + `","type":"tool.call","path":"","iteration":0,"timestamp":"2026-01-01T00:00:02.000Z","payload":{"name":"Grep","call_id":"c","input":null}}` + "\n" +
		`{"seq":4,"run_id":"` + id + `","type":"step.completed","path":"a","iteration":0,"timestamp":"2026-01-01T00:00:03.000Z","payload":{"name":"a","kind":"agent","result":null}}` + "\n"
	viewstest.WriteFile(t, filepath.Join(dir, id+".jsonl"), []byte(body))
	ix, _ := openUpdated(t, root)
	hits := search(t, ix, Query{Text: "needle", Limit: 5})
	require.Len(t, hits, 1)
	assert.Equal(t, uint64(2), hits[0].Seq)
	assert.Len(t, search(t, ix, Query{Text: "Grep", Tool: "Grep", Limit: 5}), 1)
	runs, err := ix.Runs(ctx)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.True(t, runs[0].Started.IsZero(), "run.started without a time")

	_, err = ix.Search(ctx, Query{Text: "   "})
	assert.ErrorContains(t, err, "empty query")
	_, err = ix.Search(ctx, Query{Text: "AND OR (", Raw: true, Limit: 1})
	assert.ErrorContains(t, err, "query")

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	viewstest.WriteFile(t, filepath.Join(dir, viewstest.RunID(7)+".jsonl"), []byte(body))
	_, err = ix.Update(cctx)
	assert.ErrorIs(t, err, context.Canceled)
}

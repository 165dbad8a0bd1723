package archive

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/internal/rawfile"
	"github.com/twasm/twasm/transcript"
)

// rowNorm is a plugin for row lines: each "part" row is a message with
// the row's key as id and its data.text as text (a row that comes again
// sets its message again); facts lines are ignored.
type rowNorm struct{}

func (rowNorm) Line(l *sdk.Line, out *sdk.Out) error {
	v := l.JSON()
	switch {
	case v.Get("$twasm").Is(abi.SourceFactsType):
		out.Ignored(sdk.S("twasm_source"))
	case v.Get("$twasm").Is(abi.RowType) && v.Get("table").Is("part"):
		key := sdk.Text(v.Get("key")).Keep()
		out.Open(key, sdk.Message{ID: key})
		out.Block(key, 0, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(v.Get("row").Get("data").Get("text"))})
		out.Close(key, sdk.MessageEnd{})
	default:
		out.Unmapped(sdk.S("other"))
	}
	return nil
}

func (rowNorm) End(*sdk.Out) error { return nil }

var testSQLite = &abi.SQLiteSource{
	Sessions: "SELECT s.id AS key, max(s.time_updated, coalesce((SELECT max(time_updated) FROM part p WHERE p.session_id = s.id), 0)) AS cursor FROM session s ORDER BY s.id",
	Tables: []abi.SQLiteTable{{Table: "part", Key: "id", Version: "time_updated", Time: "time_created", JSON: []string{"data"},
		Query: "SELECT id, session_id, time_created, time_updated, data FROM part WHERE session_id = :session AND time_updated >= :since ORDER BY time_created, id"}},
}

// sqliteSetup is a plugin for rows declaring a SQLite store at ~/.q/q.db,
// a storage root, a home directory and the database's path.
func sqliteSetup(t *testing.T) (p sdk.Plugin, root, home, dbPath string) {
	p = sdk.Plugin{Manifest: abi.Manifest{Name: "q", Version: "1", Providers: []string{"q"}},
		New: func(abi.BeginOptions) sdk.Normalizer { return rowNorm{} }}
	p.Manifest.Stores = []abi.Store{{Name: "Q", Kind: abi.StoreKindSQLite, Roots: []abi.Root{{Path: "~/.q"}}, Pattern: "q.db", SQLite: testSQLite}}
	root, home = t.TempDir(), t.TempDir()
	return p, root, home, filepath.Join(home, ".q", "q.db")
}

// agentDB is an agent's database: a connection of its own, in WAL mode.
type agentDB struct {
	t  *testing.T
	db *sql.DB
	ms int64
}

func openAgentDB(t *testing.T, path string) *agentDB {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	// busy_timeout 0: a writer that had to wait for a lock fails at once.
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(0)")
	require.NoError(t, err)
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	a := &agentDB{t: t, db: db, ms: 1767312000000}
	a.exec("CREATE TABLE IF NOT EXISTS session (id text PRIMARY KEY, time_created integer NOT NULL, time_updated integer NOT NULL, parent_id text)")
	a.exec("CREATE TABLE IF NOT EXISTS part (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL)")
	return a
}

func (a *agentDB) exec(q string, args ...any) {
	a.t.Helper()
	_, err := a.db.Exec(q, args...)
	require.NoError(a.t, err)
}

func (a *agentDB) part(session, id, text string) {
	a.ms += 1000
	a.exec("INSERT INTO session (id, time_created, time_updated) VALUES (?, ?, ?) ON CONFLICT(id) DO UPDATE SET time_updated = excluded.time_updated", session, a.ms, a.ms)
	a.exec("INSERT INTO part VALUES (?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET time_updated = excluded.time_updated, data = excluded.data",
		id, session, a.ms, a.ms, fmt.Sprintf(`{"type":"text","text":%q}`, text))
}

// snapshot is every file of dir, by name, with its sha256.
func dirSnapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range es {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		s := sha256.Sum256(b)
		out[e.Name()] = hex.EncodeToString(s[:])
	}
	return out
}

// TestSyncSQLite: a SQLite store (ABI 1.4) is read read-only, one run per
// session; a second sync with nothing changed archives nothing; a new row
// and a row updated in place add one part holding only what is new or
// changed; the agent writing while twasm reads is never blocked; the
// database's directory is byte-identical after every sync, whether the
// agent has the database open (its WAL there: read mode=ro) or not (no
// WAL: read immutable, no -wal or -shm created); renormalize's input,
// the raw capture, holds the facts and the rows.
func TestSyncSQLite(t *testing.T) {
	ctx := context.Background()
	for _, open := range []bool{true, false} {
		t.Run(map[bool]string{true: "agent running", false: "agent closed"}[open], func(t *testing.T) {
			p, root, home, dbPath := sqliteSetup(t)
			agent := openAgentDB(t, dbPath)
			agent.part("ses_1", "prt_1", "hello")
			agent.part("ses_1", "prt_2", "working")
			agent.part("ses_2", "prt_3", "other session")
			blocked, writes := 0, 0
			a := newArchiver(t, root, func(o *Options) {
				o.Plugin = func(context.Context, string) (capture.Plugin, error) { return capture.NativePlugin(p), nil }
				if open {
					// The agent writes while twasm holds its read
					// transaction: busy_timeout 0 fails if it waits.
					o.sqliteAfterRead = func(context.Context) {
						if _, err := agent.db.Exec("UPDATE session SET time_created = time_created + 1 WHERE id = 'ses_2'"); err != nil {
							blocked++
						}
						writes++
					}
				}
			})
			if !open {
				require.NoError(t, agent.db.Close())
				_, err := os.Stat(dbPath + "-wal")
				require.ErrorIs(t, err, os.ErrNotExist, "SQLite removes the WAL when the last connection closes")
			}
			locs := Discover(func(k string) string { return map[string]string{"HOME": home}[k] }, "linux", DeclaredOf(p.Manifest), nil)
			require.Len(t, locs, 1)
			sync := func() map[string]string {
				t.Helper()
				before := dirSnapshot(t, filepath.Dir(dbPath))
				rep := a.SyncStores(ctx, locs, time.Time{}, nil)
				after := dirSnapshot(t, filepath.Dir(dbPath))
				if open {
					// The agent wrote meanwhile (its log and index
					// change, and a reader's mark is in the index): the
					// database file itself and the listing are the same.
					require.Equal(t, before["q.db"], after["q.db"])
					require.Equal(t, keysOf(before), keysOf(after), "no file added")
				} else {
					require.Equal(t, before, after, "the agent's files are unchanged, none added")
				}
				got := map[string]string{}
				for _, o := range rep.Outcomes {
					require.NotEqual(t, ActionFailed, o.Action, o.Reason)
					got[o.Path[strings.LastIndexByte(o.Path, '#')+1:]] = o.Action
				}
				return got
			}
			first := sync()
			assert.Equal(t, ActionNew, first["ses_1"])
			assert.Equal(t, ActionNew, first["ses_2"])
			second := sync()
			for k, v := range second {
				assert.Equal(t, ActionUnchanged, v, k)
			}
			// What doctor counts: the database's sessions, each held
			// whole by its run.
			stores, sessions := Scan(locs, time.Time{})
			stores, sessions = ExpandDatabases(ctx, stores, sessions)
			require.Len(t, stores, 1)
			assert.Equal(t, 2, stores[0].Sessions)
			require.Len(t, sessions, 2)
			for _, s := range sessions {
				e := a.ledger.ByPath(s.Path)
				require.NotNil(t, e, s.Path)
				assert.GreaterOrEqual(t, e.Offset, s.Size, s.Path)
			}
			if !open {
				ms := agent.ms
				agent = openAgentDB(t, dbPath)
				agent.ms = ms
			}
			agent.part("ses_1", "prt_2", "done") // updated in place
			agent.part("ses_1", "prt_4", "new part")
			if !open {
				require.NoError(t, agent.db.Close())
			}
			third := sync()
			assert.Equal(t, ActionGrown, third["ses_1"])
			assert.Equal(t, ActionUnchanged, third["ses_2"])
			assert.Zero(t, blocked, "the agent waited for a lock twasm held")
			if open {
				assert.Positive(t, writes)
			}

			// The run of ses_1: three messages, then the new version of
			// prt_2 and prt_4 only; its raw capture holds two facts
			// lines and the rows.
			e := a.ledger.ByPath(dbSessionPath(dbPath, "ses_1"))
			require.NotNil(t, e)
			assert.Equal(t, 2, e.Parts)
			var texts []string
			f, err := os.Open(filepath.Join(root, "transcripts", e.RunID+".jsonl"))
			require.NoError(t, err)
			defer f.Close()
			r := transcript.NewReader(f)
			for r.Next() {
				if m := r.Event().Message(); m != nil {
					for _, b := range m.Blocks {
						texts = append(texts, m.ID+"="+b.Text)
					}
				}
			}
			require.NoError(t, r.Err())
			assert.Equal(t, []string{"prt_1=hello", "prt_2=working", "prt_2=done", "prt_4=new part"}, texts)
			raw, err := rawfile.ReadFile(filepath.Join(root, filepath.FromSlash(e.Raw)))
			require.NoError(t, err)
			lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
			require.Len(t, lines, 6)
			assert.Contains(t, lines[0], `"session":"ses_1","since":0,`)
			assert.Contains(t, lines[1], `{"$twasm":"row","table":"part","key":"prt_1",`)
			assert.Contains(t, lines[1], `"data":{"type":"text","text":"hello"}`)
			assert.Contains(t, lines[3], `"$twasm":"source"`)
			var keys []string
			for _, l := range lines[4:] {
				keys = append(keys, l[strings.Index(l, `"key":`):strings.Index(l, `,"version"`)])
			}
			sort.Strings(keys)
			assert.Equal(t, []string{`"key":"prt_2"`, `"key":"prt_4"`}, keys)
		})
	}
}

func keysOf(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestSyncSQLiteChangedWhileRead: a database read without locks (the
// agent had it closed) that the agent changes while twasm reads it is
// not archived from that read: its sessions are pending, and the next
// sync archives them.
func TestSyncSQLiteChangedWhileRead(t *testing.T) {
	ctx := context.Background()
	p, root, home, dbPath := sqliteSetup(t)
	agent := openAgentDB(t, dbPath)
	agent.part("ses_1", "prt_1", "hello")
	require.NoError(t, agent.db.Close())
	changes := 1
	a := newArchiver(t, root, func(o *Options) {
		o.Plugin = func(context.Context, string) (capture.Plugin, error) { return capture.NativePlugin(p), nil }
		o.sqliteAfterRead = func(context.Context) {
			if changes == 0 {
				return
			}
			changes--
			ag := openAgentDB(t, dbPath)
			ag.ms = 1767312100000
			ag.part("ses_1", "prt_2", "written while twasm read")
			require.NoError(t, ag.db.Close())
		}
	})
	locs := Discover(func(k string) string { return map[string]string{"HOME": home}[k] }, "linux", DeclaredOf(p.Manifest), nil)
	rep := a.SyncStores(ctx, locs, time.Time{}, nil)
	require.Len(t, rep.Outcomes, 1)
	assert.Equal(t, ActionPending, rep.Outcomes[0].Action, rep.Outcomes[0].Reason)
	rep = a.SyncStores(ctx, locs, time.Time{}, nil)
	require.Len(t, rep.Outcomes, 1)
	assert.Equal(t, ActionNew, rep.Outcomes[0].Action, rep.Outcomes[0].Reason)
	e := a.ledger.ByPath(dbSessionPath(dbPath, "ses_1"))
	require.NotNil(t, e)
	assert.Equal(t, int64(1767312101000), e.Offset, "the cursor of the second read")
}

// TestSyncSQLiteSince: sync --since looks at a database whatever its
// file's mtime (its latest writes may be in its log).
func TestSyncSQLiteSince(t *testing.T) {
	p, root, home, dbPath := sqliteSetup(t)
	agent := openAgentDB(t, dbPath)
	agent.part("ses_1", "prt_1", "hello")
	require.NoError(t, agent.db.Close())
	old := time.Now().Add(-48 * time.Hour)
	require.NoError(t, os.Chtimes(dbPath, old, old))
	a := newArchiver(t, root, func(o *Options) {
		o.Plugin = func(context.Context, string) (capture.Plugin, error) { return capture.NativePlugin(p), nil }
	})
	locs := Discover(func(k string) string { return map[string]string{"HOME": home}[k] }, "linux", DeclaredOf(p.Manifest), nil)
	rep := a.SyncStores(context.Background(), locs, time.Now().Add(-time.Hour), nil)
	require.Len(t, rep.Outcomes, 1)
	assert.Equal(t, ActionNew, rep.Outcomes[0].Action, rep.Outcomes[0].Reason)
}

// TestSyncSQLiteSubagent: a session the sessions query names a parent
// of is archived as a child run of the parent session's run, linked by a
// step.call_workflow at path "subagent"; both transcripts validate, and
// stay valid when the parent and the child grow in later syncs; whether
// the sessions query lists the parent first or the sub-agent first (a
// database's sessions are archived on several workers, a sub-agent's
// after its parent's).
func TestSyncSQLiteSubagent(t *testing.T) {
	for _, order := range []string{"s.time_created, s.id", "s.id DESC"} {
		t.Run(order, func(t *testing.T) { testSyncSQLiteSubagent(t, order) })
	}
}

func testSyncSQLiteSubagent(t *testing.T, order string) {
	ctx := context.Background()
	p, root, home, dbPath := sqliteSetup(t)
	src := *testSQLite
	src.Sessions = "SELECT s.id AS key, max(s.time_updated, coalesce((SELECT max(time_updated) FROM part p WHERE p.session_id = s.id), 0)) AS cursor, s.parent_id AS parent FROM session s ORDER BY " + order
	p.Manifest.Stores[0].SQLite = &src
	agent := openAgentDB(t, dbPath)
	agent.part("ses_1", "prt_1", "parent starts")
	agent.part("ses_2", "prt_2", "the sub-agent works")
	agent.exec("UPDATE session SET parent_id = 'ses_1' WHERE id = 'ses_2'")
	a := newArchiver(t, root, func(o *Options) {
		o.Plugin = func(context.Context, string) (capture.Plugin, error) { return capture.NativePlugin(p), nil }
	})
	locs := Discover(func(k string) string { return map[string]string{"HOME": home}[k] }, "linux", DeclaredOf(p.Manifest), nil)
	check := func(wantParts int) {
		t.Helper()
		parent, child := a.ledger.ByPath(dbSessionPath(dbPath, "ses_1")), a.ledger.ByPath(dbSessionPath(dbPath, "ses_2"))
		require.NotNil(t, parent)
		require.NotNil(t, child)
		assert.Equal(t, wantParts, parent.Parts)
		fsys := os.DirFS(filepath.Join(root, "transcripts"))
		for _, id := range []string{parent.RunID, child.RunID} {
			rep, err := transcript.ValidateFile(fsys, id+".jsonl", transcript.ValidateOptions{})
			require.NoError(t, err)
			assert.True(t, rep.OK(), "%s: %+v", id, rep.Errors)
			if id == parent.RunID {
				assert.Equal(t, []string{child.RunID}, rep.Children)
			} else {
				assert.Equal(t, parent.RunID, rep.ParentRunID)
			}
		}
	}
	for _, o := range a.SyncStores(ctx, locs, time.Time{}, nil).Outcomes {
		require.Equal(t, ActionNew, o.Action, o.Reason)
	}
	check(1)
	assert.Equal(t, a.ledger.ByPath(dbSessionPath(dbPath, "ses_1")).RunID, a.ledger.ByPath(dbSessionPath(dbPath, "ses_2")).Parent)
	// A ledger rebuilt from the transcripts: the parent's link to the
	// sub-agent's run, open while that session may grow, is not an
	// interrupted part (it was, and settling it would have ended the
	// sub-agent's run as cancelled).
	require.NoError(t, a.Close())
	require.NoError(t, os.Remove(LedgerFile(root)))
	a = newArchiver(t, root, func(o *Options) {
		o.Plugin = func(context.Context, string) (capture.Plugin, error) { return capture.NativePlugin(p), nil }
	})
	assert.Empty(t, a.Ledger().Interrupted())
	agent.part("ses_1", "prt_3", "parent goes on")
	agent.part("ses_2", "prt_4", "the sub-agent goes on")
	for _, o := range a.SyncStores(ctx, locs, time.Time{}, nil).Outcomes {
		require.Equal(t, ActionGrown, o.Action, o.Reason)
	}
	check(2)
	// The agent deletes the sub-agent session: its run ends, and the
	// parent's link is completed.
	agent.exec("DELETE FROM part WHERE session_id = 'ses_2'")
	agent.exec("DELETE FROM session WHERE id = 'ses_2'")
	rep := a.SyncStores(ctx, locs, time.Time{}, nil)
	require.Len(t, rep.Outcomes, 2, "%+v", rep.Outcomes)
	assert.Equal(t, ActionUnchanged, rep.Outcomes[0].Action)
	assert.Equal(t, ActionClosed, rep.Outcomes[1].Action)
	check(2)
	b, err := os.ReadFile(filepath.Join(root, "transcripts", a.ledger.ByPath(dbSessionPath(dbPath, "ses_1")).RunID+".jsonl"))
	require.NoError(t, err)
	assert.Contains(t, string(b), `"type":"step.call_workflow.completed"`)
}

// TestSyncSQLiteTimeLimit: the sessions left when the time limit for
// reading a database is reached are pending, not failed, and the next
// sync archives them. The limit is reached by construction: the hook
// after the first session's rows waits for it.
func TestSyncSQLiteTimeLimit(t *testing.T) {
	ctx := context.Background()
	p, root, home, dbPath := sqliteSetup(t)
	agent := openAgentDB(t, dbPath)
	agent.part("ses_1", "prt_1", "first")
	agent.part("ses_2", "prt_2", "second")
	require.NoError(t, agent.db.Close())
	wait := true
	a := newArchiver(t, root, func(o *Options) {
		o.Plugin = func(context.Context, string) (capture.Plugin, error) { return capture.NativePlugin(p), nil }
		o.SQLiteLimit = 100 * time.Millisecond
		o.sqliteAfterRead = func(ctx context.Context) {
			if wait {
				wait = false
				<-ctx.Done()
			}
		}
	})
	locs := Discover(func(k string) string { return map[string]string{"HOME": home}[k] }, "linux", DeclaredOf(p.Manifest), nil)
	rep := a.SyncStores(ctx, locs, time.Time{}, nil)
	require.Len(t, rep.Outcomes, 2)
	assert.Equal(t, ActionNew, rep.Outcomes[0].Action, rep.Outcomes[0].Reason)
	assert.Equal(t, ActionPending, rep.Outcomes[1].Action)
	assert.Contains(t, rep.Outcomes[1].Reason, "time limit")
	rep = a.SyncStores(ctx, locs, time.Time{}, nil)
	require.Len(t, rep.Outcomes, 2)
	assert.Equal(t, ActionUnchanged, rep.Outcomes[0].Action)
	assert.Equal(t, ActionNew, rep.Outcomes[1].Action, rep.Outcomes[1].Reason)
}

// TestSyncSQLiteRollbackJournal: an agent whose database uses a rollback
// journal is never blocked by a sync. A reader of such a database holds
// a shared lock its commit waits for, so twasm reads it without locks
// (immutable, checked after the read) even while the agent keeps its
// journal file between writes (TRUNCATE, PERSIST): the agent commits
// during the read (busy_timeout 0: it fails if it must wait), that read
// is not archived, and the next sync archives it. A journal in use (a
// write in progress) is not read at all that sync.
func TestSyncSQLiteRollbackJournal(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []string{"TRUNCATE", "PERSIST", "DELETE"} {
		t.Run(mode, func(t *testing.T) {
			p, root, home, dbPath := sqliteSetup(t)
			require.NoError(t, os.MkdirAll(filepath.Dir(dbPath), 0o700))
			db, err := sql.Open("sqlite", "file:"+dbPath+"?_pragma=journal_mode("+mode+")&_pragma=busy_timeout(0)")
			require.NoError(t, err)
			db.SetMaxOpenConns(1)
			t.Cleanup(func() { db.Close() })
			agent := &agentDB{t: t, db: db, ms: 1767312000000}
			var jm string
			require.NoError(t, db.QueryRow("PRAGMA journal_mode").Scan(&jm))
			require.Equal(t, strings.ToLower(mode), jm)
			agent.exec("CREATE TABLE session (id text PRIMARY KEY, time_created integer NOT NULL, time_updated integer NOT NULL, parent_id text)")
			agent.exec("CREATE TABLE part (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL)")
			agent.part("ses_1", "prt_1", "hello")
			if mode != "DELETE" {
				_, err := os.Stat(dbPath + "-journal")
				require.NoError(t, err, "the agent keeps its journal between writes")
			}

			writes, blocked := 0, 0
			a := newArchiver(t, root, func(o *Options) {
				o.Plugin = func(context.Context, string) (capture.Plugin, error) { return capture.NativePlugin(p), nil }
				o.sqliteAfterRead = func(context.Context) {
					if writes > 0 {
						return
					}
					writes++
					// The agent commits while twasm reads.
					if _, err := db.Exec("UPDATE session SET time_created = time_created + 1 WHERE id = 'ses_1'"); err != nil {
						blocked++
					}
				}
			})
			locs := Discover(func(k string) string { return map[string]string{"HOME": home}[k] }, "linux", DeclaredOf(p.Manifest), nil)
			sync := func() []Outcome {
				t.Helper()
				before := dirSnapshot(t, filepath.Dir(dbPath))
				rep := a.SyncStores(ctx, locs, time.Time{}, nil)
				require.Equal(t, keysOf(before), keysOf(dirSnapshot(t, filepath.Dir(dbPath))), "no file added beside the database")
				return rep.Outcomes
			}
			outs := sync()
			require.Equal(t, 1, writes)
			require.Zero(t, blocked, "the agent's commit waited for twasm's read")
			require.Len(t, outs, 1)
			require.Equal(t, ActionPending, outs[0].Action, "the database changed while it was read: %s", outs[0].Reason)
			outs = sync()
			require.Len(t, outs, 1)
			require.Equal(t, ActionNew, outs[0].Action, outs[0].Reason)

			// A write transaction that has not touched the file yet (its
			// pages in the agent's cache, the journal's header not yet
			// written): the file holds the last commit, read as it is.
			tx, err := db.Begin()
			require.NoError(t, err)
			_, err = tx.Exec("UPDATE session SET time_updated = 1767312900000 WHERE id = 'ses_1'")
			require.NoError(t, err)
			require.False(t, journalInUse(dbPath))
			outs = sync()
			require.Len(t, outs, 1)
			require.Equal(t, ActionUnchanged, outs[0].Action, outs[0].Reason)
			// The same transaction spills pages to the file before its
			// commit (a cache of two pages, a row larger than that): the
			// journal holds pages to roll back, and the file may hold
			// half the commit, so it is not read.
			_, err = tx.Exec("PRAGMA cache_size = 2")
			require.NoError(t, err)
			_, err = tx.Exec("INSERT INTO part VALUES ('prt_2', 'ses_1', 1767312900000, 1767312900000, json_object('type', 'text', 'text', 'half written' || hex(randomblob(100000))))")
			require.NoError(t, err)
			require.True(t, journalInUse(dbPath), "the agent's transaction spilled to the file")
			outs = sync()
			require.Len(t, outs, 1)
			require.Equal(t, ActionPending, outs[0].Action, outs[0].Reason)
			require.Contains(t, outs[0].Reason, "rollback journal is in use")
			require.NoError(t, tx.Commit(), "twasm held no lock")
			require.False(t, journalInUse(dbPath))
			outs = sync()
			require.Len(t, outs, 1)
			require.Equal(t, ActionGrown, outs[0].Action, outs[0].Reason)
			e := a.ledger.ByPath(dbSessionPath(dbPath, "ses_1"))
			require.NotNil(t, e)
			require.Equal(t, int64(1767312900000), e.Offset)
		})
	}
}

// checkpointNorm is rowNorm run by a plugin that, at the first line of
// each part it is fed (the plugin phase of a sync), has the agent commit
// and then checkpoint its write-ahead log whole (TRUNCATE), and notes
// what SQLite said: a checkpoint that could not reset the log because a
// reader still held an older snapshot reports busy.
type checkpointNorm struct {
	rowNorm
	agent *agentDB
	fed   bool
	mu    *sync.Mutex // notes: a sync archives a database's sessions on several workers
	notes *[]string
}

func (n *checkpointNorm) Line(l *sdk.Line, out *sdk.Out) error {
	if !n.fed {
		n.fed = true
		note := "commit ok"
		if _, err := n.agent.db.Exec("UPDATE session SET time_created = time_created + 1"); err != nil {
			note = "commit: " + err.Error()
		}
		var busy, log, done int64
		if err := n.agent.db.QueryRow("PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &log, &done); err != nil {
			note += "; checkpoint: " + err.Error()
		} else {
			note += fmt.Sprintf("; checkpoint busy=%d log=%d", busy, log)
		}
		n.mu.Lock()
		*n.notes = append(*n.notes, note)
		n.mu.Unlock()
	}
	return n.rowNorm.Line(l, out)
}

// TestSyncSQLiteWALCheckpoint: a WAL database's sessions are read in a
// read transaction that ends before the plugin runs, so the agent can
// checkpoint and reset its log while twasm archives (a reader holding
// its snapshot over the plugin and the fsyncs kept the log from being
// reset, and it grew): the agent commits while the rows are read and
// again when the plugin is fed, then checkpoints (TRUNCATE), and the
// checkpoint is not busy; the runs are those of a sync from a plugin
// that does none of this (outcomes, messages, raw captures byte for
// byte but for the facts line's file size and mtime, which the
// checkpoint changes), whether all sessions are read in one transaction
// or each in its own (a batch of one byte).
func TestSyncSQLiteWALCheckpoint(t *testing.T) {
	ctx := context.Background()
	for _, batch := range []int{0, 1} {
		t.Run(fmt.Sprintf("batch=%d", batch), func(t *testing.T) {
			p, root, home, dbPath := sqliteSetup(t)
			agent := openAgentDB(t, dbPath)
			for _, s := range []string{"ses_1", "ses_2", "ses_3"} {
				agent.part(s, "prt_a_"+s, "hello from "+s)
				agent.part(s, "prt_b_"+s, "working in "+s)
			}
			locs := Discover(func(k string) string { return map[string]string{"HOME": home}[k] }, "linux", DeclaredOf(p.Manifest), nil)
			type runOf struct {
				action string
				texts  []string
				raw    []string
			}
			runs := func(a *Archiver, root string, rep Report) map[string]runOf {
				t.Helper()
				out := map[string]runOf{}
				for _, o := range rep.Outcomes {
					require.NotEqual(t, ActionFailed, o.Action, o.Reason)
					e := a.ledger.ByPath(o.Path)
					require.NotNil(t, e, o.Path)
					r := runOf{action: o.Action}
					f, err := os.Open(filepath.Join(root, "transcripts", e.RunID+".jsonl"))
					require.NoError(t, err)
					tr := transcript.NewReader(f)
					for tr.Next() {
						if m := tr.Event().Message(); m != nil {
							for _, b := range m.Blocks {
								r.texts = append(r.texts, m.ID+"="+b.Text)
							}
						}
					}
					require.NoError(t, tr.Err())
					f.Close()
					raw, err := rawfile.ReadFile(filepath.Join(root, filepath.FromSlash(e.Raw)))
					require.NoError(t, err)
					r.raw = strings.Split(string(raw), "\n")
					var facts map[string]any
					require.NoError(t, json.Unmarshal([]byte(r.raw[0]), &facts))
					delete(facts, "size")
					delete(facts, "mtime")
					b, _ := json.Marshal(facts)
					r.raw[0] = string(b)
					out[o.Path] = r
				}
				return out
			}

			// What a sync archives when nobody writes or checkpoints.
			want := newArchiver(t, root, func(o *Options) {
				o.Plugin = func(context.Context, string) (capture.Plugin, error) { return capture.NativePlugin(p), nil }
			})
			wantRuns := runs(want, root, want.SyncStores(ctx, locs, time.Time{}, nil))
			require.Len(t, wantRuns, 3)

			var notes []string
			var mu sync.Mutex
			readCommits := 0
			cp := p
			cp.New = func(abi.BeginOptions) sdk.Normalizer { return &checkpointNorm{agent: agent, mu: &mu, notes: &notes} }
			root2 := t.TempDir()
			a := newArchiver(t, root2, func(o *Options) {
				o.Plugin = func(context.Context, string) (capture.Plugin, error) { return capture.NativePlugin(cp), nil }
				o.sqliteBatch = batch
				o.sqliteAfterRead = func(context.Context) {
					// The agent commits while twasm reads.
					_, err := agent.db.Exec("UPDATE session SET time_created = time_created + 1")
					require.NoError(t, err)
					readCommits++
				}
			})
			gotRuns := runs(a, root2, a.SyncStores(ctx, locs, time.Time{}, nil))
			assert.Equal(t, 3, readCommits)
			assert.Equal(t, []string{"commit ok; checkpoint busy=0 log=0", "commit ok; checkpoint busy=0 log=0", "commit ok; checkpoint busy=0 log=0"}, notes,
				"the agent checkpoints its log while twasm runs the plugin")
			assert.Equal(t, wantRuns, gotRuns)
			st, err := os.Stat(dbPath + "-wal")
			require.NoError(t, err)
			assert.Zero(t, st.Size(), "the agent's log was reset")
		})
	}
}

// TestSyncSQLiteBatchSessionGone: rows read in batches (one session's a
// batch here), each later batch in a read transaction of its own that
// lists the sessions again: a session the agent deleted after the first
// listing is pending in that sync, not read from a snapshot that no
// longer has it, and the next sync does not list it.
func TestSyncSQLiteBatchSessionGone(t *testing.T) {
	ctx := context.Background()
	p, root, home, dbPath := sqliteSetup(t)
	agent := openAgentDB(t, dbPath)
	for _, s := range []string{"ses_1", "ses_2", "ses_3"} {
		agent.part(s, "prt_"+s, "hello from "+s)
	}
	deleted := false
	a := newArchiver(t, root, func(o *Options) {
		o.Plugin = func(context.Context, string) (capture.Plugin, error) { return capture.NativePlugin(p), nil }
		o.sqliteBatch = 1
		o.sqliteAfterRead = func(context.Context) {
			if !deleted {
				deleted = true
				agent.exec("DELETE FROM part WHERE session_id = 'ses_3'")
				agent.exec("DELETE FROM session WHERE id = 'ses_3'")
			}
		}
	})
	locs := Discover(func(k string) string { return map[string]string{"HOME": home}[k] }, "linux", DeclaredOf(p.Manifest), nil)
	got := map[string]string{}
	for _, o := range a.SyncStores(ctx, locs, time.Time{}, nil).Outcomes {
		got[o.Path[strings.LastIndexByte(o.Path, '#')+1:]] = o.Action + ": " + o.Reason
	}
	assert.Equal(t, map[string]string{"ses_1": ActionNew + ": ", "ses_2": ActionNew + ": ",
		"ses_3": ActionPending + ": the session was no longer listed when its rows were to be read: read again next sync"}, got)
	rep := a.SyncStores(ctx, locs, time.Time{}, nil)
	assert.Len(t, rep.Outcomes, 2)
	assert.Equal(t, 2, rep.Counts[ActionUnchanged])
}

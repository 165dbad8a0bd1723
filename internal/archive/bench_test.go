package archive

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/plugins/claude"
	"github.com/twasm/twasm/plugins/opencode"
	"github.com/twasm/twasm/recorder"
)

// BenchmarkSyncUnchanged is a sync of a store of TWASM_BENCH_SESSIONS
// (default 10,000) Claude Code sessions, all archived already: what every
// `twasm sync` (and each --watch round) costs when nothing changed. The
// store is a fake home directory (~/.claude/projects/<project>/<id>.jsonl
// in a temporary HOME, found by Discover as twasm sync finds it); the
// sessions are the project's golden session log, each made distinct by a
// first line of its own. Each sync takes the sync lock, opens the ledger,
// discovers and walks the stores and checks every session, as twasm sync
// does (its index refresh runs only when a sync wrote something).
func BenchmarkSyncUnchanged(b *testing.B) {
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("TWASM_BENCH_SESSIONS")); err == nil && v > 0 {
		n = v
	}
	session, err := os.ReadFile("../../testdata/golden/claude/session_log.jsonl")
	if err != nil {
		b.Skip(err)
	}
	home := b.TempDir()
	env := func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	locs := Discover(env, runtime.GOOS, DeclaredOf(claude.Plugin.Manifest), nil)
	var loc Location
	for _, l := range locs {
		if l.Provider == "claude" {
			loc = l
		}
	}
	old := time.Now().Add(-time.Hour)
	for i := 0; i < n; i++ {
		p := filepath.Join(loc.Dir, fmt.Sprintf("p%03d", i%100), fmt.Sprintf("s%05d.jsonl", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			b.Fatal(err)
		}
		head := fmt.Sprintf(`{"type":"summary","summary":"bench session %d","leafUuid":"l%d"}`+"\n", i, i)
		if err := os.WriteFile(p, append([]byte(head), session...), 0o600); err != nil {
			b.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			b.Fatal(err)
		}
	}
	plugin := func(context.Context, string) (capture.Plugin, error) { return capture.NativePlugin(claude.Plugin), nil }
	benchResync(b, locs, plugin, n)
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/sync")
	b.ReportMetric(float64(n), "sessions")
}

// benchResync archives every session of locs once (n of them), then
// measures syncs that find nothing new.
func benchResync(b *testing.B, locs []Location, plugin PluginFunc, n int) {
	root := b.TempDir()
	// The first sync writes n runs, each with several fsyncs (ledger,
	// raw capture, transcript): minutes on a slow disk. It writes into a
	// storage on /dev/shm (a tmpfs: fsync is free) when there is one,
	// copied to root on disk for the syncs measured, which read only.
	first := root
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if first, err = os.MkdirTemp("/dev/shm", "twasm-sync-bench-"); err != nil {
			first = root
		} else {
			shm := first
			b.Cleanup(func() { os.RemoveAll(shm) }) // when setting up failed
		}
	}
	a, _, err := Open(Options{Store: recorder.NewStore(first), CloseIdle: -1, Plugin: plugin})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	rep := a.SyncStores(ctx, locs, time.Time{}, nil)
	a.Close()
	if rep.Counts[ActionNew] != n {
		b.Fatalf("setup: %v", rep.Counts)
	}
	if first != root {
		err := os.CopyFS(root, os.DirFS(first))
		os.RemoveAll(first) // before the timer starts: it is not part of a sync
		if err != nil {
			b.Fatal(err)
		}
	}
	opts := Options{Store: recorder.NewStore(root), CloseIdle: -1, Plugin: plugin}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lock, err := AcquireLock(ctx, root, false, nil)
		if err != nil {
			b.Fatal(err)
		}
		a, _, err := Open(opts)
		if err != nil {
			b.Fatal(err)
		}
		rep := a.SyncStores(ctx, locs, time.Time{}, nil)
		a.Close()
		lock.Release()
		if rep.Counts[ActionUnchanged] != n {
			b.Fatalf("%v", rep.Counts)
		}
	}
}

// BenchmarkSyncUnchangedSQLite is BenchmarkSyncUnchanged for OpenCode's
// database: TWASM_BENCH_SESSIONS (default 10,000) sessions of a user
// prompt and an answer with a text, a tool and a step-finish part, in
// one opencode.db at its default place (OpenCode's schema), all archived
// already. A sync opens the database, lists the sessions with their
// cursors and reads no session's rows.
func BenchmarkSyncUnchangedSQLite(b *testing.B) {
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("TWASM_BENCH_SESSIONS")); err == nil && v > 0 {
		n = v
	}
	locs := openCodeBenchDB(b, n)
	plugin := func(context.Context, string) (capture.Plugin, error) {
		return capture.NativePlugin(opencode.Plugin), nil
	}
	benchResync(b, locs, plugin, n)
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/sync")
	b.ReportMetric(float64(n), "sessions")
}

// openCodeBenchDB writes n sessions of a user prompt and an answer with
// a text, a tool and a step-finish part into one opencode.db at its
// default place in a temporary HOME (OpenCode's schema), and returns the
// opencode plugin's stores there.
func openCodeBenchDB(b *testing.B, n int) []Location {
	schema, err := os.ReadFile("../../plugins/opencode/testdata/schema.sql")
	if err != nil {
		b.Skip(err)
	}
	home := b.TempDir()
	env := func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	locs := Discover(env, runtime.GOOS, DeclaredOf(opencode.Plugin.Manifest), nil)
	dbPath := filepath.Join(locs[0].Dir, "opencode.db")
	if err := os.MkdirAll(locs[0].Dir, 0o700); err != nil {
		b.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+dbPath+"?_pragma=journal_mode(WAL)")
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	exec := func(q string, args ...any) {
		if _, err := tx.Exec(q, args...); err != nil {
			b.Fatal(err)
		}
	}
	exec(string(schema))
	exec("INSERT INTO project VALUES ('prj')")
	for i := 0; i < n; i++ {
		t := int64(1762077600000 + i*10000)
		s, m1, m2 := fmt.Sprintf("ses_%06d", i), fmt.Sprintf("msg_%06da", i), fmt.Sprintf("msg_%06db", i)
		exec("INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) VALUES (?, 'prj', 's', '/p', 't', '1.2.15', ?, ?)", s, t, t)
		exec("INSERT INTO message VALUES (?, ?, ?, ?, ?)", m1, s, t, t, `{"role":"user","time":{"created":1762077600000}}`)
		exec("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", m1+"1", m1, s, t, t, fmt.Sprintf(`{"type":"text","text":"bench session %d: list the files"}`, i))
		exec("INSERT INTO message VALUES (?, ?, ?, ?, ?)", m2, s, t+1, t+5, `{"role":"assistant","time":{"created":1762077600001},"modelID":"m","providerID":"p","finish":"stop"}`)
		exec("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", m2+"1", m2, s, t+1, t+1, `{"type":"text","text":"Listing them."}`)
		exec("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", m2+"2", m2, s, t+2, t+3, `{"type":"tool","tool":"bash","callID":"c","state":{"status":"completed","input":{"command":"ls"},"output":"a\nb\n","metadata":{"exit":0}}}`)
		exec("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", m2+"3", m2, s, t+4, t+5, `{"type":"step-finish","reason":"stop","cost":0.001,"tokens":{"input":10,"output":5,"reasoning":0,"cache":{"read":100,"write":0}}}`)
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	return locs[:1] // the database alone
}

// firstSessions is how many sessions the first-sync benchmarks archive:
// TWASM_BENCH_FIRST_SESSIONS, default 1,000 (a first sync writes a run
// per session: a few fsyncs each).
func firstSessions() int {
	if v, err := strconv.Atoi(os.Getenv("TWASM_BENCH_FIRST_SESSIONS")); err == nil && v > 0 {
		return v
	}
	return 1000
}

// BenchmarkSyncFirstSQLite is the first sync of OpenCode's database
// (openCodeBenchDB, firstSessions sessions): every session read, as rows,
// and archived as a run, into a storage of its own each round. Compared
// with BenchmarkSyncFirstJSONL, the same conversations as JSONL files.
func BenchmarkSyncFirstSQLite(b *testing.B) {
	n := firstSessions()
	benchFirst(b, openCodeBenchDB(b, n), n)
}

// BenchmarkSyncFirstJSONL is BenchmarkSyncFirstSQLite's conversations
// as JSONL session files, one per session (the same parts as `opencode
// run --format json` lines, read by the same plugin): the baseline of
// the first sync of a SQLite store.
func BenchmarkSyncFirstJSONL(b *testing.B) {
	n := firstSessions()
	dir := filepath.Join(b.TempDir(), "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	for i := 0; i < n; i++ {
		t := int64(1762077600000 + i*10000)
		s, m1, m2 := fmt.Sprintf("ses_%06d", i), fmt.Sprintf("msg_%06da", i), fmt.Sprintf("msg_%06db", i)
		line := func(typ string, ts int64, part string) string {
			return fmt.Sprintf(`{"type":%q,"timestamp":%d,"sessionID":%q,"part":%s}`+"\n", typ, ts, s, part)
		}
		body := line("text", t, fmt.Sprintf(`{"id":%q,"messageID":%q,"sessionID":%q,"type":"text","text":"bench session %d: list the files"}`, m1+"1", m1, s, i)) +
			line("text", t+1, fmt.Sprintf(`{"id":%q,"messageID":%q,"sessionID":%q,"type":"text","text":"Listing them."}`, m2+"1", m2, s)) +
			line("tool_use", t+3, fmt.Sprintf(`{"id":%q,"messageID":%q,"sessionID":%q,"type":"tool","tool":"bash","callID":"c","state":{"status":"completed","input":{"command":"ls"},"output":"a\nb\n","metadata":{"exit":0}}}`, m2+"2", m2, s)) +
			line("step_finish", t+5, fmt.Sprintf(`{"id":%q,"messageID":%q,"sessionID":%q,"type":"step-finish","reason":"stop","cost":0.001,"tokens":{"input":10,"output":5,"reasoning":0,"cache":{"read":100,"write":0}}}`, m2+"3", m2, s))
		p := filepath.Join(dir, s+".jsonl")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			b.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			b.Fatal(err)
		}
	}
	re, err := globRegexp("*.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	locs := []Location{{Provider: "opencode", Name: "OpenCode run --format json", Kind: KindFile, Dir: dir, Pattern: "*.jsonl", Match: re.MatchString}}
	benchFirst(b, locs, n)
}

// benchFirst measures the first sync of locs (n sessions) into a new
// storage each round, and reports its throughput.
func benchFirst(b *testing.B, locs []Location, n int) {
	plugin := func(context.Context, string) (capture.Plugin, error) {
		return capture.NativePlugin(opencode.Plugin), nil
	}
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		root := b.TempDir()
		b.StartTimer()
		a, _, err := Open(Options{Store: recorder.NewStore(root), CloseIdle: -1, Plugin: plugin})
		if err != nil {
			b.Fatal(err)
		}
		rep := a.SyncStores(ctx, locs, time.Time{}, nil)
		a.Close()
		if rep.Counts[ActionNew] != n {
			b.Fatalf("%v", rep.Counts)
		}
	}
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(n)/sec, "sessions/s")
	b.ReportMetric(float64(n), "sessions")
}

package archive

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/plugins/claude"
	"github.com/twasm/twasm/recorder"
)

// BenchmarkSyncUnchanged is a sync of a store of TWASM_BENCH_SESSIONS
// (default 10,000) Claude Code sessions, all archived already: what every
// `twasm sync` (and each --watch round) costs when nothing changed. The
// sessions are the project's golden session log, each made distinct by a
// first line of its own.
func BenchmarkSyncUnchanged(b *testing.B) {
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("TWASM_BENCH_SESSIONS")); err == nil && v > 0 {
		n = v
	}
	session, err := os.ReadFile("../../testdata/golden/claude/session_log.jsonl")
	if err != nil {
		b.Skip(err)
	}
	home, root := b.TempDir(), b.TempDir()
	loc := Location{Provider: "claude", Name: "bench", Dir: filepath.Join(home, "projects"), Match: suffix(".jsonl")}
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
	opts := Options{Store: recorder.NewStore(root), CloseIdle: -1,
		Plugin: func(context.Context, string) (capture.Plugin, error) { return capture.NativePlugin(claude.Plugin), nil }}
	a, _, err := Open(opts)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	rep := a.SyncStores(ctx, []Location{loc}, time.Time{}, nil)
	a.Close()
	if rep.Counts[ActionNew] != n {
		b.Fatalf("setup: %v", rep.Counts)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// Each sync opens the ledger as twasm sync does.
		a, _, err := Open(opts)
		if err != nil {
			b.Fatal(err)
		}
		rep := a.SyncStores(ctx, []Location{loc}, time.Time{}, nil)
		a.Close()
		if rep.Counts[ActionUnchanged] != n {
			b.Fatalf("%v", rep.Counts)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/sync")
	b.ReportMetric(float64(n), "sessions")
}

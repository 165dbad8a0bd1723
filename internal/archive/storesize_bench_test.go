package archive

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/internal/index"
	"github.com/twasm/twasm/plugins/claude"
	"github.com/twasm/twasm/plugins/codex"
	"github.com/twasm/twasm/plugins/copilot"
	"github.com/twasm/twasm/plugins/pi"
	"github.com/twasm/twasm/recorder"
)

// BenchmarkStoreSize is the size of a storage against the logs it
// archives (#31 item 2): a home of Claude Code, Codex, Copilot CLI and Pi
// session logs, each real capture of testdata/captures and
// ../shared/fixtures of those agents placed in its agent's store, synced
// into an empty storage (the native plugins, as twasm sync writes it) and
// indexed (index.db, as sync refreshes it). It reports the bytes on disk
// of the raw captures, the transcripts, the index and the whole storage,
// each over the bytes of the logs archived.
func BenchmarkStoreSize(b *testing.B) {
	home := b.TempDir()
	env := func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	plugins := map[string]sdk.Plugin{"claude": claude.Plugin, "codex": codex.Plugin, "copilot": copilot.Plugin, "pi": pi.Plugin}
	var decl []Declared
	for _, p := range plugins {
		decl = append(decl, DeclaredOf(p.Manifest)...)
	}
	locs := Discover(env, runtime.GOOS, decl, nil)
	dirs := map[string]string{}
	for _, l := range locs {
		if _, ok := dirs[l.Provider]; !ok && l.Kind == KindFile {
			dirs[l.Provider] = l.Dir
		}
	}
	old := time.Now().Add(-time.Hour)
	files := 0
	for provider := range plugins {
		var caps []string
		for _, d := range []string{"../../testdata/captures/" + provider, "../../../shared/fixtures/" + provider} {
			m, _ := filepath.Glob(filepath.Join(d, "*.jsonl"))
			caps = append(caps, m...)
		}
		for i, c := range caps {
			data, err := os.ReadFile(c)
			if err != nil {
				b.Fatal(err)
			}
			name := strings.TrimSuffix(filepath.Base(c), ".jsonl")
			var p string
			switch provider {
			case "claude":
				p = filepath.Join(dirs[provider], "bench", name+".jsonl")
			case "codex":
				p = filepath.Join(dirs[provider], "2025", "01", "01", "rollout-"+name+".jsonl")
			case "copilot":
				p = filepath.Join(dirs[provider], fmt.Sprintf("s%03d", i), "events.jsonl")
			case "pi":
				p = filepath.Join(dirs[provider], "bench", name+".jsonl")
			}
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(p, data, 0o600); err != nil {
				b.Fatal(err)
			}
			if err := os.Chtimes(p, old, old); err != nil {
				b.Fatal(err)
			}
			files++
		}
	}
	if files == 0 {
		b.Skip("no captures")
	}
	plugin := func(_ context.Context, provider string) (capture.Plugin, error) {
		p, ok := plugins[provider]
		if !ok {
			return nil, fmt.Errorf("no plugin %s", provider)
		}
		return capture.NativePlugin(p), nil
	}
	ctx := context.Background()
	var raw, transcripts, ix, store, logs int64
	for i := 0; i < b.N; i++ {
		// On a tmpfs when there is one (its fsyncs are free): the sizes
		// are the files', wherever they are.
		root := b.TempDir()
		if shm, err := os.MkdirTemp("/dev/shm", "twasm-size-bench-"); err == nil {
			root = shm
			b.Cleanup(func() { os.RemoveAll(shm) })
		}
		a, _, err := Open(Options{Store: recorder.NewStore(root), CloseIdle: -1, Plugin: plugin})
		if err != nil {
			b.Fatal(err)
		}
		rep := a.SyncStores(ctx, locs, time.Time{}, nil)
		a.Close()
		if rep.Counts[ActionNew] == 0 || rep.Counts[ActionFailed] > 0 {
			b.Fatalf("sync: %v", rep.Counts)
		}
		x, _, err := index.Open(ctx, root)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := x.Update(ctx); err != nil {
			b.Fatal(err)
		}
		if err := x.Close(); err != nil {
			b.Fatal(err)
		}
		logs = rep.Bytes
		raw, transcripts, ix, store = du(b, filepath.Join(root, "raw")), du(b, filepath.Join(root, "transcripts")), du(b, filepath.Join(root, "index.db")), du(b, root)
	}
	b.ReportMetric(float64(logs)/(1<<20), "logs-MiB")
	b.ReportMetric(float64(raw)/float64(logs), "raw/logs")
	b.ReportMetric(float64(transcripts)/float64(logs), "transcripts/logs")
	b.ReportMetric(float64(ix)/float64(logs), "index/logs")
	b.ReportMetric(float64(store)/float64(logs), "store/logs")
}

// du is the bytes of the files under path (their sizes), path itself
// when it is a file; the index's -wal and -shm beside it too.
func du(b *testing.B, path string) int64 {
	var n int64
	paths := []string{path}
	if strings.HasSuffix(path, ".db") {
		paths = append(paths, path+"-wal", path+"-shm")
	}
	for _, p := range paths {
		err := filepath.WalkDir(p, func(_ string, d fs.DirEntry, err error) error {
			if err != nil {
				if os.IsNotExist(err) {
					return nil
				}
				return err
			}
			if d.Type().IsRegular() {
				fi, err := d.Info()
				if err != nil {
					return err
				}
				n += fi.Size()
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	return n
}

package archive

import (
	"bytes"
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
// each over the bytes of the logs archived. Then the same home is synced
// into another storage as it was written, in grownParts syncs (each
// file cut at a line end after each eighth of it, whole at the last,
// which ends every run) and indexed: "grown-raw/logs" and
// "grown-store/logs" (and -transcripts, -index) are that storage's, a
// storage synced while the sessions grew (each part's bytes begin a
// frame of its raw capture until the run ends).
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
	logFiles := map[string][]byte{} // each session file's path and bytes
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
			logFiles[p] = data
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
	// build syncs the home into an empty storage in parts syncs (each
	// session file cut at a line end after each parts-th of it, then
	// whole), ending every run with the last, and indexes it; it
	// returns the bytes of the raw captures, transcripts, index and
	// whole storage, and of the logs the first sync archived.
	build := func(parts int) (raw, transcripts, ix, store, logs int64) {
		// On a tmpfs when there is one (its fsyncs are free): the sizes
		// are the files', wherever they are.
		root := b.TempDir()
		if shm, err := os.MkdirTemp("/dev/shm", "twasm-size-bench-"); err == nil {
			root = shm
			defer os.RemoveAll(shm)
		}
		for k := 1; k <= parts; k++ {
			for p, data := range logFiles {
				cut := len(data)
				if k < parts {
					cut = len(data) * k / parts
					cut += bytes.IndexByte(data[cut:], '\n') + 1
				}
				if err := os.WriteFile(p, data[:cut], 0o600); err != nil {
					b.Fatal(err)
				}
				if err := os.Chtimes(p, old, old); err != nil {
					b.Fatal(err)
				}
			}
			closeIdle := time.Duration(-1) // runs left open, as while the agents write
			if k == parts && parts > 1 {
				closeIdle = time.Nanosecond // every run ended: the sessions are an hour old
			}
			a, _, err := Open(Options{Store: recorder.NewStore(root), CloseIdle: closeIdle, Plugin: plugin})
			if err != nil {
				b.Fatal(err)
			}
			rep := a.SyncStores(ctx, locs, time.Time{}, nil)
			a.Close()
			if rep.Counts[ActionNew]+rep.Counts[ActionGrown] == 0 || rep.Counts[ActionFailed] > 0 {
				b.Fatalf("sync %d of %d: %v", k, parts, rep.Counts)
			}
			if k == 1 {
				logs = rep.Bytes
			}
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
		return du(b, filepath.Join(root, "raw")), du(b, filepath.Join(root, "transcripts")), du(b, filepath.Join(root, "index.db")), du(b, root), logs
	}
	var raw, transcripts, ix, store, logs, grownRaw, grownTranscripts, grownIx, grownStore int64
	for i := 0; i < b.N; i++ {
		raw, transcripts, ix, store, logs = build(1)
		grownRaw, grownTranscripts, grownIx, grownStore, _ = build(grownParts)
	}
	b.ReportMetric(float64(logs)/(1<<20), "logs-MiB")
	b.ReportMetric(float64(raw)/float64(logs), "raw/logs")
	b.ReportMetric(float64(transcripts)/float64(logs), "transcripts/logs")
	b.ReportMetric(float64(ix)/float64(logs), "index/logs")
	b.ReportMetric(float64(store)/float64(logs), "store/logs")
	b.ReportMetric(float64(grownRaw)/float64(logs), "grown-raw/logs")
	b.ReportMetric(float64(grownTranscripts)/float64(logs), "grown-transcripts/logs")
	b.ReportMetric(float64(grownIx)/float64(logs), "grown-index/logs")
	b.ReportMetric(float64(grownStore)/float64(logs), "grown-store/logs")
}

// grownParts is how many syncs BenchmarkStoreSize's grown storage
// archives each session in.
const grownParts = 8

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

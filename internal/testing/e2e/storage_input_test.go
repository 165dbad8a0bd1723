package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSyncNeverArchivesOwnStorage: a store that contains twasm's own
// storage (the README suggests a home directory or a backup as a store),
// reached directly or through a link, never makes sync archive twasm's
// transcripts, raw captures or ledger as sessions: four syncs leave the
// one session's one run, the store's report says the storage was left
// out, and import refuses a transcript of the storage by name. Before
// 337ff47 every sync archived the previous sync's runs again (runs 2, 6,
// 10, 14 over four syncs). Issue #25 item 6.
func TestSyncNeverArchivesOwnStorage(t *testing.T) {
	for _, tc := range []struct {
		name string
		link bool // the storage is named through a symbolic link to the home
	}{{"store contains the storage", false}, {"storage named through a link", true}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newFakeHome(t)
			h.stor = filepath.Join(h.dir, ".local", "share", "twasm")
			h.put(".claude/projects/-w/s.jsonl", bigClaudeSession("own", 5), time.Hour)
			if tc.link {
				link := filepath.Join(t.TempDir(), "home-link")
				if err := os.Symlink(h.dir, link); err != nil {
					t.Fatal(err)
				}
				h.stor = filepath.Join(link, ".local", "share", "twasm")
			}
			cfg, _ := json.Marshal(map[string]any{"stores": []any{map[string]any{"provider": "claude", "dir": h.dir, "pattern": "**/*.jsonl"}}})
			h.put(".config/twasm/sync.json", cfg, time.Hour)
			var last result
			for range 4 {
				last = h.ok("sync")
			}
			got := archivedSessions(t, h.stor)
			if len(got) != 1 || len(got["s.jsonl"]) != 1 {
				names := []string{}
				for n, runs := range got {
					for _, r := range runs {
						names = append(names, n+":"+r.id)
					}
				}
				t.Fatalf("after four syncs: runs %v, want only the session's one", names)
			}
			if !strings.Contains(last.errOut, "storage") {
				t.Errorf("the store's report does not say the storage was left out: %s", last.errOut)
			}
			tr, _ := filepath.Glob(filepath.Join(h.stor, "transcripts", "*.jsonl"))
			r := h.run("import", "--provider", "claude", tr[0])
			if r.code == 0 || !strings.Contains(r.errOut, "own storage") {
				t.Errorf("import of a transcript of the storage: %v", r)
			}
			if n, _ := filepath.Glob(filepath.Join(h.stor, "transcripts", "*.jsonl")); len(n) != len(tr) {
				t.Errorf("import wrote a run: %d transcripts, want %d", len(n), len(tr))
			}
		})
	}
}

// TestInputNeverBlocks: import of a named pipe is refused at once,
// naming what it is, without holding the storage's lock (an import
// after it goes through); record --input of a link to /dev/zero is
// refused as a device; and record reading stdin that never yields a
// line end (/dev/zero) stops at capture's bound with a clear message
// instead of filling the disk. Before a5f3114 import blocked in open()
// for ever, holding the lock, and record read /dev/zero until the disk
// was full. The waits' deadlines only bound a hang. Issue #25 item 7.
func TestInputNeverBlocks(t *testing.T) {
	t.Run("import of a named pipe", func(t *testing.T) {
		h := newFakeHome(t)
		fifo := filepath.Join(t.TempDir(), "session.jsonl")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		r := start(t, nil, h.env, "--storage", h.stor, "import", "--provider", "claude", fifo).wait(t, hangBound)
		if r.code == 0 || !strings.Contains(r.errOut, "named pipe") {
			t.Errorf("import of a FIFO: %v", r)
		}
		good := h.put("saved/s.jsonl", bigClaudeSession("fifo", 2), time.Hour)
		h.ok("import", "--provider", "claude", good)
	})
	t.Run("record --input of a device", func(t *testing.T) {
		zero := filepath.Join(t.TempDir(), "zero")
		if err := os.Symlink("/dev/zero", zero); err != nil {
			t.Fatal(err)
		}
		r := start(t, nil, nil, "--storage", t.TempDir(), "record", "--provider", "claude", "--input", zero).wait(t, hangBound)
		if r.code == 0 || !strings.Contains(r.errOut, "device") {
			t.Errorf("record --input /dev/zero: %v", r)
		}
	})
	t.Run("record of a stdin without line ends", func(t *testing.T) {
		zero, err := os.Open("/dev/zero")
		if err != nil {
			t.Skip(err)
		}
		defer zero.Close()
		stor := t.TempDir()
		cmd := exec.Command(binary, "--storage", stor, "record", "--provider", "claude")
		cmd.Env = env()
		cmd.Stdin = zero
		out, err := runBounded(t, cmd)
		if err == nil || !strings.Contains(string(out), "no line end") {
			t.Errorf("record < /dev/zero: %v\n%s", err, out)
		}
		var total int64
		_ = filepath.Walk(stor, func(_ string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() {
				total += fi.Size()
			}
			return nil
		})
		if limit := int64(2 * 64 << 20); total > limit+1<<20 {
			t.Errorf("record kept %d bytes of /dev/zero, want at most the bound (%d)", total, limit)
		}
	})
}

// runBounded runs cmd to its end and returns its combined output; the
// bound only ends a hang.
func runBounded(t *testing.T, cmd *exec.Cmd) ([]byte, error) {
	t.Helper()
	var buf strings.Builder
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return []byte(buf.String()), err
	case <-time.After(hangBound):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("%v did not end within %v", cmd.Args, hangBound)
		return nil, nil
	}
}

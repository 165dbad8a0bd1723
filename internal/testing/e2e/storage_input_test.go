package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
)

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
		good := h.put("saved/s.jsonl", clitest.ClaudeSession("fifo", 2), time.Hour)
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

package exportcmd_test

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/twasm/twasm/internal/testing/clitest"
	"golang.org/x/sys/unix"
)

// mknodChar makes a character device node with the numbers of /dev/null
// (1, 3) or /dev/full (1, 7) in a temporary directory, so that a test of
// what -o does to a device never touches the machine's own /dev. It
// skips without root or on a file system that refuses device nodes.
func mknodChar(t *testing.T, name string, minor uint32) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("making a device node needs root")
	}
	p := filepath.Join(t.TempDir(), name)
	if err := unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(1, minor))); err != nil {
		t.Skipf("mknod %s: %v", p, err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("the file system refuses to open a device node (%v)", err)
	}
	f.Close()
	return p
}

func isCharDevice(t *testing.T, p string) bool {
	t.Helper()
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode()&fs.ModeDevice != 0 && fi.Mode()&fs.ModeCharDevice != 0
}

// TestExportOutputNeverReplacesSpecialFiles: `export html|messages -o
// PATH` replaces only a regular file (or the file a link names); a
// device such as /dev/null or /dev/full and a named pipe are written as a
// stream and stay what they are, a write error (no space left on
// /dev/full) is reported with a non-zero exit, and a directory is
// refused. `export dir` replaces only a run folder. Issue #25 item 4.
func TestExportOutputNeverReplacesSpecialFiles(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	id := clitest.RecordAny(t, storage, "claude", clitest.Example())
	exports := map[string][]string{
		"html":     {"export", "html", id},
		"messages": {"export", "messages", "--format", "anthropic", "--dangling", "note", id},
	}
	for name, args := range exports {
		run := func(t *testing.T, out string) clitest.Result {
			return clitest.Run(t, clitest.Plain(), append([]string{"--storage", storage}, append(args, "-o", out)...)...)
		}
		t.Run(name+"/fifo", func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "out")
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
			got := make(chan []byte, 1)
			go func() {
				f, err := os.Open(p) // waits for the writer
				if err != nil {
					got <- nil
					return
				}
				b, _ := io.ReadAll(f)
				f.Close()
				got <- b
			}()
			r := run(t, p)
			if r.Code != 0 {
				t.Fatalf("%v", r)
			}
			if b := <-got; len(b) == 0 {
				t.Error("the reader of the named pipe got nothing")
			}
			if fi, err := os.Lstat(p); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
				t.Errorf("the named pipe was replaced: %v %v", fi.Mode(), err)
			}
		})
		t.Run(name+"/null", func(t *testing.T) {
			p := mknodChar(t, "null", 3)
			if r := run(t, p); r.Code != 0 {
				t.Fatalf("%v", r)
			}
			if !isCharDevice(t, p) {
				t.Error("the device was replaced by a regular file")
			}
		})
		t.Run(name+"/full", func(t *testing.T) {
			p := mknodChar(t, "full", 7)
			r := run(t, p)
			if r.Code == 0 || !strings.Contains(r.ErrOut, "no space left on device") {
				t.Errorf("a write to a full device is not reported: %v", r)
			}
			if !isCharDevice(t, p) {
				t.Error("the device was replaced by a regular file")
			}
		})
		t.Run(name+"/dir", func(t *testing.T) {
			p := t.TempDir()
			r := run(t, p)
			if r.Code == 0 || !strings.Contains(r.ErrOut, "directory") {
				t.Errorf("a directory as -o: %v", r)
			}
		})
		t.Run(name+"/regular-and-link", func(t *testing.T) {
			dir := t.TempDir()
			p, link := filepath.Join(dir, "out"), filepath.Join(dir, "link")
			if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(p, link); err != nil {
				t.Fatal(err)
			}
			if r := run(t, link); r.Code != 0 {
				t.Fatalf("%v", r)
			}
			if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("the link was replaced: %v", err)
			}
			if b, _ := os.ReadFile(p); len(b) < 10 {
				t.Errorf("the file the link names holds %q", b)
			}
			left, _ := filepath.Glob(filepath.Join(dir, ".twasm-export-*"))
			if len(left) > 0 {
				t.Errorf("temporary files left: %v", left)
			}
		})
	}
	t.Run("dir", func(t *testing.T) {
		out := t.TempDir()
		if err := os.MkdirAll(filepath.Join(out, "runs"), 0o700); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(out, "runs", id)
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
		r := clitest.Run(t, clitest.Plain(), "--storage", storage, "export", "dir", out, id)
		if r.Code == 0 || !strings.Contains(r.ErrOut, "named pipe") {
			t.Errorf("%v", r)
		}
		if fi, err := os.Lstat(p); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
			t.Errorf("export dir replaced a named pipe at the run's folder: %v", err)
		}
	})
}

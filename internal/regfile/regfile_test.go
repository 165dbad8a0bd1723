package regfile

import (
	"errors"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRefusesFIFO: readers refuse a FIFO at a transcript path without
// blocking, by name, through Open and FS; a directory likewise.
func TestRefusesFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := dir + "/x.jsonl"
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(fifo); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "named pipe") {
		t.Fatalf("Open: %v", err)
	}
	if _, err := FS(dir).Open("x.jsonl"); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("FS: %v", err)
	}
	if _, err := FS(dir).Open("../x"); err == nil {
		t.Fatal("FS: an invalid name opened")
	}
	if _, err := Open(dir); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "directory") {
		t.Fatalf("Open dir: %v", err)
	}
	if err := os.WriteFile(dir+"/ok.jsonl", []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := FS(dir).Open("ok.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	// OpenInfo refuses the same, and gives the opened file's size and
	// mtime.
	for _, p := range []string{fifo, dir} {
		if f, fi, err := OpenInfo(p); !errors.Is(err, ErrNotRegular) || f != nil || fi != nil {
			t.Fatalf("OpenInfo %s: %v %v %v", p, f, fi, err)
		}
	}
	f2, fi, err := OpenInfo(dir + "/ok.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f2.Close()
	want, err := os.Stat(dir + "/ok.jsonl")
	if err != nil || fi.Size() != 2 || !fi.ModTime().Equal(want.ModTime()) || !fi.Mode().IsRegular() {
		t.Fatalf("OpenInfo: %v %v, want %v", fi, err, want)
	}
}

// TestReadFile: ReadFile refuses a FIFO, a link to a device and a
// directory at once, naming what each is, refuses a file over its limit,
// and reads a regular file (through a link too).
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	fifo, zero, reg, link := dir+"/fifo", dir+"/zero", dir+"/reg", dir+"/link"
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(reg, []byte("0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(reg, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path  string
		limit int64
		want  string // "" when it reads
		is    error
	}{
		{fifo, 100, "named pipe", ErrNotRegular},
		{zero, 100, "device", ErrNotRegular},
		{dir, 100, "directory", ErrNotRegular},
		{reg, 9, "more than 9 bytes", ErrTooLarge},
		{reg, 10, "", nil},
		{link, 10, "", nil},
	} {
		b, err := ReadFile(c.path, c.limit)
		if c.want == "" {
			if err != nil || string(b) != "0123456789" {
				t.Errorf("%s: %q %v", c.path, b, err)
			}
			continue
		}
		if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.path) {
			t.Errorf("%s: %v", c.path, err)
		}
	}
}

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
}

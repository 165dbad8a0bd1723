package main

import (
	"debug/elf"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestMakeBuildsAStaticBinary checks the binary make built (bin/twasm, which
// make test builds before running the tests) is one static executable, as
// the README promises (the SQLite driver is pure Go, and the Makefile builds
// with CGO_ENABLED=0): no program interpreter, no shared library needed.
func TestMakeBuildsAStaticBinary(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads an ELF executable")
	}
	bin := filepath.Join("..", "..", "bin", "twasm")
	f, err := elf.Open(bin)
	if errors.Is(err, fs.ErrNotExist) {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing: make test builds it before the tests", bin)
		}
		t.Skipf("%s is not built (make bin/twasm)", bin)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("%s is dynamically linked (%v): build it with CGO_ENABLED=0 as the Makefile does", bin, p.Type)
		}
	}
	if libs, err := f.ImportedLibraries(); err == nil && len(libs) > 0 {
		t.Errorf("%s needs shared libraries %v", bin, libs)
	}
}

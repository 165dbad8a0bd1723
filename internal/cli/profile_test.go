package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/cli/iostreams"
)

// TestProfileFlags runs a command with the hidden --cpuprofile and
// --exectrace: each file is written whole (a gzipped pprof profile, a Go
// execution trace), the command's own output is unchanged, the flags do
// not show in the help, and a profile that cannot be created fails the
// command before it runs.
func TestProfileFlags(t *testing.T) {
	dir := t.TempDir()
	cpu, tr := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "exec.trace")
	env := func(k string) string {
		if k == "HOME" {
			return dir
		}
		return ""
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		out    string
		errOut string
		files  map[string][]byte // file → the bytes it must start with
	}{
		{"both", []string{"--cpuprofile", cpu, "--exectrace", tr, "prices"}, 0, "price table", "", map[string][]byte{cpu: {0x1f, 0x8b}, tr: []byte("go 1.")}},
		{"hidden from help", []string{"--help"}, 0, "Usage:", "", nil},
		{"cannot create", []string{"--cpuprofile", filepath.Join(dir, "missing", "cpu.pprof"), "prices"}, 1, "", "--cpuprofile: open", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ios, _, out, errOut := iostreams.Test()
			if code := Main(context.Background(), tc.args, ios, env); code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, errOut)
			}
			if !strings.Contains(out.String(), tc.out) || tc.out == "" && out.Len() > 0 {
				t.Errorf("stdout = %q, want %q", out, tc.out)
			}
			if !strings.Contains(errOut.String(), tc.errOut) || tc.errOut == "" && errOut.Len() > 0 {
				t.Errorf("stderr = %q, want %q", errOut, tc.errOut)
			}
			if strings.Contains(out.String(), "cpuprofile") || strings.Contains(out.String(), "exectrace") {
				t.Errorf("stdout names a hidden flag:\n%s", out)
			}
			for name, head := range tc.files {
				b, err := os.ReadFile(name)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.HasPrefix(b, head) {
					t.Errorf("%s starts %q, want %q", filepath.Base(name), b[:min(len(b), 8)], head)
				}
			}
		})
	}
}

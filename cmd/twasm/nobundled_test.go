package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuiltWithoutMake builds twasm as `go build ./cmd/twasm` does on a
// fresh clone, where internal/bundled/wasm holds only its README (the
// modules are build output of make), and runs it: every command that needs
// the plugins fails, exit status not 0, with a message saying the binary
// has no bundled plugins and to build it with make, and writes no run;
// commands that need no plugin still work.
func TestBuiltWithoutMake(t *testing.T) {
	if testing.Short() {
		t.Skip("builds twasm from a copy of the module")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	clone := filepath.Join(t.TempDir(), "twasm")
	copyClone(t, root, clone)
	bin := filepath.Join(t.TempDir(), "twasm")
	build := exec.CommandContext(context.Background(), "go", "build", "-trimpath", "-o", bin, "./cmd/twasm")
	build.Dir = clone
	build.Env = append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/twasm without the plugins: %v\n%s", err, out)
	}

	home := t.TempDir()
	storage := filepath.Join(t.TempDir(), "storage")
	input := filepath.Join(root, "examples", "claude", "stream-json.jsonl")
	run := func(args ...string) (stdout, stderr string, code int) {
		t.Helper()
		cmd := exec.CommandContext(context.Background(), bin, append([]string{"--storage", storage}, args...)...)
		cmd.Env = []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "XDG_CACHE_HOME=" + filepath.Join(home, "cache"), "PATH=" + os.Getenv("PATH")}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr, cmd.Stdin = &out, &errb, strings.NewReader("")
		err := cmd.Run()
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit):
			code = exit.ExitCode()
		case err != nil:
			t.Fatalf("twasm %v: %v", args, err)
		}
		return out.String(), errb.String(), code
	}

	for _, args := range [][]string{
		{"plugins", "list"},
		{"plugins", "list", "--json"},
		{"record", "--provider", "claude", "--input", input},
		{"import", "--provider", "claude", input},
		{"golden", "check", "--plugin", "claude", filepath.Join(root, "testdata", "golden", "claude")},
	} {
		stdout, stderr, code := run(args...)
		if code == 0 {
			t.Errorf("twasm %s: exit 0 from a binary without plugins\nstdout: %s\nstderr: %s", strings.Join(args, " "), stdout, stderr)
		}
		if !strings.Contains(stderr, "built without its bundled plugins") || !strings.Contains(stderr, "`make`") {
			t.Errorf("twasm %s: stderr does not say the plugins are missing and to build with make:\n%s", strings.Join(args, " "), stderr)
		}
		if stdout != "" {
			t.Errorf("twasm %s: printed data from a binary without plugins: %q", strings.Join(args, " "), stdout)
		}
	}
	runs, _ := filepath.Glob(filepath.Join(storage, "transcripts", "*.jsonl"))
	if len(runs) != 0 {
		t.Errorf("a binary without plugins wrote runs: %v", runs)
	}

	if stdout, stderr, code := run("version"); code != 0 || !strings.Contains(stdout, "twasm") {
		t.Errorf("twasm version: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// copyClone copies the module at root to dst as a fresh clone has it: no
// build output (bin/, the bundled modules and their manifests, .wasm
// files), no VCS directory, no test data (the build needs none).
func copyClone(t *testing.T, root, dst string) {
	t.Helper()
	bundled := filepath.Join(root, "internal", "bundled", "wasm")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || name == "testdata" || strings.HasPrefix(name, "storage") || rel == "bin") {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		// Left out as a fresh clone lacks them: the modules and what
		// make generates from them (manifests_gen.go embeds each
		// module by name).
		if !d.Type().IsRegular() || strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".wasm") ||
			filepath.Dir(p) == bundled && name != "README.md" ||
			rel == filepath.Join("internal", "bundled", "manifests_gen.go") {
			return nil
		}
		return copyFile(p, filepath.Join(dst, rel))
	})
	if err != nil {
		t.Fatal(err)
	}
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

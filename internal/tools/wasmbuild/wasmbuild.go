package wasmbuild

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Toolchain is a compiler of plugins: standard Go (the zero value) or
// TinyGo, which builds the bundled plugins.
type Toolchain struct {
	// TinyGo is the tinygo command; empty for standard Go.
	TinyGo string
	// Flags are TinyGo's build flags.
	Flags []string
}

// DefaultTinyGoFlags are the flags the Makefile builds the bundled plugins
// with (its TINYGO_FLAGS; see there for why each matters).
const DefaultTinyGoFlags = "-opt=2 -scheduler=none -no-debug -panic=trap -tags=twasm.boundarygc -interp-timeout=1h"

// Name is "go" or "tinygo".
func (tc Toolchain) Name() string {
	if tc.TinyGo != "" {
		return "tinygo"
	}
	return "go"
}

// FindTinyGo returns the TinyGo toolchain the Makefile would use: the
// tinygo command in $TINYGO, else the one .ci/install-tinygo installed
// for the module that holds pkgDir, else tinygo on PATH; with the flags
// in $TINYGO_FLAGS, else [DefaultTinyGoFlags]. ok is false when no tinygo
// is installed.
func FindTinyGo(ctx context.Context, pkgDir string) (tc Toolchain, ok bool) {
	flags := os.Getenv("TINYGO_FLAGS")
	if flags == "" {
		flags = DefaultTinyGoFlags
	}
	tc.Flags = strings.Fields(flags)
	if p := os.Getenv("TINYGO"); p != "" {
		tc.TinyGo = p
		return tc, true
	}
	cmd := exec.CommandContext(ctx, "go", "env", "GOMOD")
	cmd.Dir = pkgDir
	if mod, err := cmd.Output(); err == nil && len(bytes.TrimSpace(mod)) > 0 {
		script := filepath.Join(filepath.Dir(string(bytes.TrimSpace(mod))), ".ci", "install-tinygo")
		if out, err := exec.CommandContext(ctx, script, "--path").Output(); err == nil {
			if p := string(bytes.TrimSpace(out)); p != "" {
				if _, err := os.Stat(p); err == nil {
					tc.TinyGo = p
					return tc, true
				}
			}
		}
	}
	if p, err := exec.LookPath("tinygo"); err == nil {
		tc.TinyGo = p
		return tc, true
	}
	return Toolchain{}, false
}

// Build compiles the main package in pkgDir into a wasip1 reactor at
// outPath with standard Go (GOOS=wasip1 GOARCH=wasm go build
// -buildmode=c-shared).
func Build(ctx context.Context, pkgDir, outPath string) error {
	return Toolchain{}.Build(ctx, pkgDir, outPath)
}

// Build compiles the main package in pkgDir into a wasip1 reactor at
// outPath. The file appears atomically: a reader never sees a partial
// module, so concurrent test processes may build into the same path.
func (tc Toolchain) Build(ctx context.Context, pkgDir, outPath string) error {
	// The compiler runs in pkgDir: a relative outPath is this process's.
	outPath, err := filepath.Abs(outPath)
	if err != nil {
		return fmt.Errorf("wasmbuild: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(outPath), 0o755); err != nil {
		return fmt.Errorf("wasmbuild: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(outPath), ".build-*.wasm")
	if err != nil {
		return fmt.Errorf("wasmbuild: %w", err)
	}
	tmpName := tmp.Name()
	tmp.Close()
	defer os.Remove(tmpName) // a no-op after the rename

	var cmd *exec.Cmd
	if tc.TinyGo != "" {
		args := append([]string{"build", "-target=wasip1", "-buildmode=c-shared"}, tc.Flags...)
		cmd = exec.CommandContext(ctx, tc.TinyGo, append(args, "-o", tmpName, ".")...)
	} else {
		cmd = exec.CommandContext(ctx, "go", "build", "-buildmode=c-shared", "-trimpath", "-o", tmpName, ".")
		cmd.Env = wasmEnv()
	}
	cmd.Dir = pkgDir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("wasmbuild: %s build %s: %w\n%s", tc.Name(), pkgDir, err, strings.TrimSpace(stderr.String()))
	}
	if fi, err := os.Stat(tmpName); err != nil || fi.Size() == 0 {
		return fmt.Errorf("wasmbuild: %s build %s wrote no module at %s (%v)", tc.Name(), pkgDir, tmpName, err)
	}
	if err := os.Rename(tmpName, outPath); err != nil {
		return fmt.Errorf("wasmbuild: %w", err)
	}
	return nil
}

// Cached builds pkgDir with standard Go into cacheDir/<key>.wasm unless
// that file exists and returns its path.
func Cached(ctx context.Context, pkgDir, cacheDir string) (string, error) {
	return Toolchain{}.Cached(ctx, pkgDir, cacheDir)
}

// Cached builds pkgDir into cacheDir/<key>.wasm unless that file exists
// and returns its path. The key is [Toolchain.CacheKey].
func (tc Toolchain) Cached(ctx context.Context, pkgDir, cacheDir string) (string, error) {
	key, err := tc.CacheKey(ctx, pkgDir)
	if err != nil {
		return "", err
	}
	out := filepath.Join(cacheDir, key+".wasm")
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	if err := tc.Build(ctx, pkgDir, out); err != nil {
		return "", err
	}
	return out, nil
}

// CacheKey is the name of pkgDir's build in a cache ([Toolchain.Cached]):
// [SourceKey], and for TinyGo also its version, flags and twasm's runtime
// patch ([RuntimePatch]), so an edit to the plugin or to the SDK it
// imports, another compiler or another version of the patch gives a new
// build.
func (tc Toolchain) CacheKey(ctx context.Context, pkgDir string) (string, error) {
	key, err := SourceKey(ctx, pkgDir)
	if err != nil {
		return "", err
	}
	if tc.TinyGo == "" {
		return key, nil
	}
	ver, err := exec.CommandContext(ctx, tc.TinyGo, "version").Output()
	if err != nil {
		return "", fmt.Errorf("wasmbuild: %s version: %w", tc.TinyGo, err)
	}
	patch, err := tc.RuntimePatch(ctx)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s", key, ver, strings.Join(tc.Flags, " "))
	if patch != "" {
		// Only when patched, so that the keys of a stock TinyGo's
		// builds stay what they were.
		fmt.Fprintf(h, "\x00%s", patch)
	}
	return "tinygo-" + hex.EncodeToString(h.Sum(nil))[:32], nil
}

// RuntimePatch returns the mark of the runtime patch .ci/install-tinygo
// applied to tc's TinyGo (the text of the file the patch adds,
// "twasm-boundarygc N" in its comment), or "" for a stock TinyGo. The
// patch changes how the plugins' garbage is collected, not their sources
// or TinyGo's version: without it in CacheKey, a module built before a
// new version of the patch would be taken for one built after.
func (tc Toolchain) RuntimePatch(ctx context.Context) (string, error) {
	root, err := exec.CommandContext(ctx, tc.TinyGo, "env", "TINYGOROOT").Output()
	if err != nil {
		return "", fmt.Errorf("wasmbuild: %s env TINYGOROOT: %w", tc.TinyGo, err)
	}
	b, err := os.ReadFile(filepath.Join(string(bytes.TrimSpace(root)), "src", "runtime", "gc_boundary_on.go"))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("wasmbuild: %w", err)
	}
	return string(b), nil
}

// BuildInto builds pkgDir at outPath, as [Toolchain.Build], and keeps a
// copy in cacheDir under its key unless one is there, when its sources
// did not change while it built (the key before and after the build is
// the same): [Toolchain.Cached] of the same sources and toolchain then
// finds the module instead of building it again. The build of the
// bundled plugins uses it, so that the tests that build the same
// plugins (TestCacheDir) reuse its modules, byte for byte.
func (tc Toolchain) BuildInto(ctx context.Context, pkgDir, outPath, cacheDir string) error {
	before, err := tc.CacheKey(ctx, pkgDir)
	if err != nil {
		return err
	}
	if err := tc.Build(ctx, pkgDir, outPath); err != nil {
		return err
	}
	after, err := tc.CacheKey(ctx, pkgDir)
	if err != nil || after != before {
		return err // the sources changed: the module is not cached
	}
	cached := filepath.Join(cacheDir, after+".wasm")
	if _, err := os.Stat(cached); err == nil {
		return nil
	}
	b, err := os.ReadFile(outPath)
	if err != nil {
		return fmt.Errorf("wasmbuild: %w", err)
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return fmt.Errorf("wasmbuild: %w", err)
	}
	tmp, err := os.CreateTemp(cacheDir, ".seed-*.wasm")
	if err != nil {
		return fmt.Errorf("wasmbuild: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	_, werr := tmp.Write(b)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("wasmbuild: %w", werr)
	}
	if err := os.Rename(tmp.Name(), cached); err != nil {
		return fmt.Errorf("wasmbuild: %w", err)
	}
	return nil
}

// SourceKey returns the cache key of pkgDir: a hex sha256 over the go
// version and the non-standard-library source files of the package and
// its dependencies, for GOOS=wasip1 GOARCH=wasm ([SourceFiles]).
func SourceKey(ctx context.Context, pkgDir string) (string, error) {
	files, err := SourceFiles(ctx, pkgDir)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	ver, err := exec.CommandContext(ctx, "go", "env", "GOVERSION").Output()
	if err != nil {
		return "", fmt.Errorf("wasmbuild: go env GOVERSION: %w", err)
	}
	h.Write(ver)
	for _, sf := range files {
		// Names, not only contents, go into the hash: renaming a
		// file can change the build (build tags in file names).
		fmt.Fprintf(h, "%s/%s\x00", filepath.Base(sf.Dir), sf.Name)
		f, err := os.Open(sf.Path())
		if err != nil {
			return "", fmt.Errorf("wasmbuild: %w", err)
		}
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", fmt.Errorf("wasmbuild: %w", err)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:32], nil
}

// SourceFile is a file a module is built from: Name in directory Dir.
type SourceFile struct{ Dir, Name string }

// Path is the file's path.
func (f SourceFile) Path() string { return filepath.Join(f.Dir, f.Name) }

// SourceFiles lists the files the module of the main package in pkgDir
// is built from for GOOS=wasip1 GOARCH=wasm: the Go and embedded files of
// it and of every package it imports outside the standard library, in
// go list -deps order, each package's in its order.
func SourceFiles(ctx context.Context, pkgDir string) ([]SourceFile, error) {
	// One line per package: its directory, then its files.
	const format = `{{if not .Standard}}{{.Dir}}{{range .GoFiles}}` + "\t" + `{{.}}{{end}}{{range .EmbedFiles}}` + "\t" + `{{.}}{{end}}{{end}}`
	cmd := exec.CommandContext(ctx, "go", "list", "-deps", "-f", format, ".")
	cmd.Dir = pkgDir
	cmd.Env = wasmEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("wasmbuild: go list %s: %w\n%s", pkgDir, err, strings.TrimSpace(stderr.String()))
	}
	var out []SourceFile
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) == 0 || fields[0] == "" {
			continue
		}
		for _, name := range fields[1:] {
			out = append(out, SourceFile{Dir: fields[0], Name: name})
		}
	}
	return out, sc.Err()
}

func wasmEnv() []string {
	return append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
}

// TestCacheDir is where ForTest keeps its builds:
// os.UserCacheDir()/twasm-test-wasm, or a directory under the system
// temporary directory when there is no user cache directory.
func TestCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "twasm-test-wasm")
}

// ForTest builds the plugin in pkgDir with standard Go (cached in
// TestCacheDir) and returns the module's bytes. It fails the test when
// the build fails, and skips it when there is no go tool on PATH.
func ForTest(tb testing.TB, pkgDir string) []byte {
	tb.Helper()
	return Toolchain{}.ForTest(tb, pkgDir)
}

// ForTest builds the plugin in pkgDir (cached in TestCacheDir) and
// returns the module's bytes. It fails the test when the build fails,
// and skips it when there is no go tool on PATH.
func (tc Toolchain) ForTest(tb testing.TB, pkgDir string) []byte {
	tb.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		tb.Skip("wasmbuild: no go tool on PATH")
	}
	path, err := tc.Cached(context.Background(), pkgDir, TestCacheDir())
	if err != nil {
		tb.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	if len(b) < 8 || !bytes.Equal(b[:4], []byte("\x00asm")) {
		tb.Fatal(errors.New("wasmbuild: " + path + " is not a wasm module"))
	}
	return b
}

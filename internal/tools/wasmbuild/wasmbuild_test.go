package wasmbuild

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCachedBuildsOnceAndKeysBySource(t *testing.T) {
	ctx := context.Background()
	cache := t.TempDir()
	echo := filepath.Join("..", "..", "..", "abi", "sdk", "testdata", "echo")
	p1, err := Cached(ctx, echo, cache)
	if err != nil {
		t.Fatal(err)
	}
	st1, err := os.Stat(p1)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := Cached(ctx, echo, cache)
	if err != nil {
		t.Fatal(err)
	}
	st2, _ := os.Stat(p2)
	if p1 != p2 || !st1.ModTime().Equal(st2.ModTime()) {
		t.Fatalf("second build was not served from the cache: %s %s", p1, p2)
	}
	if b := ForTest(t, echo); len(b) < 1000 {
		t.Fatalf("module of %d bytes", len(b))
	}

	// A package whose source differs gets another key.
	dir := t.TempDir()
	src := "package main\n\n//go:wasmexport f\nfunc f() {}\n\nfunc main() {}\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n\ngo 1.24\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	k1, err := SourceKey(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src+"// changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	k2, err := SourceKey(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if k1 == k2 {
		t.Fatal("an edit did not change the key")
	}
}

func TestBuildReportsCompilerErrors(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n\ngo 1.24\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() { undefined() }\n"), 0o644)
	err := Build(context.Background(), dir, filepath.Join(t.TempDir(), "x.wasm"))
	if err == nil {
		t.Fatal("no error")
	}
	if got := err.Error(); !strings.Contains(got, "undefined") {
		t.Fatalf("error does not carry the compiler's message: %v", err)
	}
}

func TestTinyGoBuildsAReactorKeyedApartFromGo(t *testing.T) {
	ctx := context.Background()
	echo := filepath.Join("..", "..", "..", "abi", "sdk", "testdata", "echo")
	tc, ok := FindTinyGo(ctx, echo)
	if !ok {
		t.Skip("no TinyGo installed (.ci/install-tinygo)")
	}
	if tc.Name() != "tinygo" || len(tc.Flags) == 0 {
		t.Fatalf("toolchain %q flags %q", tc.Name(), tc.Flags)
	}
	cache := t.TempDir()
	tiny, err := tc.Cached(ctx, echo, cache)
	if err != nil {
		t.Fatal(err)
	}
	std, err := Cached(ctx, echo, cache)
	if err != nil {
		t.Fatal(err)
	}
	if tiny == std {
		t.Fatalf("TinyGo and Go builds share the cache entry %s", tiny)
	}
	// A TinyGo reactor is far smaller than Go's: this tells the two
	// builds apart without trusting the file names.
	st, _ := os.Stat(std)
	ti, _ := os.Stat(tiny)
	if ti.Size()*4 > st.Size() {
		t.Fatalf("TinyGo module %d bytes, Go module %d bytes: not a TinyGo build", ti.Size(), st.Size())
	}
	if b := tc.ForTest(t, echo); !strings.HasPrefix(string(b), "\x00asm") {
		t.Fatal("not a wasm module")
	}
}

func TestTinyGoReportsCompilerErrors(t *testing.T) {
	tc, ok := FindTinyGo(context.Background(), ".")
	if !ok {
		t.Skip("no TinyGo installed (.ci/install-tinygo)")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n\ngo 1.24\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() { undefined() }\n"), 0o644)
	err := tc.Build(context.Background(), dir, filepath.Join(t.TempDir(), "x.wasm"))
	if err == nil || !strings.Contains(err.Error(), "undefined") || !strings.Contains(err.Error(), "tinygo build") {
		t.Fatalf("error does not carry the compiler's message: %v", err)
	}
}

// TestCacheKeyFollowsRuntimePatch checks that a TinyGo build's key
// changes with the runtime patch .ci/install-tinygo applied (the same
// sources, version and flags), and that a stock TinyGo's is another
// again: a module built with one version of the patch is never served
// for another. The tinygo here is a script that answers version and env.
func TestCacheKeyFollowsRuntimePatch(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	tinygo := filepath.Join(root, "tinygo")
	script := "#!/bin/sh\ncase \"$1\" in\nversion) echo 'tinygo version 0.42.0 fake';;\nenv) echo '" + root + "';;\nesac\n"
	if err := os.WriteFile(tinygo, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	rt := filepath.Join(root, "src", "runtime")
	if err := os.MkdirAll(rt, 0o755); err != nil {
		t.Fatal(err)
	}
	tc := Toolchain{TinyGo: tinygo, Flags: []string{"-opt=2"}}
	echo := filepath.Join("..", "..", "..", "abi", "sdk", "testdata", "echo")
	key := func() string {
		t.Helper()
		k, err := tc.CacheKey(ctx, echo)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	stock := key()
	seen := map[string]string{stock: "stock"}
	for _, mark := range []string{"// twasm-boundarygc 3\n", "// twasm-boundarygc 4\n"} {
		if err := os.WriteFile(filepath.Join(rt, "gc_boundary_on.go"), []byte(mark), 0o644); err != nil {
			t.Fatal(err)
		}
		k := key()
		if was, ok := seen[k]; ok {
			t.Fatalf("patch %q has the key of %s: %s", mark, was, k)
		}
		seen[k] = mark
		if again := key(); again != k {
			t.Fatalf("the same patch gave two keys: %s %s", k, again)
		}
	}
}

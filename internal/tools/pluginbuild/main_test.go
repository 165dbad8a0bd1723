package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/internal/tools/wasmbuild"
)

// The module pluginbuild writes (at a path relative to its working
// directory, as make gives it) is the one a test's build of the same
// sources finds in the cache, byte for byte, without building it again;
// an unknown toolchain is refused. Not parallel: it changes directory.
func TestBuildSeedsTheTestCache(t *testing.T) {
	ctx := context.Background()
	echo, err := filepath.Abs(filepath.Join("..", "..", "..", "abi", "sdk", "testdata", "echo"))
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	t.Chdir(t.TempDir())
	out := filepath.Join("bundled", "echo.wasm")
	if err := run(ctx, "go", echo, out, cache); err != nil {
		t.Fatal(err)
	}
	built, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	key, err := wasmbuild.Toolchain{}.CacheKey(ctx, echo)
	if err != nil {
		t.Fatal(err)
	}
	seeded := filepath.Join(cache, key+".wasm")
	before, err := os.Stat(seeded)
	if err != nil {
		t.Fatalf("no module in the cache under its key: %v", err)
	}
	path, err := wasmbuild.Cached(ctx, echo, cache)
	if err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if path != seeded || !after.ModTime().Equal(before.ModTime()) {
		t.Fatalf("Cached built again (%s) instead of finding %s", path, seeded)
	}
	if len(built) < 1000 {
		t.Fatalf("a module of %d bytes", len(built))
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, built) {
		t.Fatalf("the cached module (%d bytes) is not the one built (%d bytes)", len(b), len(built))
	}
	if err := run(ctx, "rustc", echo, out, cache); err == nil {
		t.Fatal("an unknown toolchain was accepted")
	}
}

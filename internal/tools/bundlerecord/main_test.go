package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/bundled"
	"github.com/twasm/twasm/internal/tools/wasmbuild"
	"github.com/twasm/twasm/internal/wasm/wasmdata"
)

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRecord(t *testing.T) {
	echo := wasmbuild.ForTest(t, filepath.Join("..", "..", "..", "abi", "sdk", "testdata", "echo"))
	ctx := context.Background()
	// Compiled code cached beside the test builds, as the host's tests
	// cache it: each run loads the same module.
	cache := filepath.Join(wasmbuild.TestCacheDir(), "wazero")

	t.Run("records every module", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "echo.wasm"), echo, 0o644); err != nil {
			t.Fatal(err)
		}
		// A killed build's empty temporary file is no module of the
		// bundle (before, the run failed on it: no magic number).
		torn := filepath.Join(dir, ".build-1.wasm")
		if err := os.WriteFile(torn, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := run(ctx, dir, cache, ""); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(torn); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, bundled.ManifestsFile))
		if err != nil {
			t.Fatal(err)
		}
		var m bundled.Manifests
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(mustRead(t, filepath.Join(dir, "echo.wasm")))
		r, ok := m["echo.wasm"]
		if len(m) != 1 || !ok || r.SHA256 != hex.EncodeToString(sum[:]) ||
			r.Manifest.Name != "echo" || len(r.Manifest.Providers) == 0 {
			t.Fatalf("recorded %s", b)
		}
		// The module was compacted in place, and the record is of it.
		onDisk, err := os.ReadFile(filepath.Join(dir, "echo.wasm"))
		if err != nil {
			t.Fatal(err)
		}
		if len(onDisk) == len(echo) || r.Size != len(onDisk) {
			t.Fatalf("module %d bytes, was %d, recorded %d: not compacted or not recorded as compacted", len(onDisk), len(echo), r.Size)
		}
		again, err := wasmdata.Compact(onDisk, wasmdata.Gap)
		if err != nil || len(again) != len(onDisk) {
			t.Fatalf("a second compaction still changes it: %v", err)
		}
		if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
			t.Fatalf("temporary files left: %v", left)
		}
	})

	t.Run("writes the record as Go too", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "echo.wasm"), echo, 0o644); err != nil {
			t.Fatal(err)
		}
		goFile := filepath.Join(t.TempDir(), bundled.GeneratedFile)
		if err := run(ctx, dir, cache, goFile); err != nil {
			t.Fatal(err)
		}
		var m bundled.Manifests
		if err := json.Unmarshal(mustRead(t, filepath.Join(dir, bundled.ManifestsFile)), &m); err != nil {
			t.Fatal(err)
		}
		want, err := goSource(m)
		if err != nil {
			t.Fatal(err)
		}
		got := mustRead(t, goFile)
		if string(got) != string(want) {
			t.Fatalf("%s is not the Go of %s:\n%s", goFile, bundled.ManifestsFile, got)
		}
		f, err := parser.ParseFile(token.NewFileSet(), goFile, got, 0)
		if err != nil || f.Name.Name != "bundled" {
			t.Fatalf("not a file of package bundled: %v", err)
		}
		if !strings.Contains(string(got), `"`+m["echo.wasm"].SHA256+`"`) {
			t.Fatalf("the module's sha256 is not in it:\n%s", got)
		}
	})

	t.Run("a rewritten module keeps the compiler's modification time", func(t *testing.T) {
		// make must still see a source edited after the module was
		// compiled (while other modules built) as newer than the module.
		dir := t.TempDir()
		path := filepath.Join(dir, "echo.wasm")
		if err := os.WriteFile(path, echo, 0o644); err != nil {
			t.Fatal(err)
		}
		compiled := time.Now().Add(-time.Hour).Truncate(time.Second)
		if err := os.Chtimes(path, compiled, compiled); err != nil {
			t.Fatal(err)
		}
		if err := run(ctx, dir, cache, ""); err != nil {
			t.Fatal(err)
		}
		if string(mustRead(t, path)) == string(echo) {
			t.Fatal("the module was not rewritten: the case tests nothing")
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if !st.ModTime().Equal(compiled) {
			t.Fatalf("the rewritten module's modification time is %v, want the compiler's %v", st.ModTime(), compiled)
		}
	})

	t.Run("a second run leaves compacted modules as they are", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "echo.wasm")
		if err := os.WriteFile(path, echo, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := run(ctx, dir, cache, ""); err != nil {
			t.Fatal(err)
		}
		first := mustRead(t, path)
		manifests := mustRead(t, filepath.Join(dir, bundled.ManifestsFile))
		past := time.Now().Add(-time.Hour)
		if err := os.Chtimes(path, past, past); err != nil {
			t.Fatal(err)
		}
		if err := run(ctx, dir, cache, ""); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if !st.ModTime().Equal(past) || string(mustRead(t, path)) != string(first) {
			t.Fatal("the compacted module was rewritten")
		}
		if string(mustRead(t, filepath.Join(dir, bundled.ManifestsFile))) != string(manifests) {
			t.Fatal("the record changed")
		}
	})

	t.Run("a module that does not load fails the build and writes nothing", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "echo.wasm"), echo, 0o644)
		os.WriteFile(filepath.Join(dir, "broken.wasm"), []byte("\x00asm not really"), 0o644)
		err := run(ctx, dir, cache, "")
		if err == nil || !strings.Contains(err.Error(), "broken.wasm") {
			t.Fatalf("got %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, bundled.ManifestsFile)); !os.IsNotExist(err) {
			t.Fatalf("manifests written: %v", err)
		}
	})
}

package archtest

import (
	"errors"
	"fmt"
	"go/build"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/twasm/twasm"

// buildTools and testHelpers are the packages runtime code must not
// depend on, besides every package whose last element ends in "test".
var (
	buildTools = []string{
		"internal/tools/benchreport",
		"internal/tools/bundlerecord",
		"internal/tools/pluginbench",
		"internal/tools/wasmbuild",
	}
	testHelpers = []string{
		"internal/testing/echoplugin",
		"internal/testing/e2e",
	}
)

// role returns "build tool", "test helper" or "" (runtime) for an import
// path of this module.
func role(path string) string {
	rel, ok := strings.CutPrefix(path, module+"/")
	if !ok {
		return ""
	}
	for _, p := range buildTools {
		if rel == p {
			return "build tool"
		}
	}
	for _, p := range testHelpers {
		if rel == p {
			return "test helper"
		}
	}
	if strings.HasSuffix(rel[strings.LastIndexByte(rel, '/')+1:], "test") {
		return "test helper"
	}
	return ""
}

// TestRole pins the classification itself, so that the rule cannot pass
// by classifying nothing.
func TestRole(t *testing.T) {
	tests := []struct{ path, want string }{
		{module + "/host", ""},
		{module + "/internal/bundled", ""},
		{module + "/internal/wasm/wasmcheck", ""},
		{module + "/internal/tools/bundlerecord", "build tool"},
		{module + "/internal/tools/wasmbuild", "build tool"},
		{module + "/internal/testing/plugintest", "test helper"},
		{module + "/internal/testing/cmdtest", "test helper"},
		{module + "/internal/testing/echoplugin", "test helper"},
		{"github.com/stretchr/testify", ""},
	}
	for _, tt := range tests {
		if got := role(tt.path); got != tt.want {
			t.Errorf("role(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

// imports reads, with go/build, the non-test imports of every package of
// the module under root (this process reads the files, so go test's cache
// sees a change in any of them), keyed by import path.
func imports(t *testing.T, root string) map[string][]string {
	t.Helper()
	pkgs := map[string][]string{}
	err := filepath.WalkDir(root, func(dir string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if name := d.Name(); dir != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		if dir != root {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
		}
		p, err := build.ImportDir(dir, 0)
		var noGo *build.NoGoError
		if errors.As(err, &noGo) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			return err
		}
		pkgs[path.Join(module, filepath.ToSlash(rel))] = p.Imports
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// TestRuntimeImportsNoToolOrHelper fails for a runtime package that
// depends, directly or through other packages of the module, on a build
// tool or a test helper. Test files are not followed: a runtime package's
// tests may use helpers.
func TestRuntimeImportsNoToolOrHelper(t *testing.T) {
	pkgs := imports(t, filepath.Join("..", "..", ".."))
	runtime, tools, helpers := 0, 0, 0
	for pkg := range pkgs {
		switch role(pkg) {
		case "build tool":
			tools++
			continue
		case "test helper":
			helpers++
			continue
		}
		runtime++
		// Walk the module's packages pkg depends on, remembering through
		// which one each was reached.
		via := map[string]string{pkg: ""}
		queue := []string{pkg}
		for len(queue) > 0 {
			cur := queue[0]
			queue = queue[1:]
			for _, dep := range pkgs[cur] {
				if _, seen := via[dep]; seen || !strings.HasPrefix(dep, module+"/") {
					continue
				}
				via[dep] = cur
				if r := role(dep); r != "" {
					t.Errorf("runtime package %s depends on %s %s (through %s); README, Layout: runtime packages import no build tool or test helper", pkg, r, dep, cur)
					continue
				}
				queue = append(queue, dep)
			}
		}
	}
	if runtime < 20 || tools != len(buildTools) || helpers < len(testHelpers) {
		t.Fatalf("classified %d runtime packages, %d build tools (want %d), %d test helpers: the lists in this test are stale", runtime, tools, len(buildTools), helpers)
	}
}

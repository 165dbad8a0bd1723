package e2e

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestColdCacheCompilesOnlyThePluginInUse records with an empty cache:
// the bundled plugins' manifests come from the build's record, so the one
// compiled module left in the cache is the plugin the run used, and a
// second run compiles nothing.
func TestColdCacheCompilesOnlyThePluginInUse(t *testing.T) {
	cacheHome := t.TempDir()
	compiled := func() []string {
		var files []string
		filepath.WalkDir(filepath.Join(cacheHome, "twasm"), func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				rel, _ := filepath.Rel(cacheHome, path)
				files = append(files, rel)
			}
			return nil
		})
		return files
	}
	run := func() {
		t.Helper()
		p := start(t, nil, []string{"XDG_CACHE_HOME=" + cacheHome},
			"--storage", t.TempDir(), "record", "--provider", "claude", "--input", example(), "--quiet")
		if r := p.wait(t, hangBound); r.code != 0 {
			t.Fatalf("record: %v", r)
		}
	}
	run()
	first := compiled()
	if len(first) != 1 || !strings.Contains(first[0], "wazero") {
		t.Fatalf("the cold run left %d files in the cache, want the one compiled plugin: %v", len(first), first)
	}
	run()
	if second := compiled(); len(second) != 1 || second[0] != first[0] {
		t.Fatalf("the warm run changed the cache: %v -> %v", first, second)
	}
}

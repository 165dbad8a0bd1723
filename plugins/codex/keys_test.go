package codex

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestKeysCoverGets checks that every key the normalizer names in a Get or
// Path call is declared in keys.
func TestKeysCoverGets(t *testing.T) {
	call := regexp.MustCompile(`\b(Get|Path)\(([^)]*)\)`)
	lit := regexp.MustCompile(`"([^"\\]*)"`)
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range call.FindAllSubmatch(src, -1) {
			for _, k := range lit.FindAllSubmatch(m[2], -1) {
				if !slices.Contains(keys.Names(), string(k[1])) {
					t.Errorf("%s: key %q is read but not declared in keys", f, k[1])
				}
			}
		}
	}
}

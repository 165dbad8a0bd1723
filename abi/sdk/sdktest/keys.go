package sdktest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi"
)

var (
	getCall   = regexp.MustCompile(`\b(Get|Path)\(([^)]*)\)`)
	stringLit = regexp.MustCompile(`"([^"\\]*)"`)
)

// CheckKeys checks that every key the plugin's non-test sources in the
// working directory (the package under test) name as a string literal in a
// Get or Path call is declared in keys (sdk.Plugin.Keys): an undeclared
// key still works, but costs a byte compare inside WebAssembly where a
// declared one costs a number compare.
func CheckKeys(tb testing.TB, keys *abi.KeySet) {
	tb.Helper()
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		for _, m := range getCall.FindAllSubmatch(src, -1) {
			for _, k := range stringLit.FindAllSubmatch(m[2], -1) {
				if !slices.Contains(keys.Names(), string(k[1])) {
					tb.Errorf("%s: key %q is read but not declared in keys", f, k[1])
				}
			}
		}
	}
}

// CheckLookupKeys checks that every member a plugin finds by
// abi.Value.Lookup (the key sets looked) is declared in keys too, so that
// the host marks it in the tape and Lookup matches it by number.
func CheckLookupKeys(tb testing.TB, keys *abi.KeySet, looked ...*abi.KeySet) {
	tb.Helper()
	for _, ks := range looked {
		for _, name := range ks.Names() {
			if !slices.Contains(keys.Names(), name) {
				tb.Errorf("%q is looked up but not declared in keys", name)
			}
		}
	}
}

// CheckKeyNumbers checks the constants a plugin indexes the members
// abi.Value.Lookup finds with: keys has n names, and names[k] is the name
// want gives each constant k. (A map literal with a constant key twice
// does not compile: the constants are distinct.)
func CheckKeyNumbers(tb testing.TB, keys *abi.KeySet, n int, want map[int]string) {
	tb.Helper()
	names := keys.Names()
	if len(names) != n {
		tb.Errorf("keys has %d names, the constants count %d", len(names), n)
		return
	}
	for k, name := range want {
		if k < 0 || k >= n || names[k] != name {
			tb.Errorf("key %d is not %q", k, name)
		}
	}
}

package archive

import (
	"fmt"

	"github.com/twasm/twasm/abi"
	"os"
	pathpkg "path"
	"strings"
	"testing"
)

// storeTable is the README's table of the stores the bundled plugins
// declare: one row per store, the default location first, then what
// overrides it.
func storeTable(decl []Declared) string {
	var b strings.Builder
	b.WriteString("| provider | store | sessions (default) | directory instead, when set | agent deletes after |\n|---|---|---|---|---|\n")
	for _, d := range decl {
		pattern, folder, tree := d.Pattern, "", ""
		switch d.Kind {
		case KindFolder:
			folder = "/" // a folder per session
		case KindTree:
			tree = " and the files each names"
		}
		onOS := func(r abi.Root) string {
			if r.OS == "" {
				return ""
			}
			return " (" + r.OS + ")"
		}
		defaults, overriding := d.Places("")
		var defs, overrides []string
		for _, r := range overriding {
			overrides = append(overrides, "`"+pathpkg.Join("$"+r.Env, r.Path, d.Dir)+"/`"+onOS(r))
		}
		for _, r := range defaults {
			defs = append(defs, "`"+pathpkg.Join(r.Path, d.Dir, pattern)+folder+"`"+tree+onOS(r))
		}
		lists, listOverriding := d.Lists("")
		for _, r := range listOverriding {
			overrides = append(overrides, "`"+pathpkg.Join("$"+r.Env, r.Path, r.List.File)+"`"+onOS(r))
		}
		for _, r := range lists {
			defs = append(defs, "`<"+r.List.Field+">/"+pathpkg.Join(d.Dir, pattern)+"` for each `"+r.List.Field+"` in `"+pathpkg.Join(r.Path, r.List.File)+"`"+onOS(r))
		}
		if d.ProjectsRoot() {
			defs = append([]string{"`<project>/" + pattern + "` in each project (sync.json's `projects`, the archived runs')"}, defs...)
		}
		where := strings.Join(defs, ", ")
		if len(defs) == 0 {
			where = "`" + pattern + folder + "` (no default)"
		}
		if d.UnlessEnv != "" {
			overrides = append(overrides, "not read when `$"+d.UnlessEnv+"` is set")
		}
		ret := "-"
		if d.RetentionDays > 0 {
			ret = fmt.Sprintf("%d days", d.RetentionDays)
			if d.RetentionKey != "" {
				ret += fmt.Sprintf(" (`%s` in `%s`)", d.RetentionKey, d.RetentionFile)
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", d.Provider, d.Name, where, strings.Join(overrides, ", "), ret)
	}
	return b.String()
}

// TestReadmeStoreTable: the README's table of stores is the bundled
// plugins' declarations (one source of truth: their manifests).
func TestReadmeStoreTable(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Skip(err)
	}
	want := storeTable(bundledDeclared())
	head := want[:strings.IndexByte(want, '\n')+1]
	i := strings.Index(string(b), head)
	if i < 0 {
		t.Fatalf("README.md has no table of stores; it should read:\n%s", want)
	}
	got := string(b[i:])
	if j := strings.Index(got, "\n\n"); j >= 0 {
		got = got[:j+1]
	}
	if got != want {
		t.Errorf("README.md's table of stores differs from the plugins' manifests; it should read:\n%s\ngot:\n%s", want, got)
	}
}

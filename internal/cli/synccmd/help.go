package synccmd

import (
	"fmt"
	pathpkg "path"
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/archive"
	"github.com/twasm/twasm/internal/bundled"
)

// storesHelp is the part of sync's help that says what the bundled
// plugins read on goos, made from the manifests the build recorded (so it
// lists every bundled plugin's stores and never drifts from them): one
// line per store, the overriding variables first, then the default.
func storesHelp(goos string) string {
	ps, err := bundled.Plugins()
	var decl []archive.Declared
	for _, p := range ps {
		if p.Recorded != nil {
			decl = append(decl, archive.DeclaredOf(p.Recorded.Manifest)...)
		}
	}
	if len(decl) == 0 {
		if err == nil {
			err = fmt.Errorf("this binary was built without them")
		}
		return fmt.Sprintf("  (the bundled plugins' stores cannot be listed: %v)\n", err)
	}
	var b strings.Builder
	for _, d := range decl {
		defaults, overrides := d.Places(goos)
		var where []string
		for _, r := range overrides {
			where = append(where, "$"+pathpkg.Join(r.Env, r.Path))
		}
		for _, r := range defaults {
			where = append(where, r.Path)
		}
		lists, listOverrides := d.Lists(goos)
		for _, r := range append(listOverrides, lists...) {
			at := r.Path
			if r.Env != "" {
				at = "$" + pathpkg.Join(r.Env, r.Path)
			}
			where = append(where, "each "+r.List.Field+" in "+pathpkg.Join(at, r.List.File))
		}
		if d.ProjectsRoot() {
			where = append(where, "each project (sync.json's projects, the archived runs')")
		}
		what := pathpkg.Join(d.Dir, d.Pattern)
		if d.Kind == archive.KindFolder {
			what += "/ (a folder per session)"
		}
		if d.Kind == archive.KindTree {
			what += " (a session's files linked by name)"
		}
		if d.Kind == abi.StoreKindSQLite {
			what += " (SQLite)"
		}
		if d.Kind == archive.KindSections {
			what += " (a file of many sessions)"
		}
		if len(where) == 0 {
			continue // not read on goos
		}
		if d.UnlessEnv != "" {
			what += " (unless $" + d.UnlessEnv + " is set)"
		}
		fmt.Fprintf(&b, "  %-9s %s: %s\n", d.Provider, strings.Join(where, " or "), what)
	}
	return b.String()
}

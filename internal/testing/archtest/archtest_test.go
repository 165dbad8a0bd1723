package archtest

import (
	"errors"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/twasm/twasm"

// root is the module's root, from this package's directory.
var root = filepath.Join("..", "..", "..")

// role returns "build tool", "test helper" or "" (runtime) for an import
// path of this module: the folder says it (internal/tools/...,
// internal/testing/...), and so does a name ending in "test" (a helper
// kept beside the package it tests, such as golden/goldentest).
func role(path string) string {
	rel, ok := strings.CutPrefix(path, module+"/")
	if !ok {
		return ""
	}
	switch {
	case strings.HasPrefix(rel, "internal/tools/"):
		return "build tool"
	case strings.HasPrefix(rel, "internal/testing/"),
		strings.HasSuffix(rel[strings.LastIndexByte(rel, '/')+1:], "test"):
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
		{module + "/internal/cli/record", ""},
		{module + "/internal/tools/bundlerecord", "build tool"},
		{module + "/internal/tools/wasmbuild", "build tool"},
		{module + "/internal/testing/plugintest", "test helper"},
		{module + "/internal/testing/e2e", "test helper"},
		{module + "/golden/goldentest", "test helper"},
		{module + "/abi/sdk/sdktest", "test helper"},
		{"github.com/stretchr/testify", ""},
	}
	for _, tt := range tests {
		if got := role(tt.path); got != tt.want {
			t.Errorf("role(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

// imports reads, with go/build under ctx, the non-test imports of every
// package of the module under root (this process reads the files, so go
// test's cache sees a change in any of them), keyed by import path.
func imports(t *testing.T, ctx build.Context) map[string][]string {
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
		p, err := ctx.ImportDir(dir, 0)
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

// walk calls visit for every import of the module's packages that pkg
// depends on, with the package importing it; visit returns whether to
// follow the import further. Packages outside the module are visited, not
// followed.
func walk(pkgs map[string][]string, pkg string, visit func(dep, via string) bool) {
	seen := map[string]bool{pkg: true}
	queue := []string{pkg}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, dep := range pkgs[cur] {
			if seen[dep] {
				continue
			}
			seen[dep] = true
			if visit(dep, cur) && strings.HasPrefix(dep, module+"/") {
				queue = append(queue, dep)
			}
		}
	}
}

// TestRuntimeImportsNoToolOrHelper fails for a runtime package that
// depends, directly or through other packages of the module, on a build
// tool or a test helper. Test files are not followed: a runtime package's
// tests may use helpers.
func TestRuntimeImportsNoToolOrHelper(t *testing.T) {
	pkgs := imports(t, build.Default)
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
		walk(pkgs, pkg, func(dep, via string) bool {
			if r := role(dep); r != "" {
				t.Errorf("runtime package %s depends on %s %s (through %s); README, Layout: runtime packages import nothing under internal/tools or internal/testing", pkg, r, dep, via)
				return false
			}
			return true
		})
	}
	if runtime < 20 || tools < 4 || helpers < 6 {
		t.Fatalf("classified %d runtime packages, %d build tools, %d test helpers: the classification is stale", runtime, tools, helpers)
	}
}

// TestPluginSDKDependsOnStdlibOnly keeps what a plugin author depends on
// small: the SDK (abi/sdk) and every bundled plugin (plugins/<p> and its
// wasm entry point) reach, outside the standard library, only abi, abi/sdk,
// internal/wire (the contract's names, the batches the SDK reads and the
// record encoding it writes; it imports the standard library only) and plugins/..., for the host's platform
// and for wasip1. So a plugin's
// build compiles neither wazero, cobra, SQLite nor OpenTelemetry, and
// TinyGo can build it.
func TestPluginSDKDependsOnStdlibOnly(t *testing.T) {
	allowed := func(p string) bool {
		rel, ok := strings.CutPrefix(p, module+"/")
		if !ok {
			// The standard library's paths have no dot in their first element.
			first, _, _ := strings.Cut(p, "/")
			return !strings.Contains(first, ".")
		}
		return rel == "abi" || rel == "abi/sdk" || rel == "internal/wire" || strings.HasPrefix(rel, "plugins/")
	}
	wasip1 := build.Default
	wasip1.GOOS, wasip1.GOARCH = "wasip1", "wasm"
	for _, ctx := range []build.Context{build.Default, wasip1} {
		pkgs := imports(t, ctx)
		var roots []string
		for pkg := range pkgs {
			if rel := strings.TrimPrefix(pkg, module+"/"); rel == "abi/sdk" || strings.HasPrefix(rel, "plugins/") && role(pkg) == "" {
				roots = append(roots, pkg)
			}
		}
		slices.Sort(roots)
		if !slices.Contains(roots, module+"/abi/sdk") || !slices.Contains(roots, module+"/plugins/claude/wasm") {
			t.Fatalf("%s/%s: found %v, not the SDK and the claude plugin: the walk is stale", ctx.GOOS, ctx.GOARCH, roots)
		}
		for _, pkg := range roots {
			walk(pkgs, pkg, func(dep, via string) bool {
				if !allowed(dep) {
					t.Errorf("%s/%s: %s depends on %s (through %s); a plugin depends on the standard library, abi, abi/sdk and internal/wire only (README, Writing a plugin)", ctx.GOOS, ctx.GOARCH, pkg, dep, via)
					return false
				}
				return true
			})
		}
	}
}

// TestFanoutDependsOnStdlibOnly: fanout, the live feed the recorder's
// subscriptions are built on, is public so that a program can fan out
// events from elsewhere (a web page's live view, a second recorder); it
// imports the standard library only, so that using it pulls in nothing
// of twasm's but internal/oneopt, the public packages' reading of their
// optional options (itself on the standard library only, which the walk
// checks).
func TestFanoutDependsOnStdlibOnly(t *testing.T) {
	pkgs := imports(t, build.Default)
	pkg := module + "/fanout"
	if _, ok := pkgs[pkg]; !ok {
		t.Fatalf("no package %s: the walk is stale or the package moved (README, Layout)", pkg)
	}
	walk(pkgs, pkg, func(dep, via string) bool {
		if dep == module+"/internal/oneopt" {
			return true
		}
		first, _, _ := strings.Cut(dep, "/")
		if strings.Contains(first, ".") {
			t.Errorf("%s depends on %s (through %s); fanout imports the standard library only", pkg, dep, via)
			return false
		}
		return true
	})
}

// TestWebWritesNothing: the web app (internal/web, twasm serve) is
// read-only by construction. It imports none of the packages that write
// storage (the recorder, the lifecycle, the durable directory entries)
// itself, and depends on none of those that run agents or plugins or
// archive sessions (capture, archive, host, normalize, runctl) even
// through another package (views reaches the recorder and the lifecycle
// for their field names only). Its one write is the index, a cache of
// the transcripts, as search's.
func TestWebWritesNothing(t *testing.T) {
	pkgs := imports(t, build.Default)
	pkg := module + "/internal/web"
	if _, ok := pkgs[pkg]; !ok {
		t.Fatalf("no package %s: the walk is stale or the package moved (README, Layout)", pkg)
	}
	direct := []string{"recorder", "lifecycle", "internal/durable"}
	anywhere := []string{"capture", "internal/archive", "host", "internal/runctl", "internal/normalize"}
	for _, dep := range pkgs[pkg] {
		if rel, ok := strings.CutPrefix(dep, module+"/"); ok && slices.Contains(direct, rel) {
			t.Errorf("%s imports %s; the web app writes no storage (README, Layout)", pkg, dep)
		}
	}
	walk(pkgs, pkg, func(dep, via string) bool {
		rel, ok := strings.CutPrefix(dep, module+"/")
		if ok && slices.Contains(anywhere, rel) {
			t.Errorf("%s depends on %s (through %s); the web app runs no plugin and archives nothing (README, Layout)", pkg, dep, via)
			return false
		}
		return true
	})
}

// publicHelpers are the test helpers outside internal/: a plugin author's
// own tests import them from another module.
func publicHelpers(pkgs map[string][]string) []string {
	var out []string
	for pkg := range pkgs {
		rel := strings.TrimPrefix(pkg, module+"/")
		if role(pkg) == "test helper" && !strings.HasPrefix(rel, "internal/") {
			out = append(out, pkg)
		}
	}
	slices.Sort(out)
	return out
}

// TestPublicHelpersStandAlone: a public test helper (abi/sdk/sdktest,
// golden/goldentest) depends on no package of internal/testing or
// internal/tools, directly or through another package, so that a plugin
// author's test compiles nothing of this repository's own test support
// (fixtures in ../shared, the e2e harness, build tools).
func TestPublicHelpersStandAlone(t *testing.T) {
	pkgs := imports(t, build.Default)
	helpers := publicHelpers(pkgs)
	if !slices.Contains(helpers, module+"/abi/sdk/sdktest") || !slices.Contains(helpers, module+"/golden/goldentest") {
		t.Fatalf("public test helpers %v: the classification is stale (README, Layout)", helpers)
	}
	for _, pkg := range helpers {
		walk(pkgs, pkg, func(dep, via string) bool {
			rel := strings.TrimPrefix(dep, module+"/")
			if strings.HasPrefix(rel, "internal/testing/") || strings.HasPrefix(rel, "internal/tools/") {
				t.Errorf("public test helper %s depends on %s (through %s); README, Layout: a plugin author imports it from another module", pkg, dep, via)
				return false
			}
			return true
		})
	}
}

// TestPublicHelpersNameNothingInternal: the exported API of a public test
// helper (its exported functions' parameters and results, its exported
// types, variables and constants) names no type of an internal package,
// which another module could not name: an author calls it with values of
// public packages only.
func TestPublicHelpersNameNothingInternal(t *testing.T) {
	for _, pkg := range publicHelpers(imports(t, build.Default)) {
		dir := filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(pkg, module+"/")))
		bp, err := build.Default.ImportDir(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range bp.GoFiles {
			f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			internal := map[string]string{} // local name -> import path
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if !strings.Contains("/"+p+"/", "/internal/") {
					continue
				}
				local := path.Base(p)
				if imp.Name != nil {
					local = imp.Name.Name
				}
				internal[local] = p
			}
			check := func(what string, n ast.Node) {
				if n == nil || reflect.ValueOf(n).IsNil() {
					return
				}
				ast.Inspect(n, func(n ast.Node) bool {
					if sel, ok := n.(*ast.SelectorExpr); ok {
						if x, ok := sel.X.(*ast.Ident); ok && internal[x.Name] != "" {
							t.Errorf("%s/%s: %s names %s.%s, of internal %s: another module cannot use it", pkg, name, what, x.Name, sel.Sel.Name, internal[x.Name])
						}
					}
					return true
				})
			}
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Name.IsExported() && (d.Recv == nil || exportedRecv(d.Recv)) {
						check("func "+d.Name.Name, d.Type)
					}
				case *ast.GenDecl:
					for _, sp := range d.Specs {
						switch sp := sp.(type) {
						case *ast.TypeSpec:
							if sp.Name.IsExported() {
								check("type "+sp.Name.Name, exportedPart(sp.Type))
							}
						case *ast.ValueSpec:
							for _, n := range sp.Names {
								if n.IsExported() {
									check(n.Name, sp.Type)
								}
							}
						}
					}
				}
			}
		}
	}
}

// exportedRecv reports whether a method's receiver type is exported.
func exportedRecv(fl *ast.FieldList) bool {
	for _, f := range fl.List {
		e := f.Type
		if st, ok := e.(*ast.StarExpr); ok {
			e = st.X
		}
		if id, ok := e.(*ast.Ident); ok {
			return id.IsExported()
		}
	}
	return false
}

// exportedPart is a type with its struct's unexported fields left out.
func exportedPart(e ast.Expr) ast.Expr {
	st, ok := e.(*ast.StructType)
	if !ok {
		return e
	}
	out := &ast.StructType{Fields: &ast.FieldList{}}
	for _, f := range st.Fields.List {
		if len(f.Names) == 0 || slices.ContainsFunc(f.Names, func(n *ast.Ident) bool { return n.IsExported() }) {
			out.Fields.List = append(out.Fields.List, f)
		}
	}
	return out
}

// TestCommandsTestedBeside: every command package (a package under
// cmd/twasm or internal/cli with a NewCmd function) has a test beside it,
// so that a command is checked through its options in process, not only
// by the end-to-end suite through the built binary.
func TestCommandsTestedBeside(t *testing.T) {
	var commands []string
	for _, top := range []string{"cmd/twasm", "internal/cli"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(dir string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			bp, err := build.Default.ImportDir(dir, 0)
			var noGo *build.NoGoError
			if errors.As(err, &noGo) {
				return nil
			}
			if err != nil {
				return err
			}
			if !definesCommand(t, dir, bp.GoFiles) {
				return nil
			}
			rel, _ := filepath.Rel(root, dir)
			commands = append(commands, filepath.ToSlash(rel))
			if len(bp.TestGoFiles)+len(bp.XTestGoFiles) == 0 {
				t.Errorf("%s defines a command and has no _test.go beside it", filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// The classification itself: the commands of README's list are found.
	for _, want := range []string{"internal/cli/record", "internal/cli/exportcmd", "internal/cli/synccmd", "internal/cli/ls"} {
		if !slices.Contains(commands, want) {
			t.Fatalf("command packages %v: %s is not among them, the classification is stale", commands, want)
		}
	}
}

// definesCommand reports whether one of files in dir declares a function
// whose name starts with NewCmd.
func definesCommand(t *testing.T, dir string, files []string) bool {
	t.Helper()
	for _, name := range files {
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && strings.HasPrefix(fd.Name.Name, "NewCmd") {
				return true
			}
		}
	}
	return false
}

// TestReadmeLayoutNamesFolders: README's layout section names each folder
// the design names (and the folder exists), and every top-level folder
// that holds Go code, so that a reader of it finds every folder.
func TestReadmeLayoutNamesFolders(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, layout, ok := strings.Cut(string(b), "\n## Layout\n")
	if !ok {
		t.Fatal("README.md has no Layout section")
	}
	if i := strings.Index(layout, "\n## "); i >= 0 {
		layout = layout[:i]
	}
	design := []string{"cmd/twasm/", "host/", "recorder/", "fanout/", "plugins/<provider>/", "abi/", "testdata/golden/"}
	for _, d := range design {
		if !strings.Contains(layout, "`"+d) {
			t.Errorf("README's layout section does not name %s, a folder the design names", d)
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(strings.TrimSuffix(d, "<provider>/")))); err != nil {
			t.Errorf("%s, named by the design, is not in the tree: %v", d, err)
		}
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		name := e.Name()
		if !e.IsDir() || strings.HasPrefix(name, ".") || !holdsGo(t, filepath.Join(root, name)) {
			continue
		}
		if !strings.Contains(layout, "`"+name+"/") {
			t.Errorf("README's layout section does not name the top-level folder %s/", name)
		}
	}
}

// holdsGo reports whether a .go file is anywhere under dir.
func holdsGo(t *testing.T, dir string) bool {
	t.Helper()
	found := errors.New("found")
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			return found
		}
		return nil
	})
	if err != nil && !errors.Is(err, found) {
		t.Fatal(err)
	}
	return errors.Is(err, found)
}

package archive

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/abi"
)

// TestDiscoverList: a store whose root is a list (abi.Root.List, Crush's
// projects.json) is in each directory the list names, the list read from
// the first root that applies; an entry that names no absolute directory
// is a note on the store, a directory listed twice one store; a list
// missing beside the agent's files, malformed or naming no directory is
// one unusable location that says why (doctor warns), and one whose
// directory is not there a store not found, as any. Each directory's
// project is what its entries name (abi.RootList.Project, ABI 1.8): none
// when no entry names an absolute one, or when two name different ones.
func TestDiscoverList(t *testing.T) {
	home := t.TempDir()
	list := &abi.RootList{File: "projects.json", Array: "projects", Field: "data_dir", Project: "path"}
	d := Declared{Store: abi.Store{Name: "listed", Kind: abi.StoreKindSQLite, Pattern: "crush.db", SQLite: &abi.SQLiteSource{},
		Roots: []abi.Root{{Env: "L_HOME", List: list}, {Path: "~/.l", List: list}, {Path: "~/.plain"}}}, Provider: "p", Plugin: "pl"}
	type loc struct {
		Dir, From, Unusable, Project string
		Notes                        []string
	}
	a, b, c := filepath.Join(home, "a", ".crush"), filepath.Join(home, "b", ".crush"), filepath.Join(home, "c", ".crush")
	listPath := filepath.Join(home, ".l", "projects.json")
	tests := []struct {
		name string
		list string // "" no file, "-" no directory either
		env  map[string]string
		want []loc
	}{
		{"two projects", `{"projects":[{"path":"/a","data_dir":"` + a + `"},{"data_dir":"~/b/.crush"},{"data_dir":"` + a + `/"},{"data_dir":"rel/.crush"},{"path":"/c"},"x"]}`, nil, []loc{
			{Dir: a, From: "list (default)", Project: "/a", Notes: []string{
				listPath + `: entry 4: "rel/.crush" is not an absolute path`,
				listPath + `: entry 5 has no "data_dir" string`,
				listPath + `: entry 6 has no "data_dir" string`}},
			{Dir: b, From: "list (default)"},
		}},
		{"projects named and not", `{"projects":[{"data_dir":"` + a + `"},{"path":"~/src/a/","data_dir":"` + a + `"},{"path":"rel","data_dir":"` + b + `"},` +
			`{"path":"/c1","data_dir":"` + c + `"},{"path":"/c2","data_dir":"` + c + `"},{"path":"/c1","data_dir":"` + c + `"},{"path":7,"data_dir":"` + home + `"}]}`, nil, []loc{
			{Dir: a, From: "list (default)", Project: filepath.Join(home, "src", "a"), Notes: []string{
				listPath + `: entry 3: its "path" "rel" is not an absolute path: its sessions get no project`,
				listPath + `: entry 5 names ` + c + ` again with another "path": its sessions get no project`}},
			{Dir: b, From: "list (default)"},
			{Dir: c, From: "list (default)"},
			{Dir: home, From: "list (default)"},
		}},
		{"the variable's list", `{"projects":[{"data_dir":"` + b + `"}]}`, map[string]string{"L_HOME": filepath.Join(home, "env")}, []loc{
			{Dir: b, From: "list ($L_HOME)"},
		}},
		{"empty list", `{"projects":[]}`, nil, nil},
		{"no list beside the agent's files", "", nil, []loc{
			{Dir: filepath.Join(home, ".l"), From: "list (default)", Unusable: "the list of its directories, " + listPath + ": not found: no directory of it is read"},
		}},
		{"no agent", "-", nil, []loc{{Dir: filepath.Join(home, ".l"), From: "list (default)"}}},
		{"malformed", `{"projects":[{"data_dir":`, nil, []loc{
			{Dir: filepath.Join(home, ".l"), From: "list (default)", Unusable: "the list of its directories, " + listPath + ": not a JSON list: unexpected end of JSON input: no directory of it is read"},
		}},
		{"no such member", `{"project":[]}`, nil, []loc{
			{Dir: filepath.Join(home, ".l"), From: "list (default)", Unusable: "the list of its directories, " + listPath + `: no member "projects": no directory of it is read`},
		}},
		{"no entry a directory", `{"projects":[{"data_dir":"."}]}`, nil, []loc{
			{Dir: filepath.Join(home, ".l"), From: "list (default)", Unusable: "the list of its directories, " + listPath + `: entry 1: "." is not an absolute path`},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, os.RemoveAll(filepath.Join(home, ".l")))
			require.NoError(t, os.RemoveAll(filepath.Join(home, "env")))
			if tt.list != "-" {
				require.NoError(t, os.MkdirAll(filepath.Join(home, ".l"), 0o700))
				require.NoError(t, os.MkdirAll(filepath.Join(home, "env"), 0o700))
			}
			if tt.list != "" && tt.list != "-" {
				at := listPath
				if tt.env["L_HOME"] != "" {
					at = filepath.Join(tt.env["L_HOME"], "projects.json")
				}
				require.NoError(t, os.WriteFile(at, []byte(tt.list), 0o600))
			}
			env := map[string]string{"HOME": home}
			for k, v := range tt.env {
				env[k] = v
			}
			var got []loc
			for _, l := range Discover(func(k string) string { return env[k] }, "linux", []Declared{d}, nil) {
				if l.From == "default" {
					assert.Equal(t, filepath.Join(home, ".plain"), l.Dir, "the plain root resolved as before")
					continue
				}
				got = append(got, loc{l.Dir, l.From, l.Unusable, l.Project, l.Notes})
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestScanListed: a listed store's file that another store already found
// is that store's (read once); the list's notes are the store's
// problems.
func TestScanListed(t *testing.T) {
	home := t.TempDir()
	shared := filepath.Join(home, ".l", ".crush")
	own := filepath.Join(home, "p", ".crush")
	for _, dir := range []string{shared, own} {
		require.NoError(t, os.MkdirAll(dir, 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "crush.db"), nil, 0o600))
	}
	require.NoError(t, os.WriteFile(filepath.Join(home, ".l", "projects.json"),
		[]byte(`{"projects":[{"data_dir":"`+shared+`"},{"data_dir":"`+own+`"},{"data_dir":""}]}`), 0o600))
	q := &abi.SQLiteSource{}
	list := &abi.RootList{File: "projects.json", Array: "projects", Field: "data_dir"}
	decl := []Declared{
		{Store: abi.Store{Name: "global", Kind: abi.StoreKindSQLite, Roots: []abi.Root{{Path: "~/.l"}}, Pattern: ".crush/crush.db", SQLite: q}, Provider: "p"},
		{Store: abi.Store{Name: "projects", Kind: abi.StoreKindSQLite, Roots: []abi.Root{{Path: "~/.l", List: list}}, Pattern: "crush.db", SQLite: q}, Provider: "p"},
	}
	stores, sessions := Scan(Discover(func(k string) string { return map[string]string{"HOME": home}[k] }, "linux", decl, nil), time.Time{})
	require.Len(t, stores, 3)
	got := map[string]int{}
	for _, s := range stores {
		assert.True(t, s.Found, s.Dir)
		got[s.Dir] = s.Sessions
	}
	assert.Equal(t, map[string]int{filepath.Join(home, ".l"): 1, shared: 0, own: 1}, got)
	assert.Equal(t, []string{filepath.Join(home, ".l", "projects.json") + `: entry 3 has no "data_dir" string`}, stores[1].Problems)
	var paths []string
	for _, s := range sessions {
		paths = append(paths, s.Path)
	}
	assert.Equal(t, []string{filepath.Join(shared, "crush.db"), filepath.Join(own, "crush.db")}, paths)
}

// FuzzListDirs: a list of any bytes is read without a panic into
// directories that are absolute, clean and each once.
func FuzzListDirs(f *testing.F) {
	for _, s := range []string{`{"projects":[{"data_dir":"/a"},{"data_dir":"~/b"},{"data_dir":"/a/"}]}`, `{"projects":[{"path":"/p","data_dir":"/a"},{"path":"~/q/","data_dir":"/a"},{"path":"r","data_dir":"/b"}]}`, `[{"data_dir":"x"}]`, `{"projects":null}`, `{"projects":[1,null,{"data_dir":7}]}`, ``} {
		f.Add([]byte(s), "projects")
		f.Add([]byte(s), "")
	}
	f.Fuzz(func(t *testing.T, b []byte, array string) {
		dirs, _, err := listDirs(b, &abi.RootList{File: "l.json", Array: array, Field: "data_dir", Project: "path"}, "/home/u")
		if err != nil && len(dirs) > 0 {
			t.Fatalf("an error and directories: %v %q", err, dirs)
		}
		seen := map[string]bool{}
		for _, d := range dirs {
			if !filepath.IsAbs(d.dir) || filepath.Clean(d.dir) != d.dir || seen[d.dir] {
				t.Fatalf("directory %q of %q", d.dir, b)
			}
			if d.project != "" && (!filepath.IsAbs(d.project) || filepath.Clean(d.project) != d.project) {
				t.Fatalf("project %q of %q", d.project, b)
			}
			seen[d.dir] = true
		}
	})
}

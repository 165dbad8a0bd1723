package synccmd_test

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// crushDB is a Crush crush.db as Crush writes it (the schema of its
// migrations, WAL mode), written by the test as the agent.
type crushDB struct{ *clitest.AgentDB }

func openCrushDB(t *testing.T, path string) *crushDB {
	t.Helper()
	c := &crushDB{clitest.OpenAgentDB(t, path)}
	c.Schema("crush")
	return c
}

// session writes a session with a prompt and its answer, as Crush's
// CreateSession and CreateMessage do (times in seconds).
func (c *crushDB) session(id, prompt, answer string, at int64) {
	c.Exec(`INSERT INTO sessions (id, title, cost, updated_at, created_at) VALUES (?, ?, 0.01, ?, ?)`, id, prompt, at, at)
	c.Exec(`INSERT INTO messages (id, session_id, role, parts, created_at, updated_at) VALUES (?, ?, 'user', ?, ?, ?)`,
		id+"-u", id, `[{"type":"text","data":{"text":"`+prompt+`"}}]`, at, at)
	c.Exec(`INSERT INTO messages (id, session_id, role, parts, model, provider, created_at, updated_at) VALUES (?, ?, 'assistant', ?, 'gpt-5', 'openai', ?, ?)`,
		id+"-a", id, `[{"type":"text","data":{"text":"`+answer+`"}},{"type":"finish","data":{"reason":"end_turn","time":`+strconv.Itoa(int(at+1))+`}}]`, at+1, at+1)
}

// TestSyncCrushProjects: Crush keeps a crush.db in each project's data
// directory and lists the projects in projects.json in its global data
// directory; the bundled plugin declares that list as a root (ABI 1.7).
// Two projects listed, each with a real database built from Crush's
// schema, and a third listed whose directory is gone: doctor lists both
// databases (and the third not found) under "Crush projects" with no
// warning of the list; sync archives the session of each; a second sync
// archives nothing; the databases, their directories and the list are
// byte-identical around every command. Each run's project is the path
// of the entry that lists its database (the directory Crush ran in, ABI
// 1.8's facts line), as `twasm ls` and `twasm usage --by project` show
// it. A project Crush lists later is
// found by the next sync, with no plugin rebuilt; a list made malformed
// is a warning of doctor and of sync, which both still succeed.
func TestSyncCrushProjects(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	global := filepath.Join(h.Dir, ".local", "share", "crush")
	app, lib, gone, late := filepath.Join(h.Dir, "src", "app", ".crush"), filepath.Join(h.Dir, "src", "lib", ".crush"),
		filepath.Join(h.Dir, "src", "gone", ".crush"), filepath.Join(h.Dir, "src", "late", ".crush")
	const at = int64(1772359200)
	for _, p := range []struct{ dir, id, prompt string }{{app, "ses_app", "Fix the app"}, {lib, "ses_lib", "Fix the lib"}} {
		c := openCrushDB(t, filepath.Join(p.dir, "crush.db"))
		c.session(p.id, p.prompt, "Done with "+p.id, at)
		if err := c.DB.Close(); err != nil { // the agent exits: SQLite removes its log
			t.Fatal(err)
		}
	}
	list := func(dirs ...string) {
		t.Helper()
		var b strings.Builder
		b.WriteString(`{"projects":[`)
		for i, d := range dirs {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(`{"path":"` + filepath.Dir(d) + `","data_dir":"` + d + `","last_accessed":"2026-03-01T10:00:00Z"}`)
		}
		b.WriteString("]}")
		h.Put(filepath.Join(".local", "share", "crush", "projects.json"), []byte(b.String()), 0)
	}
	list(app, lib, gone)
	// unchanged runs cmd and fails the test if Crush's files changed.
	unchanged := func(what string, cmd func()) {
		t.Helper()
		before := map[string]map[string]string{}
		for _, d := range []string{global, app, lib, late} {
			if _, err := os.Stat(d); err == nil {
				before[d] = clitest.HashTree(t, d)
			}
		}
		cmd()
		for d, b := range before {
			if after := clitest.HashTree(t, d); !maps.Equal(b, after) {
				t.Fatalf("%s changed %s:\nbefore %v\nafter  %v", what, d, b, after)
			}
		}
	}
	type store struct {
		Name, Plugin, Kind, Dir, From string
		Found                         bool
		Sessions                      int
	}
	type check struct{ Level, Subject, Message string }
	doctor := func() ([]store, []check) {
		t.Helper()
		var r clitest.Result
		unchanged("doctor", func() { r = h.OK("doctor", "--json") })
		var doc struct {
			Stores []store
			Checks []check
		}
		if err := json.Unmarshal([]byte(r.Out), &doc); err != nil {
			t.Fatalf("doctor --json: %v\n%s", err, r.Out)
		}
		var out []store
		for _, s := range doc.Stores {
			if s.Name == "Crush projects" {
				out = append(out, s)
			}
		}
		return out, doc.Checks
	}
	stores, checks := doctor()
	want := []store{
		{"Crush projects", "crush", "sqlite", app, "list (default)", true, 1},
		{"Crush projects", "crush", "sqlite", lib, "list (default)", true, 1},
		{"Crush projects", "crush", "sqlite", gone, "list (default)", false, 0},
	}
	if !slices.Equal(stores, want) {
		t.Fatalf("doctor's Crush projects stores:\n got %+v\nwant %+v", stores, want)
	}
	for _, c := range checks {
		if strings.Contains(c.Message, "projects.json") {
			t.Errorf("doctor: %+v", c)
		}
	}

	got := syncWant(t, h, h.Dir, "first sync: both projects' sessions", map[string]int{"new": 2})
	seen := map[string]bool{}
	for _, id := range got["new"] {
		b := runText(t, h, id)
		for _, s := range []string{"ses_app", "ses_lib"} {
			if strings.Contains(b, `"session_id":"`+s+`"`) && strings.Contains(b, "Done with "+s) {
				seen[s] = true
			}
		}
	}
	if !seen["ses_app"] || !seen["ses_lib"] {
		t.Fatalf("runs %v hold %v, want both sessions", got["new"], seen)
	}
	runs := runProjects(t, h)
	for _, id := range got["new"] {
		want := filepath.Dir(lib)
		if strings.Contains(string(clitest.ReadFile(t, clitest.TranscriptPath(h.Stor, id))), `"session_id":"ses_app"`) {
			want = filepath.Dir(app)
		}
		if runs[id] != want {
			t.Errorf("ls: run %s project %q, want %s", id, runs[id], want)
		}
	}
	if got := usageByProject(t, h); len(got) != 2 || got[filepath.Dir(app)] != 1 || got[filepath.Dir(lib)] != 1 {
		t.Errorf("usage --by project: %v, want one session in each of %s and %s", got, filepath.Dir(app), filepath.Dir(lib))
	}
	syncWant(t, h, h.Dir, "second sync", nothing)

	// Crush runs in another project: the list names it; the next sync
	// finds it.
	c := openCrushDB(t, filepath.Join(late, "crush.db"))
	c.session("ses_late", "Start the late one", "Done with ses_late", at+100)
	if err := c.DB.Close(); err != nil {
		t.Fatal(err)
	}
	list(late, app, lib)
	if got := syncWant(t, h, h.Dir, "sync after a project was listed", map[string]int{"new": 1}); !strings.Contains(string(clitest.ReadFile(t, clitest.TranscriptPath(h.Stor, got["new"][0]))), "Done with ses_late") {
		t.Fatalf("sync after a project was listed: want its session new: %v", got)
	}

	// A list Crush left half written: a warning, not a failure.
	h.Put(filepath.Join(".local", "share", "crush", "projects.json"), []byte(`{"projects":[{"path":`), 0)
	stores, checks = doctor()
	warned := false
	for _, c := range checks {
		warned = warned || c.Level == "warn" && c.Subject == "Crush projects" && strings.Contains(c.Message, filepath.Join(global, "projects.json")+": not a JSON list")
	}
	if !warned || len(stores) != 1 || stores[0].Found {
		t.Errorf("doctor of a malformed list: stores %+v, checks %+v", stores, checks)
	}
	var r clitest.Result
	unchanged("sync", func() { r = h.OK("sync") })
	if !strings.Contains(r.ErrOut, "Crush projects: the list of its directories, "+filepath.Join(global, "projects.json")+": not a JSON list") || len(clitest.Outcomes(r.Out)) != 0 {
		t.Errorf("sync of a malformed list: %v", r)
	}
}

package archive

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/plugins/opencode"
	"github.com/twasm/twasm/transcript"
)

// openCodeHome is a home directory holding OpenCode's data as its
// versions write it: the older file tree (storage/...) and the database
// (opencode.db) its migration copied the tree into.
type openCodeHome struct {
	t         *testing.T
	home, dir string // dir: ~/.local/share/opencode
}

const ocT = 1762077600000

// treeSession writes a session's info into the older file tree.
func (h *openCodeHome) treeSession(id, parent string) {
	p := ""
	if parent != "" {
		p = fmt.Sprintf(`,"parentID":%q`, parent)
	}
	h.write("session/prj/"+id+".json", fmt.Sprintf(`{"id":%q,"slug":"calm-river","version":"1.0.220","projectID":"prj","directory":"/home/me/proj"%s,"title":"A task","time":{"created":%d,"updated":%d}}`, id, p, ocT, ocT))
}

// treeMessage writes a message and its text part into the tree.
func (h *openCodeHome) treeMessage(session, msg, role, text string) {
	h.write("message/"+session+"/"+msg+".json", fmt.Sprintf(`{"id":%q,"sessionID":%q,"role":%q,"time":{"created":%d},"modelID":"claude-sonnet-4-5","providerID":"anthropic"}`, msg, session, role, ocT))
	h.treePart(session, msg, "prt_"+msg+"a", fmt.Sprintf(`"type":"text","text":%q`, text))
}

// treePart writes (or rewrites) a part into the tree.
func (h *openCodeHome) treePart(session, msg, id, fields string) {
	h.write("part/"+msg+"/"+id+".json", fmt.Sprintf(`{"id":%q,"messageID":%q,"sessionID":%q,%s}`, id, msg, session, fields))
}

func (h *openCodeHome) write(rel, doc string) {
	writeAged(h.t, filepath.Join(h.dir, "storage", filepath.FromSlash(rel)), []byte(doc), time.Hour)
}

// database writes opencode.db holding sessions (OpenCode's schema), each
// with one message and its text part, as the migration copies them (the
// ids out of the data, into columns).
func (h *openCodeHome) database(sessions ...string) {
	t := h.t
	schema, err := os.ReadFile(filepath.Join("..", "..", "plugins", "opencode", "testdata", "schema.sql"))
	require.NoError(t, err)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(h.dir, "opencode.db"))
	require.NoError(t, err)
	defer db.Close()
	exec := func(q string, args ...any) {
		_, err := db.Exec(q, args...)
		require.NoError(t, err, q)
	}
	exec(string(schema))
	exec("INSERT INTO project VALUES ('prj')")
	for _, s := range sessions {
		id, text, _ := strings.Cut(s, "=")
		exec("INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) VALUES (?, 'prj', 'calm-river', '/home/me/proj', 'A task', '1.0.220', ?, ?)", id, ocT, ocT)
		msg := "msg_" + strings.TrimPrefix(id, "ses_") + "1"
		exec("INSERT INTO message VALUES (?, ?, ?, ?, ?)", msg, id, ocT, ocT, fmt.Sprintf(`{"role":"user","time":{"created":%d},"modelID":"claude-sonnet-4-5","providerID":"anthropic"}`, ocT))
		exec("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", "prt_"+msg+"a", msg, id, ocT, ocT, fmt.Sprintf(`{"type":"text","text":%q}`, text))
	}
}

// openCodeLocs are the stores the opencode plugin declares, resolved in
// home.
func openCodeLocs(t *testing.T, home string) []Location {
	locs := Discover(func(k string) string { return map[string]string{"HOME": home}[k] }, "linux", DeclaredOf(opencode.Plugin.Manifest), nil)
	var out []Location
	for _, l := range locs {
		if l.Provider == "opencode" {
			out = append(out, l)
		}
	}
	require.Len(t, out, 2)
	return out
}

// TestOpenCodeTree: a home holding both OpenCode's database and its older
// file tree (the migration copied the tree into the database and left
// it). Doctor lists both stores with their sessions; sync archives every
// session once (one the database holds is archived from there, not again
// from the tree), a tree sub-agent session (parentID) as a child run of
// its parent's; a second sync archives nothing; a tool part rewritten in
// place and a new message grow that run only, the call once; the
// agent's files are byte-identical before and after every sync.
func TestOpenCodeTree(t *testing.T) {
	ctx := context.Background()
	root, home := t.TempDir(), t.TempDir()
	h := &openCodeHome{t: t, home: home, dir: filepath.Join(home, ".local", "share", "opencode")}
	h.treeSession("ses_both", "")
	h.treeMessage("ses_both", "msg_both1", "user", "In both stores.")
	h.treeSession("ses_tree", "")
	h.treeMessage("ses_tree", "msg_tree1", "user", "Only in the tree.")
	h.write("message/ses_tree/msg_tree2.json", fmt.Sprintf(`{"id":"msg_tree2","sessionID":"ses_tree","role":"assistant","time":{"created":%d},"modelID":"claude-sonnet-4-5","providerID":"anthropic"}`, ocT+1000))
	h.treePart("ses_tree", "msg_tree2", "prt_tree2a", `"type":"tool","tool":"bash","callID":"call_ls","state":{"status":"running","input":{"command":"ls"}}`)
	h.treeSession("ses_sub", "ses_tree")
	h.treeMessage("ses_sub", "msg_sub1", "user", "A sub-agent's task.")
	h.database("ses_both=In both stores.", "ses_db=Only in the database.")
	a := newArchiver(t, root, nil)
	locs := openCodeLocs(t, home)

	sync := func() map[string]Outcome {
		t.Helper()
		before := hashTree(t, h.dir)
		rep := a.SyncStores(ctx, locs, time.Time{}, nil)
		require.Equal(t, before, hashTree(t, h.dir), "the agent's files are unchanged, none added")
		got := map[string]Outcome{}
		for _, o := range rep.Outcomes {
			require.NotEqual(t, ActionFailed, o.Action, "%+v", o)
			key := stem(o.Path)
			if i := strings.LastIndexByte(o.Path, '#'); i >= 0 {
				key = "db:" + o.Path[i+1:]
			}
			got[key] = o
		}
		return got
	}
	doctor := func() (sessions map[string]int, notArchived int) {
		stores, found := Scan(locs, time.Time{})
		stores, found = ExpandDatabases(ctx, stores, found)
		sessions = map[string]int{}
		for _, s := range stores {
			require.Empty(t, s.Problems, s.Name)
			sessions[s.Name] = s.Sessions
		}
		for _, s := range found {
			if !Archived(a.Ledger(), s) {
				notArchived++
			}
		}
		return sessions, notArchived
	}
	sessions, notArchived := doctor()
	assert.Equal(t, map[string]int{"OpenCode": 2, "OpenCode (older file tree)": 3}, sessions)
	assert.Equal(t, 5, notArchived)

	first := sync()
	assert.Equal(t, ActionNew, first["db:ses_both"].Action)
	assert.Equal(t, ActionNew, first["db:ses_db"].Action)
	assert.Equal(t, ActionNew, first["ses_tree"].Action)
	assert.Equal(t, ActionNew, first["ses_sub"].Action)
	assert.Equal(t, ActionUnchanged, first["ses_both"].Action, "a session the database holds is archived from there")
	assert.Equal(t, first["db:ses_both"].RunID, first["ses_both"].RunID)
	_, notArchived = doctor()
	assert.Zero(t, notArchived)

	// The sub-agent's run is a child of its parent's; both validate.
	fsys := os.DirFS(filepath.Join(root, "transcripts"))
	parent, child := first["ses_tree"].RunID, first["ses_sub"].RunID
	for _, id := range []string{parent, child} {
		rep, err := transcript.ValidateFile(fsys, id+".jsonl", transcript.ValidateOptions{})
		require.NoError(t, err)
		assert.True(t, rep.OK(), "%s: %+v", id, rep.Errors)
		if id == parent {
			assert.Equal(t, []string{child}, rep.Children)
		} else {
			assert.Equal(t, parent, rep.ParentRunID)
		}
	}

	for k, o := range sync() {
		assert.Equal(t, ActionUnchanged, o.Action, "second sync: %s", k)
	}

	// OpenCode goes on: the tool completes in place, a new message.
	h.treePart("ses_tree", "msg_tree2", "prt_tree2a", `"type":"tool","tool":"bash","callID":"call_ls","state":{"status":"completed","input":{"command":"ls"},"output":"go.mod\n","metadata":{"exit":0}}`)
	h.treeMessage("ses_tree", "msg_tree3", "user", "Thanks.")
	third := sync()
	for k, o := range third {
		want := ActionUnchanged
		if k == "ses_tree" {
			want = ActionGrown
		}
		assert.Equal(t, want, o.Action, "third sync: %s: %+v", k, o)
	}
	v := readRun(t, root, parent)
	assert.Equal(t, map[string]int{"call_ls": 1}, v.calls)
	assert.Equal(t, map[string]int{"call_ls": 1}, v.results)
	var prompts []string
	for _, ev := range v.events {
		if ev.Type == transcript.MessageUser {
			for _, b := range ev.Message().Blocks {
				prompts = append(prompts, b.Text)
			}
		}
	}
	assert.Equal(t, []string{"Only in the tree.", "Thanks."}, prompts, "each prompt once")
	for k, o := range sync() {
		assert.Equal(t, ActionUnchanged, o.Action, "fourth sync: %s", k)
	}
}

// TestOpenCodeTreeThenDatabase: a session archived from the older file
// tree before OpenCode's migration copied it into its database goes on in
// the same run when the database appears (every message once), and the
// tree is no longer read for it.
func TestOpenCodeTreeThenDatabase(t *testing.T) {
	ctx := context.Background()
	root, home := t.TempDir(), t.TempDir()
	h := &openCodeHome{t: t, home: home, dir: filepath.Join(home, ".local", "share", "opencode")}
	h.treeSession("ses_both", "")
	h.treeMessage("ses_both", "msg_both1", "user", "In both stores.")
	a := newArchiver(t, root, nil)
	locs := openCodeLocs(t, home)
	rep := a.SyncStores(ctx, locs, time.Time{}, nil)
	require.Len(t, rep.Outcomes, 1)
	require.Equal(t, ActionNew, rep.Outcomes[0].Action, "%+v", rep.Outcomes[0])
	runID := rep.Outcomes[0].RunID

	h.database("ses_both=In both stores.")
	rep = a.SyncStores(ctx, locs, time.Time{}, nil)
	require.Len(t, rep.Outcomes, 2, "%+v", rep.Outcomes)
	for _, o := range rep.Outcomes {
		assert.Equal(t, runID, o.RunID, "%+v", o)
		if strings.Contains(o.Path, "#") {
			assert.Equal(t, ActionGrown, o.Action, "%+v", o)
		} else {
			assert.Equal(t, ActionUnchanged, o.Action, "%+v", o)
		}
	}
	rep = a.SyncStores(ctx, locs, time.Time{}, nil)
	for _, o := range rep.Outcomes {
		assert.Equal(t, ActionUnchanged, o.Action, "%+v", o)
	}
	v := readRun(t, root, runID)
	n := 0
	for _, ev := range v.events {
		if ev.Type == transcript.MessageUser {
			n++
		}
	}
	assert.Equal(t, 1, n, "the prompt once")
}

// TestTreeFiles: a tree session's files in the declared order (the
// session's, then each message followed by its parts), each once, found
// by name without walking the store; a folder's files the same way; a
// "**/" glob walks.
func TestTreeFiles(t *testing.T) {
	root := t.TempDir()
	for _, rel := range []string{
		"session/p1/ses_a.json", "session/p2/ses_b.json",
		"message/ses_a/msg_2.json", "message/ses_a/msg_1.json", "message/ses_a/notes.txt",
		"part/msg_1/prt_2.json", "part/msg_1/prt_1.json", "part/msg_2/prt_3.json", "part/msg_9/prt_9.json",
		"deep/x/y/z.jsonl",
	} {
		writeAged(t, filepath.Join(root, filepath.FromSlash(rel)), []byte("{}"), time.Hour)
	}
	require.NoError(t, os.Symlink(filepath.Join(root, "part", "msg_2"), filepath.Join(root, "part", "msg_link")))
	names := func(fs []folderFile) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.rel)
		}
		return out
	}
	for _, tc := range []struct {
		name, key string
		globs     []string
		want      []string
	}{
		{"a session, its messages and their parts", "ses_a", []string{"session/*/{key}.json", "message/{key}/*.json", "part/{*}/*.json"},
			[]string{"session/p1/ses_a.json", "message/ses_a/msg_1.json", "part/msg_1/prt_1.json", "part/msg_1/prt_2.json", "message/ses_a/msg_2.json", "part/msg_2/prt_3.json"}},
		{"a session without messages", "ses_b", []string{"session/*/{key}.json", "message/{key}/*.json", "part/{*}/*.json"},
			[]string{"session/p2/ses_b.json"}},
		{"no such session", "ses_c", []string{"session/*/{key}.json", "message/{key}/*.json", "part/{*}/*.json"}, nil},
		{"each file once, the first glob's", "ses_a", []string{"message/{key}/msg_1.json", "message/{key}/*.json"},
			[]string{"message/ses_a/msg_1.json", "message/ses_a/msg_2.json"}},
		{"a walk for **", "", []string{"deep/**/*.jsonl"}, []string{"deep/x/y/z.jsonl"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, err := treeFiles(root, tc.key, tc.globs)
			require.NoError(t, err)
			assert.Equal(t, tc.want, names(fs))
		})
	}
	heads, err := globFiles(root, "session/*/*.json")
	require.NoError(t, err)
	assert.Equal(t, []string{"session/p1/ses_a.json", "session/p2/ses_b.json"}, names(heads))
	linked, err := globFiles(root, "part/*/*.json")
	require.NoError(t, err)
	assert.NotContains(t, names(linked), "part/msg_link/prt_3.json", "a symbolic link is not followed")
}

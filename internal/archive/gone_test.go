package archive

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestArchivedFrom: the sessions archived from under each store that
// is gone are counted in one pass over the ledger: a file at any depth
// under the directory counts, one of a directory whose name only starts
// the same does not, a database's session ("<database>#<key>") counts
// under the database's directory, and a store under another gone store
// counts its own.
func TestArchivedFrom(t *testing.T) {
	paths := []string{
		"/h/.claude/projects/p1/s1.jsonl",
		"/h/.claude/projects/p1/s2.jsonl",
		"/h/.claude/projects/p2/deep/s3.jsonl",
		"/h/.claude/projects-old/s4.jsonl",
		"/h/.local/share/opencode/opencode.db#ses_1",
		"/h/.codex/sessions/s5.jsonl",
	}
	a := &Archiver{ledger: &Ledger{runs: newEntries()}}
	for i, p := range paths {
		id := string(rune('a' + i))
		require.NoError(t, a.ledger.runs.put(&Entry{RunID: id, Path: p}))
	}
	cases := []struct {
		name string
		dirs []string
		want map[string]int
	}{
		{"none gone", nil, map[string]int{}},
		{"a store", []string{"/h/.claude/projects"}, map[string]int{"/h/.claude/projects": 3}},
		{"a store and one under it", []string{"/h/.claude/projects", "/h/.claude/projects/p1"},
			map[string]int{"/h/.claude/projects": 3, "/h/.claude/projects/p1": 2}},
		{"a database's directory", []string{"/h/.local/share/opencode"}, map[string]int{"/h/.local/share/opencode": 1}},
		{"nothing archived from it", []string{"/h/.gemini/tmp"}, map[string]int{"/h/.gemini/tmp": 0}},
		{"the same directory twice", []string{"/h/.codex/sessions", "/h/.codex/sessions"}, map[string]int{"/h/.codex/sessions": 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, a.archivedFrom(c.dirs))
		})
	}
}

// TestPresence: the paths a sync found are its sessions' and those
// added, whatever their order.
func TestPresence(t *testing.T) {
	p := presentOf([]Session{{Path: "/s/b"}, {Path: "/s/a"}, {Path: "/s/c"}})
	p.add("/db#1")
	p.add("/s/a")
	for path, want := range map[string]bool{"/s/a": true, "/s/b": true, "/s/c": true, "/db#1": true, "/s": false, "/s/d": false, "/db#2": false} {
		if p.has(path) != want {
			t.Errorf("has(%s) = %v", path, !want)
		}
	}
	if len(p.more) != 1 {
		t.Errorf("added %v: a session's path is not added again", p.more)
	}
}

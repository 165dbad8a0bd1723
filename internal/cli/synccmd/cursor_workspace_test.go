package synccmd_test

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// TestSyncCursorIDEWorkspace: the Cursor IDE keeps which workspace a
// composer was opened in apart from the composer, in each workspace's own
// state.vscdb (workspaceStorage/<hash>/, ItemTable composer.composerData)
// and workspace.json beside it; the cursor plugin declares those as
// related databases (ABI 1.7), which the host reads read-only. A composer
// of a folder workspace gets that folder as its run's working directory;
// one of a multi-root workspace, one no workspace lists, and one whose
// workspace's database has no such table get none (the data does not say
// one directory: nothing is guessed), and the others are still read (that
// database fails the store of an older Cursor's workspace databases,
// which lists its sessions from that table, sync saying why); the IDE's
// files are byte-identical around every command; a second sync archives
// nothing.
func TestSyncCursorIDEWorkspace(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	user := filepath.Join(h.Dir, ".config", "Cursor", "User")
	c := openCursorIDEDB(t, filepath.Join(user, "globalStorage", "state.vscdb"))
	for i, id := range []string{"c-app", "c-multi", "c-none"} {
		at := 1767261600000 + int64(i)*1000
		c.put("composerData:"+id, `{"_v":3,"composerId":"`+id+`","createdAt":`+strconv.Itoa(int(at))+`,"lastUpdatedAt":`+strconv.Itoa(int(at))+`,"fullConversationHeadersOnly":[{"bubbleId":"u","type":1},{"bubbleId":"a","type":2}]}`)
		c.put("bubbleId:"+id+":u", `{"bubbleId":"u","type":1,"text":"Prompt of `+id+`","createdAt":"2026-01-01T10:00:00.000Z"}`)
		c.put("bubbleId:"+id+":a", `{"bubbleId":"a","type":2,"text":"Answer of `+id+`","createdAt":"2026-01-01T10:00:01.000Z"}`)
	}
	if err := c.DB.Close(); err != nil {
		t.Fatal(err)
	}
	for _, ws := range []struct{ hash, composers, file string }{
		{"1a2b", `["c-app","c-gone"]`, `{"folder":"file:///home/me/my%20app"}`},
		{"3c4d", `["c-multi"]`, `{"workspace":"file:///home/me/all.code-workspace"}`},
	} {
		w := openCursorIDEDB(t, filepath.Join(user, "workspaceStorage", ws.hash, "state.vscdb"))
		var list []string
		for _, id := range strings.Split(strings.Trim(ws.composers, "[]"), ",") {
			list = append(list, `{"type":"head","composerId":`+id+`,"lastUpdatedAt":1767261600000}`)
		}
		w.Exec(`INSERT INTO ItemTable VALUES ('composer.composerData', ?)`, `{"allComposers":[`+strings.Join(list, ",")+`],"selectedComposerIds":[]}`)
		if err := w.DB.Close(); err != nil {
			t.Fatal(err)
		}
		h.Put(filepath.Join(".config", "Cursor", "User", "workspaceStorage", ws.hash, "workspace.json"), []byte(ws.file), 0)
	}
	// A workspace whose database is not VS Code's: read as nothing.
	odd := clitest.OpenAgentDB(t, filepath.Join(user, "workspaceStorage", "5e6f", "state.vscdb"))
	odd.Exec(`CREATE TABLE other (x)`)
	if err := odd.DB.Close(); err != nil {
		t.Fatal(err)
	}

	doctorLists(t, doctorStores(t, h, user), "Cursor IDE", "sqlite", filepath.Join(user, "globalStorage"), 3)
	// The odd database is also one of the store of an older Cursor's
	// workspace databases (workspaceStorage/*/state.vscdb), which cannot
	// list it (no ItemTable): that store fails on it, saying why, and
	// the rest is archived.
	syncOdd := func(what string, want map[string]int) map[string][]string {
		t.Helper()
		var r clitest.Result
		clitest.Unchanged(t, user, "sync", func() { r = h.Run("sync") })
		got := clitest.Outcomes(r.Out)
		ok := r.Code != 0 && len(got) == len(want)+1 && len(got["failed"]) == 1 &&
			strings.Contains(r.Out, filepath.Join(user, "workspaceStorage", "5e6f", "state.vscdb")) && strings.Contains(r.Out, "no such table: ItemTable")
		for action, n := range want {
			ok = ok && len(got[action]) == n
		}
		if !ok {
			t.Fatalf("%s: want %v and the odd database failed: %v", what, want, r)
		}
		return got
	}
	got := syncOdd("first sync: want the three composers new", map[string]int{"new": 3})
	seen := 0
	for _, id := range got["new"] {
		b := runText(t, h, id)
		switch {
		case strings.Contains(b, "Answer of c-app"):
			seen++
			if !strings.Contains(b, `"cwd":"/home/me/my app"`) {
				t.Errorf("run of c-app lacks its workspace's folder:\n%s", b)
			}
		case strings.Contains(b, "Answer of c-multi"), strings.Contains(b, "Answer of c-none"):
			seen++
			if strings.Contains(b, `"cwd"`) {
				t.Errorf("a run whose workspace names no one folder has a working directory:\n%s", b)
			}
		}
	}
	if seen != 3 {
		t.Fatalf("runs %v: %d of the three composers", got["new"], seen)
	}
	syncOdd("second sync", map[string]int{})
}

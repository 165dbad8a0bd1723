package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestSyncCursorIDEWorkspace: the Cursor IDE keeps which workspace a
// composer was opened in apart from the composer, in each workspace's own
// state.vscdb (workspaceStorage/<hash>/, ItemTable composer.composerData)
// and workspace.json beside it; the cursor plugin declares those as
// related databases (ABI 1.7), which the host reads read-only. A composer
// of a folder workspace gets that folder as its run's working directory;
// one of a multi-root workspace, one no workspace lists, and one whose
// workspace's database has no such table get none (the data does not say
// one directory: nothing is guessed), and the others are still read; the
// IDE's files are byte-identical around every command; a second sync
// archives nothing.
func TestSyncCursorIDEWorkspace(t *testing.T) {
	t.Parallel()
	h := newFakeHome(t)
	user := filepath.Join(h.dir, ".config", "Cursor", "User")
	c := openCursorIDEDB(t, filepath.Join(user, "globalStorage", "state.vscdb"))
	for i, id := range []string{"c-app", "c-multi", "c-none"} {
		at := 1767261600000 + int64(i)*1000
		c.put("composerData:"+id, `{"_v":3,"composerId":"`+id+`","createdAt":`+itoa(int(at))+`,"lastUpdatedAt":`+itoa(int(at))+`,"fullConversationHeadersOnly":[{"bubbleId":"u","type":1},{"bubbleId":"a","type":2}]}`)
		c.put("bubbleId:"+id+":u", `{"bubbleId":"u","type":1,"text":"Prompt of `+id+`","createdAt":"2026-01-01T10:00:00.000Z"}`)
		c.put("bubbleId:"+id+":a", `{"bubbleId":"a","type":2,"text":"Answer of `+id+`","createdAt":"2026-01-01T10:00:01.000Z"}`)
	}
	if err := c.db.Close(); err != nil {
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
		w.exec(`INSERT INTO ItemTable VALUES ('composer.composerData', ?)`, `{"allComposers":[`+strings.Join(list, ",")+`],"selectedComposerIds":[]}`)
		if err := w.db.Close(); err != nil {
			t.Fatal(err)
		}
		h.put(filepath.Join(".config", "Cursor", "User", "workspaceStorage", ws.hash, "workspace.json"), []byte(ws.file), 0)
	}
	// A workspace whose database is not VS Code's: read as nothing.
	odd := openAgentDB(t, filepath.Join(user, "workspaceStorage", "5e6f", "state.vscdb"))
	odd.exec(`CREATE TABLE other (x)`)
	if err := odd.db.Close(); err != nil {
		t.Fatal(err)
	}

	unchanged := storeUnchanged(t, user)
	var r result
	unchanged("doctor", func() { r = h.ok("doctor", "--json") })
	doctorLists(t, r, "Cursor IDE", "sqlite", filepath.Join(user, "globalStorage"), 3)
	unchanged("sync", func() { r = h.ok("sync") })
	got := outcomes(r.out)
	if len(got["new"]) != 3 {
		t.Fatalf("first sync: want the three composers new: %v", r)
	}
	seen := 0
	for _, id := range got["new"] {
		tr := transcriptPath(h.stor, id)
		validate(t, tr)
		b := string(readFile(t, tr))
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
	unchanged("sync", func() { r = h.ok("sync") })
	if len(outcomes(r.out)) != 0 || !strings.Contains(r.errOut, "0 new") {
		t.Errorf("second sync: %v", r)
	}
}

package synccmd_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// cursorOldStore is the name of the cursor plugin's store of an older
// Cursor's workspace databases.
const cursorOldStore = "Cursor IDE workspaces (before the global database)"

// putOldWorkspace writes an older Cursor's workspace database at
// workspaceStorage/<hash>/state.vscdb below user, with composers and chat
// tabs inline in ItemTable as Cursor of 2024 wrote them (the shape of
// slevin48/cursor-history's state.vscdb), and workspace.json beside it.
func putOldWorkspace(t *testing.T, h *clitest.Home, user, hash, composers, tabs, folder string) {
	t.Helper()
	w := openCursorIDEDB(t, filepath.Join(user, "workspaceStorage", hash, "state.vscdb"))
	w.Exec(`INSERT INTO ItemTable VALUES ('composer.composerData', ?)`, `{"allComposers":[`+composers+`],"selectedComposerId":"","composerDataVersion":0}`)
	if tabs != "" {
		w.Exec(`INSERT INTO ItemTable VALUES ('workbench.panel.aichat.view.aichat.chatdata', ?)`, `{"tabs":[`+tabs+`],"selectedTabId":"","chatDataVersion":0}`)
	}
	if err := w.DB.Close(); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(h.Dir, filepath.Join(user, "workspaceStorage", hash, "workspace.json"))
	if err != nil {
		t.Fatal(err)
	}
	h.Put(rel, []byte(`{"folder":"`+folder+`"}`), 0)
}

// oldComposer is a composer of an older Cursor with its conversation
// inline: bubbles of type 1 (the user's) and 2, as prompt/answer pairs;
// updated > 0 sets its lastUpdatedAt (a composer Cursor renamed has one).
func oldComposer(id string, updated int, pairs ...string) string {
	var bubbles []string
	for i, p := range pairs {
		b, _ := json.Marshal(map[string]any{"type": 1 + i%2, "bubbleId": fmt.Sprintf("%s-%d", id, i), "relevantFiles": []string{}, "text": p, "context": map[string]any{"notepads": []string{}}})
		bubbles = append(bubbles, string(b))
	}
	up := ""
	if updated > 0 {
		up = fmt.Sprintf(`,"lastUpdatedAt":%d`, 1731798900000+updated)
	}
	return `{"composerId":"` + id + `","richText":"","text":"","conversation":[` + strings.Join(bubbles, ",") + `],"status":"completed","createdAt":1731798728424` + up + `,"capabilities":[]}`
}

// TestSyncCursorOldWorkspace: a home with an older Cursor's workspace
// database (2024: composers and chat tabs inline in the workspace's
// state.vscdb, no global database): doctor lists the store with its
// sessions, the composer holding a conversation and the chat tab holding
// bubbles (not a composer without its conversation, a newer Cursor's
// index, nor an empty tab); sync archives each as a run, its prompts and
// answers in order, the tab's model, the workspace's folder as the cwd,
// the tab's trailing empty draft ignored; the database's directory is
// byte-identical throughout; a second sync archives nothing; a new
// prompt and answer grow the composer's run only, each message once.
func TestSyncCursorOldWorkspace(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	user := filepath.Join(h.Dir, ".config", "Cursor", "User")
	composers := oldComposer("c-old", 1, "remove the green line in the command window", "I'll help you modify the command page.", "why did you change the header color?", "I apologize for modifying the header color.") +
		`,{"composerId":"c-head","name":"a newer Cursor's index","lastUpdatedAt":1731799000000,"createdAt":1731799000000}` +
		`,{"composerId":"c-empty","conversation":[],"createdAt":1731799000001}`
	tabs := `{"tabId":"t-old","chatTitle":"Running a Local Python Server via CLI","lastSendTime":1731814419726,"tabState":"chat","bubbles":[` +
		`{"type":"user","id":"u1","messageType":2,"text":"how to run a local server with python","selectedImages":[]},` +
		`{"type":"ai","id":"a1","messageType":3,"text":"Use python -m http.server 8000.","rawText":"Use python -m http.server 8000.","aiType":"chat","modelType":"claude-3.5-sonnet","codeBlocks":[]},` +
		`{"type":"user","id":"u2","messageType":2,"text":""}]},` +
		`{"tabId":"t-empty","chatTitle":"","lastSendTime":1731814419000,"bubbles":[]}`
	putOldWorkspace(t, h, user, "f87f6e0b", composers, tabs, "file:///home/me/mobile%20chat")

	ws := filepath.Join(user, "workspaceStorage")
	doctorLists(t, doctorStores(t, h, user), cursorOldStore, "sqlite", ws, 2)
	got := syncWant(t, h, user, "first sync: want the composer and the tab new", map[string]int{"new": 2})
	var composerRun string
	for _, id := range got["new"] {
		b := runText(t, h, id)
		if !strings.Contains(b, `"cwd":"/home/me/mobile chat"`) {
			t.Errorf("run %s lacks its workspace's folder:\n%s", id, b)
		}
		switch {
		case strings.Contains(b, `"session_id":"c-old"`):
			composerRun = id
			for _, s := range []string{"remove the green line", "I'll help you modify", "why did you change", "I apologize"} {
				if n := strings.Count(b, `"text":"`+s); n != 1 {
					t.Errorf("the composer's run holds a message %q %d times, want once:\n%s", s, n, b)
				}
			}
		case strings.Contains(b, `"session_id":"t-old"`):
			if !strings.Contains(b, "how to run a local server") || !strings.Contains(b, "http.server 8000") || !strings.Contains(b, `"model":"claude-3.5-sonnet"`) {
				t.Errorf("the tab's run lacks its prompt, answer or model:\n%s", b)
			}
		default:
			t.Errorf("run %s is neither the composer's nor the tab's:\n%s", id, b)
		}
	}
	syncWant(t, h, user, "second sync", nothing)

	composers = oldComposer("c-old", 2, "remove the green line in the command window", "I'll help you modify the command page.", "why did you change the header color?", "I apologize for modifying the header color.", "now add a clear button", "Added a clear button.") +
		`,{"composerId":"c-head","name":"a newer Cursor's index","lastUpdatedAt":1731799000000,"createdAt":1731799000000}`
	putOldWorkspace(t, h, user, "f87f6e0b", composers, tabs, "file:///home/me/mobile%20chat")
	b := syncGrown(t, h, user, "a new prompt and answer", composerRun)
	for _, s := range []string{"remove the green line", "I apologize", "now add a clear button", "Added a clear button."} {
		if n := strings.Count(b, `"text":"`+s); n != 1 {
			t.Errorf("the grown run holds a message %q %d times, want once:\n%s", s, n, b)
		}
	}
	syncWant(t, h, user, "after the growth", nothing)
}

// putGlobalComposer writes composer id into the global database at path
// as a newer Cursor keeps it (composerData:<id> and its two bubbles, the
// answer with its tokens): the conversation of oldComposer(id, 1,
// "Create a new page for Files", "I'll help you create a Files page.").
func putGlobalComposer(t *testing.T, path, id string) {
	t.Helper()
	c := openCursorIDEDB(t, path)
	c.put("composerData:"+id, `{"_v":3,"composerId":"`+id+`","createdAt":1731817660592,"lastUpdatedAt":1731817868959,"fullConversationHeadersOnly":[{"bubbleId":"b1","type":1},{"bubbleId":"b2","type":2}]}`)
	c.put("bubbleId:"+id+":b1", `{"_v":3,"bubbleId":"b1","type":1,"text":"Create a new page for Files","createdAt":"2024-11-17T04:27:40.592Z"}`)
	c.put("bubbleId:"+id+":b2", `{"_v":3,"bubbleId":"b2","type":2,"text":"I'll help you create a Files page.","createdAt":"2024-11-17T04:28:00.000Z","tokenCount":{"inputTokens":900,"outputTokens":40}}`)
	if err := c.DB.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestSyncCursorOldAndGlobal: a composer an older Cursor kept inline in
// a workspace database and a newer one keeps in its global database
// (composerData:<id>, the same id) is one conversation, archived once,
// from the global database. With both there at the first sync, the
// global database's composer is the one new run and the workspace's is
// skipped, sync saying why; when the workspace's copy was archived
// first, the global database's run is new and the workspace's run is
// ended, superseded by it. A next sync says nothing; doctor counts the
// workspace's session archived, from the other database, and says so.
func TestSyncCursorOldAndGlobal(t *testing.T) {
	t.Parallel()
	const id = "d74dadbc-8b7b-4977-8fc1-277bc735e3ed"
	for _, oldFirst := range []bool{false, true} {
		t.Run(map[bool]string{false: "both at once", true: "the workspace's copy archived first"}[oldFirst], func(t *testing.T) {
			t.Parallel()
			h := clitest.NewHome(t)
			user := filepath.Join(h.Dir, ".config", "Cursor", "User")
			putOldWorkspace(t, h, user, "6ae6eb05", oldComposer(id, 1, "Create a new page for Files", "I'll help you create a Files page."), "", "file:///home/me/mobilechat")
			var oldRun string
			if oldFirst {
				oldRun = got0(t, syncWant(t, h, user, "the workspace's copy", map[string]int{"new": 1})["new"])
			}
			global := filepath.Join(user, "globalStorage", "state.vscdb")
			putGlobalComposer(t, global, id)

			var r clitest.Result
			clitest.Unchanged(t, user, "sync", func() { r = h.OK("sync") })
			got := clitest.Outcomes(r.Out)
			if len(got["new"]) != 1 || len(got["skipped"]) != 1 || len(got) != 2 {
				t.Fatalf("want the global database's composer new and the workspace's skipped: %v", r)
			}
			ide := got["new"][0]
			if b := runText(t, h, ide); !strings.Contains(b, `"input_tokens":900`) || !strings.Contains(b, `"session_id":"`+id+`"`) || !strings.Contains(b, `"cwd":"/home/me/mobilechat"`) {
				t.Errorf("the new run is not the global database's composer, with its workspace's folder:\n%s", b)
			}
			why := "the same session is archived from " + global + "#" + id + " as run " + ide
			for _, l := range strings.Split(strings.TrimSpace(r.Out), "\n") {
				if f := strings.Split(l, "\t"); len(f) >= 5 && f[0] == "skipped" && !strings.Contains(f[4], why) {
					t.Errorf("the skipped outcome does not say why: %s", l)
				}
			}
			if oldFirst {
				if !strings.Contains(r.Out, "run "+oldRun+" of ") || !strings.Contains(r.Out, "ended, superseded by this run") {
					t.Errorf("the new run's outcome does not say it ended the workspace's run %s: %v", oldRun, r)
				}
				if b := runText(t, h, oldRun); !strings.Contains(b, `"superseded_by":"`+ide+`"`) {
					t.Errorf("the workspace's run does not say the global database's run %s supersedes it:\n%s", ide, b)
				}
			} else if n := len(runFiles(t, h.Stor)); n != 1 {
				t.Errorf("%d runs archived, want the global database's only", n)
			}
			syncWant(t, h, user, "next sync", nothing)

			stores, out := doctorCountsOf(t, h)
			s, seen := stores[cursorOldStore]
			if seen && (s.Sessions != 1 || s.Archived != 1 || s.NotArchived != 0 || s.Elsewhere != 1) {
				t.Errorf("doctor's workspace store: %+v", s)
			}
			if !seen || !strings.Contains(out, "1 of its session(s) skipped: the same session is kept in another database of the agent") {
				t.Errorf("doctor does not list the workspace store or say why its session is skipped:\n%s", out)
			}
		})
	}
}

// TestSyncCursorOldEndedThenGlobal: a composer an older Cursor kept in a
// workspace database, archived and ended there (the workspace stopped
// listing it: a newer Cursor moved it out) before the global database
// held it, then archived from the global database, is counted once: the
// new run's start names the ended run it holds again, and ls, stats and
// usage leave the ended one out (ls --superseded lists both); the new
// run's outcome says so, and a next sync says nothing.
func TestSyncCursorOldEndedThenGlobal(t *testing.T) {
	t.Parallel()
	const id = "d74dadbc-8b7b-4977-8fc1-277bc735e3ed"
	h := clitest.NewHome(t)
	user := filepath.Join(h.Dir, ".config", "Cursor", "User")
	keep := `{"composerId":"c-head","name":"a newer Cursor's index","lastUpdatedAt":1731799000000,"createdAt":1731799000000}`
	putOldWorkspace(t, h, user, "6ae6eb05", oldComposer(id, 1, "Create a new page for Files", "I'll help you create a Files page.")+","+keep, "", "file:///home/me/mobilechat")
	oldRun := got0(t, syncWant(t, h, user, "the workspace's copy", map[string]int{"new": 1})["new"])
	putOldWorkspace(t, h, user, "6ae6eb05", keep, "", "file:///home/me/mobilechat")
	if got := syncWant(t, h, user, "the workspace no longer lists it", map[string]int{"closed": 1}); got0(t, got["closed"]) != oldRun {
		t.Fatalf("closed %v, want run %s", got, oldRun)
	}
	putGlobalComposer(t, filepath.Join(user, "globalStorage", "state.vscdb"), id)
	var r clitest.Result
	clitest.Unchanged(t, user, "sync", func() { r = h.OK("sync") })
	got := clitest.Outcomes(r.Out)
	if len(got["new"]) != 1 || len(got) != 1 {
		t.Fatalf("want the global database's composer new, nothing else: %v", r)
	}
	ide := got["new"][0]
	if !strings.Contains(r.Out, "archived and ended before as run "+oldRun) {
		t.Errorf("the new run's outcome does not say it stands for run %s: %v", oldRun, r)
	}
	if b := runText(t, h, ide); !strings.Contains(b, `"supersedes_runs":["`+oldRun+`"]`) {
		t.Errorf("the new run's start does not name run %s:\n%s", oldRun, b)
	}
	syncWant(t, h, user, "next sync", nothing)

	listed := func(args ...string) []string {
		var ids []string
		for _, l := range strings.Split(strings.TrimSpace(h.OK(append([]string{"ls", "--json"}, args...)...).Out), "\n") {
			var s struct {
				RunID string `json:"run_id"`
			}
			if err := json.Unmarshal([]byte(l), &s); err != nil {
				t.Fatalf("ls --json: %v: %s", err, l)
			}
			ids = append(ids, s.RunID)
		}
		return ids
	}
	if ids := listed(); len(ids) != 1 || ids[0] != ide {
		t.Errorf("ls lists %v, want the global database's run %s only", ids, ide)
	}
	if ids := listed("--superseded"); len(ids) != 2 {
		t.Errorf("ls --superseded lists %v, want both runs", ids)
	}
	var st struct {
		Runs       int `json:"runs"`
		Superseded int `json:"superseded_runs"`
	}
	if err := json.Unmarshal([]byte(h.OK("stats", "--all", "--json").Out), &st); err != nil || st.Runs != 1 || st.Superseded != 1 {
		t.Errorf("stats --all: %+v (%v), want 1 run and 1 superseded", st, err)
	}
	var u struct {
		Total struct {
			Sessions int `json:"sessions"`
		} `json:"total"`
		Superseded int `json:"superseded_runs"`
	}
	if err := json.Unmarshal([]byte(h.OK("usage", "--by", "session", "--json").Out), &u); err != nil || u.Total.Sessions != 1 || u.Superseded != 1 {
		t.Errorf("usage: %+v (%v), want 1 session and 1 run superseded", u, err)
	}
	if r := h.Run("search", "--json", "--every", `"create a Files page"`); r.Code != 0 || strings.Count(r.Out, "\n") != 1 || !strings.Contains(r.Out, ide) {
		t.Errorf("search finds the answer other than once, in run %s: %v", ide, r)
	}
}

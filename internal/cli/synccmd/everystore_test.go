package synccmd_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// putGolden writes golden input name of provider into the home h as the
// agent wrote it, at rel below the directory of store (dirs: doctor's
// directory of each store by name). A golden that starts with a
// `$twasm source` line names its store and path itself (store and rel
// given here override them); its `$twasm file` lines are the files of a
// folder or a tree, each followed by its document (`document`) or its
// lines. Anything else is one file, written whole.
func putGolden(t *testing.T, h *clitest.Home, dirs map[string]string, provider, name, store, rel string) string {
	t.Helper()
	src := clitest.ReadGoldenSource(t, provider, name)
	if src.Facts != nil {
		if store == "" {
			store = src.Facts.Store
		}
		if rel == "" {
			rel = src.Facts.Path
		}
	}
	dir, ok := dirs[store]
	if !ok || rel == "" {
		t.Fatalf("%s/%s: store %q (rel %q) is not one doctor lists", provider, name, store, rel)
	}
	at, err := filepath.Rel(h.Dir, filepath.Join(dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	if len(src.Files) == 0 {
		h.Put(at, src.Data, time.Hour)
		return store
	}
	for _, f := range src.Files {
		h.Put(filepath.Join(at, f.Path), f.Data, time.Hour)
	}
	return store
}

// TestSyncEveryStore is issue 28's acceptance on one machine: a home
// directory holding a session in every store the bundled plugins declare
// (files, folders, trees and SQLite databases; the older layouts beside
// the current ones) and an Aider history in a project the sync config
// names. `twasm doctor` finds every one of them, each with its sessions
// not archived; `twasm sync` archives every session, each run valid; a
// second sync finds nothing new; doctor then says every session is
// archived. No agent file changes under any command.
func TestSyncEveryStore(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	dirs := map[string]string{}
	for name, s := range doctorStores(t, h, h.Dir) {
		dirs[name] = s.Dir
	}

	put := map[string]bool{} // the stores given a session
	golden := func(provider, name, store, rel string) {
		t.Helper()
		put[putGolden(t, h, dirs, provider, name, store, rel)] = true
	}
	golden("claude", "session_log.jsonl", "Claude Code projects", "-home-me-app/5f1c0000-0000-4000-8000-000000000001.jsonl")
	golden("codex", "rollout_exec_command_v0143.jsonl", "Codex sessions", "2026/07/01/rollout-2026-07-01T08-00-00-00000000-0000-7000-8000-0000000000b1.jsonl")
	golden("codex", "rollout_guardian_denied.jsonl", "Codex archived sessions", "rollout-2026-10-02T10-00-00-019d2000-0000-7000-8000-0000000000a1.jsonl")
	golden("gemini", "session_file.json", "Gemini CLI chats", "cde655816f6d3e43/chats/session-2025-10-29T10-36-9c9a14e1.json")
	golden("copilot", "events_session_log.jsonl", "Copilot CLI session state", "049410b4-0000-4000-8000-00000000c005/events.jsonl")
	golden("pi", "session_aborted_last.jsonl", "Pi sessions", "--home-u-proj--/2026-09-14T09-00-00-000Z_0e0e0000-0000-4000-8000-000000000009.jsonl")
	golden("pi", "session_blocked_skipped_length.jsonl", "OMP sessions", "--home-u-proj--/2026-09-12T09-00-00-000Z_0d0d0000-0000-4000-8000-000000000003.jsonl")
	golden("pi", "session_system_sections.jsonl", "OpenClaw sessions", "main/sessions/01a0f21b-0595-72a7-84dc-df0fc0d0de3f.jsonl")
	golden("opencode", "tree_session_tools_errors.jsonl", "OpenCode (older file tree)", ".")
	golden("qwen", "session_tools_errors.jsonl", "Qwen Code chats", "-home-me-proj/chats/7f2c1e4a-0b3d-4c5e-9f61-2a8b3c4d5e6f.jsonl")
	golden("qwen", "legacy_session_file.json", "Qwen Code chats (before JSONL)", "9d2f0c6d1a4b/chats/session-2025-09-10T08-15-3e1d2c4b.json")
	golden("goose", "session_legacy_file.jsonl", "", "")
	golden("goose", "session_cli_2024.jsonl", "", "")
	golden("amp", "thread_tools_failures.json", "Amp threads", "T-5c1e0d1a-2b3c-4d5e-8f90-0a1b2c3d4e5f.json")
	golden("kimi", "code_tools_failed_turn.jsonl", "Kimi Code sessions", "wd_proj_3f2a1b0c9d8e/session_5c1e0d1a/agents/main/wire.jsonl")
	golden("kimi", "legacy_subagent_denied.jsonl", "Kimi CLI sessions", "0cc175b9c0f1b6a831c399e269772661/9b2e7c4d-1f3a-4e5b-8c6d-7a8b9c0d1e2f/wire.jsonl")
	golden("kimi", "context_v058.jsonl", "", "")
	golden("cursor", "transcript_tools_subagent.jsonl", "", "")
	golden("cline", "task_native_tools.jsonl", "", "")
	golden("cline", "session_messages.jsonl", "", "")
	golden("cline", "roo_ui_gross_input.jsonl", "", "")
	golden("cline", "task_ui_openai_provider.jsonl", "Kilo Code tasks (Code)", "1767312000000")

	// Factory Droid: the session and its settings sidecar.
	session, settings := droidFiles(t, "session_settings_tools.jsonl")
	h.Put(filepath.Join(droidDir, droidParent+".jsonl"), bytes.Join(session, nil), time.Hour)
	h.Put(filepath.Join(droidDir, droidParent+".settings.json"), settings, time.Hour)
	put["Factory Droid sessions"] = true

	// The SQLite stores, written by the test as each agent writes them,
	// each closed as the agent exits.
	closeDB := func(db interface{ Close() error }) {
		t.Helper()
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	const T = 1762077600000
	for _, db := range []struct{ store, file string }{{"OpenCode", "opencode.db"}, {"Kilo CLI", "kilo.db"}} {
		oc := openOpenCodeDB(t, filepath.Join(dirs[db.store], db.file))
		oc.Schema("opencode")
		oc.Exec("INSERT INTO project VALUES ('prj')")
		oc.turnStarted(T)
		oc.part("prt_2b", "msg_2", "ses_1", T+1100, T+1100, `{"type":"text","text":"Two files: a.go and b.go."}`)
		closeDB(oc.DB)
		put[db.store] = true
	}
	g := openGooseDB(t, filepath.Join(dirs["Goose"], "sessions.db"))
	g.Schema("goose")
	g.session("20251102_1", "", "user")
	g.message("20251102_1", "msg_1", "user", T/1000, `[{"type":"text","text":"Run the tests."}]`)
	g.message("20251102_1", "msg_2", "assistant", T/1000+2, `[{"type":"text","text":"They pass."}]`)
	g.usage("20251102_1", 1200, 40, 0.004)
	closeDB(g.DB)
	put["Goose"] = true

	project := filepath.Join(h.Dir, "src", "app")
	c := openCrushDB(t, filepath.Join(project, ".crush", "crush.db"))
	c.session("ses_app", "Fix the app", "Fixed.", T/1000)
	closeDB(c.DB)
	h.Put(filepath.Join(".local", "share", "crush", "projects.json"), []byte(`{"projects":[{"path":"`+project+`","data_dir":"`+filepath.Join(project, ".crush")+`","last_accessed":"2026-03-01T10:00:00Z"}]}`), time.Hour)
	put["Crush projects"] = true

	ide := openCursorIDEDB(t, filepath.Join(dirs["Cursor IDE"], "state.vscdb"))
	ide.put("composerData:c-main", `{"_v":3,"composerId":"c-main","name":"Fix the tests","createdAt":1767261600000,"lastUpdatedAt":1767261660000,"fullConversationHeadersOnly":[{"bubbleId":"b1","type":1},{"bubbleId":"b2","type":2}]}`)
	ide.put("bubbleId:c-main:b1", `{"_v":3,"bubbleId":"b1","type":1,"text":"Run the tests.","createdAt":"2026-01-01T10:00:00.000Z"}`)
	ide.put("bubbleId:c-main:b2", `{"_v":3,"bubbleId":"b2","type":2,"text":"They pass.","createdAt":"2026-01-01T10:00:02.000Z"}`)
	closeDB(ide.DB)
	put["Cursor IDE"] = true
	putOldWorkspace(t, h, filepath.Dir(dirs[cursorOldStore]), "5d2c3b4a", oldComposer("c-old", 0, "Explain the parser.", "It reads tokens."), "", "file:///home/me/proj")
	put[cursorOldStore] = true

	// Aider: a history in a project the sync config names.
	hist := filepath.Join("src", "site", ".aider.chat.history.md")
	h.Put(hist, clitest.ReadFile(t, clitest.Golden("aider", "edits_commit_usage.md")), time.Hour)
	cfg, err := json.Marshal(map[string]any{"projects": []string{filepath.Join(h.Dir, "src", "site")}})
	if err != nil {
		t.Fatal(err)
	}
	h.Put(filepath.Join(".config", "twasm", "sync.json"), cfg, time.Hour)
	put["Aider chat history"] = true

	// Every provider the bundled plugins read has a store with a session
	// here: a store added to a plugin without a line above fails this.
	stores := doctorStores(t, h, h.Dir)
	providers := map[string]bool{}
	for _, s := range stores {
		providers[s.Provider] = true
	}
	for name := range put {
		delete(providers, stores[name].Provider)
	}
	if len(providers) != 0 {
		t.Errorf("providers with no session in this home: %v", providers)
	}
	var sessions int
	var names []string
	for name, s := range stores {
		switch {
		case put[name] && (!s.Found || s.Sessions < 1 || s.NotArchived != s.Sessions):
			t.Errorf("doctor before sync, %s: %+v", name, s)
		case !put[name] && s.Sessions != 0:
			t.Errorf("doctor before sync, %s holds no session, lists %+v", name, s)
		}
		sessions += s.Sessions
		names = append(names, name)
	}
	for name := range put {
		if _, ok := stores[name]; !ok {
			t.Errorf("doctor does not list %s", name)
		}
	}
	sort.Strings(names)
	if t.Failed() {
		t.Fatalf("doctor's stores: %s", strings.Join(names, ", "))
	}

	r := h.OK("sync")
	got := clitest.Outcomes(r.Out)
	if len(got) != 1 || len(got["new"]) < sessions {
		t.Fatalf("first sync: want every one of %d sessions new, got %v: %v", sessions, got, r)
	}
	for _, id := range got["new"] {
		clitest.Validate(t, clitest.TranscriptPath(h.Stor, id))
	}
	if r := h.OK("sync"); len(clitest.Outcomes(r.Out)) != 0 || !strings.Contains(r.ErrOut, "0 new") {
		t.Errorf("second sync: want nothing new: %v", r)
	}
	for name, s := range doctorStores(t, h, h.Dir) {
		if put[name] && (s.Archived != s.Sessions || s.NotArchived != 0) {
			t.Errorf("doctor after sync, %s: %+v", name, s)
		}
	}
	if _, err := os.Stat(filepath.Join(h.Stor, "transcripts")); err != nil {
		t.Fatal(err)
	}
}

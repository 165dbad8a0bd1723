package synccmd_test

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/rawfile"
	"github.com/twasm/twasm/internal/testing/clitest"
	"github.com/twasm/twasm/transcript"
)

// clineTask returns the ui_messages and api_conversation_history
// documents of the golden task_native_tools (a Cline task of five
// requests), as the host handed them to the plugin.
func clineTask(t *testing.T) (ui, api []json.RawMessage) {
	t.Helper()
	src := clitest.ReadGoldenSource(t, "cline", "task_native_tools.jsonl")
	for doc, path := range map[*[]json.RawMessage]string{&ui: "ui_messages.json", &api: "api_conversation_history.json"} {
		if err := json.Unmarshal(src.File(t, path), doc); err != nil {
			t.Fatal(err)
		}
	}
	if len(ui) < 10 || len(api) < 10 {
		t.Fatalf("task_native_tools: %d UI messages, %d messages", len(ui), len(api))
	}
	return ui, api
}

// TestSyncClineTask: a home directory with a Cline task folder in its
// default store (~/.cline/data/tasks/<id>/). `twasm doctor` lists the
// store with the task not archived; `twasm sync` archives it; a second
// sync archives nothing; a turn added (Cline rewrites both arrays whole)
// adds one part to the same run holding only the new turn's messages,
// calls and results; doctor then says archived; the task folder's bytes
// are the same before and after every command; once the agent deleted the
// task, renormalize rebuilds the same run from the raw capture.
func TestSyncClineTask(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	ui, api := clineTask(t)
	task := filepath.Join(".cline", "data", "tasks", "1767225600000")
	write := func(ui, api []json.RawMessage, age time.Duration) {
		u, _ := json.Marshal(ui)
		a, _ := json.Marshal(api)
		h.Put(filepath.Join(task, "ui_messages.json"), u, age)
		h.Put(filepath.Join(task, "api_conversation_history.json"), a, age)
		h.Put(filepath.Join(task, "task_metadata.json"), []byte(`{"files_in_context":[],"model_usage":[]}`), age)
	}
	dir := filepath.Join(h.Dir, task)
	doctor := func() doctorStore {
		t.Helper()
		s, ok := doctorStores(t, h, dir)["Cline tasks"]
		if !ok {
			t.Fatal("doctor does not list the Cline tasks store")
		}
		return s
	}
	sync := func(what string, want map[string]int) map[string][]string {
		t.Helper()
		return syncWant(t, h, dir, what, want)
	}

	write(ui[:7], api[:5], time.Hour)
	if s := doctor(); !s.Found || s.Sessions != 1 || s.NotArchived != 1 || s.Provider != "cline" || s.Dir != filepath.Join(h.Dir, ".cline", "data", "tasks") {
		t.Fatalf("doctor before sync: %+v", s)
	}
	got := sync("first sync", map[string]int{"new": 1})
	runID := got["new"][0]
	sync("second sync with nothing new", nothing)

	// A turn: Cline rewrites both arrays whole.
	write(ui, api, 30*time.Minute)
	got = sync("sync after a turn", map[string]int{"grown": 1})
	if got["grown"][0] != runID {
		t.Fatalf("sync after a turn: want run %s grown: %v", runID, got)
	}
	sync("sync with nothing new", nothing)
	if s := doctor(); s.Archived != 1 || s.NotArchived != 0 {
		t.Errorf("doctor after sync: %+v", s)
	}

	checkClineRun(t, clitest.TranscriptPath(h.Stor, runID))

	// The agent deleted the task: renormalize rebuilds the run from its
	// raw capture alone, part by part as sync wrote it (each part read
	// the whole raw capture before, so every call came twice).
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	r := h.OK("renormalize", "--json", runID)
	var sum struct {
		Transcript string `json:"transcript"`
	}
	if err := json.Unmarshal([]byte(r.Out), &sum); err != nil || sum.Transcript == "" {
		t.Fatalf("renormalize --json: %v\n%v", err, r)
	}
	checkClineRun(t, sum.Transcript)
}

// checkClineRun checks the run of the task of TestSyncClineTask: two
// parts, five responses, five calls each with one result, the requests'
// output tokens once.
func checkClineRun(t *testing.T, path string) {
	t.Helper()
	clitest.Validate(t, path)
	calls, results, responses := map[string]int{}, map[string]int{}, 0
	var parts []*transcript.AgentResult
	for _, ev := range clitest.ReadRun(t, path) {
		switch ev.Type {
		case transcript.ToolCall:
			calls[ev.Tool().CallID]++
		case transcript.ToolResult:
			results[ev.Tool().CallID]++
		case transcript.MessageAssistant:
			responses++
		case transcript.StepCompleted:
			if r, err := ev.Step().AgentResult(); err == nil && r != nil {
				parts = append(parts, r)
			}
		}
	}
	if len(parts) != 2 || responses != 5 || len(calls) != 5 {
		t.Fatalf("run %s: %d parts, %d responses, %d calls (want 2, 5, 5)", path, len(parts), responses, len(calls))
	}
	for id, n := range calls {
		if n != 1 || results[id] != 1 {
			t.Errorf("call %s: %d calls, %d results (want one each)", id, n, results[id])
		}
	}
	var out int64
	for _, p := range parts {
		if p.Usage != nil && p.Usage.OutputTokens != nil {
			out += *p.Usage.OutputTokens
		}
	}
	if out != 260 {
		t.Errorf("output tokens over the parts: %d, the task's requests state 260", out)
	}
}

// TestSyncClineUIOnlyTaskGrown: a Cline task folder holding only
// ui_messages.json, archived by sync in two parts (the task grew). Each
// UI message is in the run once: the second part holds only the new
// turn's (the plugin writes the first part's conversation again at the
// new part's facts line, and sync's filter leaves it out by the
// messages' ids); renormalize gives the same; and the run's raw capture
// imported whole, as one file, holds both parts' conversation (before,
// only the last part's: the first part's, held back for its end, was
// dropped at the second part's facts line).
func TestSyncClineUIOnlyTaskGrown(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	task := filepath.Join(".cline", "data", "tasks", "1767225600000")
	dir := filepath.Join(h.Dir, task)
	// The task's ui_messages.json before and after the turn, one a line
	// (shared with plugins/cline's TestUIOnlyWholeCapture).
	versions := strings.Split(string(clitest.ReadFile(t, filepath.Join(clitest.Root, "plugins", "cline", "testdata", "ui_only_grown.jsonl"))), "\n")
	want := []string{"Run the tests", "Running them.", "Fix it", "Fixed."}
	texts := func(path string) (all []string, parts [][]string) {
		t.Helper()
		clitest.Validate(t, path)
		parts = [][]string{nil}
		for _, ev := range clitest.ReadRun(t, path) {
			if ev.Type == transcript.StepCompleted {
				parts = append(parts, nil)
			}
			if m := ev.Message(); m != nil && len(m.Blocks) > 0 && m.Blocks[0].Text != "" {
				all = append(all, m.Blocks[0].Text)
				parts[len(parts)-1] = append(parts[len(parts)-1], m.Blocks[0].Text)
			}
		}
		return all, parts[:len(parts)-1]
	}

	h.Put(filepath.Join(task, "ui_messages.json"), []byte(versions[0]), time.Hour)
	runID := syncWant(t, h, dir, "first sync", map[string]int{"new": 1})["new"][0]
	h.Put(filepath.Join(task, "ui_messages.json"), []byte(versions[1]), 30*time.Minute)
	syncWant(t, h, dir, "sync after a turn", map[string]int{"grown": 1})
	path := clitest.TranscriptPath(h.Stor, runID)
	all, parts := texts(path)
	if strings.Join(all, "|") != strings.Join(want, "|") || len(parts) != 2 || strings.Join(parts[1], "|") != "Fix it|Fixed." {
		t.Fatalf("synced run: messages %q in parts %q; want %q, the second part only the new turn", all, parts, want)
	}

	r := h.OK("renormalize", "--json", runID)
	var sum struct {
		Transcript string `json:"transcript"`
	}
	if err := json.Unmarshal([]byte(r.Out), &sum); err != nil || sum.Transcript == "" {
		t.Fatalf("renormalize --json: %v\n%v", err, r)
	}
	if all, _ := texts(sum.Transcript); strings.Join(all, "|") != strings.Join(want, "|") {
		t.Errorf("renormalized run: messages %q; want %q", all, want)
	}

	// The raw capture, read back whole into one file and imported.
	var res *transcript.AgentResult
	for _, ev := range clitest.OfType(clitest.ReadRun(t, path), transcript.StepCompleted) {
		if r, err := ev.Step().AgentResult(); err == nil && r != nil && r.Raw != nil {
			res = r // the last part's: its capture holds every part
		}
	}
	if res == nil {
		t.Fatal("the run's steps name no raw capture")
	}
	rc, err := rawfile.OpenAll(filepath.Join(h.Stor, res.Raw.Path))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	whole := filepath.Join(t.TempDir(), "whole.jsonl")
	clitest.Put(t, whole, raw, 0)
	h.OK("import", "--provider", "cline", whole)
	found := false
	for p := range clitest.StorageRuns(t, h.Stor) {
		if p == path || filepath.Base(p) == filepath.Base(sum.Transcript) {
			continue
		}
		all, _ := texts(p)
		if strings.Join(all, "|") != strings.Join(want, "|") {
			t.Errorf("imported raw capture: messages %q; want %q", all, want)
		}
		found = true
	}
	if !found {
		t.Error("the import made no run")
	}
}

// TestSyncClineSessionFork: the Cline CLI's /fork starts a session (its
// id Date.now() in milliseconds and a suffix) with the forked session's
// messages as they were, each with its ts (cline/cline 21cb8d2,
// forkCurrentSession). Synced beside the session it was forked from, the
// fork's run holds only what followed the fork: `ls --json` counts the
// forked session's tool call once, in its own run. Before, the fork's run
// held it again (3 tool calls in all instead of 2).
func TestSyncClineSessionFork(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	lines := strings.Split(string(clitest.ReadFile(t, clitest.Golden("cline", "session_fork.jsonl"))), "\n")
	fork := []byte(lines[2])
	var doc struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(fork, &doc); err != nil || len(doc.Messages) != 8 {
		t.Fatalf("session_fork.jsonl: %v, %d messages", err, len(doc.Messages))
	}
	// The forked session: the four messages the fork copied, as it wrote
	// them, under its own id, which dates it before them.
	const parentID, forkID = "1783376860000_p8pzo", "1784094124598_rruoq"
	parent, _ := json.Marshal(map[string]any{"version": 1, "updated_at": "2026-07-06T09:08:00.004Z", "agent": "lead", "sessionId": parentID, "messages": doc.Messages[:4], "system_prompt": "You are Cline."})
	h.Put(filepath.Join(".cline", "data", "sessions", parentID, parentID+".messages.json"), parent, 2*time.Hour)
	h.Put(filepath.Join(".cline", "data", "sessions", forkID, forkID+".messages.json"), fork, time.Hour)
	runs := syncNewRuns(t, h, filepath.Join(h.Dir, ".cline"), "sync", 2)
	forkRun := runs[filepath.Join(h.Dir, ".cline", "data", "sessions", forkID)]
	if forkRun == "" {
		t.Fatalf("runs %v: no run of the fork", runs)
	}
	tools, forkTools := lsTools(t, h, forkRun)
	if tools != 2 || forkTools != 1 {
		t.Errorf("ls --json: %d tool calls in all, the fork's run %d; want 2, 1", tools, forkTools)
	}
}

// TestSyncRooRewoundTask: a Roo Code task synced, then rewound (a
// checkpoint restore, an edited or deleted message: the UI's messages
// cut back, RooCodeInc/Roo-Code cb83656718 performRewind) and continued,
// its next request at the index the cut one had (golden
// roo_rewound_task). The second sync grows the run, and `usage` counts
// the three requests made: 4,250 input and 310 output tokens. Before,
// the new request at a counted index was not counted (2,700 and 240).
func TestSyncRooRewoundTask(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	lines := strings.Split(string(clitest.ReadFile(t, clitest.Golden("cline", "roo_rewound_task.jsonl"))), "\n")
	task := filepath.Join(".config", "Code", "User", "globalStorage", "rooveterinaryinc.roo-cline", "tasks", "3f2c1a7e-5b6d-4e8f-9a0b-1c2d3e4f5a6b")
	put := func(ui, api string, age time.Duration) {
		h.Put(filepath.Join(task, "ui_messages.json"), []byte(ui), age)
		h.Put(filepath.Join(task, "api_conversation_history.json"), []byte(api), age)
	}
	dir := filepath.Join(h.Dir, task)
	put(lines[2], lines[4], 2*time.Hour)
	got := syncWant(t, h, dir, "first sync", map[string]int{"new": 1})
	put(lines[7], lines[9], time.Hour)
	syncGrown(t, h, dir, "sync after the rewind", got["new"][0])
	if u := usageTotal(t, h); u.Input != 4250 || u.Output != 310 {
		t.Errorf("usage --json: %d input, %d output tokens; want 4250, 310", u.Input, u.Output)
	}
}

// TestSyncRooRewoundUIOnly: a Roo Code task folder holding only
// ui_messages.json, synced, rewound and continued (golden
// roo_ui_only_rewound), synced again: the run holds every answer, the
// one cut away and the one after the rewind at its index. Before, the
// later part wrote nothing: its messages' indices were written already.
func TestSyncRooRewoundUIOnly(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	lines := strings.Split(string(clitest.ReadFile(t, clitest.Golden("cline", "roo_ui_only_rewound.jsonl"))), "\n")
	task := filepath.Join(".config", "Code", "User", "globalStorage", "rooveterinaryinc.roo-cline", "tasks", "7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d")
	dir := filepath.Join(h.Dir, task)
	h.Put(filepath.Join(task, "ui_messages.json"), []byte(lines[2]), 2*time.Hour)
	got := syncWant(t, h, dir, "first sync", map[string]int{"new": 1})
	h.Put(filepath.Join(task, "ui_messages.json"), []byte(lines[5]), time.Hour)
	b := syncGrown(t, h, dir, "sync after the rewind", got["new"][0])
	for _, answer := range []string{"I added TestParse.", "Added an empty-input case.", "Added a nil-input case."} {
		if n := strings.Count(b, `"text":"`+answer+`"`); n != 1 {
			t.Errorf("answer %q %d times in the run; want once", answer, n)
		}
	}
}

// TestSyncClineCheckpointRestored: a Cline task restored to a checkpoint
// (golden task_checkpoint_restored: older Cline cuts the UI's messages
// back and says deleted_api_reqs, the sum of the requests it cut away).
// Synced first after the restore, the requests cut away are gone from
// the task's files and count from the sum; synced before and after, they
// counted from the files and the sum adds nothing: either way `usage`
// counts every request once, 17,962 input and 560 output tokens. Before,
// the first read lost the two requests cut away (8,942 and 210).
func TestSyncClineCheckpointRestored(t *testing.T) {
	t.Parallel()
	lines := strings.Split(string(clitest.ReadFile(t, clitest.Golden("cline", "task_checkpoint_restored.jsonl"))), "\n")
	var ui, api []json.RawMessage
	if json.Unmarshal([]byte(lines[2]), &ui) != nil || json.Unmarshal([]byte(lines[4]), &api) != nil || len(ui) != 12 || len(api) != 4 {
		t.Fatalf("task_checkpoint_restored.jsonl: %d UI messages, %d messages", len(ui), len(api))
	}
	// The task before the restore: after the checkpoint, the two
	// requests the restore's sum holds (20 in, 350 out, 600 cache
	// writes, 8,400 reads) and their answers.
	uiBefore := append(append([]json.RawMessage{}, ui[:5]...),
		json.RawMessage(`{"ts":1772445602100,"type":"say","say":"api_req_started","text":"{\"tokensIn\":8,\"tokensOut\":200,\"cacheWrites\":300,\"cacheReads\":4200,\"cost\":0.0065}"}`),
		json.RawMessage(`{"ts":1772445603000,"type":"say","say":"text","text":"Now the help text."}`),
		json.RawMessage(`{"ts":1772445603100,"type":"say","say":"api_req_started","text":"{\"tokensIn\":12,\"tokensOut\":150,\"cacheWrites\":300,\"cacheReads\":4200,\"cost\":0.0058}"}`),
		json.RawMessage(`{"ts":1772445604000,"type":"say","say":"text","text":"Done: --verbose logs more."}`))
	apiBefore := append(append([]json.RawMessage{}, api[:2]...),
		json.RawMessage(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":"The content was successfully saved to main.go."}],"ts":1772445602050}`),
		json.RawMessage(`{"role":"assistant","content":[{"type":"text","text":"Now the help text."}],"ts":1772445603000}`),
		json.RawMessage(`{"role":"user","content":[{"type":"text","text":"Go on."}],"ts":1772445603050}`),
		json.RawMessage(`{"role":"assistant","content":[{"type":"text","text":"Done: --verbose logs more."}],"ts":1772445604000}`))
	marshal := func(v []json.RawMessage) []byte {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	type version struct{ ui, api []byte }
	before, after := version{marshal(uiBefore), marshal(apiBefore)}, version{[]byte(lines[2]), []byte(lines[4])}
	for _, tt := range []struct {
		name     string
		versions []version
	}{
		{"first sync after the restore", []version{after}},
		{"synced before and after", []version{before, after}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := clitest.NewHome(t)
			task := filepath.Join(".cline", "data", "tasks", "1772445600000")
			dir := filepath.Join(h.Dir, task)
			run := ""
			for i, v := range tt.versions {
				age := time.Duration(len(tt.versions)-i) * time.Hour
				h.Put(filepath.Join(task, "ui_messages.json"), v.ui, age)
				h.Put(filepath.Join(task, "api_conversation_history.json"), v.api, age)
				if run == "" {
					run = syncWant(t, h, dir, "first sync", map[string]int{"new": 1})["new"][0]
				} else {
					syncGrown(t, h, dir, "sync after the restore", run)
				}
			}
			if u := usageTotal(t, h); u.Input != 17962 || u.Output != 560 {
				t.Errorf("usage --json: %d input, %d output tokens; want 17962, 560", u.Input, u.Output)
			}
		})
	}
}

// TestSyncClineSessionMetrics: a Cline SDK session (golden session_fork's
// own messages) synced: `usage` counts its requests' metrics once, 74,850
// input and 283 output tokens, and a second sync adds nothing. Before,
// the session had no usage.
func TestSyncClineSessionMetrics(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	lines := strings.Split(string(clitest.ReadFile(t, clitest.Golden("cline", "session_fork.jsonl"))), "\n")
	const id = "1784094124598_rruoq"
	session := filepath.Join(".cline", "data", "sessions", id)
	h.Put(filepath.Join(session, id+".messages.json"), []byte(lines[2]), time.Hour)
	dir := filepath.Join(h.Dir, session)
	syncWant(t, h, dir, "first sync", map[string]int{"new": 1})
	syncWant(t, h, dir, "second sync", nothing)
	if u := usageTotal(t, h); u.Input != 74850 || u.Output != 283 {
		t.Errorf("usage --json: %d input, %d output tokens; want 74850, 283", u.Input, u.Output)
	}
}

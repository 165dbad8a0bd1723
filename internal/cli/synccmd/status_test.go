package synccmd_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
	"github.com/twasm/twasm/transcript"
)

// lastPartStatus is the agent status of the latest archived part of a run
// transcript, read from the file itself.
func lastPartStatus(t *testing.T, evs []*transcript.Event) string {
	t.Helper()
	status := ""
	for _, ev := range evs {
		if ev.Type != transcript.StepCompleted || ev.Path != "agent" {
			continue
		}
		r, err := ev.Step().AgentResult()
		if err != nil || r == nil {
			t.Fatalf("part without an agent result at seq %d: %v", ev.Seq, err)
		}
		status = r.Status
	}
	return status
}

// A synced session with no terminal event stays open however long it is
// idle, and every view says what its log says so far (spec §7), never
// "running"; when it grows, the same run gets a part and the new status.
func TestSyncedSessionStatus(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	session := clitest.ReadFile(t, clitest.Golden("claude", "session_log.jsonl"))
	lines := bytes.SplitAfter(session, []byte("\n"))
	// Cut just after the first tool call: the log ends on a dangling
	// call, so the session so far is incomplete. Dated a week ago: idle
	// for long, still open.
	cut := 0
	for i, l := range lines {
		if bytes.Contains(l, []byte(`"tool_use"`)) {
			cut = i + 1
			break
		}
	}
	if cut == 0 {
		t.Fatal("no tool_use line in the golden session log")
	}
	h.Put(".claude/projects/p/s.jsonl", bytes.Join(lines[:cut], nil), 7*24*time.Hour)
	r := h.OK("sync")
	runID := clitest.Outcomes(r.Out)["new"][0]
	path := clitest.TranscriptPath(h.Stor, runID)

	check := func(stage, want string) {
		t.Helper()
		evs := clitest.ReadRun(t, path)
		if got := lastPartStatus(t, evs); got != want {
			t.Fatalf("%s: the part says %q, want %q", stage, got, want)
		}
		if last := evs[len(evs)-1]; last.Type == transcript.RunCompleted {
			t.Fatalf("%s: the run was ended though its session may grow", stage)
		}
		var row struct {
			RunID  string `json:"run_id"`
			Status string `json:"status"`
			Open   bool   `json:"open"`
		}
		out := h.OK("ls", "--json").Out
		if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &row); err != nil || row.RunID != runID || row.Status != want || !row.Open {
			t.Errorf("%s: ls --json %s (%v), want status %q open", stage, out, err, want)
		}
		if out := h.OK("ls", "--status", want).Out; !strings.Contains(out, runID) {
			t.Errorf("%s: ls --status %s does not list the run: %q", stage, want, out)
		}
		if out := h.OK("ls", "--status", "running").Out; strings.Contains(out, runID) {
			t.Errorf("%s: ls --status running lists the open session", stage)
		}
		tree := h.OK("tree", runID).Out
		if !strings.Contains(tree, "  "+want+"  open") || strings.Contains(tree, "running") {
			t.Errorf("%s: tree says %q", stage, tree)
		}
		view := h.OK("view", runID).Out
		if !strings.Contains(view, want+" (so far") || strings.Contains(view, "still running") {
			t.Errorf("%s: view says\n%s", stage, view)
		}
		dir := t.TempDir()
		h.OK("export", "dir", dir, runID)
		md := string(clitest.ReadFile(t, filepath.Join(dir, "runs", runID, "transcript.md")))
		if !strings.Contains(md, "| "+want+" (so far") || strings.Contains(md, "running (no run.completed") {
			t.Errorf("%s: export dir metadata:\n%s", stage, md)
		}
		page := filepath.Join(t.TempDir(), "p.html")
		h.OK("export", "html", "-o", page, runID)
		html := string(clitest.ReadFile(t, page))
		if !strings.Contains(html, ">"+want+"</span>") || !strings.Contains(html, "open: an archived session") {
			t.Errorf("%s: export html does not show %s, open", stage, want)
		}
	}
	check("dangling call", transcript.StatusIncomplete)

	// The session grows to its end: the same run, one more part, and
	// the status of the whole log.
	h.Put(".claude/projects/p/s.jsonl", session, 5*24*time.Hour)
	r = h.OK("sync")
	if got := clitest.Outcomes(r.Out)["grown"]; len(got) != 1 || got[0] != runID {
		t.Fatalf("grown: %v", r)
	}
	whole := lastPartStatus(t, clitest.ReadRun(t, path))
	if whole == transcript.StatusIncomplete {
		// session_log.jsonl itself may end open; either way the views
		// follow the latest part.
		t.Logf("the whole golden session is incomplete too")
	}
	check("grown", whole)
	clitest.Validate(t, path)

	// Deleted by the agent: nothing more can come, the run is ended with
	// that status.
	if err := os.Remove(filepath.Join(h.Dir, ".claude/projects/p/s.jsonl")); err != nil {
		t.Fatal(err)
	}
	h.OK("sync")
	evs := clitest.ReadRun(t, path)
	if last := evs[len(evs)-1]; last.Type != transcript.RunCompleted {
		t.Fatalf("deleted session: last event %s", last.Type)
	}
	out := h.OK("ls", "--json").Out
	if strings.Contains(out, `"open":true`) {
		t.Errorf("an ended run is still open: %s", out)
	}
}

// geminiVersion rewrites a Gemini CLI chat file as Gemini does after its
// first n messages: the same head (sessionId, projectHash), a new
// lastUpdated, pretty-printed, no final newline.
func geminiVersion(t *testing.T, raw []byte, n int, lastUpdated string) []byte {
	t.Helper()
	var c struct {
		SessionID   string            `json:"sessionId"`
		ProjectHash string            `json:"projectHash"`
		StartTime   string            `json:"startTime"`
		LastUpdated string            `json:"lastUpdated"`
		Messages    []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	if n > len(c.Messages) {
		t.Fatalf("%d messages, want %d", len(c.Messages), n)
	}
	c.Messages, c.LastUpdated = c.Messages[:n], lastUpdated
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Gemini CLI rewrites its chat file in place at every turn: each sync
// finds the same session (head and path) and appends only what is new to
// its one run.
func TestSyncGeminiChatRewritten(t *testing.T) {
	t.Parallel()
	fixture := filepath.Join(clitest.Root, "..", "shared", "fixtures", "gemini", "agentcmd_session_file_v0.11_read_file.json")
	raw, err := os.ReadFile(fixture)
	if err != nil {
		t.Skipf("shared fixture not available: %v", err)
	}
	h := clitest.NewHome(t)
	rel := ".gemini/tmp/cde6558/chats/session-2025-10-29T10-36-9c9a14e1.json"
	h.Put(rel, geminiVersion(t, raw, 2, "2025-10-29T10:36:30.748Z"), 2*time.Hour)
	r := h.OK("sync", "--provider", "gemini")
	runs := clitest.Outcomes(r.Out)["new"]
	if len(runs) != 1 {
		t.Fatalf("first sync: %v", r)
	}
	h.Put(rel, geminiVersion(t, raw, 3, "2025-10-29T10:36:32.339Z"), time.Hour)
	r = h.OK("sync", "--provider", "gemini", "--json")
	var o struct {
		Action string `json:"action"`
		RunID  string `json:"run_id"`
		Reason string `json:"reason"`
	}
	if err := json.Unmarshal([]byte(strings.Split(r.Out, "\n")[0]), &o); err != nil || o.Action != "grown" || o.RunID != runs[0] || !strings.Contains(o.Reason, "rewritten in place") {
		t.Fatalf("rewritten chat: %v (%v)", r, err)
	}
	if files, _ := filepath.Glob(filepath.Join(h.Stor, "transcripts", "*.jsonl")); len(files) != 1 {
		t.Errorf("%d runs, want the one run of the session", len(files))
	}
	evs := clitest.ReadRun(t, clitest.TranscriptPath(h.Stor, runs[0]))
	ids := map[string]int{}
	for _, ev := range evs {
		if m := ev.Message(); m != nil && m.ID != "" {
			ids[m.ID]++
		}
	}
	if len(ids) != 3 {
		t.Errorf("messages %v, want the chat's 3", ids)
	}
	for id, n := range ids {
		if n != 1 {
			t.Errorf("message %s archived %d times", id, n)
		}
	}
	clitest.Validate(t, clitest.TranscriptPath(h.Stor, runs[0]))
	if r := h.OK("sync", "--provider", "gemini"); !strings.Contains(r.ErrOut, "0 new, 0 grown") {
		t.Errorf("unchanged chat: %v", r)
	}
}

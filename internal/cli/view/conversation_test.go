package view_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// env is the whole environment of each command line of these tests.
var env = clitest.Plain()

// viewRun writes a transcript a person would want to read: file edits
// (Edit, apply_patch, codex file_change), a shell command that fails with
// terminal escapes and a 3 KB error, a denied and a cancelled call, and an
// agent step that ended in error with warnings, lost lines, an exit code,
// a stderr capture and a final answer no message holds.
func viewRun(t *testing.T) (storage, id string) {
	t.Helper()
	storage = t.TempDir()
	id = "0b6e8c0e-5c1e-4f7e-9d8a-1f2e3d4c5b6a"
	seq := 0
	var b strings.Builder
	ev := func(typ, path, ts, payload string) {
		seq++
		fmt.Fprintf(&b, `{"seq":%d,"run_id":"%s","type":"%s","path":"%s","iteration":0,"timestamp":"2026-01-02T10:%s.000Z","payload":%s}`+"\n",
			seq, id, typ, path, ts, payload)
	}
	call := func(ts, name, callID, kind, input string) {
		ev("tool.call", "agent", ts, fmt.Sprintf(`{"name":"%s","call_id":"%s","input":%s,"fidelity":"agent_emitted","kind":"%s"}`, name, callID, input, kind))
	}
	result := func(ts, name, callID, extra string) {
		ev("tool.result", "agent", ts, fmt.Sprintf(`{"name":"%s","call_id":"%s","fidelity":"agent_emitted"%s}`, name, callID, extra))
	}
	edit := `{"file_path":"/src/main.go","old_string":"a\nb\nc\n","new_string":"a\nB\nc\n"}`
	patch := `"*** Begin Patch\n*** Update File: src/x.go\n@@\n-foo\n+bar\n*** Add File: src/new.txt\n+hello\n*** End Patch\n"`
	longErr := strings.Repeat("e", 3000)
	ev("run.started", "", "00:00", `{"name":"view me","kind":"workflow","schema":"twasm.transcript/1","producer":{"name":"twasm","version":"test"}}`)
	ev("step.started", "agent", "00:01", `{"name":"agent","kind":"agent"}`)
	ev("message.user", "agent", "00:02", `{"role":"user","blocks":[{"type":"text","fidelity":"router","text":"fix it","origin":"prompt"}]}`)
	ev("message.assistant", "agent", "00:03", `{"role":"assistant","blocks":[{"type":"text","fidelity":"agent_emitted","text":"Editing."},`+
		`{"type":"tool_use","fidelity":"agent_emitted","tool_name":"Edit","tool_id":"c1","tool_input":`+edit+`}],"model":"m1"}`)
	call("00:04", "Edit", "c1", "edit", edit)
	result("00:05", "Edit", "c1", `,"output":"ok","status":"ok"`)
	call("00:06", "apply_patch", "c2", "edit", patch)
	result("00:07", "apply_patch", "c2", `,"output":"Success","status":"ok"`)
	call("00:08", "file_change", "c3", "edit", `{"changes":[{"path":"/src/y.go","kind":"update","diff":"@@ -1 +1 @@\n-old\n+new\n"}]}`)
	result("00:09", "file_change", "c3", `,"status":"ok"`)
	ev("tool.call", "agent", "00:10", `{"name":"Bash","call_id":"c4","input":{"command":"make test"},"fidelity":"agent_emitted","kind":"execute","command":"make test"}`)
	result("00:12", "Bash", "c4", `,"output":"\u001b[31mFAIL\u001b[0m pkg \u001b]0;title\u0007done","error":"`+longErr+`","status":"error","exit_code":2`)
	call("00:13", "Bash", "c5", "execute", `{"command":"rm -rf /"}`)
	result("00:14", "Bash", "c5", `,"error":"the user refused","status":"denied"`)
	call("00:15", "Bash", "c6", "execute", `{"command":"sleep 100"}`)
	result("00:16", "Bash", "c6", `,"error":"interrupted","status":"cancelled"`)
	stderr := "raw/" + id + "/agent.0.0.x.stderr"
	ev("step.completed", "agent", "00:17", `{"name":"agent","kind":"agent","status":"error","error":"agent error: quota","result":{"provider":"claude","status":"error","error":"quota exceeded","exit_code":3,`+
		`"final_text":"The final answer.","failed_lines":2,"warnings":["output cut at the token limit","2 line(s) lost: plugin faulted"],`+
		`"raw":{"path":"raw/`+id+`/agent.0.0.x.raw","bytes":1,"sha256":"00","stderr":"`+stderr+`"},"command":["claude","-p","fix it"],"cwd":"/work/proj"}}`)
	ev("run.completed", "", "00:18", `{"name":"view me","kind":"workflow","status":"error","error":"step agent: quota"}`)
	for _, d := range []string{"transcripts", filepath.Join("raw", id)} {
		if err := os.MkdirAll(filepath.Join(storage, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(clitest.TranscriptPath(storage, id), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	var tail strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&tail, "stderr line %d\n", i)
	}
	if err := os.WriteFile(filepath.Join(storage, filepath.FromSlash(stderr)), []byte(tail.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	clitest.Validate(t, clitest.TranscriptPath(storage, id))
	return storage, id
}

// TestViewReadsLikeAConversation: each tool call once with its result,
// edits and patches as diffs, commands as shell, long output folded,
// escapes gone, --max-output everywhere, a time on every message, the
// step's footer and final answer; --only errors keeps failed, denied and
// cancelled calls.
func TestViewReadsLikeAConversation(t *testing.T) {
	t.Parallel()
	storage, id := viewRun(t)
	out := clitest.RunOK(t, env, "--storage", storage, "view", "--max-output", "500", id).Out
	for _, want := range []string{
		"**User** · 2026-01-02 10:00:02", "**Assistant** (`m1`) · 10:00:03", // the date with the first time
		"10:00:04 · **Tool** `Edit` (edit) · ok · 1.0s · `id c1`",
		"```diff\n--- a/src/main.go\n+++ b/src/main.go\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n```",
		"```diff\n--- a/src/x.go\n+++ b/src/x.go\n@@ @@\n-foo\n+bar\n--- /dev/null\n+++ b/src/new.txt\n@@ new file @@\n+hello\n```",
		"--- a/src/y.go\n+++ b/src/y.go\n@@ -1 +1 @@\n-old\n+new",
		"```sh\n$ make test\n```", "· error · exit 2 ·", "FAIL pkg done",
		"<details><summary>Error · 1 lines, 3000 bytes</summary>", "_Output truncated: 500 of 3000 bytes shown",
		"· denied ·", "the user refused", "· cancelled ·",
		"**Final answer**\n\nThe final answer.",
		"**Result:** error · exit code 3", "quota exceeded", "warning: `output cut at the token limit`",
		"2 raw line(s) lost to a plugin fault", "command `claude -p 'fix it'` in `/work/proj`",
		"**stderr (last 10 lines):**", "stderr line 30", "**Error:** `agent error: quota`",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("view lacks %q", want)
		}
	}
	for _, lack := range []string{"\x1b", "[31m", "]0;title", "tool_use", "stderr line 20\n", strings.Repeat("e", 501)} {
		if strings.Contains(out, lack) {
			t.Errorf("view has %q", lack)
		}
	}
	if n := strings.Count(out, "`id c1`"); n != 1 {
		t.Errorf("call c1 shown %d times", n)
	}
	if n := strings.Count(out, `"old_string"`); n != 0 {
		t.Errorf("the Edit input is shown as JSON too")
	}
	if t.Failed() {
		t.Logf("view:\n%s", out)
	}

	errs := clitest.RunOK(t, env, "--storage", storage, "view", "--only", "errors", id).Out
	for _, want := range []string{"`id c4`", "`id c5`", "· denied ·", "`id c6`", "· cancelled ·", "**Result:** error"} {
		if !strings.Contains(errs, want) {
			t.Errorf("--only errors lacks %q:\n%s", want, errs)
		}
	}
	for _, lack := range []string{"`id c1`", "`id c2`", "fix it\n"} {
		if strings.Contains(errs, lack) {
			t.Errorf("--only errors has %q", lack)
		}
	}
	text := clitest.RunOK(t, env, "--storage", storage, "view", "--format", "text", "--max-output", "100", id).Out
	if strings.Contains(text, "\x1b") || strings.Contains(text, "```") || !strings.Contains(text, "$ make test") || strings.Contains(text, strings.Repeat("e", 101)) {
		t.Errorf("text view:\n%s", text)
	}
}

// TestViewShowsJSONAnswer: the answer of Claude's --output-format json
// (a result object and no message stream) is in the view.
func TestViewShowsJSONAnswer(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	for _, in := range []string{"json_result.json", "json_pretty_result.json"} {
		b, err := os.ReadFile(clitest.Golden("claude", in))
		if err != nil {
			t.Fatal(err)
		}
		var res struct {
			Result string `json:"result"`
		}
		_ = jsonUnmarshal(b, &res)
		id := clitest.Record(t, storage, "claude", clitest.Golden("claude", in))
		out := clitest.RunOK(t, env, "--storage", storage, "view", id).Out
		first := strings.SplitN(strings.TrimSpace(res.Result), "\n", 2)[0]
		if first == "" || !strings.Contains(out, first) {
			t.Errorf("%s: the answer %q is not in the view:\n%s", in, first, out)
		}
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

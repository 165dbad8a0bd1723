package views

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/viewstest"
	"github.com/twasm/twasm/transcript"
)

func TestCompact(t *testing.T) {
	tool := func(typ transcript.EventType, p *transcript.ToolPayload) *transcript.Event {
		return &transcript.Event{Seq: 5, Type: typ, Path: "review", Payload: p}
	}
	msg := func(blocks ...transcript.Block) *transcript.Event {
		return &transcript.Event{Seq: 12, Type: transcript.MessageAssistant, Path: "review", Iteration: 2,
			Payload: &transcript.MessagePayload{Role: "assistant", Blocks: blocks}}
	}
	step := func(typ transcript.EventType, p *transcript.StepPayload) *transcript.Event {
		return &transcript.Event{Seq: 1, Type: typ, Payload: p}
	}
	agentRes, _ := json.Marshal(transcript.AgentResult{Provider: "claude", Model: "opus"})
	tests := []struct {
		name string
		ev   *transcript.Event
		want string
	}{
		{"text", msg(transcript.TextBlock("hello\nworld\x1b[31m")), `#12 review[2]  message.assistant  text: "hello world"`},
		{"long", msg(transcript.TextBlock(strings.Repeat("a", 100))), `text: "` + strings.Repeat("a", 79) + `…"`},
		{"more blocks", msg(transcript.TextBlock("x"), transcript.TextBlock("y")), `text: "x" (+1 more)`},
		{"no blocks", msg(), "(no blocks)"},
		{"thinking", msg(transcript.Block{Type: transcript.BlockThinking, Thinking: "hmm"}), `thinking: "hmm"`},
		{"redacted", msg(transcript.Block{Type: transcript.BlockThinking, Redacted: true}), `thinking: (redacted)`},
		{"tool_use", msg(transcript.Block{Type: transcript.BlockToolUse, ToolName: "Bash", ToolInput: json.RawMessage(`{"a":1}`)}), `tool_use: Bash {"a":1}`},
		{"tool_result", msg(transcript.Block{Type: transcript.BlockToolResult, ToolContent: "out", IsError: true}), `tool_result: "out" (error)`},
		{"command", msg(transcript.Block{Type: transcript.BlockCommand, Command: "ls"}), `command: ls`},
		{"stream", msg(transcript.Block{Type: transcript.BlockStream, Chunk: "ch"}), `stream: "ch"`},
		{"unknown block", msg(transcript.Block{Type: "image"}), `image (unknown block)`},
		{"system prompt", msg(transcript.Block{Type: transcript.BlockText, Origin: transcript.OriginSystemPrompt, Text: "sys"}), `system_prompt: "sys"`},
		{"call command", tool(transcript.ToolCall, &transcript.ToolPayload{Name: "Bash", CallID: "c1", Command: "ls -la"}), `#5 review  tool.call  Bash $ ls -la id=c1`},
		{"call input", tool(transcript.ToolCall, &transcript.ToolPayload{Name: "Read", CallID: "c2", Input: json.RawMessage(`{"p":1}`)}), `Read {"p":1} id=c2`},
		{"result ok", tool(transcript.ToolResult, &transcript.ToolPayload{Name: "Bash", CallID: "c1", ExitCode: new(0), Output: "fine"}), `Bash ok exit=0 "fine" id=c1`},
		{"result error", tool(transcript.ToolResult, &transcript.ToolPayload{Name: "Bash", CallID: "c1", Error: "denied"}), `Bash error error: denied id=c1`},
		{"result exit", tool(transcript.ToolResult, &transcript.ToolPayload{Name: "Bash", CallID: "c1", ExitCode: new(2)}), `Bash error exit=2 id=c1`},
		{"run started", viewstest.Started("wf"), `run  run.started  "wf" twasm 0.1.0`},
		{"run completed", step(transcript.RunCompleted, &transcript.StepPayload{Status: "error", Error: "boom"}), `#1 run  run.completed  error error: boom`},
		{"completed default", step(transcript.StepCompleted, &transcript.StepPayload{}), `step.completed  ok`},
		{"agent", step(transcript.StepCompleted, &transcript.StepPayload{Kind: transcript.KindAgent, Status: "ok", Result: agentRes, Attempt: 2}), `ok claude opus attempt=2`},
		{"step started", &transcript.Event{Seq: 3, Type: transcript.StepStarted, Path: "a.b", Payload: &transcript.StepPayload{Kind: transcript.KindAgent, Name: "Pretty"}}, `#3 a.b  step.started  agent "Pretty"`},
		{"call workflow", &transcript.Event{Seq: 3, Type: transcript.StepCallWorkflowStarted, Path: "d", ChildRunID: viewstest.Child, Payload: &transcript.StepPayload{Kind: transcript.KindCallWorkflow, Name: "d"}}, `call_workflow child=cccccccc`},
		{"unknown type", &transcript.Event{Seq: 9, Type: "x.y", Payload: &transcript.RawPayload{JSON: json.RawMessage(`{"a":1}`)}}, `#9 run  x.y  (unknown type) {"a":1}`},
		{"no payload", &transcript.Event{Seq: 9, Type: "x.y"}, `#9 run  x.y`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Compact(tc.ev, false)
			contains(t, got, tc.want)
			if strings.ContainsAny(got, "\x1b\n") {
				t.Fatalf("control characters in %q", got)
			}
		})
	}
	colored := Compact(tool(transcript.ToolResult, &transcript.ToolPayload{Name: "Bash", Error: "x"}), true)
	contains(t, colored, ansiRed, ansiReset)
}

func TestFormatHelpers(t *testing.T) {
	for ms, want := range map[int64]string{850: "850ms", 3200: "3.2s", 245000: "4m05s", 3720000: "1h02m", -5: "-5ms"} {
		eq(t, FormatDuration(ms), want, "duration")
	}
	eq(t, Clip("héllo wörld", 5), "héll…", "clip")
	eq(t, ShortID("abc"), "abc", "short id")
	eq(t, fence("a ```` b"), "`````", "fence")
	eq(t, (&mdWriter{}).inline("`x`"), "`` `x` ``", "inline with backticks")
	eq(t, (&mdWriter{}).inline(""), "", "empty inline")
	eq(t, sanitize("a\x1bb\nc\x00d\x1b[2Je"), "a\nc\u2400de", "sanitize: ESC b is a sequence, NUL a control byte shown")
	eq(t, timeString(nil), "", "nil time")
}

func TestLedger(t *testing.T) {
	root, _ := fixtureTree(t)
	rows := Ledger(root)
	eq(t, len(rows), 3, "rows")
	eq(t, rows[0].Status, "ok", "status")
	eq(t, *rows[0].DurationMS, int64(1000), "duration")
	eq(t, *rows[0].ExitCode, 0, "exit")
	eq(t, rows[0].Command, "ls -la", "command")
	eq(t, rows[1].Status, StatusDangling, "dangling")
	eq(t, rows[1].Dangling, true, "dangling flag")
	eq(t, rows[2].Path, "delegate.search", "child path")
	eq(t, rows[2].Status, "error", "child status")
	eq(t, rows[2].RunID, viewstest.Child, "child run")

	// Reused call ids pair first-in first-out; a result without a call is
	// an orphan row.
	b := viewstest.NewBuilder(viewstest.Root, "").Add(viewstest.Started("wf"))
	for _, typ := range []transcript.EventType{transcript.ToolCall, transcript.ToolCall, transcript.ToolResult, transcript.ToolResult, transcript.ToolResult} {
		b.Add(viewstest.Tool(typ, "", &transcript.ToolPayload{Name: "t", CallID: "same", Status: map[bool]string{true: transcript.StatusOK}[typ == transcript.ToolResult]}))
	}
	b.Add(viewstest.Tool(transcript.ToolResult, "", &transcript.ToolPayload{Name: "x", CallID: "other"}))
	dir := t.TempDir()
	writeRun(t, dir, b)
	rows = Ledger(loadTree(t, dir, viewstest.Root))
	eq(t, len(rows), 4, "rows")
	eq(t, rows[0].Seq, uint64(2), "first call")
	eq(t, *rows[0].DurationMS, int64(2000), "first pairs with first result")
	eq(t, *rows[1].DurationMS, int64(2000), "second pairs with second result")
	eq(t, rows[2].Orphan, true, "third result is an orphan")
	eq(t, rows[3].CallID, "other", "orphan of another id")
}

func TestStats(t *testing.T) {
	root, _ := fixtureTree(t)
	st := NewStats()
	for _, n := range root.Runs() {
		if !st.Add(n.Source()) {
			t.Fatal("first Add skipped")
		}
	}
	if st.Add(root.Source()) {
		t.Fatal("a run counted twice")
	}
	eq(t, st.Runs, 2, "runs")
	eq(t, st.Events, 20, "events")
	eq(t, st.EventTypes["tool.call"], 3, "tool calls")
	eq(t, st.EventTypes["agent.heartbeat"], 1, "unknown type kept")
	eq(t, st.BlockTypes["thinking"], 1, "thinking blocks")
	eq(t, st.Tools["Bash"], 1, "Bash")
	eq(t, st.Fidelity["agent_emitted"], 3, "fidelity")
	eq(t, st.Dangling, 1, "dangling")
	eq(t, st.Malformed, 1, "malformed")
	eq(t, st.Unknown, 1, "unknown")
	eq(t, st.AgentSteps, 2, "agent steps")
	eq(t, *st.Usage["claude"].InputTokens, int64(1000), "claude input")
	eq(t, *st.Usage["codex"].OutputTokens, int64(5), "codex output")
	eq(t, st.Cost["claude"], 0.25, "claude cost")
	eq(t, st.CostUSD, 0.25, "total cost")
	eq(t, len(st.Drift), 2, "drift rows")
	eq(t, st.Drift[0], DriftRow{"claude", "2.0.1", "system/hook_response", 2}, "drift claude")
	eq(t, st.Drift[1], DriftRow{"codex", "0.50.0", "event_msg/token_count", 3}, "drift codex")
	s := Sorted(map[string]int{"b": 1, "a": 1, "c": 5})
	eq(t, s[0].Key+s[1].Key+s[2].Key, "cab", "sorted")
	if _, err := json.Marshal(st); err != nil {
		t.Fatal(err)
	}
}

func TestWriteView(t *testing.T) {
	root, _ := fixtureTree(t)
	tests := []struct {
		name       string
		opts       ViewOptions
		want, lack []string
	}{
		{"all", ViewOptions{}, []string{
			"# Run review-wf", "| Run id | `" + viewstest.Root + "` |", "| Status | ok |", "| Duration | 12.0s |",
			"provider `claude 2.0.1`", "session `sess-1`", "$0.2500", "tokens uncached in 200 / cache read 800 / out 200",
			"## review · agent · ok · 8.0s",
			"<details><summary>System prompt</summary>", "You are a careful reviewer.", "Review the diff in ./src",
			"<details><summary>Thinking</summary>", "I should list the files first.",
			"12:00:05 · **Tool** `Bash` (execute) · ok · exit 0 · 1.0s · `id c1`\n\n```sh\n$ ls -la\n```\n\n<details><summary>Output · ",
			"_Output truncated: 2000 of 4000 bytes shown",
			"**Unknown event** `agent.heartbeat` at seq 8",
			"## delegate · call_workflow · error · 1.0s", "**Error:** `search failed`",
			"### Sub-run search-wf · " + viewstest.Child[:8] + " · error", "#### delegate.search · agent · ok · 4.0s",
			"**Tool** `shell` (execute) · error · exit 1", "**Error:** `no matches`",
			"## Problems", "malformed transcript line", "tool call `Read` `c2` at seq 7 never got a result",
		}, nil},
		{"dialog only", ViewOptions{Only: Sections{Dialog: true}}, []string{"Review the diff", "The diff looks fine."},
			[]string{"Thinking", "**Tool**", "## Problems", "Unknown event"}},
		{"thinking only", ViewOptions{Only: Sections{Thinking: true}}, []string{"I should list the files first."},
			[]string{"Review the diff", "**Tool**"}},
		{"tools only", ViewOptions{Only: Sections{Tools: true}}, []string{"**Tool** `Bash`", "**Tool** `Read`", "$ grep -rn TODO ."},
			[]string{"Review the diff", "I should list"}},
		{"errors only", ViewOptions{Only: Sections{Errors: true}}, []string{"## Problems", "**Error:** `no matches`", "Unknown event"},
			[]string{"Review the diff", "**Tool** `Bash`"}},
		{"path child step", ViewOptions{Path: "delegate.search"}, []string{"## delegate.search · agent", "grep -rn TODO"},
			[]string{"## review", "Review the diff", "no step matches"}},
		{"path step", ViewOptions{Path: "review"}, []string{"## review", "Review the diff"}, []string{"Sub-run", "grep"}},
		{"path none", ViewOptions{Path: "nope"}, []string{"no step matches path `nope`"}, []string{"## review"}},
		{"link children", ViewOptions{Children: ChildrenLink}, []string{"Sub-run `" + viewstest.Child + "` (error)"}, []string{"#### delegate.search"}},
		{"no truncation", ViewOptions{MaxOutput: -1}, nil, []string{"Output truncated"}},
		{"text", ViewOptions{Format: FormatText, MaxOutput: 30}, []string{"Run review-wf\n=============", "Run id:", "[System prompt]",
			"    You are a careful reviewer.", "Tool Bash (execute) · ok · exit 0 · 1.0s · id c1", "  * tool call Read c2 at seq 7 never got a result", "Output truncated"},
			[]string{"**", "<details>", "```"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteView(&buf, root, tc.opts); err != nil {
				t.Fatal(err)
			}
			contains(t, buf.String(), tc.want...)
			lacks(t, buf.String(), tc.lack...)
		})
	}
	for _, bad := range []ViewOptions{{Format: "html"}, {Children: "deep"}} {
		if err := WriteView(&bytes.Buffer{}, root, bad); !errors.Is(err, ErrBadOption) {
			t.Errorf("%+v: err = %v", bad, err)
		}
	}
}

func TestParseSections(t *testing.T) {
	s, err := ParseSections([]string{"dialog,tools", "errors"})
	if err != nil || s != (Sections{Dialog: true, Tools: true, Errors: true}) {
		t.Fatalf("got %+v, %v", s, err)
	}
	if _, err := ParseSections([]string{"dialog,bogus"}); !errors.Is(err, ErrBadOption) {
		t.Fatalf("err = %v", err)
	}
}

func TestSelectEvents(t *testing.T) {
	root, _ := fixtureTree(t)
	count := func(o ViewOptions) int { return len(SelectEvents(root, o)) }
	eq(t, count(ViewOptions{}), 20, "all")
	eq(t, count(ViewOptions{Path: "delegate"}), 2+7, "call step and its whole child run")
	eq(t, count(ViewOptions{Path: "delegate.search"}), 5, "child step")
	eq(t, count(ViewOptions{Only: Sections{Tools: true}}), 1+5+1, "tool events and tool blocks")
	eq(t, count(ViewOptions{Only: Sections{Thinking: true}}), 1, "thinking")
	eq(t, count(ViewOptions{Only: Sections{Dialog: true}}), 3, "dialog")
	eq(t, count(ViewOptions{Only: Sections{Errors: true}}), 4, "errors: unknown, failed result, call step and child run errors")
}

func TestWriteTreeText(t *testing.T) {
	root, _ := fixtureTree(t)
	var buf bytes.Buffer
	if err := WriteTree(&buf, root, true); err != nil {
		t.Fatal(err)
	}
	plain := strings.NewReplacer(ansiReset, "", ansiBold, "", ansiRed, "", ansiGreen, "", ansiYellow, "").Replace(buf.String())
	contains(t, plain, "run "+viewstest.Root+"  review-wf  ok  12.0s  events=13 tools=2  dangling=1  problems=2",
		"├─ review  agent  ok  8.0s  claude 2.0.1 claude-sonnet-4  tools=2",
		"└─ delegate  call_workflow  error  1.0s  error: search failed",
		"   └─ run "+viewstest.Child, "      └─ search  agent  ok  4.0s  codex 0.50.0 gpt-5  tools=1")
	if err := WriteTree(failWriter{}, root, false); err == nil {
		t.Fatal("write error lost")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestStripEscapes(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                                    "plain",
		"\x1b[31merror\x1b[0m: x":                  "error: x",
		"\x1b[1;38;5;196mbold\x1b[m":               "bold",
		"\x1b]0;title\x07after":                    "after",
		"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\": "link",
		"\x1bPdcs data\x1b\\ok":                    "ok",
		"a\x1b7b\x1b8c\x1b(Bd":                     "abcd",
		"\u009b31mc1\u009b0m":                      "c1",
		"cut\x1b[31":                               "cut",
		"bad\x1b[3\nnext":                          "bad\nnext",
		"esc at end\x1b":                           "esc at end",
		"bell\x07 back\x08 del\x7f":                "bell\u2407 back\u2408 del\u2421",
		"tab\tline\ncr\r":                          "tab\tline\ncr\r",
		"if admin \u202e} \u2066x\u2069":           "if admin [U+202E]} [U+2066]x[U+2069]",
		"rlm\u200f alm\u061c c1\u0085":             "rlm[U+200F] alm[U+061C] c1[U+0085]",
		"caf\u00e9 \u00a9 \u2014 \u20ac":           "caf\u00e9 \u00a9 \u2014 \u20ac",
	} {
		eq(t, StripEscapes(in), want, in)
	}
	eq(t, Clip("\x1b[31m[31m kept\x1b[0m", 40), "[31m kept", "only real escapes go")
}

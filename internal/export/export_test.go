package export

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/twasm/twasm/internal/redact"
	"github.com/twasm/twasm/transcript"
)

const (
	rootID  = "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b"
	childID = "0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

func writeRun(t *testing.T, dir, id string, evs []*transcript.Event) string {
	t.Helper()
	var buf bytes.Buffer
	for i, ev := range evs {
		ev.Seq = uint64(i + 1)
		ev.RunID = id
		line, err := transcript.AppendEvent(nil, ev)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	p := filepath.Join(dir, id+".jsonl")
	if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func agentResult(t *testing.T) json.RawMessage {
	t.Helper()
	in, out := int64(1200), int64(80)
	b, err := json.Marshal(map[string]any{
		"provider": "claude", "model": "claude-sonnet-4-5", "session_id": "sess-1", "status": "error",
		"usage":  transcript.Usage{InputTokens: &in, OutputTokens: &out},
		"errors": []map[string]string{{"message": "529 Overloaded", "code": "overloaded_error"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixture writes a root run with one agent step (a failed tool call, a
// dangling one) and a sub-agent child run.
func fixture(t *testing.T, dangling bool) Run {
	t.Helper()
	dir := t.TempDir()
	step := func(typ transcript.EventType, s int, p *transcript.StepPayload) *transcript.Event {
		return &transcript.Event{Type: typ, Path: "work", Timestamp: at(s), Payload: p}
	}
	msg := func(typ transcript.EventType, s int, role string, blocks ...transcript.Block) *transcript.Event {
		return &transcript.Event{Type: typ, Path: "work", Timestamp: at(s), Payload: &transcript.MessagePayload{Role: role, Blocks: blocks, Model: "claude-sonnet-4-5"}}
	}
	tool := func(typ transcript.EventType, s int, p *transcript.ToolPayload) *transcript.Event {
		p.Fidelity = transcript.FidelityAgentEmitted
		return &transcript.Event{Type: typ, Path: "work", Timestamp: at(s), Payload: p}
	}
	agent := transcript.FidelityAgentEmitted
	evs := []*transcript.Event{
		{Type: transcript.RunStarted, Timestamp: at(0), Payload: &transcript.StepPayload{Name: "release", Kind: transcript.KindWorkflow, Schema: "twasm.transcript/1"}},
		step(transcript.StepStarted, 1, &transcript.StepPayload{Name: "work", Kind: transcript.KindAgent}),
		msg(transcript.MessageUser, 1, "user",
			transcript.Block{Type: transcript.BlockText, Fidelity: transcript.FidelityRouter, Text: "You are careful.", Origin: transcript.OriginSystemPrompt},
			transcript.Block{Type: transcript.BlockText, Fidelity: transcript.FidelityRouter, Text: "fix the tests", Origin: transcript.OriginPrompt}),
		msg(transcript.MessageAssistant, 3, "assistant",
			transcript.Block{Type: transcript.BlockThinking, Fidelity: agent, Thinking: "run them first"},
			transcript.Block{Type: transcript.BlockText, Fidelity: agent, Text: "Running the tests."},
			transcript.Block{Type: transcript.BlockToolUse, Fidelity: agent, ToolName: "Bash", ToolID: "t1", ToolInput: json.RawMessage(`{"command":"go test ./..."}`)}),
		tool(transcript.ToolCall, 3, &transcript.ToolPayload{Name: "Bash", CallID: "t1", Input: json.RawMessage(`{"command":"go test ./..."}`), Command: "go test ./..."}),
		tool(transcript.ToolResult, 5, &transcript.ToolPayload{Name: "Bash", CallID: "t1", Output: "FAIL", Status: "error", Error: "exit status 1", ExitCode: new(1)}),
		{Type: transcript.StepCallWorkflowStarted, Path: "work.sub", ChildRunID: childID, Timestamp: at(6), Payload: &transcript.StepPayload{Name: "sub", Kind: transcript.KindCallWorkflow}},
		{Type: transcript.StepCallWorkflowCompleted, Path: "work.sub", ChildRunID: childID, Timestamp: at(9), Payload: &transcript.StepPayload{Name: "sub", Kind: transcript.KindCallWorkflow, Status: "ok"}},
		msg(transcript.MessageAssistant, 10, "assistant", transcript.Block{Type: transcript.BlockText, Fidelity: agent, Text: "Done."}),
	}
	if dangling {
		evs = append(evs,
			msg(transcript.MessageAssistant, 11, "assistant", transcript.Block{Type: transcript.BlockToolUse, Fidelity: agent, ToolName: "Read", ToolID: "t2", ToolInput: json.RawMessage(`{}`)}),
			tool(transcript.ToolCall, 11, &transcript.ToolPayload{Name: "Read", CallID: "t2", Input: json.RawMessage(`{}`)}))
	}
	evs = append(evs,
		step(transcript.StepCompleted, 12, &transcript.StepPayload{Name: "work", Kind: transcript.KindAgent, Status: "error", Error: "529 Overloaded", Result: agentResult(t)}),
		&transcript.Event{Type: transcript.RunCompleted, Timestamp: at(13), Payload: &transcript.StepPayload{Name: "release", Kind: transcript.KindWorkflow, Status: "error", Error: "step work failed"}},
	)
	p := writeRun(t, dir, rootID, evs)
	writeRun(t, dir, childID, []*transcript.Event{
		{Type: transcript.RunStarted, ParentRunID: rootID, Timestamp: at(6), Payload: &transcript.StepPayload{Name: "sub", Kind: transcript.KindWorkflow}},
		{Type: transcript.MessageUser, Timestamp: at(6), Payload: &transcript.MessagePayload{Role: "user", Blocks: []transcript.Block{{Type: transcript.BlockText, Fidelity: agent, Text: "look around", Origin: transcript.OriginPrompt}}}},
		{Type: transcript.MessageAssistant, Timestamp: at(8), Payload: &transcript.MessagePayload{Role: "assistant", Blocks: []transcript.Block{transcript.TextBlock("nothing here")}}},
		{Type: transcript.RunCompleted, ParentRunID: rootID, Timestamp: at(9), Payload: &transcript.StepPayload{Name: "sub", Kind: transcript.KindWorkflow, Status: "ok"}},
	})
	return Run{Path: p, Dir: dir}
}

func exportSpans(t *testing.T, run Run, opts OTLPOptions) tracetest.SpanStubs {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithIDGenerator(IDGenerator{}))
	if _, err := ExportOTLP(context.Background(), tp, run, opts); err != nil {
		t.Fatal(err)
	}
	spans := exp.GetSpans() // Shutdown empties the in-memory exporter
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(spans) == 0 {
		t.Fatal("no span exported")
	}
	return spans
}

func byName(spans tracetest.SpanStubs) map[string]tracetest.SpanStub {
	m := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		m[s.Name] = s
	}
	return m
}

func attr(s tracetest.SpanStub, k string) (string, bool) {
	for _, a := range s.Attributes {
		if string(a.Key) == k {
			return a.Value.String(), true
		}
	}
	return "", false
}

func TestOTLPSpans(t *testing.T) {
	run := fixture(t, true)
	spans := exportSpans(t, run, OTLPOptions{})
	m := byName(spans)
	for _, name := range []string{"invoke_workflow release", "invoke_agent work", "chat claude-sonnet-4-5", "execute_tool Bash",
		"execute_tool Read", "call_workflow sub", "invoke_agent sub"} {
		if _, ok := m[name]; !ok {
			t.Fatalf("no span %q in %d spans", name, len(spans))
		}
	}
	root, agent, bash, call, sub := m["invoke_workflow release"], m["invoke_agent work"], m["execute_tool Bash"], m["call_workflow sub"], m["invoke_agent sub"]
	if root.Parent.IsValid() || root.SpanContext.TraceID().String() != strings.ReplaceAll(rootID, "-", "") {
		t.Fatalf("root span: parent %v, trace %s", root.Parent, root.SpanContext.TraceID())
	}
	if agent.Parent.SpanID() != root.SpanContext.SpanID() || bash.Parent.SpanID() != agent.SpanContext.SpanID() {
		t.Fatal("agent step under the run, tool under the agent step")
	}
	if sub.Parent.SpanID() != call.SpanContext.SpanID() || sub.SpanContext.TraceID() != root.SpanContext.TraceID() {
		t.Fatal("the child run hangs under the call_workflow step, in the root's trace")
	}
	if !bash.StartTime.Equal(at(3)) || !bash.EndTime.Equal(at(5)) || bash.Status.Code != codes.Error {
		t.Fatalf("tool span %v-%v status %v", bash.StartTime, bash.EndTime, bash.Status)
	}
	if v, _ := attr(agent, "gen_ai.provider.name"); v != "anthropic" {
		t.Fatalf("provider %q", v)
	}
	if v, _ := attr(agent, "gen_ai.usage.input_tokens"); v != "1200" {
		t.Fatalf("input tokens %q", v)
	}
	if v, _ := attr(agent, "gen_ai.conversation.id"); v != "sess-1" {
		t.Fatalf("conversation %q", v)
	}
	if agent.Status.Code != codes.Error || len(agent.Events) != 1 || agent.Events[0].Name != "twasm.provider_error" {
		t.Fatalf("failed step: status %v events %v", agent.Status, agent.Events)
	}
	if v, _ := attr(m["execute_tool Read"], "twasm.tool.dangling"); v != "true" {
		t.Fatal("the dangling call is not marked")
	}
	for _, s := range spans {
		for _, k := range []string{"gen_ai.tool.call.arguments", "gen_ai.output.messages", "gen_ai.input.messages"} {
			if _, ok := attr(s, k); ok {
				t.Fatalf("%s carries %s without Content", s.Name, k)
			}
		}
	}
	// Ids are derived: a second export gives the same ones.
	again := byName(exportSpans(t, run, OTLPOptions{}))
	for name, s := range m {
		if again[name].SpanContext.SpanID() != s.SpanContext.SpanID() {
			t.Fatalf("span %q got another id on a second export", name)
		}
	}
	// Content is opt-in.
	c := byName(exportSpans(t, run, OTLPOptions{Content: true}))
	if v, _ := attr(c["execute_tool Bash"], "gen_ai.tool.call.arguments"); !strings.Contains(v, "go test") {
		t.Fatalf("arguments %q", v)
	}
	if v, _ := attr(c["invoke_agent work"], "gen_ai.input.messages"); !strings.Contains(v, "fix the tests") {
		t.Fatalf("input messages %q", v)
	}
}

func TestOTLPRangeAndChildAlone(t *testing.T) {
	run := fixture(t, false)
	all := byName(exportSpans(t, run, OTLPOptions{}))
	// From the call_workflow step on (seq 7): the child, the last chat
	// span, and the run span (its run.completed is in range).
	part := exportSpans(t, run, OTLPOptions{FromSeq: 7})
	got := byName(part)
	if _, ok := got["execute_tool Bash"]; ok {
		t.Fatal("a span before the range was exported")
	}
	for _, n := range []string{"call_workflow sub", "invoke_agent sub", "invoke_workflow release"} {
		if got[n].SpanContext.SpanID() != all[n].SpanContext.SpanID() {
			t.Fatalf("%s: missing or another id in a ranged export", n)
		}
	}
	if !got["invoke_workflow release"].StartTime.Equal(at(0)) {
		t.Fatal("the run span of a ranged export starts at run.started")
	}
	// The child exported on its own finds its place in the tree.
	child := byName(exportSpans(t, Run{Path: filepath.Join(run.Dir, childID+".jsonl"), Dir: run.Dir}, OTLPOptions{}))
	s := child["invoke_agent sub"]
	if s.Parent.SpanID() != all["call_workflow sub"].SpanContext.SpanID() || s.SpanContext.TraceID() != all["invoke_workflow release"].SpanContext.TraceID() {
		t.Fatal("a child exported alone is not linked to its parent step")
	}
}

func TestNotTranscript(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.jsonl")
	if err := os.WriteFile(p, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider()
	if _, err := ExportOTLP(context.Background(), tp, Run{Path: p, Dir: dir}, OTLPOptions{}); err == nil || !strings.Contains(err.Error(), "not a twasm transcript") {
		t.Fatalf("err %v", err)
	}
	var buf bytes.Buffer
	if _, err := ExportMessages(context.Background(), &buf, Run{Path: dir, Dir: dir}, MessagesOptions{Format: FormatOpenAI}); err == nil {
		t.Fatal("a directory exported")
	}
}

func TestMessages(t *testing.T) {
	tests := []struct {
		name, format, dangling string
		isDangling             bool
		want                   []string
		refused                string
	}{
		{name: "openai", format: FormatOpenAI, want: []string{`"role":"system"`, `"tool_call_id":"t1"`, `"arguments":"{\"command\":\"go test ./...\"}"`, `FAIL\nexit status 1`}},
		{name: "anthropic", format: FormatAnthropic, want: []string{`"system":"You are careful."`, `"tool_use_id":"t1","type":"tool_result"`, `"is_error":true`}},
		{name: "dangling refused", format: FormatAnthropic, isDangling: true, refused: "t2"},
		{name: "dangling noted", format: FormatOpenAI, isDangling: true, dangling: DanglingNote, want: []string{`"tool_call_id":"t2"`, "no result was recorded"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run := fixture(t, tc.isDangling)
			var buf bytes.Buffer
			rep, err := ExportMessages(context.Background(), &buf, run, MessagesOptions{Format: tc.format, Dangling: tc.dangling})
			if tc.refused != "" {
				if !IsRefused(err) || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("err %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(buf.Bytes()) {
				t.Fatalf("not JSON: %s", buf.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(buf.String(), w) {
					t.Fatalf("no %s in %s", w, buf.String())
				}
			}
			if rep.LeftOut["thinking (the target accepts none without the provider's signature)"] != 1 {
				t.Fatalf("thinking left out unsaid: %v", rep.LeftOut)
			}
			if strings.Contains(buf.String(), "nothing here") {
				t.Fatal("the sub-agent's conversation leaked into the parent's")
			}
		})
	}
	var buf bytes.Buffer
	if _, err := ExportMessages(context.Background(), &buf, fixture(t, false), MessagesOptions{Format: FormatOpenAI, Path: "nosuch"}); !IsRefused(err) {
		t.Fatalf("unknown path: %v", err)
	}
	if _, err := ExportMessages(context.Background(), &buf, fixture(t, false), MessagesOptions{Format: "gemini"}); err == nil {
		t.Fatal("unknown format")
	}
}

func TestExportDir(t *testing.T) {
	run := fixture(t, true)
	out := t.TempDir()
	rep, err := ExportDir(context.Background(), out, run)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 2 {
		t.Fatalf("folders %v, want the run and its child", rep.Runs)
	}
	root := filepath.Join(out, "runs", rootID)
	src, _ := os.ReadFile(run.Path)
	if got, _ := os.ReadFile(filepath.Join(root, "events.jsonl")); !bytes.Equal(got, src) {
		t.Fatal("events.jsonl is not the transcript byte for byte")
	}
	md, err := os.ReadFile(filepath.Join(root, "transcript.md"))
	if err != nil {
		t.Fatal(err)
	}
	sections := []string{"# Run Transcript", "## Metadata", "## Prompt", "## Effective Role Summary", "## Skills Used",
		"## Tool Activity Summary", "## Work Notes", "## Deliverables", "## Errors and Warnings"}
	last := -1
	for _, h := range sections {
		i := strings.Index(string(md), "\n"+h+"\n")
		if h == sections[0] {
			i = strings.Index(string(md), h+"\n")
		}
		if i <= last {
			t.Fatalf("section %q missing or out of order:\n%s", h, md)
		}
		last = i
	}
	for _, w := range []string{"> fix the tests", "You are careful.", "| Bash | 1 | 0 | 1 | 0 | 0 | 0 |", "| Read | 1 | 0 | 0 | 0 | 0 | 1 |",
		"Running the tests.", "529 Overloaded", "../" + childID + "/transcript.md"} {
		if !strings.Contains(string(md), w) {
			t.Fatalf("transcript.md lacks %q:\n%s", w, md)
		}
	}
	tools := readLines(t, filepath.Join(root, "logs", "tools.jsonl"))
	if len(tools) != 2 || tools[0]["call_id"] != "t1" || tools[0]["status"] != "error" || tools[0]["exit_code"] != 1.0 || tools[1]["status"] != "dangling" {
		t.Fatalf("tools.jsonl: %v", tools)
	}
	kinds := map[string]int{}
	for _, e := range readLines(t, filepath.Join(root, "logs", "errors.jsonl")) {
		kinds[e["kind"].(string)]++
	}
	for _, k := range []string{"tool_error", "dangling_call", "provider_error", "step_error", "run_error"} {
		if kinds[k] == 0 {
			t.Fatalf("errors.jsonl has no %s: %v", k, kinds)
		}
	}
	// Exporting again replaces the folder, leaving no temporary one.
	if _, err := ExportDir(context.Background(), out, run); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(filepath.Join(out, "runs"))
	if len(ents) != 2 {
		t.Fatalf("runs/ holds %d entries after a second export", len(ents))
	}
}

func readLines(t *testing.T, p string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out = append(out, m)
	}
	return out
}

// TestHTMLTreeNestsSteps: the page's execution tree lists a step under
// the step its path extends (the call_workflow step "work.sub" under
// "work"), with the child run it calls under it, as `twasm tree` does.
func TestHTMLTreeNestsSteps(t *testing.T) {
	var buf bytes.Buffer
	if err := ExportHTML(context.Background(), &buf, []Run{fixture(t, false)}, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	nav := page[strings.Index(page, `<nav id="tree"`):strings.Index(page, "</nav>")]
	// The depth in <li> elements at which each link of the tree stands.
	depth := map[string]int{}
	d := 0
	for _, tok := range regexp.MustCompile(`<li[ >]|</li>|<a href="#[^"]*">[^<]*</a>`).FindAllString(nav, -1) {
		switch {
		case strings.HasPrefix(tok, "<li"):
			d++
		case tok == "</li>":
			d--
		default:
			depth[tok[strings.Index(tok, ">")+1:len(tok)-len("</a>")]] = d
		}
	}
	if d != 0 {
		t.Fatalf("unbalanced <li> in the tree:\n%s", nav)
	}
	want := map[string]int{"release": 1, "work": 2, "work.sub": 3, "sub": 4}
	for name, wd := range want {
		if depth[name] != wd {
			t.Fatalf("%q at depth %d, want %d (all: %v)\n%s", name, depth[name], wd, depth, nav)
		}
	}
}

// Injected context (the agent's notices, local command echoes) is noise to
// a resumed conversation: left out and counted by default, kept as user
// text on request.
func TestMessagesInjectedContext(t *testing.T) {
	agent := transcript.FidelityAgentEmitted
	user := func(s int, blocks ...transcript.Block) *transcript.Event {
		return &transcript.Event{Type: transcript.MessageUser, Path: "work", Timestamp: at(s), Payload: &transcript.MessagePayload{Role: "user", Blocks: blocks}}
	}
	injected := func(text string) transcript.Block {
		return transcript.Block{Type: transcript.BlockText, Fidelity: agent, Text: text, Origin: transcript.OriginInjected}
	}
	p := writeRun(t, t.TempDir(), rootID, []*transcript.Event{
		{Type: transcript.RunStarted, Timestamp: at(0), Payload: &transcript.StepPayload{Name: "s", Kind: transcript.KindWorkflow, Schema: "twasm.transcript/1"}},
		{Type: transcript.StepStarted, Path: "work", Timestamp: at(1), Payload: &transcript.StepPayload{Name: "work", Kind: transcript.KindAgent}},
		user(1, injected("Caveat: The messages below were generated by the user while running local commands.")),
		user(1, injected("<command-name>/clear</command-name>")),
		user(2, transcript.Block{Type: transcript.BlockText, Fidelity: agent, Text: "fix the tests", Origin: transcript.OriginPrompt}, injected("<system-reminder>be brief</system-reminder>")),
		{Type: transcript.MessageAssistant, Path: "work", Timestamp: at(3), Payload: &transcript.MessagePayload{Role: "assistant", Blocks: []transcript.Block{transcript.TextBlock("Done.")}}},
		{Type: transcript.StepCompleted, Path: "work", Timestamp: at(4), Payload: &transcript.StepPayload{Name: "work", Kind: transcript.KindAgent, Status: "ok"}},
		{Type: transcript.RunCompleted, Timestamp: at(5), Payload: &transcript.StepPayload{Name: "s", Kind: transcript.KindWorkflow, Status: "ok"}},
	})
	for _, format := range []string{FormatOpenAI, FormatAnthropic} {
		for _, keep := range []bool{false, true} {
			var buf bytes.Buffer
			rep, err := ExportMessages(context.Background(), &buf, Run{Path: p, Dir: filepath.Dir(p)}, MessagesOptions{Format: format, Injected: keep})
			if err != nil {
				t.Fatal(err)
			}
			var body struct {
				Messages []json.RawMessage `json:"messages"`
			}
			if err := json.Unmarshal(buf.Bytes(), &body); err != nil {
				t.Fatalf("%s: %v\n%s", format, err, buf.String())
			}
			out := buf.String()
			for _, s := range []string{"Caveat:", "/clear", "be brief"} {
				if strings.Contains(out, s) != keep {
					t.Errorf("%s injected=%v: %q in the output is %v\n%s", format, keep, s, !keep, out)
				}
			}
			if !strings.Contains(out, "fix the tests") || !strings.Contains(out, "Done.") {
				t.Errorf("%s injected=%v: the conversation is missing\n%s", format, keep, out)
			}
			wantMsgs, wantLeft := 2, 3
			if keep {
				wantMsgs, wantLeft = 4, 0
			}
			if len(body.Messages) != wantMsgs || rep.LeftOut["injected context (--injected keeps it)"] != wantLeft {
				t.Errorf("%s injected=%v: %d messages, left out %v\n%s", format, keep, len(body.Messages), rep.LeftOut, out)
			}
		}
	}
}

// TestExportDirMarkdownInert: transcript text in transcript.md makes no
// markup whatever renders it: no raw HTML, no link or image of its own
// (javascript: or any other), no terminal escape or bidirectional
// override; twasm's own links are kept, and the text still reads as it
// was written.
func TestExportDirMarkdownInert(t *testing.T) {
	hostile := []string{
		`<script>alert(1)</script>`,
		`<img src=x onerror=alert(2)>`,
		`[click me](javascript:alert(3))`,
		`![pixel](https://evil.example/p.png)`,
		`<javascript:alert(4)>`,
		`\[escaped\](javascript:alert(5))`,
		"[ref]: javascript:alert(6)",
		"\x1b]8;;javascript:alert(7)\x1b\\osc\x1b]8;;\x1b\\ \x1b[31mred\x1b[0m",
		"admin \u202e } \u2066 x \u2069",
		"| cell | break |",
	}
	text := strings.Join(hostile, "\n")
	one := strings.Join(hostile, " ")
	agent := transcript.FidelityAgentEmitted
	dir := t.TempDir()
	p := writeRun(t, dir, rootID, []*transcript.Event{
		{Type: transcript.RunStarted, Timestamp: at(0), Payload: &transcript.StepPayload{Name: one, Kind: transcript.KindWorkflow, Schema: "twasm.transcript/1"}},
		{Type: transcript.StepStarted, Path: "work", Timestamp: at(1), Payload: &transcript.StepPayload{Name: "work", Kind: transcript.KindAgent}},
		{Type: transcript.MessageUser, Path: "work", Timestamp: at(1), Payload: &transcript.MessagePayload{Role: "user", Blocks: []transcript.Block{
			{Type: transcript.BlockText, Fidelity: transcript.FidelityRouter, Text: text, Origin: transcript.OriginSystemPrompt},
			{Type: transcript.BlockText, Fidelity: transcript.FidelityRouter, Text: text, Origin: transcript.OriginPrompt}}}},
		{Type: transcript.MessageAssistant, Path: "work", Timestamp: at(2), Payload: &transcript.MessagePayload{Role: "assistant", Model: one, Blocks: []transcript.Block{
			{Type: transcript.BlockText, Fidelity: agent, Text: text},
			{Type: transcript.BlockToolUse, Fidelity: agent, ToolName: one, ToolID: "t1", ToolInput: json.RawMessage(`{}`)}}}},
		{Type: transcript.ToolCall, Path: "work", Timestamp: at(2), Payload: &transcript.ToolPayload{Name: one, CallID: "t1", Fidelity: agent, Kind: transcript.ToolKind("edit"), Input: json.RawMessage(`{"file_path":` + jsonString("/w/"+one) + `}`)}},
		{Type: transcript.ToolResult, Path: "work", Timestamp: at(3), Payload: &transcript.ToolPayload{Name: one, CallID: "t1", Fidelity: agent, Status: "error", Error: text}},
		{Type: transcript.StepCompleted, Path: "work", Timestamp: at(4), Payload: &transcript.StepPayload{Name: "work", Kind: transcript.KindAgent, Status: "error", Error: text}},
		{Type: transcript.RunCompleted, Timestamp: at(5), Payload: &transcript.StepPayload{Name: one, Kind: transcript.KindWorkflow, Status: "error", Error: text}},
	})
	out := t.TempDir()
	if _, err := ExportDir(context.Background(), out, Run{Path: p, Dir: dir}); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "runs", rootID, "transcript.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(md)
	// Inside a code span nothing is markup: look outside them.
	prose := regexp.MustCompile("`[^`\n]*`").ReplaceAllString(s, "")
	if strings.ContainsAny(prose, "<") || strings.ContainsAny(s, "\x1b\u202e\u2066\u2069") {
		t.Fatalf("transcript.md keeps raw HTML or a control:\n%s", s)
	}
	// Every link or image is one twasm made: an unescaped "](" follows
	// only its own targets.
	links := regexp.MustCompile(`(^|[^\\])\]\(([^)]*)\)`).FindAllStringSubmatch(prose, -1)
	for _, m := range links {
		if !regexp.MustCompile(`^(events\.jsonl|logs/(tools|errors)\.jsonl|\.\./[0-9a-f-]+/transcript\.md)$`).MatchString(m[2]) {
			t.Fatalf("transcript.md links to %q:\n%s", m[2], s)
		}
	}
	if regexp.MustCompile(`(?m)^\s*\[[^\]]*\]:`).MatchString(prose) {
		t.Fatalf("transcript.md holds a link definition:\n%s", s)
	}
	for _, want := range []string{`&lt;script&gt;alert(1)&lt;/script&gt;`, `\[click me\](javascript:alert(3))`, `\\\[escaped\\\]`, "[U+202E]", "osc", "red"} {
		if !strings.Contains(s, want) {
			t.Fatalf("transcript.md does not show %q as text:\n%s", want, s)
		}
	}
}

// An agent step with only the default name ("agent", as record and sync
// name it) is named after its agent; a step with a name of its own keeps
// it.
func TestOTLPAgentSpanNames(t *testing.T) {
	for _, c := range []struct{ step, provider, want string }{
		{"agent", "codex", "invoke_agent codex"},
		{"agent", "", "invoke_agent agent"},
		{"review", "claude", "invoke_agent review"},
	} {
		res, _ := json.Marshal(transcript.AgentResult{Provider: c.provider, Status: "ok"})
		p := writeRun(t, t.TempDir(), rootID, []*transcript.Event{
			{Type: transcript.RunStarted, Timestamp: at(0), Payload: &transcript.StepPayload{Name: "demo", Kind: transcript.KindWorkflow, Schema: "twasm.transcript/1"}},
			{Type: transcript.StepStarted, Path: c.step, Timestamp: at(1), Payload: &transcript.StepPayload{Name: c.step, Kind: transcript.KindAgent}},
			{Type: transcript.StepCompleted, Path: c.step, Timestamp: at(2), Payload: &transcript.StepPayload{Name: c.step, Kind: transcript.KindAgent, Status: "ok", Result: res}},
			{Type: transcript.RunCompleted, Timestamp: at(3), Payload: &transcript.StepPayload{Name: "demo", Kind: transcript.KindWorkflow, Status: "ok"}},
		})
		m := byName(exportSpans(t, Run{Path: p, Dir: filepath.Dir(p)}, OTLPOptions{}))
		s, ok := m[c.want]
		if !ok {
			t.Fatalf("step %q of %q: no span %q in %v", c.step, c.provider, c.want, m)
		}
		if v, _ := attr(s, "gen_ai.agent.name"); "invoke_agent "+v != c.want {
			t.Fatalf("gen_ai.agent.name %q, want it to match the span name %q", v, c.want)
		}
	}
}

// The page says each thing once: an agent step at "agent" is headed
// "agent", not "agent agent agent"; fidelity is stated for the run and
// marked only on what differs; a turn holding only tool calls (shown at
// the calls) makes no empty bar; a time shows its date the first time and
// when the date changes.
func TestHTMLWithoutNoise(t *testing.T) {
	agent := transcript.FidelityAgentEmitted
	day2 := t0.Add(26 * time.Hour)
	p := writeRun(t, t.TempDir(), rootID, []*transcript.Event{
		{Type: transcript.RunStarted, Timestamp: at(0), Payload: &transcript.StepPayload{Name: "demo", Kind: transcript.KindWorkflow, Schema: "twasm.transcript/1"}},
		{Type: transcript.StepStarted, Path: "agent", Timestamp: at(1), Payload: &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent}},
		{Type: transcript.MessageUser, Path: "agent", Timestamp: at(1), Payload: &transcript.MessagePayload{Role: "user", Blocks: []transcript.Block{
			{Type: transcript.BlockText, Fidelity: agent, Text: "list the files", Origin: transcript.OriginPrompt}}}},
		{Type: transcript.MessageAssistant, Path: "agent", Timestamp: at(2), Payload: &transcript.MessagePayload{Role: "assistant", StopReason: "tool_use", Blocks: []transcript.Block{
			{Type: transcript.BlockToolUse, Fidelity: agent, ToolName: "Bash", ToolID: "t1", ToolInput: json.RawMessage(`{"command":"ls"}`)}}}},
		{Type: transcript.ToolCall, Path: "agent", Timestamp: at(2), Payload: &transcript.ToolPayload{Name: "Bash", CallID: "t1", Fidelity: agent, Command: "ls"}},
		{Type: transcript.ToolResult, Path: "agent", Timestamp: at(3), Payload: &transcript.ToolPayload{Name: "Bash", CallID: "t1", Fidelity: agent, Output: "a.txt", Status: "ok"}},
		{Type: transcript.MessageAssistant, Path: "agent", Timestamp: day2, Payload: &transcript.MessagePayload{Role: "assistant", Blocks: []transcript.Block{
			{Type: transcript.BlockText, Fidelity: agent, Text: "one file"},
			{Type: transcript.BlockText, Fidelity: transcript.FidelityRouter, Text: "as the API saw it"}}}},
		{Type: transcript.StepCompleted, Path: "agent", Timestamp: day2, Payload: &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent, Status: "ok"}},
		{Type: transcript.RunCompleted, Timestamp: day2, Payload: &transcript.StepPayload{Name: "demo", Kind: transcript.KindWorkflow, Status: "ok"}},
	})
	var buf bytes.Buffer
	if err := ExportHTML(context.Background(), &buf, []Run{{Path: p, Dir: filepath.Dir(p)}}, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	h3 := regexp.MustCompile(`<h3>(.*?)</h3>`).FindStringSubmatch(page)
	if h3 == nil || strings.Count(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(h3[1], ""), "agent") != 1 {
		t.Fatalf("step header %q: want 'agent' once", h3)
	}
	if n := strings.Count(page, `class="fid `); n != 1 {
		t.Fatalf("%d fidelity badges, want 1 (the one block that differs)", n)
	}
	if !strings.Contains(page, "fidelity agent_emitted") {
		t.Fatal("the run's fidelity is not stated")
	}
	if n := strings.Count(page, `class="msg `); n != 2 {
		t.Fatalf("%d message bars, want 2 (the prompt and the answer; the tool-only turn is shown at its call)", n)
	}
	for _, want := range []string{">2025-03-01 12:00:01</time>", ">12:00:02</time>", ">2025-03-02 14:00:00</time>"} {
		if !strings.Contains(page, want) {
			t.Fatalf("no %q in the page's times", want)
		}
	}
}

// A redacted page (strict: a line that cannot be masked fails it) is
// still written when the last line has no LF yet and does not decode: a
// line being written, read live (twasm serve), or a killed writer's torn
// tail; nothing of it is shown. A complete line that does not decode
// still fails the page.
func TestHTMLRedactedTornTail(t *testing.T) {
	secret := "ghp_" + strings.Repeat("a1B2", 9)
	p := writeRun(t, t.TempDir(), rootID, []*transcript.Event{
		{Type: transcript.RunStarted, Timestamp: at(0), Payload: &transcript.StepPayload{Name: "demo", Kind: transcript.KindWorkflow, Schema: "twasm.transcript/1"}},
		{Type: transcript.MessageUser, Path: "agent", Timestamp: at(1), Payload: &transcript.MessagePayload{Role: "user", Blocks: []transcript.Block{
			{Type: transcript.BlockText, Fidelity: transcript.FidelityAgentEmitted, Text: "use " + secret}}}},
	})
	appendTo := func(s string) {
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	appendTo(`{"seq":3,"type":"message.assistant","payload":{"blocks":[{"type":"text","text":"` + secret)
	var buf bytes.Buffer
	if err := ExportHTML(context.Background(), &buf, []Run{{Path: p, Dir: filepath.Dir(p)}}, HTMLOptions{Redactor: redact.New()}); err != nil {
		t.Fatalf("a line being written failed the page: %v", err)
	}
	if strings.Contains(buf.String(), secret) || !strings.Contains(buf.String(), "use ") {
		t.Fatalf("the page:\n%s", buf.String())
	}
	appendTo("\n")
	if err := ExportHTML(context.Background(), io.Discard, []Run{{Path: p, Dir: filepath.Dir(p)}}, HTMLOptions{Redactor: redact.New()}); !errors.Is(err, ErrUndecodable) {
		t.Fatalf("a complete line that cannot be decoded: %v, want ErrUndecodable", err)
	}
}

// The tree's pass reads only the outline of each message and tool event
// (transcript.DecodeOutline): it must read the same lines the page's
// pass reads and skip the same ones, or a result would lose its call or
// find one the page does not show. The run holds a call line that does
// not decode (skipped by both passes: its result says its call is not
// in the transcript), a call whose id is escaped and one whose block
// type is unknown (both read by DecodeEvent's way: their results find
// them), and blocks of two fidelities (the run's is the most common, the
// other marked).
func TestHTMLTreeOutline(t *testing.T) {
	p := writeRun(t, t.TempDir(), rootID, []*transcript.Event{
		{Type: transcript.RunStarted, Timestamp: at(0), Payload: &transcript.StepPayload{Name: "demo", Kind: transcript.KindWorkflow, Schema: "twasm.transcript/1"}},
		{Type: transcript.StepStarted, Path: "agent", Timestamp: at(1), Payload: &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent}},
		{Type: transcript.MessageUser, Path: "agent", Timestamp: at(2), Payload: &transcript.MessagePayload{Role: "user", Blocks: []transcript.Block{
			{Type: transcript.BlockText, Fidelity: transcript.FidelityRouter, Text: "fix it"}}}},
		{Type: transcript.ToolCall, Path: "agent", Timestamp: at(3), Payload: &transcript.ToolPayload{Name: "Bash", CallID: "c1", Fidelity: transcript.FidelityAgentEmitted}},
	})
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		`{"seq":"5","run_id":"` + rootID + `","type":"tool.call","path":"agent","payload":{"name":"Bash","call_id":"c2","fidelity":"agent_emitted"}}`,
		`{"seq":6,"run_id":"` + rootID + `","type":"tool.call","path":"agent","payload":{"name":"Bash","call_id":"c\u0033","fidelity":"agent_emitted"}}`,
		`{"seq":7,"run_id":"` + rootID + `","type":"message.assistant","path":"agent","payload":{"blocks":[{"type":"image"},{"type":"text","text":"done","fidelity":"agent_emitted"}]}}`,
		`{"seq":8,"run_id":"` + rootID + `","type":"tool.result","path":"agent","payload":{"name":"Bash","call_id":"c1","output":"out one","fidelity":"agent_emitted"}}`,
		`{"seq":9,"run_id":"` + rootID + `","type":"tool.result","path":"agent","payload":{"name":"Bash","call_id":"c2","output":"out two","fidelity":"agent_emitted"}}`,
		`{"seq":10,"run_id":"` + rootID + `","type":"tool.result","path":"agent","payload":{"name":"Bash","call_id":"c3","output":"out three","fidelity":"agent_emitted"}}`,
	} {
		if _, err := f.WriteString(line + "\n"); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := ExportHTML(context.Background(), &buf, []Run{{Path: p, Dir: filepath.Dir(p)}}, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{"<b>Bash</b> <code>c2</code> (its call is not in the transcript)", "fidelity agent_emitted", `<span class="fid router"`, "out one", "out three", `<div class="text"> done</div>`} {
		if !strings.Contains(page, want) {
			t.Errorf("no %q in the page", want)
		}
	}
	if n := strings.Count(page, "its call is not in the transcript"); n != 1 {
		t.Errorf("%d results without their call, want 1 (c2's)", n)
	}
}

// TestHTMLReusedCallID: a provider may reuse a call id once its call is
// answered; each call's slot is its own and each result names its own
// call's (the n-th result of an id the n-th call's), so the page moves
// every result beside the call it answers, not the first result beside
// the second call.
func TestHTMLReusedCallID(t *testing.T) {
	agent := transcript.FidelityAgentEmitted
	call := func(s int, cmd string) *transcript.Event {
		return &transcript.Event{Type: transcript.ToolCall, Path: "agent", Timestamp: at(s), Payload: &transcript.ToolPayload{Name: "Bash", CallID: "call_1", Fidelity: agent, Command: cmd}}
	}
	result := func(s int, out string) *transcript.Event {
		return &transcript.Event{Type: transcript.ToolResult, Path: "agent", Timestamp: at(s), Payload: &transcript.ToolPayload{Name: "Bash", CallID: "call_1", Fidelity: agent, Output: out, HasOutput: true, Status: "ok"}}
	}
	p := writeRun(t, t.TempDir(), rootID, []*transcript.Event{
		{Type: transcript.RunStarted, Timestamp: at(0), Payload: &transcript.StepPayload{Name: "demo", Kind: transcript.KindWorkflow, Schema: "twasm.transcript/1"}},
		{Type: transcript.StepStarted, Path: "agent", Timestamp: at(1), Payload: &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent}},
		call(2, "ls"), result(3, "first output"), call(4, "pwd"), result(5, "second output"), call(6, "date"),
	})
	var buf bytes.Buffer
	if err := ExportHTML(context.Background(), &buf, []Run{{Path: p, Dir: filepath.Dir(p)}}, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	slot := "call-" + rootID + "-call_1"
	for _, want := range []string{
		`data-slot="` + slot + `"`, `data-slot="` + slot + `#2"`, `data-slot="` + slot + `#3"`,
		`data-for="` + slot + `"><div class="th">result`, `data-for="` + slot + `#2"><div class="th">result`,
	} {
		if strings.Count(page, want) != 1 {
			t.Errorf("%d of %q, want 1", strings.Count(page, want), want)
		}
	}
	if strings.Contains(page, `data-for="`+slot+`#3"`) {
		t.Error("the third call, unanswered, has a result")
	}
	first, second := strings.Index(page, `data-for="`+slot+`"`), strings.Index(page, `data-for="`+slot+`#2"`)
	if first < 0 || second < 0 || !strings.Contains(page[first:second], "first output") || !strings.Contains(page[second:], "second output") {
		t.Error("each result does not name its own call")
	}
}

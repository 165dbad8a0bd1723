package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/twasm/twasm/internal/jsonstr"
	"github.com/twasm/twasm/internal/vocab"
)

// fullEvents sets every field of every payload family.
func fullEvents() []*Event {
	res := json.RawMessage(`{"provider":"claude","status":"ok","usage":{"input_tokens":10}}`)
	return []*Event{
		{Seq: 1, RunID: runA, ParentRunID: runOld, Type: RunStarted, Timestamp: t0,
			Payload: &StepPayload{Name: "wf", Kind: KindWorkflow, Schema: Schema, Producer: &Producer{Name: "twasm", Version: "1.2.3"}}},
		{Seq: 2, RunID: runA, ChildRunID: runB, Type: StepCallWorkflowStarted, Path: "a.b", Iteration: 3, Timestamp: t0,
			Payload: &StepPayload{Name: "b", Kind: "my-kind.v2", Attempt: 2}},
		{Seq: 3, RunID: runA, Type: StepCompleted, Path: "a", Timestamp: t0,
			Payload: &StepPayload{Name: "a", Kind: KindAgent, Status: StatusError, Error: "boom", Result: res}},
		{Seq: 4, RunID: runA, Type: MessageAssistant, Path: "a", Timestamp: t0,
			Payload: &MessagePayload{Role: "assistant", Model: "m", ID: "msg_1", StopReason: "end_turn", RawLine: 7,
				Usage: &Usage{InputTokens: new(int64(5)), CacheReadTokens: new(int64(1)), CacheWriteTokens: new(int64(2)), OutputTokens: new(int64(3)), ReasoningTokens: new(int64(1))},
				Blocks: []Block{
					{Type: BlockThinking, Fidelity: FidelityAgentEmitted, Thinking: "hmm", Redacted: true},
					{Type: BlockText, Fidelity: FidelityAgentEmitted, Text: "hi"},
					{Type: BlockToolUse, Fidelity: FidelityAgentEmitted, ToolName: "bash", ToolID: "t1", ToolInput: json.RawMessage(`{"a": [1, 2.5e3, true, null, "x"]}`)},
					{Type: BlockToolUse, Fidelity: FidelityAgentEmitted, ToolName: "noop", ToolID: "t2"},
					{Type: BlockToolResult, Fidelity: FidelityAgentEmitted, ToolID: "t1", ToolContent: "out", IsError: true},
					{Type: BlockCommand, Fidelity: FidelityAgentEmitted, Command: "ls -la", ToolID: "t3"},
					{Type: BlockStream, Fidelity: FidelityAgentEmitted, Chunk: "ch"},
				}}},
		{Seq: 5, RunID: runA, Type: MessageUser, Path: "a", Timestamp: t0,
			Payload: &MessagePayload{Role: "user", Blocks: []Block{
				{Type: BlockText, Fidelity: FidelityRouter, Text: "sys", Origin: OriginSystemPrompt},
				{Type: BlockText, Fidelity: FidelityRouter, Text: "do it", Origin: OriginPrompt},
			}}},
		{Seq: 6, RunID: runA, Type: ToolCall, Path: "a", Timestamp: t0,
			Payload: &ToolPayload{Name: "bash", CallID: "t1", Input: json.RawMessage(`{"cmd":"ls"}`), Fidelity: FidelityAgentEmitted,
				Kind: ToolExecute, Command: "ls", RawLine: 9}},
		{Seq: 7, RunID: runA, Type: ToolResult, Path: "a", Timestamp: t0,
			Payload: &ToolPayload{Name: "bash", CallID: "t1", Output: "", Error: "exit 1", Fidelity: FidelityRouter,
				ExitCode: new(1), Status: StatusError}},
		{Seq: 8, RunID: runA, Type: RunCompleted, Timestamp: t0,
			Payload: &StepPayload{Name: "wf", Kind: KindWorkflow, Status: StatusCancelled}},
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	for _, e := range fullEvents() {
		t.Run(string(e.Type), func(t *testing.T) {
			b, err := AppendEvent(nil, e)
			must(t, err)
			if !json.Valid(b) || bytes.IndexByte(b, '\n') >= 0 {
				t.Fatalf("line not one valid JSON object: %s", b)
			}
			must(t, e.validate())
			d, err := DecodeEvent(b)
			must(t, err)
			b2, err := AppendEvent(nil, d)
			must(t, err)
			bytesEq(t, b2, b, "re-encoded")
			eq(t, d.Timestamp.Equal(t0), true, "timestamp")
		})
	}
}

func TestDecodeAccessors(t *testing.T) {
	evs := fullEvents()
	if evs[0].Step() == nil || evs[0].Message() != nil || evs[0].Tool() != nil {
		t.Fatal("Step accessor")
	}
	if evs[3].Message() == nil || evs[5].Tool() == nil || evs[5].Step() != nil {
		t.Fatal("Message/Tool accessors")
	}
	r, err := evs[2].Step().AgentResult()
	must(t, err)
	eq(t, r.Provider, "claude", "provider")
	eq(t, *r.Usage.InputTokens, int64(10), "input tokens")
	r, err = evs[0].Step().AgentResult()
	if r != nil || err != nil {
		t.Fatal("no result should give nil, nil")
	}
	_, err = (&StepPayload{Result: json.RawMessage(`[`)}).AgentResult()
	if err == nil {
		t.Fatal("bad result decoded")
	}
}

// TestUnknownFieldsRoundTrip: a line from a newer writer, with fields this
// version does not know at every level, is written back byte for byte.
func TestUnknownFieldsRoundTrip(t *testing.T) {
	lines := []string{
		`{"seq":4,"run_id":"r","type":"message.assistant","path":"a","iteration":0,"timestamp":"2025-05-01T12:00:00.123Z","payload":{"role":"assistant","blocks":[{"type":"text","fidelity":"agent_emitted","text":"x","citations":[{"url":"u"}],"lang":"en"}],"model":"m","service_tier":"pro","zz":{"n":1.50}},"host":"h1","trace":{"span":"s"}}`,
		`{"seq":1,"run_id":"r","type":"run.started","path":"","iteration":0,"timestamp":"2025-05-01T12:00:00.000Z","payload":{"name":"wf","kind":"workflow","schema":"twasm.transcript/1","producer":{"name":"twasm"},"inputs":{"k":"v"}}}`,
		`{"seq":6,"run_id":"r","type":"tool.call","path":"a","iteration":1,"timestamp":"2025-05-01T12:00:00.000Z","payload":{"name":"bash","call_id":"c","input":{},"fidelity":"router","sandbox":true}}`,
	}
	for _, line := range lines {
		e, err := DecodeEvent([]byte(line))
		must(t, err)
		b, err := AppendEvent(nil, e)
		must(t, err)
		bytesEq(t, b, []byte(line), "round trip")
	}
}

// TestHostileBytesRoundTrip: NUL, control bytes, ANSI escapes and invalid
// UTF-8 survive the encoder and the reader, and never break the line.
func TestHostileBytesRoundTrip(t *testing.T) {
	hostile := []string{
		"nul\x00byte",
		"\x1b[31mred\x1b[0m and \x1b]0;title\x07",
		"invalid \xff\xfe utf8 \xc3 \xed\xa0\x80 (surrogate) \xf4\x90\x80\x80",
		"line\nbreak\r\n\ttab \u2028 \u2029 \x7f",
		`quote " backslash \ slash / \udc80 literal`,
		strings.Repeat("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0e\x0f\x10\x1f", 3),
		"emoji 😀 and é",
	}
	for _, s := range hostile {
		e := mk(1, runA, MessageAssistant, "s", 0)
		e.Message().Blocks = []Block{TextBlock(s)}
		e.Message().Model = s
		e.Extra = map[string]json.RawMessage{"x": json.RawMessage(jsonstr.AppendQuoted(nil, s))}
		line := jsonl(t, e)
		body := line[:len(line)-1]
		if !json.Valid(body) || !utf8.Valid(line) || bytes.IndexByte(body, '\n') >= 0 || bytes.IndexByte(body, 0x1b) >= 0 {
			t.Fatalf("line for %q is not clean JSON: %q", s, line)
		}
		evs, problems, err := ReadAll(bytes.NewReader(line))
		must(t, err)
		if len(problems) != 0 || len(evs) != 1 {
			t.Fatalf("read back %d events, problems %v", len(evs), problems)
		}
		eq(t, evs[0].Message().Blocks[0].Text, s, "text")
		eq(t, evs[0].Message().Model, s, "model")
		x, err := jsonstr.Unquote(evs[0].Extra["x"])
		must(t, err)
		eq(t, x, s, "extra")
	}
}

func TestEncodeRejects(t *testing.T) {
	step := func(f func(*StepPayload)) *Event {
		e := mk(1, runA, StepStarted, "s", 0)
		f(e.Step())
		return e
	}
	msg := func(b Block) *Event {
		e := mk(1, runA, MessageAssistant, "s", 0)
		e.Message().Blocks = []Block{b}
		return e
	}
	tool := func(f func(*ToolPayload)) *Event {
		e := mk(1, runA, ToolCall, "s", 0)
		f(e.Tool())
		return e
	}
	env := func(f func(*Event)) *Event {
		e := mk(1, runA, MessageUser, "s", 0)
		f(e)
		return e
	}
	tests := map[string]*Event{
		"unknown type":        env(func(e *Event) { e.Type = "run.paused" }),
		"empty run id":        env(func(e *Event) { e.RunID = "" }),
		"bad path":            env(func(e *Event) { e.Path = "a..b" }),
		"path with space":     env(func(e *Event) { e.Path = "a b" }),
		"negative iteration":  env(func(e *Event) { e.Iteration = -1 }),
		"year 10000":          env(func(e *Event) { e.Timestamp = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }),
		"negative year":       env(func(e *Event) { e.Timestamp = time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC) }),
		"wrong payload":       env(func(e *Event) { e.Payload = &ToolPayload{} }),
		"nil payload":         env(func(e *Event) { e.Payload = nil }),
		"bad extra":           env(func(e *Event) { e.Extra = map[string]json.RawMessage{"k": json.RawMessage(`{`)} }),
		"step wants step":     {Type: StepStarted, RunID: "r", Payload: &MessagePayload{}},
		"tool wants tool":     {Type: ToolCall, RunID: "r", Payload: (*ToolPayload)(nil)},
		"bad step kind":       step(func(p *StepPayload) { p.Kind = "Bad Kind" }),
		"empty step kind":     step(func(p *StepPayload) { p.Kind = "" }),
		"bad status":          step(func(p *StepPayload) { p.Status = "meh" }),
		"bad result":          step(func(p *StepPayload) { p.Result = json.RawMessage(`{"a":}`) }),
		"bad step extra":      step(func(p *StepPayload) { p.Extra = map[string]json.RawMessage{"k": json.RawMessage(`nul`)} }),
		"bad block type":      msg(Block{Type: "image", Fidelity: FidelityRouter}),
		"bad block fidelity":  msg(Block{Type: BlockText}),
		"bad origin":          msg(Block{Type: BlockText, Fidelity: FidelityRouter, Origin: "mystery"}),
		"bad tool_input":      msg(Block{Type: BlockToolUse, Fidelity: FidelityRouter, ToolInput: json.RawMessage(`[1,]`)}),
		"bad block extra":     msg(Block{Type: BlockText, Fidelity: FidelityRouter, Extra: map[string]json.RawMessage{"k": json.RawMessage(`01`)}}),
		"bad message extra":   env(func(e *Event) { e.Message().Extra = map[string]json.RawMessage{"k": nil} }),
		"bad tool fidelity":   tool(func(p *ToolPayload) { p.Fidelity = "" }),
		"bad tool kind":       tool(func(p *ToolPayload) { p.Kind = "launch" }),
		"empty call id":       tool(func(p *ToolPayload) { p.CallID = "" }),
		"bad tool input":      tool(func(p *ToolPayload) { p.Input = json.RawMessage(`"unterminated`) }),
		"bad tool extra":      tool(func(p *ToolPayload) { p.Extra = map[string]json.RawMessage{"k": json.RawMessage(`tru`)} }),
		"step.completed kind": {Type: StepCompleted, RunID: "r", Payload: &StepPayload{}},
	}
	for name, e := range tests {
		t.Run(name, func(t *testing.T) {
			dst := []byte("prefix")
			out, err := AppendEvent(dst, e)
			isErr(t, err, ErrInvalidEvent)
			bytesEq(t, out, []byte("prefix"), "dst after a rejected event")
			isErr(t, e.validate(), ErrInvalidEvent)
		})
	}
}

// TestToolOutputPresence: a result the tool returned empty output for
// keeps "output":"", one without output has none (spec section 4), and
// reading a line tells them apart, so a rewrite keeps the difference.
func TestToolOutputPresence(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    ToolPayload
		want string
	}{
		{"none", ToolPayload{CallID: "c", Fidelity: FidelityRouter}, `{"name":"","call_id":"c","fidelity":"router"}`},
		{"empty", ToolPayload{CallID: "c", HasOutput: true, Fidelity: FidelityRouter}, `{"name":"","call_id":"c","output":"","fidelity":"router"}`},
		{"text", ToolPayload{CallID: "c", Output: "ok", Fidelity: FidelityRouter}, `{"name":"","call_id":"c","output":"ok","fidelity":"router"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.p
			b, err := AppendEvent(nil, &Event{Seq: 1, RunID: "r", Type: ToolResult, Payload: &p})
			must(t, err)
			line := string(b)
			i := strings.Index(line, `"payload":`)
			eq(t, line[i+len(`"payload":`):len(line)-1], tc.want, "payload")
			ev, err := DecodeEvent(b)
			must(t, err)
			got := ev.Tool()
			eq(t, got.HasOutput, tc.p.HasOutput || tc.p.Output != "", "has output")
			again, err := AppendEvent(nil, ev)
			must(t, err)
			eq(t, string(again), line, "round trip")
		})
	}
}

func TestEncodeDefaults(t *testing.T) {
	e := &Event{Seq: 1, RunID: "r", Type: ToolCall, Timestamp: time.Date(2025, 1, 2, 3, 4, 5, 678901234, time.FixedZone("x", 3600)),
		Payload: &ToolPayload{CallID: "c", Fidelity: FidelityRouter}}
	b, err := AppendEvent(nil, e)
	must(t, err)
	eq(t, string(b), `{"seq":1,"run_id":"r","type":"tool.call","path":"","iteration":0,"timestamp":"2025-01-02T02:04:05.678Z","payload":{"name":"","call_id":"c","input":{},"fidelity":"router"}}`, "tool.call defaults")
	e = &Event{Seq: 2, RunID: "r", Type: ToolResult, Payload: &ToolPayload{CallID: "c", Fidelity: FidelityRouter}}
	b, err = AppendEvent(nil, e)
	must(t, err)
	eq(t, string(b), `{"seq":2,"run_id":"r","type":"tool.result","path":"","iteration":0,"timestamp":"1970-01-01T00:00:00.000Z","payload":{"name":"","call_id":"c","fidelity":"router"}}`, "tool.result defaults: no output")
	e = &Event{Seq: 3, RunID: "r", Type: MessageAssistant, Payload: &MessagePayload{Role: "assistant", Usage: &Usage{}, Blocks: []Block{
		{Type: BlockToolResult, Fidelity: FidelityRouter}, {Type: BlockCommand, Fidelity: FidelityRouter}, {Type: BlockStream, Fidelity: FidelityRouter}, {Type: BlockThinking, Fidelity: FidelityRouter}}}}
	b, err = AppendEvent(nil, e)
	must(t, err)
	eq(t, string(b), `{"seq":3,"run_id":"r","type":"message.assistant","path":"","iteration":0,"timestamp":"1970-01-01T00:00:00.000Z","payload":{"role":"assistant","blocks":[`+
		`{"type":"tool_result","fidelity":"router","tool_id":"","tool_content":""},{"type":"command","fidelity":"router","command":""},`+
		`{"type":"stream","fidelity":"router","chunk":""},{"type":"thinking","fidelity":"router","thinking":""}]}}`, "required block fields")
	eq(t, string(appendUsage(nil, nil)), "{}", "nil usage")
}

func TestDecodeMalformed(t *testing.T) {
	env := func(payload string) string {
		return `{"seq":1,"run_id":"r","type":"%s","path":"","iteration":0,"timestamp":"2025-05-01T12:00:00.000Z","payload":` + payload + `}`
	}
	typed := func(typ, payload string) string { return strings.Replace(env(payload), "%s", typ, 1) }
	tests := map[string]string{
		"not JSON":           `{`,
		"array":              `[]`,
		"null":               `null`,
		"string":             `"x"`,
		"no type":            `{"seq":1}`,
		"seq as string":      `{"seq":"1","type":"run.started"}`,
		"negative seq":       `{"seq":-1,"type":"run.started"}`,
		"type not string":    `{"type":5}`,
		"bad escape":         `{"type":"run.st\uZZZZ"}`,
		"iteration float":    `{"type":"run.started","iteration":1.5}`,
		"bad timestamp":      `{"type":"run.started","timestamp":"yesterday"}`,
		"step payload array": typed("run.started", `[]`),
		"step name number":   typed("step.started", `{"name":1}`),
		"step producer bad":  typed("run.started", `{"producer":"x"}`),
		"message not object": typed("message.user", `"hi"`),
		"blocks not array":   typed("message.user", `{"blocks":{}}`),
		"block not object":   typed("message.user", `{"blocks":[1]}`),
		"block bad field":    typed("message.user", `{"blocks":[{"type":"text","text":7}]}`),
		"block bad bool":     typed("message.user", `{"blocks":[{"type":"text","is_error":"yes"}]}`),
		"usage bad":          typed("message.user", `{"usage":{"input_tokens":"many"}}`),
		"tool not object":    typed("tool.call", `1`),
		"tool exit code":     typed("tool.call", `{"exit_code":"x"}`),
		"tool bad field":     typed("tool.result", `{"output":{}}`),
	}
	for name, line := range tests {
		t.Run(name, func(t *testing.T) {
			e, err := DecodeEvent([]byte(line))
			isErr(t, err, ErrMalformed)
			if e != nil {
				t.Fatalf("malformed line gave event %v / warning", e)
			}
		})
	}
}

func TestDecodeNullsAndDefaults(t *testing.T) {
	line := `{"seq":1,"run_id":"r","parent_run_id":null,"type":"tool.result","path":"a","payload":{"call_id":"c","exit_code":null,"input":null,"fidelity":"router"}}`
	e, err := DecodeEvent([]byte(line))
	must(t, err)
	if e.Tool().ExitCode != nil || e.Tool().Input != nil || !e.Timestamp.IsZero() {
		t.Fatalf("nulls not treated as absent: %+v", e.Tool())
	}
	e, err = DecodeEvent([]byte(`{"type":"tool.call","payload":{"exit_code":0}}`))
	must(t, err)
	if e.Tool().ExitCode == nil || *e.Tool().ExitCode != 0 {
		t.Fatal("exit_code 0 lost")
	}
	e, err = DecodeEvent([]byte(`{"type":"run.started"}`))
	must(t, err)
	if e.Step() == nil {
		t.Fatal("missing payload should decode as empty")
	}
	e, err = DecodeEvent([]byte(`{"type":"x.y"}`))
	isErr(t, err, errAnyUnknownEventType)
	if p, ok := e.Payload.(*RawPayload); !ok || p.JSON != nil {
		t.Fatalf("payload %#v", e.Payload)
	}
	e, err = DecodeEvent([]byte(`{"type":"message.user","payload":null}`))
	must(t, err)
	if e.Message() == nil {
		t.Fatal("null payload")
	}
}

func TestUnknownTypeError(t *testing.T) {
	eq(t, (&UnknownTypeError{Type: "x", Block: -1}).Error(), `unknown event type "x"`, "message")
	eq(t, (&UnknownTypeError{Type: "x", Block: 2}).Error(), `unknown block type "x" (block 2)`, "message")
}

func TestVocabularies(t *testing.T) {
	for _, et := range eventTypes {
		if !et.valid() || et.payloadKind() == payloadUnknown {
			t.Fatalf("%s", et)
		}
	}
	eq(t, EventType("run.paused").valid(), false, "unknown event")
	eq(t, EventType("run.paused").payloadKind(), payloadUnknown, "unknown payload kind")
	for _, bt := range blockTypes {
		eq(t, bt.valid(), true, string(bt))
	}
	eq(t, BlockType("image").valid(), false, "image")
	eq(t, FidelityRouter.valid() && FidelityAgentEmitted.valid() && !Fidelity("x").valid(), true, "fidelity")
	for k, want := range map[StepKind]bool{KindAgent: true, KindWorkflow: true, "my_step-2.x": true, "": false, "Upper": false,
		"sp ace": false, StepKind(strings.Repeat("a", 65)): false} {
		eq(t, k.Valid(), want, string(k))
	}
	eq(t, StepKind("mine").builtin(), false, "custom not builtin")
	for k, want := range map[ToolKind]bool{"": true, ToolExecute: true, ToolRead: true, ToolEdit: true, ToolSearch: true,
		ToolFetch: true, ToolThink: true, ToolOther: true, "x": false} {
		eq(t, k.valid(), want, string(k))
	}
	for o, want := range map[Origin]bool{"": true, OriginPrompt: true, OriginSystemPrompt: true, OriginInjected: true, "x": false} {
		eq(t, o.valid(), want, string(o))
	}
	for s, want := range map[string]bool{"": true, StatusOK: true, StatusError: true, StatusIncomplete: true, StatusCancelled: true, "x": false} {
		eq(t, vocab.Status(s), want, s)
	}
	for p, want := range map[string]bool{"": true, "a": true, "fanout.branch_a": true, "a.": false, ".a": false,
		"a\tb": false, "a\x7fb": false, "é.ü": true} {
		eq(t, vocab.Path(p), want, p)
	}
}

func TestUsage(t *testing.T) {
	var nilU *Usage
	eq(t, nilU.IsZero(), true, "nil usage")
	u := &Usage{}
	eq(t, u.IsZero(), true, "empty usage")
	u.Add(nil)
	u.Add(&Usage{InputTokens: new(int64(3)), ReasoningTokens: new(int64(1))})
	u.Add(&Usage{InputTokens: new(int64(4)), OutputTokens: new(int64(2)), CacheReadTokens: new(int64(1)), CacheWriteTokens: new(int64(1))})
	eq(t, *u.InputTokens, int64(7), "input")
	eq(t, *u.OutputTokens, int64(2), "output")
	eq(t, *u.ReasoningTokens, int64(1), "reasoning")
	eq(t, u.IsZero(), false, "set")
	// The uncached input of the older shape is derived, so a sum over
	// old and new transcripts counts both.
	n, ok := u.Uncached()
	eq(t, n, int64(5), "uncached derived")
	eq(t, ok, true, "uncached known")
	u.Add(&Usage{InputTokens: new(int64(10)), UncachedInputTokens: new(int64(4)), CacheReadTokens: new(int64(6))})
	eq(t, *u.UncachedInputTokens, int64(9), "uncached of old and new")
	eq(t, *u.InputTokens, int64(17), "input of old and new")
	eq(t, u.Check(), error(nil), "sum agrees")
	old := &Usage{InputTokens: new(int64(10)), CacheReadTokens: new(int64(5))}
	eq(t, *old.Billed().UncachedInputTokens, int64(5), "billed")
	eq(t, old.UncachedInputTokens == nil, true, "Billed leaves its receiver")
	_, ok = (&Usage{OutputTokens: new(int64(1))}).Uncached()
	eq(t, ok, false, "no input, no uncached")
	eq(t, (&Usage{CacheWriteTokens: new(int64(1)), CacheWrite1hTokens: new(int64(2))}).Check() != nil, true, "1h above the write")
}

func TestUnquote(t *testing.T) {
	tests := []struct {
		in, want string
		bad      bool
	}{
		{in: `"plain"`, want: "plain"},
		{in: `no quotes`, want: "no quotes"},
		{in: `"\"\\\/\b\f\n\r\t"`, want: "\"\\/\b\f\n\r\t"},
		{in: `"\u00e9\u20ac"`, want: "é€"},
		{in: `"\ud83d\ude00"`, want: "😀"},
		{in: `"\udc80\udcff"`, want: "\x80\xff"},
		{in: `"\ud800x"`, want: "\xed\xa0\x80x"},         // lone high surrogate: WTF-8
		{in: `"\ud800\u0041"`, want: "\xed\xa0\x80A"},    // high surrogate then non-surrogate
		{in: `"\udc00"`, want: "\xed\xb0\x80"},           // lone low surrogate outside the escape range
		{in: "\"raw \x01 \xff\"", want: "raw \x01 \xff"}, // tolerated
		{in: `"\x"`, bad: true},
		{in: `"\u12"`, bad: true},
		{in: `"\u12G4"`, bad: true},
		{in: `"end\`, bad: true},
	}
	for _, tc := range tests {
		got, err := jsonstr.Unquote([]byte(tc.in))
		if tc.bad {
			isErr(t, err, jsonstr.ErrBadJSON)
			continue
		}
		must(t, err)
		eq(t, got, tc.want, tc.in)
	}
}

func TestAppendCompactJSON(t *testing.T) {
	tests := []struct {
		in, want string
		bad      bool
	}{
		{in: ` { "a" : [ 1 , -2.5e+3 , true , false , null , "s" ] , "b" : { } , "c" : [ ] } `, want: `{"a":[1,-2.5e+3,true,false,null,"s"],"b":{},"c":[]}`},
		{in: `"\u00e9"`, want: `"é"`},
		{in: "\"raw\x01\xff\"", want: `"raw\u0001\udcff"`},
		{in: `0`, want: `0`},
		{in: `-0.0E-1`, want: `-0.0E-1`},
		{in: `01`, bad: true},
		{in: `-`, bad: true},
		{in: `1.`, bad: true},
		{in: `1e`, bad: true},
		{in: `.5`, bad: true},
		{in: ``, bad: true},
		{in: `[1 2]`, bad: true},
		{in: `{"a" 1}`, bad: true},
		{in: `{1:2}`, bad: true},
		{in: `{"a":1`, bad: true},
		{in: `[`, bad: true},
		{in: `"abc`, bad: true},
		{in: `"\q"`, bad: true},
		{in: `tru`, bad: true},
		{in: `nulL`, bad: true},
		{in: `1 2`, bad: true},
		{in: `@`, bad: true},
		{in: strings.Repeat("[", jsonstr.MaxDepth+2), bad: true},
	}
	for _, tc := range tests {
		got, err := jsonstr.AppendCompactJSON([]byte("p"), []byte(tc.in))
		if tc.bad {
			isErr(t, err, jsonstr.ErrBadJSON)
			bytesEq(t, got, []byte("p"), "dst on error")
			continue
		}
		must(t, err)
		eq(t, string(got), "p"+tc.want, tc.in)
		if !json.Valid(got[1:]) {
			t.Fatalf("%q: output %q is not valid JSON", tc.in, got)
		}
	}
	eq(t, jsonstr.StringEnd([]byte(`"a\"b" x`), 0), 6, "StringEnd")

	// A repeated key keeps the last member, as JSON parsers do: strict
	// parsers refuse the line otherwise.
	got, err := jsonstr.AppendCompactJSON(nil, []byte(`{"a":1,"b":2,"a":{"c":1,"c":2}}`))
	must(t, err)
	eq(t, string(got), `{"b":2,"a":{"c":2}}`, "duplicate keys")
}

// A provider's JSON (AppendCompactInput) reads \udc80-\udcff as the code
// points they name, and duplicate keys are counted.
func TestAppendCompactInput(t *testing.T) {
	tests := []struct {
		in, want string
		dups     int
	}{
		{`{"t":"a\udc80b"}`, `{"t":"a\udced\udcb2\udc80b"}`, 0},
		{"{\"t\":\"a\x80b\"}", `{"t":"a\udc80b"}`, 0},
		{`{"t":"\ud83d\ude00"}`, `{"t":"😀"}`, 0},
		{`{"a":1,"a":2,"a":3}`, `{"a":3}`, 2},
		{`[{"a":1,"\u0061":2},{"a":1}]`, `[{"a":2},{"a":1}]`, 1},
		{`{}`, `{}`, 0},
	}
	for _, tc := range tests {
		got, dups, err := jsonstr.AppendCompactInput(nil, []byte(tc.in))
		must(t, err)
		eq(t, string(got), tc.want, tc.in)
		eq(t, dups, tc.dups, tc.in+" duplicates")
	}
	// Decoded as a transcript, each is the text the provider meant.
	s, err := jsonstr.Unquote([]byte(`"a\udced\udcb2\udc80b"`))
	must(t, err)
	eq(t, s, "a\xed\xb2\x80b", "decoded")
	b, err := jsonstr.AppendUnquotedJSON(nil, []byte(`"\udc80"`))
	must(t, err)
	eq(t, string(b), "\xed\xb2\x80", "AppendUnquotedJSON")
	eq(t, jsonstr.StringEnd([]byte(`"a\"`), 0), -1, "StringEnd unterminated")
}

// TestAppendTimestamp: the hand-written timestamp encoder writes what
// time.Time.AppendFormat(TimeLayout) writes, across the years a line can
// hold and at the edges of days, leap years and milliseconds (truncated,
// not rounded).
func TestAppendTimestamp(t *testing.T) {
	times := []time.Time{
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(2024, 2, 29, 12, 30, 45, 1e6-1, time.UTC),
		time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 11, 24, 19, 2, 3, 40e6, time.UTC),
	}
	rng := rand.New(rand.NewPCG(1, 2))
	lo, hi := times[0].Unix(), times[1].Unix()
	for range 10000 {
		times = append(times, time.Unix(lo+rng.Int64N(hi-lo), rng.Int64N(1e9)).UTC())
	}
	// Both sides of every day boundary (and so of every month and year)
	// of the leap-year cycle's edge cases, and the first and last
	// millisecond of a second.
	for _, y := range []int{0, 1, 4, 99, 100, 399, 400, 1600, 1899, 1900, 1969, 1970, 1999, 2000, 2024, 2100, 2400, 9999} {
		for d := time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() == y; d = d.AddDate(0, 0, 1) {
			times = append(times, d, d.Add(-time.Nanosecond), d.Add(999*time.Millisecond))
		}
	}
	for _, ts := range times {
		if ts.Year() < 0 {
			continue // the nanosecond before year 0
		}
		want := ts.UTC().Format(vocab.TimeLayout)
		if got := string(appendTimestamp(nil, ts.Unix(), ts.Nanosecond())); got != want {
			t.Fatalf("%v: got %s, want %s", ts, got, want)
		}
	}
}

// TestEncodeTimestampZones: a timestamp is written in UTC whatever its
// location, and the years outside 0000..9999 are refused at their exact
// edges, in every zone.
func TestEncodeTimestampZones(t *testing.T) {
	zones := []*time.Location{time.UTC, time.Local, time.FixedZone("east", 14*3600), time.FixedZone("west", -12*3600-30*60)}
	for _, name := range []string{"America/New_York", "Asia/Kolkata", "Australia/Lord_Howe"} {
		if loc, err := time.LoadLocation(name); err == nil {
			zones = append(zones, loc)
		}
	}
	first := time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)
	end := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, loc := range zones {
		for _, c := range []struct {
			ts time.Time
			ok bool
		}{
			{first, true}, {first.Add(-time.Nanosecond), false},
			{end.Add(-time.Nanosecond), true}, {end, false},
			{time.Date(2026, 3, 29, 1, 30, 0, 123456789, time.UTC), true},
			{time.Date(2024, 12, 31, 23, 59, 59, 999e6, time.UTC), true},
		} {
			e := &Event{Type: RunStarted, RunID: "r", Timestamp: c.ts.In(loc),
				Payload: &StepPayload{Name: "n", Kind: KindOperation}}
			line, err := AppendEvent(nil, e)
			if !c.ok {
				if !errors.Is(err, ErrInvalidEvent) {
					t.Fatalf("%v in %s: got %v, want ErrInvalidEvent", c.ts, loc, err)
				}
				continue
			}
			must(t, err)
			want := `"timestamp":"` + c.ts.UTC().Format(vocab.TimeLayout) + `"`
			if !bytes.Contains(line, []byte(want)) {
				t.Fatalf("%v in %s: %s lacks %s", c.ts, loc, line, want)
			}
		}
	}
}

// TestUsageServiceTier: a sum's tier is the one its parts state, the
// first part's when the sum held nothing, "mixed" when they differ (a
// part stating none among parts stating one included); a part of no
// figure changes nothing; Set takes a stated tier; the tier is written
// after the figures, escaped, and read back; a usage of a tier alone is
// zero (it counts no token).
func TestUsageServiceTier(t *testing.T) {
	one := func(tier string) *Usage { return &Usage{OutputTokens: new(int64(1)), ServiceTier: tier} }
	for _, c := range []struct {
		name  string
		parts []*Usage
		want  string
	}{
		{"one tier", []*Usage{one("flex"), one("flex")}, "flex"},
		{"none stated", []*Usage{one(""), one("")}, ""},
		{"two tiers", []*Usage{one("default"), one("priority")}, ServiceTierMixed},
		{"stated and not", []*Usage{one("standard"), one("")}, ServiceTierMixed},
		{"not and stated", []*Usage{one(""), one("standard")}, ServiceTierMixed},
		{"a part of no figure adds nothing", []*Usage{one("flex"), {ServiceTier: "priority"}, nil}, "flex"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var sum Usage
			for _, p := range c.parts {
				sum.Add(p)
			}
			eq(t, sum.ServiceTier, c.want, "tier")
		})
	}
	u := one("default")
	u.Set(&Usage{OutputTokens: new(int64(5))})
	eq(t, u.ServiceTier, "default", "Set without a tier keeps it")
	u.Set(&Usage{ServiceTier: "flex"})
	eq(t, u.ServiceTier, "flex", "Set takes a stated tier")
	eq(t, (&Usage{ServiceTier: "flex"}).IsZero(), true, "a tier alone counts no token")
	for _, tier := range []string{"priority", `odd "tier"`} {
		b := appendUsage(nil, one(tier))
		var back Usage
		must(t, json.Unmarshal(b, &back))
		eq(t, back.ServiceTier, tier, string(b))
	}
	eq(t, string(appendUsage(nil, &Usage{ServiceTier: "flex"})), `{"service_tier":"flex"}`, "a tier alone")
}

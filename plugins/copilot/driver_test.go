//go:build !wasip1

package copilot_test

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/copilot"
	"github.com/twasm/twasm/transcript"
)

// FuzzCopilot: arbitrary bytes never make the plugin fault, through the host
// pipeline or the bare driver (sdktest.Fuzz).
func FuzzCopilot(f *testing.F) {
	sdktest.Fuzz(f, copilot.Plugin, sdktest.Options{Provider: "copilot", Golden: goldenDir},
		[]byte(`{"type":"tool.execution_complete","data":{"toolCallId":"x","success":false,"error":"boom"}}`),
		[]byte(`{"type":"assistant.message","data":{"messageId":1,"toolRequests":[{"toolCallId":"t","name":"bash","arguments":"{\"command\":"}]}}`),
		[]byte(`{"type":"assistant.reasoning_delta","data":{"deltaContent":"\u0000"}}`+"\n"+`{"type":"session.shutdown","data":{"shutdownType":"error","modelMetrics":{"m":{"usage":{"inputTokens":"7"}}}}}`),
	)
}

// BenchmarkCopilotNative measures the plugin alone through sdk.Plugin.Driver over the
// golden inputs repeated to about 10 MB.
func BenchmarkCopilotNative(b *testing.B) {
	sdktest.Benchmark(b, copilot.Plugin, sdktest.Options{Provider: "copilot", Golden: goldenDir})
}

// TestOutcomes pins step-level decisions on small inline streams.
func TestOutcomes(t *testing.T) {
	ev := func(typ, data string) string { return `{"type":"` + typ + `","data":` + data + `}` + "\n" }
	tests := []struct {
		name, in, status, format, errText, final string
		unmapped                                 map[string]int
	}{
		{"events log with no prompt is ok (session rule)", ev("session.start", `{"sessionId":"s"}`), "ok", "events-jsonl", "", "", nil},
		{"routine shutdown ends a log ok", ev("session.shutdown", `{"shutdownType":"routine"}`), "ok", "events-jsonl", "", "", nil},
		{"other shutdown is an error", ev("session.shutdown", `{"shutdownType":"error","errorReason":"crashed"}`), "error", "events-jsonl", "crashed", "", nil},
		{"result exit code wins over shutdown", ev("session.shutdown", `{"shutdownType":"routine"}`) + `{"type":"result","exitCode":2}`, "error", "json", "copilot exited with code 2", "", nil},
		{"result before shutdown stands", `{"type":"result","exitCode":0}` + "\n" + ev("session.shutdown", `{"shutdownType":"error"}`), "ok", "json", "", "", nil},
		{"session error alone", ev("session.error", `{"errorType":"auth","message":"Not authenticated"}`), "error", "events-jsonl", "Not authenticated (auth)", "", nil},
		{"rate limit before a routine shutdown is an error", ev("user.message", `{"content":"hi"}`) + ev("session.error", `{"errorType":"rate_limit","message":"Too many requests","statusCode":429}`) + ev("session.shutdown", `{"shutdownType":"routine"}`), "error", "events-jsonl", "Too many requests (rate_limit, 429)", "", nil},
		{"an answer after an error makes it ok", ev("user.message", `{"content":"hi"}`) + ev("session.error", `{"errorType":"rate_limit","message":"slow down"}`) + ev("assistant.message", `{"messageId":"m","content":"hello"}`) + ev("session.shutdown", `{"shutdownType":"routine"}`), "ok", "events-jsonl", "", "hello", nil},
		{"unanswered prompt before shutdown is incomplete", ev("user.message", `{"content":"hi"}`) + ev("abort", `{"reason":"user_initiated"}`) + ev("session.shutdown", `{"shutdownType":"routine"}`), "incomplete", "events-jsonl", "the log ends on a prompt that got no answer", "", nil},
		{"dangling call before shutdown is incomplete", ev("user.message", `{"content":"hi"}`) + ev("assistant.message", `{"messageId":"m","content":"looking","toolRequests":[{"toolCallId":"c","name":"bash","arguments":{"command":"ls"}}]}`) + ev("session.shutdown", `{"shutdownType":"routine"}`), "incomplete", "events-jsonl", "the log ends on a tool call without a result", "looking", nil},
		{"deltas without final message", ev("assistant.message_delta", `{"messageId":"m","deltaContent":"par"}`) + ev("assistant.message_delta", `{"messageId":"m","deltaContent":"tial"}`), "incomplete", "json", "", "", nil},
		{"unknown types are counted", ev("subagent.started", `{}`) + "garbage\n[1]\n{}", "ok", "events-jsonl", "", "", map[string]int{"subagent.started": 1, "non_json": 1, "non_object": 1, "(no type)": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := plugintest.Run(t, copilot.Plugin, []byte(tt.in), normalize.Options{Provider: "copilot"}).Result
			if res.Status != tt.status || res.Format != tt.format || res.Error != tt.errText || res.FinalText != tt.final {
				t.Errorf("status, format, error, final = %q, %q, %q, %q; want %q, %q, %q, %q",
					res.Status, res.Format, res.Error, res.FinalText, tt.status, tt.format, tt.errText, tt.final)
			}
			if !maps.Equal(res.Unmapped, tt.unmapped) {
				t.Errorf("unmapped = %v, want %v", res.Unmapped, tt.unmapped)
			}
			if res.FailedLines != 0 {
				t.Errorf("failed lines %d: %q", res.FailedLines, res.Warnings)
			}
		})
	}
}

// TestModelSources: the model is read from every event that names one;
// session.shutdown's currentModel (the model at the end) wins like a
// model_change, the others serve when nothing else names one.
func TestModelSources(t *testing.T) {
	ev := func(typ, data string) string { return `{"type":"` + typ + `","data":` + data + `}` + "\n" }
	for _, tt := range []struct{ name, in, want string }{
		{"tools_updated", ev("session.tools_updated", `{"model":"gpt-5-mini"}`), "gpt-5-mini"},
		{"model.call_start", ev("model.call_start", `{"model":"claude-sonnet-4.5"}`), "claude-sonnet-4.5"},
		{"assistant.usage", ev("assistant.usage", `{"model":"gpt-4.1","inputTokens":3}`), "gpt-4.1"},
		{"shutdown currentModel wins", ev("session.start", `{"sessionId":"s","selectedModel":"a"}`) + ev("session.shutdown", `{"shutdownType":"routine","currentModel":"b","modelMetrics":{"a":{}}}`), "b"},
		{"auto mode resolves the model", ev("session.model_change", `{"newModel":"auto"}`) + ev("session.auto_mode_resolved", `{"chosenModel":"gpt-5-mini"}`), "gpt-5-mini"},
		{"auto is no model", ev("session.start", `{"sessionId":"s","selectedModel":"claude-haiku-4.5"}`) + ev("session.model_change", `{"newModel":"auto"}`), "claude-haiku-4.5"},
		{"shutdown modelMetrics key", ev("session.shutdown", `{"shutdownType":"routine","modelMetrics":{"claude-opus-4.5":{"usage":{"inputTokens":1}}}}`), "claude-opus-4.5"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := plugintest.Run(t, copilot.Plugin, []byte(tt.in), normalize.Options{Provider: "copilot"}).Result
			if res.Model != tt.want {
				t.Errorf("model %q, want %q", res.Model, tt.want)
			}
			if len(res.Unmapped) != 0 {
				t.Errorf("unmapped %v", res.Unmapped)
			}
		})
	}
}

// TestCutToolCallDelta: a stream cut while a tool call streams still
// records the call, dangling, once its id and name are known (spec
// §6.12); a call whose request arrived whole is not reported twice.
func TestCutToolCallDelta(t *testing.T) {
	in := `{"type":"assistant.message_delta","data":{"messageId":"m","deltaContent":"Running it."},"ephemeral":true}
{"type":"assistant.tool_call_delta","data":{"toolCallId":"c0","toolName":"view","inputDelta":"{\"path\":\"a\"}"},"ephemeral":true}
{"type":"assistant.tool_call_delta","data":{"toolCallId":"c1","toolName":"bash","inputDelta":"{\"command\":"},"ephemeral":true}
{"type":"assistant.tool_call_delta","data":{"toolCallId":"c1","inputDelta":"\"ls -la\"}"},"ephemeral":true}
{"type":"assistant.tool_call_delta","data":{"toolCallId":"c2","toolName":"bash","inputDelta":"{\"comm"},"ephemeral":true}
{"type":"assistant.tool_call_delta","data":{"toolCallId":"c3","inputDelta":"{"},"ephemeral":true}
{"type":"tool.execution_start","data":{"toolCallId":"c0","toolName":"view","arguments":{"path":"a"}}}
`
	o := plugintest.Run(t, copilot.Plugin, []byte(in), normalize.Options{Provider: "copilot"})
	var calls []string
	var blocks int
	for _, it := range o.Sink.Items {
		switch it.Event.Type {
		case transcript.ToolCall:
			tp := it.Event.Tool()
			calls = append(calls, tp.CallID+" "+tp.Name+" "+string(tp.Input)+" "+tp.Command)
		case transcript.MessageAssistant:
			for _, b := range it.Event.Message().Blocks {
				if b.Type == transcript.BlockToolUse {
					blocks++
				}
			}
		}
	}
	want := []string{`c0 view {"path":"a"} `, `c1 bash {"command":"ls -la"} ls -la`, `c2 bash "{\"comm" `}
	if strings.Join(calls, "|") != strings.Join(want, "|") {
		t.Errorf("calls %q, want %q", calls, want)
	}
	if blocks != 2 {
		t.Errorf("%d tool_use blocks, want 2 (c1, c2)", blocks)
	}
	if res := o.Result; res.Status != "incomplete" || strings.Join(res.Dangling, ",") != "c0,c1,c2" {
		t.Errorf("status %q dangling %v", res.Status, res.Dangling)
	}
}

// TestFormatHint: the host's format hint names the format of a stream
// that cannot tell (stdout cut before any ephemeral event or result).
func TestFormatHint(t *testing.T) {
	in := `{"type":"session.start","data":{"sessionId":"s"}}`
	for _, tt := range []struct{ hint, want string }{{"", "events-jsonl"}, {"json", "json"}, {"events-jsonl", "events-jsonl"}, {"bogus", "events-jsonl"}} {
		var sink normalize.Collector
		res, err := normalize.Run(context.Background(), normalize.NativeInstance(copilot.Plugin), strings.NewReader(in), &sink, normalize.Options{Provider: "copilot", Format: tt.hint})
		if err != nil {
			t.Fatal(err)
		}
		if res.Format != tt.want {
			t.Errorf("hint %q: format %q, want %q", tt.hint, res.Format, tt.want)
		}
	}
}

// TestDeltasThenMessageWriteTextOnce pins the dedup rule: deltas and the
// final message of one messageId give one message with one text block,
// and a late delta or a replay of the message adds nothing.
func TestDeltasThenMessageWriteTextOnce(t *testing.T) {
	in := `{"type":"assistant.message_delta","data":{"messageId":"m","deltaContent":"Hel"}}
{"type":"assistant.message_delta","data":{"messageId":"m","deltaContent":"lo"}}
{"type":"assistant.message","data":{"messageId":"m","content":"Hello","toolRequests":[{"toolCallId":"c1","name":"bash","arguments":"{\"command\":\"ls\"}"}]}}
{"type":"tool.execution_start","data":{"toolCallId":"c1","toolName":"bash","arguments":{"command":"ls"}}}
{"type":"assistant.message_delta","data":{"messageId":"m","deltaContent":"late"}}
{"type":"assistant.message","data":{"messageId":"m","content":"Hello","toolRequests":[{"toolCallId":"c1","name":"bash","arguments":{"command":"ls"}}]}}
`
	sink := plugintest.Run(t, copilot.Plugin, []byte(in), normalize.Options{Provider: "copilot"}).Sink
	var msgs, calls int
	for _, it := range sink.Items {
		switch it.Event.Type {
		case transcript.MessageAssistant:
			msgs++
			bs := it.Event.Message().Blocks
			if len(bs) != 2 || bs[0].Text != "Hello" || bs[1].ToolID != "c1" {
				t.Errorf("blocks = %+v", bs)
			}
		case transcript.ToolCall:
			calls++
			if tp := it.Event.Tool(); tp.Command != "ls" || string(tp.Input) != `{"command":"ls"}` {
				t.Errorf("call = %+v", tp)
			}
		}
	}
	if msgs != 1 || calls != 1 {
		t.Errorf("messages, calls = %d, %d; want 1, 1", msgs, calls)
	}
}

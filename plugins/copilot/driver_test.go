package copilot_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/normalize"
	"github.com/twasm/twasm/plugins/copilot"
	"github.com/twasm/twasm/transcript"
)

// goldenInputs returns the raw inputs of the golden cases.
func goldenInputs(tb testing.TB) [][]byte {
	m, err := filepath.Glob(filepath.Join(goldenDir, "*"))
	if err != nil {
		tb.Fatal(err)
	}
	var out [][]byte
	for _, f := range m {
		if strings.HasSuffix(f, ".golden.jsonl") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, b)
	}
	if len(out) == 0 {
		tb.Fatal("no golden inputs in", goldenDir)
	}
	return out
}

// run normalizes raw natively through the host pipeline.
func run(tb testing.TB, raw []byte) (*transcript.AgentResult, *normalize.Collector) {
	tb.Helper()
	var sink normalize.Collector
	res, err := normalize.Run(context.Background(), normalize.NativeInstance(copilot.Plugin), bytes.NewReader(raw), &sink, normalize.Options{Provider: "copilot"})
	if err != nil {
		tb.Fatal(err)
	}
	return res, &sink
}

// FuzzCopilot: arbitrary bytes never make the plugin fault (a panic would
// be a StatusFatal and count the lines as failed), and every event the
// host assembles from its records is a valid transcript line.
func FuzzCopilot(f *testing.F) {
	for _, in := range goldenInputs(f) {
		f.Add(in)
	}
	f.Add([]byte(`{"type":"tool.execution_complete","data":{"toolCallId":"x","success":false,"error":"boom"}}`))
	f.Add([]byte(`{"type":"assistant.message","data":{"messageId":1,"toolRequests":[{"toolCallId":"t","name":"bash","arguments":"{\"command\":"}]}}`))
	f.Add([]byte(`{"type":"assistant.reasoning_delta","data":{"deltaContent":"\u0000"}}` + "\n" + `{"type":"session.shutdown","data":{"shutdownType":"error","modelMetrics":{"m":{"usage":{"inputTokens":"7"}}}}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		res, sink := run(t, raw)
		if res.FailedLines != 0 {
			t.Fatalf("failed lines %d: %q", res.FailedLines, res.Warnings)
		}
		for i, it := range sink.Items {
			if it.Event == nil {
				continue
			}
			ev := *it.Event
			ev.Seq = uint64(i + 1)
			ev.RunID = "6f1443c9-0000-4000-8000-000000000000"
			if _, err := transcript.MarshalEvent(&ev); err != nil {
				t.Fatalf("event %d: %v", i, err)
			}
		}
	})
}

// BenchmarkCopilotNative measures the plugin alone through sdk.Driver (no
// host assembly) over the golden inputs repeated to about 10 MB.
func BenchmarkCopilotNative(b *testing.B) {
	var corpus []byte
	ins := goldenInputs(b)
	for len(corpus) < 10<<20 {
		for _, in := range ins {
			corpus = append(corpus, in...)
			if len(in) > 0 && in[len(in)-1] != '\n' {
				corpus = append(corpus, '\n')
			}
		}
	}
	bs := batches(corpus)
	d := sdk.NewDriver(copilot.Plugin)
	b.SetBytes(int64(len(corpus)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		drive(b, d, bs)
	}
}

// batches cuts raw into driver batches the way the host does: blank lines
// are skipped, every other line is indexed (an empty tape when it is not
// JSON).
func batches(raw []byte) [][]byte {
	var out [][]byte
	var cur []byte
	n := 0
	flush := func() {
		if n > 0 {
			out = append(out, append(abi.AppendBatchHeader(nil, n), cur...))
		}
		cur, n = nil, 0
	}
	for i, line := range bytes.Split(raw, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		toks, ok := abi.BuildTape(nil, line)
		if !ok {
			toks = nil
		}
		if n == abi.MaxBatchLines || len(cur)+abi.BatchLineSize(len(line), len(toks)) > abi.MaxBatchBytes {
			flush()
		}
		cur = abi.AppendBatchLine(cur, i+1, line, toks)
		n++
	}
	flush()
	return out
}

// drive runs one stream through the driver; a fatal status fails.
func drive(tb testing.TB, d *sdk.Driver, bs [][]byte) {
	if st, msg := d.Begin([]byte(`{"provider":"copilot"}`)); st != abi.StatusOK {
		tb.Fatalf("begin: %d %s", st, msg)
	}
	for _, b := range bs {
		if st, msg := d.Feed(b); st == abi.StatusFatal {
			tb.Fatalf("feed: %s", msg)
		}
	}
	if st, msg := d.End(); st == abi.StatusFatal {
		tb.Fatalf("end: %s", msg)
	}
}

// TestOutcomes pins step-level decisions on small inline streams.
func TestOutcomes(t *testing.T) {
	ev := func(typ, data string) string { return `{"type":"` + typ + `","data":` + data + `}` + "\n" }
	tests := []struct {
		name, in, status, format, errText, final string
		unmapped                                 map[string]int
	}{
		{"events log without shutdown is incomplete", ev("session.start", `{"sessionId":"s"}`), "incomplete", "events-jsonl", "", "", nil},
		{"routine shutdown ends a log ok", ev("session.shutdown", `{"shutdownType":"routine"}`), "ok", "events-jsonl", "", "", nil},
		{"other shutdown is an error", ev("session.shutdown", `{"shutdownType":"error","errorReason":"crashed"}`), "error", "events-jsonl", "crashed", "", nil},
		{"result exit code wins over shutdown", ev("session.shutdown", `{"shutdownType":"routine"}`) + `{"type":"result","exitCode":2}`, "error", "json", "copilot exited with code 2", "", nil},
		{"result before shutdown stands", `{"type":"result","exitCode":0}` + "\n" + ev("session.shutdown", `{"shutdownType":"error"}`), "ok", "json", "", "", nil},
		{"session error alone", ev("session.error", `{"errorType":"auth","message":"Not authenticated"}`), "incomplete", "events-jsonl", "Not authenticated", "", nil},
		{"deltas without final message", ev("assistant.message_delta", `{"messageId":"m","deltaContent":"par"}`) + ev("assistant.message_delta", `{"messageId":"m","deltaContent":"tial"}`), "incomplete", "events-jsonl", "", "", nil},
		{"unknown types are counted", ev("subagent.started", `{}`) + "garbage\n[1]\n{}", "incomplete", "events-jsonl", "", "", map[string]int{"subagent.started": 1, "non_json": 1, "non_object": 1, "(no type)": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, _ := run(t, []byte(tt.in))
			if res.Status != tt.status || res.Format != tt.format || res.Error != tt.errText || res.FinalText != tt.final {
				t.Errorf("status, format, error, final = %q, %q, %q, %q; want %q, %q, %q, %q",
					res.Status, res.Format, res.Error, res.FinalText, tt.status, tt.format, tt.errText, tt.final)
			}
			if len(res.Unmapped)+len(tt.unmapped) > 0 && !equalCounts(res.Unmapped, tt.unmapped) {
				t.Errorf("unmapped = %v, want %v", res.Unmapped, tt.unmapped)
			}
			if res.FailedLines != 0 {
				t.Errorf("failed lines %d: %q", res.FailedLines, res.Warnings)
			}
		})
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
	_, sink := run(t, []byte(in))
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

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

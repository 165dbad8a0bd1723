package gemini_test

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
	"github.com/twasm/twasm/plugins/gemini"
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
	res, err := normalize.Run(context.Background(), normalize.NativeInstance(gemini.Plugin), bytes.NewReader(raw), &sink, normalize.Options{Provider: "gemini"})
	if err != nil {
		tb.Fatal(err)
	}
	return res, &sink
}

// FuzzGemini: arbitrary bytes never make the plugin fault (a panic would
// be a StatusFatal and count the lines as failed), and every event the
// host assembles from its records is a valid transcript line.
func FuzzGemini(f *testing.F) {
	for _, in := range goldenInputs(f) {
		f.Add(in)
	}
	f.Add([]byte("{\n  \"response\": \"x\",\n"))
	f.Add([]byte(`{"type":"message","role":"assistant","content":"The --prompt (-p) flag has been deprecated","delta":true}`))
	f.Add([]byte(`{"messages":[{"type":"gemini","toolCalls":[{"id":1,"args":"{"}],"thoughts":[7]}]}`))
	f.Add([]byte(`{"type":"tool_result","tool_id":"x","status":"error","error":"boom"}` + "\n" + `{"type":"result","status":7}`))
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

// BenchmarkGeminiNative measures the plugin alone through sdk.Driver (no
// host assembly) over the golden inputs repeated to about 10 MB.
func BenchmarkGeminiNative(b *testing.B) {
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
	d := sdk.NewDriver(gemini.Plugin)
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
	if st, msg := d.Begin([]byte(`{"provider":"gemini"}`)); st != abi.StatusOK {
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
	tests := []struct {
		name, in, status, format, errText, final string
		unmapped                                 map[string]int
	}{
		{"no result is incomplete", `{"type":"init","session_id":"s","model":"m"}` + "\n" + `{"type":"message","role":"assistant","content":"half","delta":true}`, "incomplete", "stream-json", "", "half", nil},
		{"error event alone stays incomplete with its text", `{"type":"error","severity":"error","message":"quota"}`, "incomplete", "stream-json", "quota", "", nil},
		{"result error without object or error event", `{"type":"result","status":"error"}`, "error", "stream-json", "gemini result status error", "", nil},
		{"result error object wins over error event", `{"type":"error","severity":"error","message":"retrying"}` + "\n" + `{"type":"result","status":"error","error":{"type":"FatalTurnLimitedError","message":"turn limit"}}`, "error", "stream-json", "turn limit", "", nil},
		{"non-delta snapshot replaces deltas", `{"type":"message","role":"assistant","content":"a","delta":true}` + "\n" + `{"type":"message","role":"assistant","content":"abc"}` + "\n" + `{"type":"result","status":"success"}`, "ok", "stream-json", "", "abc", nil},
		{"non-delta chunks that are not snapshots append", `{"type":"message","role":"assistant","content":"a"}` + "\n" + `{"type":"message","role":"assistant","content":"b"}` + "\n" + `{"type":"result","status":"success"}`, "ok", "stream-json", "", "ab", nil},
		{"unknown event type", `{"type":"telemetry"}` + "\n" + `{"type":"result","status":"success"}`, "ok", "stream-json", "", "", map[string]int{"telemetry": 1}},
		{"compact json output", `{"session_id":"s","response":"hi","stats":{"models":{}}}`, "ok", "json", "", "hi", nil},
		{"unclosed pretty object", "{\n  \"response\": \"x\",\n", "incomplete", "", "", "", map[string]int{"non_json": 2}},
		{"empty session file", `{"sessionId":"s","messages":[]}`, "ok", "session-file", "", "", nil},
		{"banner only", "Loaded cached credentials.\n\x1b[33mwarn\x1b[0m", "incomplete", "", "", "", map[string]int{"non_json": 2}},
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

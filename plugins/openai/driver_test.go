package openai_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/normalize"
	"github.com/twasm/twasm/plugins/openai"
	"github.com/twasm/twasm/transcript"
)

// batches cuts raw into driver batches the way the host does: blank lines
// are skipped, every other line is indexed with abi.BuildTape (an empty
// tape when it is not JSON).
func batches(raw []byte, maxLines int) [][]byte {
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
		if n == maxLines || len(cur) > abi.MaxBatchBytes {
			flush()
		}
		cur = abi.AppendBatchLine(cur, i+1, line, toks)
		n++
	}
	flush()
	return out
}

// drive runs the plugin over batches through sdk.Driver and checks that
// no call is fatal and that every record decodes.
func drive(tb testing.TB, d *sdk.Driver, bs [][]byte) {
	if st, msg := d.Begin([]byte(`{"provider":"openai"}`)); st != abi.StatusOK {
		tb.Fatalf("begin: %d %s", st, msg)
	}
	check := func(what string, st abi.Status, msg string) {
		if st == abi.StatusFatal {
			tb.Fatalf("%s: fatal: %s", what, msg)
		}
		dec := abi.NewDecoder(d.Output())
		for {
			r, err := dec.Next()
			if err != nil {
				tb.Fatalf("%s: %v", what, err)
			}
			if r == nil {
				break
			}
		}
	}
	for _, b := range bs {
		st, msg := d.Feed(b)
		check("feed", st, msg)
	}
	st, msg := d.End()
	check("end", st, msg)
}

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

// FuzzOpenAI: arbitrary bytes never make the plugin fault (no failed
// lines through the host pipeline), and every event it leads to marshals.
func FuzzOpenAI(f *testing.F) {
	for _, in := range goldenInputs(f) {
		f.Add(in)
	}
	f.Add([]byte("{\n  \"object\": \"chat.completion\",\n"))
	f.Add([]byte(`data: {"choices":[{"index":-1,"delta":{"tool_calls":[{"function":{"arguments":"\u0000"}},{"index":9e99}]}}]}`))
	f.Add([]byte(`{"type":"response.function_call_arguments.delta","item_id":"","delta":"{"}` + "\n" + `{"type":"response.completed"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var sink normalize.Collector
		res, err := normalize.Run(context.Background(), normalize.NativeInstance(openai.Plugin), bytes.NewReader(raw), &sink,
			normalize.Options{Provider: "openai", Now: func() time.Time { return time.Unix(0, 0) }})
		if err != nil {
			t.Fatal(err)
		}
		if res.FailedLines != 0 {
			t.Fatalf("%d failed lines: %q", res.FailedLines, res.Warnings)
		}
		for i, it := range sink.Items {
			if it.Event == nil {
				continue
			}
			ev := *it.Event
			ev.RunID = "00000000-0000-4000-8000-000000000000"
			ev.Seq = uint64(i + 1)
			if _, err := transcript.MarshalEvent(&ev); err != nil {
				t.Fatalf("event %d (%s) does not marshal: %v", i, ev.Type, err)
			}
		}
		// The same bytes, one line per call, through the bare driver.
		drive(t, sdk.NewDriver(openai.Plugin), batches(raw, 1))
	})
}

// BenchmarkOpenAINative measures the plugin alone (no host assembly)
// over the golden inputs repeated to about 10 MB.
func BenchmarkOpenAINative(b *testing.B) {
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
	bs := batches(corpus, abi.MaxBatchLines)
	d := sdk.NewDriver(openai.Plugin)
	b.SetBytes(int64(len(corpus)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		drive(b, d, bs)
	}
}

// TestOutcomes pins the step-level decisions on small inline streams.
func TestOutcomes(t *testing.T) {
	tests := []struct {
		name, in, status, format string
		unmapped                 map[string]int
	}{
		{"chat stream cut before finish_reason is incomplete",
			`data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}`,
			"incomplete", "chat-sse", nil},
		{"[DONE] without finish_reason is ok",
			"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n",
			"ok", "chat-sse", nil},
		{"sse framing is not unmapped", "event: message\nid: 7\nretry: 100\n: ping\ndata:\ndata: [DONE]", "ok", "", nil},
		{"error body", `{"error":{"message":"","type":"","code":"rate_limit_exceeded"}}`, "error", "", nil},
		{"responses error event alone", `{"type":"error","code":"server_error","message":"boom","param":null}`, "error", "responses-sse", nil},
		{"responses cut after created", `{"type":"response.created","response":{"id":"r","status":"in_progress"}}`, "incomplete", "responses-sse", nil},
		{"responses cancelled", `{"id":"r","object":"response","status":"cancelled","output":[]}`, "error", "responses", nil},
		{"responses incomplete for another reason", `{"id":"r","object":"response","status":"incomplete","incomplete_details":{"reason":"interrupted"},"output":[]}`, "incomplete", "responses", nil},
		{"background response still in progress", `{"id":"r","object":"response","status":"in_progress","output":[]}`, "incomplete", "responses", nil},
		{"banner and unknown payloads are counted",
			"Welcome\n{\"object\":\"list\",\"data\":[]}\n{\"type\":\"session.created\"}\n[1,2]",
			"incomplete", "", map[string]int{"non_json": 1, "object/list": 1, "session.created": 1, "non_object": 2}},
		{"unclosed pretty object", "{\n  \"object\": \"chat.completion\",\n", "incomplete", "", map[string]int{"non_json": 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sink normalize.Collector
			res, err := normalize.Run(context.Background(), normalize.NativeInstance(openai.Plugin), strings.NewReader(tt.in), &sink, normalize.Options{Provider: "openai"})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tt.status || res.Format != tt.format {
				t.Errorf("status, format = %q, %q; want %q, %q (error %q)", res.Status, res.Format, tt.status, tt.format, res.Error)
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

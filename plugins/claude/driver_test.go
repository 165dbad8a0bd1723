package claude_test

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
	"github.com/twasm/twasm/plugins/claude"
)

// batches cuts raw into driver batches the way the host does: blank lines
// are skipped, every other line is indexed with abi.BuildTape (an empty
// tape when it is not JSON).
func batches(raw []byte) [][]byte {
	var out [][]byte
	var cur []byte
	n := 0
	flush := func() {
		if n > 0 {
			b := abi.AppendBatchHeader(nil, n)
			out = append(out, append(b, cur...))
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
		if n == abi.MaxBatchLines || len(cur) > abi.MaxBatchBytes {
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
	if st, msg := d.Begin([]byte(`{"provider":"claude"}`)); st != abi.StatusOK {
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
	return out
}

// FuzzClaude: arbitrary bytes, cut into lines, never make the plugin
// fault, and its output always decodes.
func FuzzClaude(f *testing.F) {
	for _, in := range goldenInputs(f) {
		f.Add(in)
	}
	f.Add([]byte("{\n  \"type\": \"result\"\n"))
	f.Add([]byte(`{"type":"stream_event","event":{"type":"content_block_delta","index":-1,"delta":{"type":"input_json_delta","partial_json":"\u0000"}}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		drive(t, sdk.NewDriver(claude.Plugin), batches(raw))
	})
}

// BenchmarkClaudeNative measures the plugin alone (no host assembly) over
// the golden inputs repeated to about 10 MB.
func BenchmarkClaudeNative(b *testing.B) {
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
	d := sdk.NewDriver(claude.Plugin)
	b.SetBytes(int64(len(corpus)))
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
		{"no terminal event is incomplete", `{"type":"system","subtype":"init","session_id":"s","claude_code_version":"2.1.0"}`, "incomplete", "stream-json", nil},
		{"success with is_error is an error", `{"type":"result","subtype":"success","is_error":true,"result":"boom"}`, "error", "json", nil},
		{"error subtype without text", `{"type":"result","subtype":"error_max_turns","is_error":false}`, "error", "json", nil},
		{"session log without result is ok", `{"type":"user","sessionId":"s","parentUuid":null,"isSidechain":false,"message":{"role":"user","content":"hi"},"uuid":"u"}`, "ok", "session-log", nil},
		{"session log with error field", `{"type":"assistant","sessionId":"s","parentUuid":null,"isSidechain":false,"error":"rate_limit","message":{"id":"m","role":"assistant","model":"<synthetic>","content":[{"type":"text","text":"Rate limited"}]},"uuid":"u"}`, "error", "session-log", nil},
		{"sse cut before message_stop", `data: {"type":"message_start","message":{"id":"m","role":"assistant","content":[],"model":"x","usage":{"input_tokens":1}}}`, "incomplete", "anthropic-sse", nil},
		{"sse framing is not unmapped", "event: ping\ndata: {\"type\":\"ping\"}\n\n: comment\ndata: [DONE]", "incomplete", "anthropic-sse", nil},
		{"api error object", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "error", "anthropic-messages", nil},
		{"banner only", "Welcome to Claude\n\x1b[31mred\x1b[0m", "incomplete", "", map[string]int{"non_json": 2}},
		{"unknown types are counted", `{"type":"ai-title","sessionId":"s","title":"x"}` + "\n" + `{"type":"system","subtype":"api_retry","attempt":1}`, "ok", "session-log", map[string]int{"ai-title": 1, "system/api_retry": 1}},
		{"unclosed pretty object", "{\n  \"type\": \"result\",\n", "incomplete", "", map[string]int{"non_json": 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sink normalize.Collector
			res, err := normalize.Run(context.Background(), normalize.NativeInstance(claude.Plugin), strings.NewReader(tt.in), &sink, normalize.Options{Provider: "claude"})
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

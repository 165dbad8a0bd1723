//go:build !wasip1

package gemini_test

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/internal/wire"
	"github.com/twasm/twasm/plugins/gemini"
)

// FuzzGemini: arbitrary bytes never make the plugin fault, through the host
// pipeline or the bare driver (sdktest.Fuzz).
func FuzzGemini(f *testing.F) {
	sdktest.Fuzz(f, gemini.Plugin, sdktest.Options{Provider: "gemini", Golden: goldenDir},
		[]byte("{\n  \"response\": \"x\",\n"),
		[]byte(`{"type":"message","role":"assistant","content":"The --prompt (-p) flag has been deprecated","delta":true}`),
		[]byte(`{"messages":[{"type":"gemini","toolCalls":[{"id":1,"args":"{"}],"thoughts":[7]}]}`),
		[]byte(`{"type":"tool_result","tool_id":"x","status":"error","error":"boom"}`+"\n"+`{"type":"result","status":7}`),
	)
}

// BenchmarkGeminiNative measures the plugin alone through sdk.Plugin.Driver over the
// golden inputs repeated to about 10 MB.
func BenchmarkGeminiNative(b *testing.B) {
	sdktest.Benchmark(b, gemini.Plugin, sdktest.Options{Provider: "gemini", Golden: goldenDir})
}

// TestOutcomes pins step-level decisions on small inline streams.
func TestOutcomes(t *testing.T) {
	tests := []struct {
		name, in, status, format, errText, final string
		unmapped                                 map[string]int
	}{
		{"no result is incomplete", `{"type":"init","session_id":"s","model":"m"}` + "\n" + `{"type":"message","role":"assistant","content":"half","delta":true}`, "incomplete", "stream-json", "", "half", nil},
		{"error event alone is an error (spec 6.7: error fields before incomplete)", `{"type":"error","severity":"error","message":"quota"}`, "error", "stream-json", "quota", "", nil},
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
			res := plugintest.Run(t, gemini.Plugin, []byte(tt.in), normalize.Options{Provider: "gemini"}).Result
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

// TestLargeAnswerKeepsResult streams an answer of more than the host's
// 8 MiB output limit per call as deltas: no call's output may exceed the
// limit the host enforces (the call would fault and the result be lost),
// the step keeps its result, the message keeps every byte, and the final
// text is the answer's first MiB with a warning.
func TestLargeAnswerKeepsResult(t *testing.T) {
	chunk := strings.Repeat("é", 1024) // 2 KiB of text per delta
	var raw strings.Builder
	raw.WriteString(`{"type":"init","session_id":"s","model":"gemini-2.5-pro"}` + "\n")
	const deltas = 5000 // 10 MiB
	for range deltas {
		raw.WriteString(`{"type":"message","role":"assistant","content":"` + chunk + `","delta":true}` + "\n")
	}
	raw.WriteString(`{"type":"result","status":"success","stats":{"input_tokens":10,"output_tokens":5000000}}` + "\n")

	d := gemini.Plugin.Driver()
	if st, msg := d.Begin([]byte(`{"provider":"gemini"}`)); st != wire.StatusOK {
		t.Fatalf("begin: %d %s", st, msg)
	}
	limit := func(in int) int { return max(wire.MinOutputBytes, wire.MaxOutputFactor*in) }
	for i, b := range wire.Batches([]byte(raw.String()), 1) {
		if st, msg := d.Feed(b); st != wire.StatusOK {
			t.Fatalf("batch %d: status %d: %s", i+1, st, msg)
		}
		if n := len(d.Output()); n > limit(len(b)) {
			t.Fatalf("batch %d: %d bytes of output, over the host's limit %d", i+1, n, limit(len(b)))
		}
	}
	if st, msg := d.End(); st != wire.StatusOK {
		t.Fatalf("end: status %d: %s", st, msg)
	}
	if n := len(d.Output()); n > limit(0) {
		t.Fatalf("end: %d bytes of output, over the host's limit %d", n, limit(0))
	}

	out := plugintest.Run(t, gemini.Plugin, []byte(raw.String()), normalize.Options{Provider: "gemini"})
	res := out.Result
	if res.Status != "ok" || res.Usage == nil || res.Usage.OutputTokens == nil || *res.Usage.OutputTokens != 5000000 {
		t.Fatalf("status %q, usage %+v: the result was lost (failed lines %d, warnings %q, error %q)", res.Status, res.Usage, res.FailedLines, res.Warnings, res.Error)
	}
	if len(res.FinalText) > 1<<20 || !strings.HasPrefix(chunk+chunk, res.FinalText[:4096]) || !utf8.ValidString(res.FinalText) {
		t.Errorf("final text: %d bytes, want at most 1 MiB of the answer's start, valid UTF-8", len(res.FinalText))
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "first 1 MiB") }) {
		t.Errorf("no warning says the final text was cut: %q", res.Warnings)
	}
	// The host may write a message this long in parts; every byte is
	// there, in order.
	if got := strings.Join(out.Texts(plugintest.Assistant), ""); got != strings.Repeat(chunk, deltas) {
		t.Errorf("the message holds %d bytes of text; want the %d bytes streamed", len(got), deltas*len(chunk))
	}
}

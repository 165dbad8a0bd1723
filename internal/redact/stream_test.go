package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/jsonstr"
	"github.com/twasm/twasm/internal/testing/secrettest"
)

// deltaFormats make the raw lines of a stream whose deltas are pieces:
// the streamed shapes of the providers' outputs. Each returns the lines
// and reads the joined text back from masked lines.
var deltaFormats = []struct {
	name  string
	lines func(pieces []string) []string
	text  func(t *testing.T, lines []string) string
}{
	{"anthropic sse", func(ps []string) []string {
		out := []string{"event: message_start\n", `data: {"type":"message_start","message":{"id":"msg_1","model":"claude"}}` + "\n", "\n"}
		for _, p := range ps {
			out = append(out, "event: content_block_delta\n",
				`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+quote(p)+`}}`+"\n", "\n")
		}
		return append(out, "event: message_stop\n", `data: {"type":"message_stop"}`+"\n")
	}, func(t *testing.T, lines []string) string { return joined(t, lines, "delta", "text") }},
	{"claude stream-json partial", func(ps []string) []string {
		var out []string
		for i, p := range ps {
			out = append(out, fmt.Sprintf(`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":%s}},"session_id":"s1","uuid":"u-%d"}`, quote(p), i)+"\n")
		}
		return out
	}, func(t *testing.T, lines []string) string { return joined(t, lines, "event", "delta", "text") }},
	{"openai chat chunks", func(ps []string) []string {
		var out []string
		for _, p := range ps {
			out = append(out, `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":`+quote(p)+`},"finish_reason":null}]}`+"\n\n")
		}
		return append(out, "data: [DONE]\n")
	}, func(t *testing.T, lines []string) string { return joined(t, lines, "choices", "0", "delta", "content") }},
}

// quote encodes a piece as a JSON string, with its first letter p (if
// any) written as a \u escape: a secret is found by what it means.
func quote(p string) string {
	q := string(jsonstr.AppendQuoted(nil, p))
	return strings.Replace(q, "p", `\u0070`, 1)
}

// joined decodes the lines that are JSON (or data: JSON) and joins the
// strings at path.
func joined(t *testing.T, lines []string, path ...string) string {
	t.Helper()
	var sb strings.Builder
	for _, l := range lines {
		at := jsonStart([]byte(l))
		if at < 0 || strings.HasPrefix(l, "data: [DONE]") {
			continue
		}
		var v any
		if err := json.Unmarshal([]byte(l[at:]), &v); err != nil {
			t.Fatalf("masked line is not JSON: %v: %q", err, l)
		}
		for _, k := range path {
			switch x := v.(type) {
			case map[string]any:
				v = x[k]
			case []any:
				v = nil
				if len(x) > 0 {
					v = x[0]
				}
			}
		}
		if s, ok := v.(string); ok {
			sb.WriteString(s)
		}
	}
	return sb.String()
}

// split cuts s into pieces of n bytes (n 0: two halves).
func split(s string, n int) []string {
	if n == 0 {
		return []string{s[:len(s)/2], s[len(s)/2:]}
	}
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

// TestStreamSplitSecrets: a secret of every shape, streamed in deltas cut
// at any point (halves, 3 bytes, 1 byte) and escaped, survives in no
// line of the masked raw capture, whose deltas join to the masked text;
// no line is added or lost and every JSON line stays JSON.
func TestStreamSplitSecrets(t *testing.T) {
	for _, sec := range secrettest.Secrets() {
		text := "here it is: " + sec.Whole() + " and more words after it."
		for _, f := range deltaFormats {
			for _, n := range []int{0, 3, 1} {
				t.Run(fmt.Sprintf("%s/%s/%d", sec.Name, f.name, n), func(t *testing.T) {
					st := NewStream()
					in := f.lines(split(text, n))
					var out []string
					for _, l := range in {
						for _, o := range st.Push([]byte(l)) {
							out = append(out, string(o))
						}
					}
					for _, o := range st.Flush() {
						out = append(out, string(o))
					}
					if len(out) != len(in) {
						t.Fatalf("%d lines in, %d out", len(in), len(out))
					}
					got := f.text(t, out)
					if p := sec.Leak(got + strings.Join(out, "")); p != "" {
						t.Fatalf("%q left in the raw capture: %q", p, got)
					}
					if !strings.Contains(got, "[REDACTED:") || !strings.HasPrefix(got, "here it is: ") || !strings.HasSuffix(got, " and more words after it.") {
						t.Fatalf("joined text %q", got)
					}
				})
			}
		}
	}
}

// TestStreamKeepsCleanLines: lines without a secret come out byte for
// byte, in order.
func TestStreamKeepsCleanLines(t *testing.T) {
	st := NewStream()
	var in, out []string
	for _, f := range deltaFormats {
		in = append(in, f.lines(split("the token usage was 1234 and the key was fine", 1))...)
	}
	for _, l := range in {
		for _, o := range st.Push([]byte(l)) {
			out = append(out, string(o))
		}
	}
	for _, o := range st.Flush() {
		out = append(out, string(o))
	}
	if strings.Join(out, "") != strings.Join(in, "") {
		t.Fatal("clean lines changed")
	}
}

// TestMaskLineEscapes: in a JSON line, a secret is found by what its
// string means: escaped, in JSON held in a string (a tool's arguments),
// in a key, or given its context by the key it is assigned to.
func TestMaskLineEscapes(t *testing.T) {
	for _, sec := range secrettest.Secrets() {
		w := sec.Whole()
		esc := func(s string) string {
			var b strings.Builder
			for _, c := range s {
				fmt.Fprintf(&b, `\u%04x`, c)
			}
			return b.String()
		}
		inner, _ := json.Marshal(map[string]string{"cmd": w})
		lines := map[string]string{
			"all escaped":      `{"text":"` + esc(w) + `"}`,
			"nested":           `{"arguments":` + string(jsonstr.AppendQuoted(nil, string(inner))) + `}`,
			"nested escaped":   `{"arguments":"{\"cmd\":\"` + strings.ReplaceAll(esc(w), `\`, `\\`) + `\"}"}`,
			"key":              `{` + string(jsonstr.AppendQuoted(nil, w)) + `:1}`,
			"sse data":         `data: {"delta":` + string(jsonstr.AppendQuoted(nil, w)) + `}`,
			"pretty":           "{\n  \"a\": [ " + string(jsonstr.AppendQuoted(nil, w)) + " ]\n}",
			"text with escape": `plain text ` + w,
		}
		for name, l := range lines {
			t.Run(sec.Name+"/"+name, func(t *testing.T) {
				r := New()
				out := r.MaskBytes([]byte(l))
				dec := string(out)
				if jsonStart(out) == 0 {
					var v any
					if err := json.Unmarshal(out, &v); err != nil {
						t.Fatalf("not JSON any more: %v\n%s", err, out)
					}
					b, _ := json.Marshal(v)
					dec = string(b)
					// and the nested JSON, decoded once more
					var s string
					if m, ok := v.(map[string]any); ok {
						s, _ = m["arguments"].(string)
					}
					dec += s
				}
				if p := sec.Leak(dec + string(out)); p != "" {
					t.Fatalf("%q left: %s", p, out)
				}
				if !bytes.Contains(out, []byte("[REDACTED:")) {
					t.Fatalf("no mark: %s", out)
				}
			})
		}
	}
}

// TestStreamHoldsOnlyWhatMayJoin: a Stream holds back only the lines a
// later delta may still join (the last streamWindow bytes of a streamed
// field, and the lines after them), not thousands of lines: a line
// without strings after settled ones goes out at once, a long stream
// lags by its window, Release hands out the oldest lines at once, and a
// secret split across deltas anywhere in the stream is still masked.
// Before, every line waited until 4096 lines followed it.
func TestStreamHoldsOnlyWhatMayJoin(t *testing.T) {
	sec := secrettest.Secrets()[0]
	for _, f := range deltaFormats {
		t.Run(f.name, func(t *testing.T) {
			text := strings.Repeat("word ", 400) + sec.Whole() + " " + strings.Repeat("more ", 400)
			in := f.lines(split(text, 5))
			st := NewStream()
			var out []string
			maxHeld := 0
			for _, l := range in {
				for _, o := range st.Push([]byte(l)) {
					out = append(out, string(o))
				}
				maxHeld = max(maxHeld, st.Held())
			}
			// A delta holds 5 bytes of text: the window is about
			// streamWindow/5 deltas, each of one to three lines.
			if limit := 3*(streamWindow/5+2) + streamGap; maxHeld > limit {
				t.Errorf("held up to %d lines, want at most %d (those within %d bytes of the field's end)", maxHeld, limit, streamWindow)
			}
			if len(out) < len(in)/2 {
				t.Errorf("only %d of %d lines out before Flush", len(out), len(in))
			}
			held := st.Held()
			if got := st.Release(1); len(got) != 1 || st.Held() != held-1 {
				t.Errorf("Release(1) gave %d lines, %d held of %d", len(got), st.Held(), held)
			} else {
				out = append(out, string(got[0]))
			}
			for _, o := range st.Flush() {
				out = append(out, string(o))
			}
			if len(out) != len(in) {
				t.Fatalf("%d lines in, %d out", len(in), len(out))
			}
			if p := sec.Leak(f.text(t, out) + strings.Join(out, "")); p != "" {
				t.Fatalf("%q left in the raw capture", p)
			}
		})
	}
	st := NewStream()
	if got := st.Push([]byte("plain text, no JSON\n")); len(got) != 1 {
		t.Errorf("a line nothing can join is held: %d out", len(got))
	}
}

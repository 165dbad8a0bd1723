package normalize_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/claude"
	"github.com/twasm/twasm/plugins/openai"
	"github.com/twasm/twasm/transcript"
)

// lines encodes every event the run produced as a transcript line, and
// checks each with a strict parser: valid JSON, no object key twice.
func lines(t *testing.T, o *plugintest.Outcome) []string {
	t.Helper()
	var out []string
	for i, it := range o.Sink.Items {
		if it.Event == nil {
			continue
		}
		ev := *it.Event
		ev.RunID, ev.Seq = "00000000-0000-4000-8000-000000000000", uint64(i+1)
		b, err := transcript.AppendEvent(nil, &ev)
		require.NoError(t, err)
		require.NoError(t, strictJSON(b), "%s", b)
		out = append(out, string(b))
	}
	return out
}

// strictJSON fails on what encoding/json lets through and a strict parser
// refuses: a repeated key in an object.
func strictJSON(b []byte) error {
	if !json.Valid(b) {
		return errors.New("not JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	type obj struct {
		keys map[string]bool
		key  bool // the next string token is a key
	}
	var stack []*obj
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		var top *obj
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if s, ok := tok.(string); ok && top != nil && top.key {
			if top.keys[s] {
				return errors.New("key " + s + " twice")
			}
			top.keys[s] = true
			top.key = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &obj{keys: map[string]bool{}, key: true})
			continue
		case json.Delim('['):
			stack = append(stack, &obj{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) > 0 && stack[len(stack)-1].keys != nil {
				stack[len(stack)-1].key = true
			}
			continue
		}
		if top != nil && top.keys != nil {
			top.key = true
		}
	}
}

func fixture(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "shared", "fixtures", rel))
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("no fixture %s (../shared is absent)", rel)
	}
	require.NoError(t, err)
	return b
}

// A leading UTF-8 byte order mark, as some HTTP clients save a response,
// changes nothing: the response reads as it does without one.
func TestByteOrderMark(t *testing.T) {
	cases := []struct {
		name, fixture string
		plugin        sdk.Plugin
		provider      string
	}{
		{"anthropic response", "anthropic/vercelai_messages_tool_use.json", claude.Plugin, "claude"},
		{"anthropic stream", "anthropic/vercelai_messages_stream_tool_use_input_json_delta.jsonl", claude.Plugin, "claude"},
		{"openai chat completion", "openai/openaipython_chat_completion_parallel_tool_calls.json", openai.Plugin, "openai"},
		{"openai responses", "openai/openaipython_responses_output_text.json", openai.Plugin, "openai"},
		{"openai stream", "openai/openaipython_chat_stream_tool_call.sse", openai.Plugin, "openai"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw := fixture(t, c.fixture)
			opts := normalize.Options{Provider: c.provider}
			plain := plugintest.Run(t, c.plugin, raw, opts)
			marked := plugintest.Run(t, c.plugin, append([]byte("\xef\xbb\xbf"), raw...), opts)
			require.Equal(t, transcript.StatusOK, plain.Result.Status, "without a BOM: %+v", plain.Result)
			assert.Equal(t, plain.Result.Status, marked.Result.Status, "%+v", marked.Result)
			assert.Equal(t, plain.Result.Unmapped, marked.Result.Unmapped)
			assert.Equal(t, len(lines(t, plain)), len(lines(t, marked)))
			assert.Equal(t, plain.Texts(nil), marked.Texts(nil))
		})
	}
	// Two responses joined with cat: the second one's mark goes too.
	raw := fixture(t, "anthropic/vercelai_messages_tool_use.json")
	bom := []byte("\xef\xbb\xbf")
	twice := plugintest.Run(t, claude.Plugin, bytes.Join([][]byte{bom, raw, []byte("\n"), bom, raw}, nil), normalize.Options{Provider: "claude"})
	assert.Empty(t, twice.Result.Unmapped)
}

// claudeToolUse is a Claude stream-json assistant line with one tool_use
// block whose input is the JSON text input.
func claudeToolUse(input string) string {
	return `{"type":"assistant","session_id":"s","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[` +
		`{"type":"text","text":"before the call"},{"type":"tool_use","id":"toolu_1","name":"Bash","input":` + input + `}]}}` + "\n"
}

func toolInput(t *testing.T, o *plugintest.Outcome) json.RawMessage {
	t.Helper()
	for _, it := range o.Sink.Items {
		if it.Event != nil && it.Event.Type == transcript.ToolCall {
			return it.Event.Tool().Input
		}
	}
	t.Fatal("no tool.call")
	return nil
}

// A line nested 100,000 levels deep is a JSON line like any other: it is
// mapped (not counted as non-JSON), its text survives, and every line
// written is valid JSON. A value deeper than transcript readers accept is
// kept as a string.
func TestDeeplyNestedLine(t *testing.T) {
	const depth = 100_000
	deep := `{"command":"ls","x":` + strings.Repeat("[", depth) + `"bottom"` + strings.Repeat("]", depth) + `}`
	raw := claudeToolUse(deep) + `{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s"}` + "\n"
	o := plugintest.Run(t, claude.Plugin, []byte(raw), normalize.Options{Provider: "claude"})
	assert.Empty(t, o.Result.Unmapped)
	assert.Zero(t, o.Result.FailedLines)
	assert.Contains(t, o.Texts(nil), "before the call")
	ls := lines(t, o)
	require.NotEmpty(t, ls)
	in := toolInput(t, o)
	var s string
	require.NoError(t, json.Unmarshal(in, &s), "the too-deep input is kept as a string: %.80s", in)
	assert.Contains(t, s, `"bottom"`)
}

// A tool input that repeats a key is written with the last member only,
// as JSON parsers read it, and a warning says so; strict parsers read
// every line.
func TestDuplicateKeysInToolInput(t *testing.T) {
	cases := []struct{ input, want string }{
		{`{"command":"rm -rf /","command":"ls"}`, `{"command":"ls"}`},
		{`{"a":1,"b":{"c":1,"c":2},"a":3}`, `{"b":{"c":2},"a":3}`},
		{`{"a":1,"\u0061":2}`, `{"a":2}`},
		{`{"k":[{"x":1,"x":[1,{"y":1,"y":2}]}]}`, `{"k":[{"x":[1,{"y":2}]}]}`},
	}
	for _, c := range cases {
		o := plugintest.Run(t, claude.Plugin, []byte(claudeToolUse(c.input)), normalize.Options{Provider: "claude"})
		lines(t, o)
		assert.JSONEq(t, c.want, string(toolInput(t, o)), c.input)
		assert.Equal(t, c.want, string(toolInput(t, o)), c.input)
		assert.True(t, containsAny(o.Result.Warnings, "repeated the key"), "%q: warnings %q", c.input, o.Result.Warnings)
	}
	// Many members: the same, past the small-object path.
	var b strings.Builder
	b.WriteString("{")
	for i := range 40 {
		b.WriteString(`"k` + string(rune('a'+i%20)) + `":` + string(rune('0'+i/20)) + ",")
	}
	b.WriteString(`"end":true}`)
	o := plugintest.Run(t, claude.Plugin, []byte(claudeToolUse(b.String())), normalize.Options{Provider: "claude"})
	lines(t, o)
	var m map[string]any
	require.NoError(t, json.Unmarshal(toolInput(t, o), &m))
	assert.Len(t, m, 21)
	assert.Equal(t, 1.0, m["ka"])
}

func containsAny(ss []string, sub string) bool {
	for _, s := range ss {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// A provider's own \udc80 escape (a lone surrogate) and a raw invalid byte
// 0x80 are different text, and stay different in the transcript: twasm
// writes the raw byte as \udc80, the provider's escape as the three
// escapes of its WTF-8 bytes.
func TestProviderSurrogateEscape(t *testing.T) {
	text := func(raw string) string {
		o := plugintest.Run(t, claude.Plugin, []byte(raw), normalize.Options{Provider: "claude"})
		ls := lines(t, o)
		for _, l := range ls {
			if strings.Contains(l, "message.assistant") {
				return l
			}
		}
		t.Fatalf("no assistant message in %q", ls)
		return ""
	}
	line := func(s string) string {
		return `{"type":"assistant","session_id":"s","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"` + s + `"}]}}` + "\n"
	}
	escaped := text(line(`a\udc80b`))
	rawByte := text(line("a\x80b"))
	assert.Contains(t, rawByte, `a\udc80b`)
	assert.Contains(t, escaped, `a\udced\udcb2\udc80b`)
	// Decoded back, each is what the provider meant.
	e1, err := transcript.DecodeEvent([]byte(rawByte))
	require.NoError(t, err)
	e2, err := transcript.DecodeEvent([]byte(escaped))
	require.NoError(t, err)
	assert.Equal(t, "a\x80b", e1.Message().Blocks[0].Text)
	assert.Equal(t, "a\xed\xb2\x80b", e2.Message().Blocks[0].Text)
}

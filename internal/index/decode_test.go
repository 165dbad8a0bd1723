package index

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/internal/wire"
)

// decodeBoth decodes b with d into l (reused from line to line, as the
// writer's is) and with decodeLine into a line of its own (encoding/json
// alone), fails when the two differ, and says whether d read the line
// itself rather than leaving it to encoding/json.
func decodeBoth(t testing.TB, d *lineDecoder, l *line, b []byte) (fast bool) {
	t.Helper()
	var want line
	wantT, wantErr := decodeLine(b, &want)
	slow := d.slow
	gotT, gotErr := d.decode(b, l)
	fast = d.slow == slow
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("%q: encoding/json: %v, the decoder (fast %v): %v", b, wantErr, fast, gotErr)
	}
	if wantErr != nil {
		return fast
	}
	got := *l
	// The result as a step's: read from the tape by the decoder where it
	// can, by encoding/json here; then left out of the comparison.
	wantRes, wantOK := want.Payload.result()
	gotRes, gotOK := got.Payload.result()
	if wantRes != gotRes || wantOK != gotOK {
		t.Fatalf("%q (fast %v): result\nencoding/json %+v %v\nthe decoder   %+v %v", b, fast, wantRes, wantOK, gotRes, gotOK)
	}
	for _, p := range []*line{&want, &got} {
		p.Payload.res, p.Payload.resRead = lineResult{}, 0
	}
	// encoding/json leaves a list it meets no "blocks" for nil.
	for _, p := range []*line{&want, &got} {
		if len(p.Payload.Blocks) == 0 {
			p.Payload.Blocks = nil
		}
	}
	if !reflect.DeepEqual(want, got) || !wantT.Equal(gotT) {
		t.Fatalf("%q (fast %v):\nencoding/json %+v %v\nthe decoder   %+v %v", b, fast, want, wantT, got, gotT)
	}
	return fast
}

// goldenEvents returns the transcript lines of the golden files under
// testdata/golden (each "event" member).
func goldenEvents(t *testing.T) [][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "golden", "*", "*.golden.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var out [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, ln := range bytes.Split(b, []byte("\n")) {
			var op struct {
				Event json.RawMessage `json:"event"`
			}
			if len(ln) > 0 && json.Unmarshal(ln, &op) == nil && len(op.Event) > 0 {
				out = append(out, op.Event)
			}
		}
	}
	return out
}

// recordedLines records every input of testdata (golden and captures)
// through the native plugins, as the benchmarks' archive is made, and
// returns every line of the transcripts written.
func recordedLines(t *testing.T) [][]byte {
	t.Helper()
	files, err := recordSeed(context.Background(), filepath.Join("..", "..", "testdata"), t.TempDir())
	require.NoError(t, err)
	var out [][]byte
	for _, f := range files {
		fh, err := os.Open(f)
		require.NoError(t, err)
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, maxLine)
		for sc.Scan() {
			out = append(out, bytes.Clone(sc.Bytes()))
		}
		fh.Close()
		require.NoError(t, sc.Err())
	}
	return out
}

// TestLineDecoderAgrees: every transcript line of the golden files and
// of the recorded testdata inputs is read by the decoder itself (none
// left to encoding/json) and as encoding/json reads it, in turn into
// one reused line as the writer reads a file.
func TestLineDecoderAgrees(t *testing.T) {
	sets := map[string]func(*testing.T) [][]byte{"golden": goldenEvents}
	if !testing.Short() {
		sets["recorded"] = recordedLines
	}
	for name, lines := range sets {
		t.Run(name, func(t *testing.T) {
			var d lineDecoder
			var l line
			all := lines(t)
			require.NotEmpty(t, all)
			for _, b := range all {
				if !decodeBoth(t, &d, &l, b) {
					t.Errorf("left to encoding/json: %q", b)
				}
			}
			t.Logf("%d lines", len(all))
		})
	}
}

// TestLineDecoderCases: what the decoder reads it reads as encoding/json
// does, and what it cannot read so it leaves to encoding/json, which
// decides (skips the line or reads it).
func TestLineDecoderCases(t *testing.T) {
	const msg = `{"seq":3,"run_id":"r","type":"message.user","path":"agent","iteration":0,"timestamp":"2026-03-01T09:00:00.001Z","payload":{"role":"user","blocks":[%s],"model":"m"}}`
	blocks := func(s string) string { return strings.Replace(msg, "%s", s, 1) }
	cases := []struct {
		name string
		line string
		fast bool
	}{
		{"a message", blocks(`{"type":"system","fidelity":"router","text":"sys","origin":"system_prompt"},{"type":"text","text":"hi"}`), true},
		{"a tool call", `{"seq":4,"type":"tool.call","payload":{"name":"Bash","call_id":"c1","input":{"command":"ls -l","n":[1,2.5e3,true,null]},"command":"ls -l","fidelity":"agent_emitted"}}`, true},
		{"a tool result", `{"seq":5,"type":"tool.result","payload":{"name":"Bash","call_id":"c1","output":"a\nb\t\"c\"\\ \u00e9 \ud83d\ude00 \u0000","status":"error","error":"exit 1"}}`, true},
		{"a step result", `{"seq":6,"type":"step.completed","path":"agent","payload":{"kind":"agent","status":"ok","result":{"provider":"claude","model":"m","cwd":"/w"}}}`, true},
		{"a run started", `{"seq":1,"type":"run.started","parent_run_id":"p","child_run_id":"c","payload":{"name":"n","source":{"agent":"claude"}}}`, true},
		{"a rebuild started", `{"seq":1,"type":"run.started","payload":{"name":"n","renormalized_from":"0000"}}`, true},
		{"a rebuild named otherwise", `{"seq":1,"type":"run.started","payload":{"name":"n","renormalized_from":{"run":1}}}`, true},
		{"nulls", `{"seq":null,"type":"run.completed","path":null,"iteration":null,"timestamp":null,"payload":{"error":null,"result":null,"input":null,"source":null,"blocks":null}}`, true},
		{"payload null", `{"type":"run.completed","payload":null}`, true},
		{"no blocks", blocks(``), true},
		{"a null block", blocks(`null,{"type":"text","text":"x"}`), true},
		{"spaces", " {\t\"type\" : \"x\" , \"payload\" : { \"name\" : \"n\" } } ", true},
		{"not ASCII", blocks(`{"type":"text","text":"déjà vu ✓"}`), true},
		{"an unknown member of any kind", `{"type":"x","extra":{"a":[{"b":"\u00e9"}]},"payload":{"usage":{"input_tokens":1},"blocks":[{"type":"text","tool_input":{"x":1},"text":"t"}]}}`, true},
		{"a negative iteration", `{"type":"x","iteration":-2}`, true},

		// A string that is not valid UTF-8 is decoded by encoding/json
		// (U+FFFD in place of what is not), the line by the decoder.
		{"invalid UTF-8", "{\"type\":\"x\",\"payload\":{\"output\":\"a\xffb\"}}", true},
		{"invalid UTF-8 in a member not read", "{\"type\":\"x\",\"payload\":{\"id\":\"a\xffb\"}}", true},
		{"a lone surrogate", `{"type":"x","payload":{"output":"a\ud800b"}}`, true},
		{"a surrogate pair and a lone one", `{"type":"x","payload":{"output":"\ud83d\ude00\udc00"}}`, true},
		{"a member in other case", `{"Type":"x"}`, false},
		{"a member not read in other case", `{"type":"x","Extra":1}`, false},
		{"a key that folds to a member's", `{"type":"x","payload":{"ſtatus":"error"}}`, false},
		{"an escaped key", `{"typ\u0065":"x"}`, false},
		{"a member twice", `{"type":"x","type":"y"}`, false},
		{"a member twice, null second", `{"type":"x","type":null}`, false},
		{"a block member twice", blocks(`{"type":"text","text":"a","text":"b"}`), false},
		{"a negative seq", `{"type":"x","seq":-1}`, false},
		{"a float seq", `{"type":"x","seq":1.0}`, false},
		{"a seq too large", `{"type":"x","seq":18446744073709551616}`, false},
		{"a string seq", `{"type":"x","seq":"1"}`, false},
		{"a number type", `{"type":5}`, false},
		{"a string payload", `{"type":"x","payload":"p"}`, false},
		{"blocks an object", `{"type":"x","payload":{"blocks":{}}}`, false},
		{"a block a string", blocks(`"text"`), false},
		{"no type", `{"seq":1}`, true},
		{"a bad time", `{"type":"x","timestamp":"yesterday"}`, true},
		{"a control character", "{\"type\":\"x\\u0001\",\"payload\":{\"output\":\"a\x01\"}}", false},
		{"a bad escape", `{"type":"x","payload":{"output":"\x"}}`, false},
		{"cut short", blocks(`{"type":"text","text":"x"}`)[:40], false},
		{"trailing bytes", `{"type":"x"}x`, false},
		{"a trailing comma", `{"type":"x",}`, false},
		{"an SSE data line", `data: {"type":"x"}`, false},
		{"not an object", `["type"]`, false},
		{"null", `null`, false},
		{"empty", ``, false},
		{"nesting as deep as encoding/json takes", `{"type":"x","payload":{"input":` + deep(9998) + `}}`, true},
		{"nesting deeper by one", `{"type":"x","payload":{"input":` + deep(9999) + `}}`, false},
		{"nesting deeper after many tokens", `{"type":"x","payload":{"input":[` + strings.Repeat("1,", 20000) + deep(10000) + `]}}`, false},
		{"many tokens", `{"type":"x","payload":{"output":"` + strings.Repeat("a, b: [c] {d} ", 10000) + `","input":[` + strings.Repeat(`{"a":[1,2]},`, 20000) + `0]}}`, true},
		{"too many tokens for a tape", `{"type":"x","payload":{"input":[` + strings.Repeat("1,", maxTapeTokens) + `1]}}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var d lineDecoder
			var l line
			// A line with blocks first: the next one's must be its own.
			decodeBoth(t, &d, &l, []byte(blocks(`{"type":"text","text":"a","origin":"injected_context"},{"type":"thinking","thinking":"b","origin":"prompt"}`)))
			assert.Equal(t, c.fast, decodeBoth(t, &d, &l, []byte(c.line)))
		})
	}
}

func deep(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// FuzzLineDecoder: whatever the line, the decoder reads it as
// encoding/json does, or leaves it to encoding/json, after a line with
// blocks.
func FuzzLineDecoder(f *testing.F) {
	f.Add([]byte(`{"seq":3,"type":"message.user","payload":{"role":"user","blocks":[{"type":"text","text":"hi \u00e9","origin":"prompt"},null]}}`))
	f.Add([]byte(`{"seq":4,"type":"tool.call","iteration":-1,"payload":{"name":"Bash","call_id":"c1","input":{"command":"ls"},"source":null,"result":null}}`))
	f.Add([]byte(`{"type":"step.completed","payload":{"kind":"agent","result":{"provider":"p"},"x":[1,{"y":"\ud800"}]}}`))
	f.Add([]byte(`{"type":"step.completed","payload":{"kind":"agent","result":{"provider":"p","Model":"m","error":null,"cwd":"\u00e9","status":"ok","project":"/p"}}}`))
	first := []byte(`{"seq":1,"type":"message.user","payload":{"role":"user","blocks":[{"type":"text","text":"a","origin":"system_prompt"},{"type":"command","command":"c","chunk":"k"}]}}`)
	f.Fuzz(func(t *testing.T, b []byte) {
		var d lineDecoder
		var l line
		decodeBoth(t, &d, &l, first)
		decodeBoth(t, &d, &l, b)
	})
}

// TestLineDecoderReadsResult: a step's result is read from the line's
// tape when encoding/json would read it alike, else left to
// encoding/json (linePayload.result), and either way read as
// json.Unmarshal reads it into a lineResult.
func TestLineDecoderReadsResult(t *testing.T) {
	for _, tc := range []struct {
		result string
		tape   bool // read from the tape
		want   lineResult
		ok     bool
	}{
		{`{"provider":"anthropic","model":"m","usage":{"in":1},"project":"/p","cwd":"/c","status":"ok","error":"e"}`, true,
			lineResult{Provider: "anthropic", Model: "m", Project: "/p", Cwd: "/c", Status: "ok", Error: "e"}, true},
		{`{"provider":"a\u00e9\n","x":[1,{"provider":5}]}`, true, lineResult{Provider: "a\u00e9\n"}, true},
		{`{"provider":null,"model":"m"}`, true, lineResult{Model: "m"}, true},
		{`{"provider":"claude","session_id":"s-1"}`, true, lineResult{Provider: "claude", SessionID: "s-1"}, true},
		{`{"provider":"claude","session_id":7}`, false, lineResult{}, false},
		{`{}`, true, lineResult{}, true},
		{`{"Provider":"a"}`, false, lineResult{Provider: "a"}, true},
		{`{"provider":"a","provider":"b"}`, false, lineResult{Provider: "b"}, true},
		{`{"pro\u0076ider":"a"}`, false, lineResult{Provider: "a"}, true},
		{`{"provider":5}`, false, lineResult{}, false},
		{`{"error":{"message":"x"},"provider":"a"}`, false, lineResult{}, false},
		{`"text"`, false, lineResult{}, false},
		{`[1]`, false, lineResult{}, false},
		{`null`, false, lineResult{}, false},
	} {
		b := []byte(`{"type":"step.completed","payload":{"kind":"agent","result":` + tc.result + `}}`)
		var d lineDecoder
		var l line
		require.True(t, decodeBoth(t, &d, &l, b), "%s", tc.result)
		_, err := d.decode(b, &l)
		require.NoError(t, err)
		assert.Equal(t, tc.tape, l.Payload.resRead == resOK, "%s: read from the tape", tc.result)
		var want lineResult
		require.Equal(t, tc.ok, len(l.Payload.Result) > 0 && json.Unmarshal(l.Payload.Result, &want) == nil, "%s", tc.result)
		got, ok := l.Payload.result()
		assert.Equal(t, tc.ok, ok, "%s", tc.result)
		if ok {
			assert.Equal(t, want, got, "%s", tc.result)
			assert.Equal(t, tc.want, got, "%s", tc.result)
		}
	}
}

// TestLineDecoderKeepsLittle: the tape of a line of many tokens is not
// kept for the next line; a line's tape is kept.
func TestLineDecoderKeepsLittle(t *testing.T) {
	var d lineDecoder
	var l line
	big := `{"type":"x","payload":{"input":[` + strings.Repeat(`{"a":[1,2]},`, 40000) + `0]}}`
	require.True(t, decodeBoth(t, &d, &l, []byte(big)))
	assert.LessOrEqual(t, cap(d.toks), keepTapeTokens)
	require.True(t, decodeBoth(t, &d, &l, []byte(`{"type":"x","payload":{"input":[1,2,3]}}`)))
	assert.NotZero(t, cap(d.toks))
}

// TestUnescapeAsWire: the decoder's unescape gives what wire.Unescape
// gives, bytes and success, for escapes anywhere and malformed ones.
func TestUnescapeAsWire(t *testing.T) {
	for _, s := range []string{
		``, `plain`, `\n`, `a\nb`, `\n\n\t\\\"\/`, `line one\nline two\n`, `\b\f\r`,
		`\u00e9t\u00e9`, `\ud83d\ude00 smile`, `lone \ud800 surrogate`, `\udc00`, `\ud800\u0041`,
		`trailing \`, `\x`, `\u12`, `\u12G4`, `ok then \q`, strings.Repeat(`ab\n`, 1000),
	} {
		want, wantOK := wire.Unescape([]byte("prefix"), []byte(s))
		got, gotOK := unescape([]byte("prefix"), []byte(s))
		assert.Equal(t, wantOK, gotOK, "%.40q", s)
		if wantOK {
			assert.Equal(t, want, got, "%.40q", s)
		}
	}
}

// FuzzUnescape: unescape agrees with wire.Unescape on any input.
func FuzzUnescape(f *testing.F) {
	f.Add([]byte(`a\nb\u00e9\ud83d\ude00\`))
	f.Fuzz(func(t *testing.T, s []byte) {
		want, wantOK := wire.Unescape(nil, s)
		got, gotOK := unescape(nil, s)
		if wantOK != gotOK || wantOK && !bytes.Equal(want, got) {
			t.Fatalf("%q: wire %q %v, unescape %q %v", s, want, wantOK, got, gotOK)
		}
	})
}

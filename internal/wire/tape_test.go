package wire_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/wire"
)

// checkInvariants verifies the structural properties every tape wire.BuildTape
// returns must have, against the line it indexes.
func checkInvariants(t testing.TB, line []byte, toks []wire.Token) {
	t.Helper()
	require.NotEmpty(t, toks)
	require.True(t, wire.CheckTape(toks, len(line)), "tape fails wire.CheckTape")
	require.Contains(t, []uint8{wire.KindObject, wire.KindArray}, toks[0].Kind)
	require.Equal(t, uint32(len(toks)), toks[0].Next, "root spans the whole tape")
	for i, tk := range toks {
		raw := line[tk.Start:tk.End]
		switch tk.Kind {
		case wire.KindObject:
			assert.Equal(t, byte('{'), raw[0])
			assert.Equal(t, byte('}'), raw[len(raw)-1])
		case wire.KindArray:
			assert.Equal(t, byte('['), raw[0])
			assert.Equal(t, byte(']'), raw[len(raw)-1])
		case wire.KindString:
			assert.Equal(t, byte('"'), raw[0])
			assert.Equal(t, byte('"'), raw[len(raw)-1])
			assert.Equal(t, strings.Contains(string(raw), `\`), tk.Flags&wire.FlagEscaped != 0, "escape flag of %q", raw)
		case wire.KindNumber, wire.KindTrue, wire.KindFalse, wire.KindNull:
			assert.Equal(t, uint32(i+1), tk.Next, "scalar Next")
		}
		// Every token is valid JSON on its own.
		assert.True(t, json.Valid(raw), "token %d %q", i, raw)
		// Children lie inside their container.
		if tk.Kind == wire.KindObject || tk.Kind == wire.KindArray {
			for c := i + 1; c < int(tk.Next); c++ {
				assert.GreaterOrEqual(t, toks[c].Start, tk.Start)
				assert.LessOrEqual(t, toks[c].End, tk.End)
				assert.LessOrEqual(t, toks[c].Next, tk.Next)
			}
		}
	}
}

func TestBuildTapeAgreesWithEncodingJSON(t *testing.T) {
	cases := []string{
		`{}`, `[]`, ` { } `, "\t[ ]\r\n", `{"a":1}`, `[1,2,3]`, `{"a":{"b":[true,false,null]}}`,
		`{"a":"x","a":"y"}`, `[-0, 0.5, -1.5e10, 1E+2, 1e-2, 123456789012345678901234567890]`,
		`[1e400]`, `["a\"b"]`, `["a\\"]`, `["a\\\"b"]`, `["\\\\"]`, `["\u00e9\ud83d\ude00"]`,
		`["\/\b\f\n\r\t"]`, `[""]`, `{"":""}`, "[\"\xff\xfe\"]", `[[[[]]]]`, `[{},{"x":[{}]}]`,
		// invalid
		``, ` `, `{`, `}`, `[`, `]`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[,1]`, `{a:1}`,
		`[01]`, `[1.]`, `[.5]`, `[-.5]`, `[-]`, `[1e]`, `[1e+]`, `[+1]`, `[0x10]`, `[1.5.5]`, `[--1]`, `[1-2]`,
		`[Infinity]`, `[NaN]`, `[tru]`, `[nul]`, `[falsey]`, `[truex]`, `["abc]`, `["a\"]`, "[\"a\x01b\"]",
		`["\x"]`, `["\u12"]`, `["\u12g4"]`, `["\`, `[1] [2]`, `{} x`, `[1]]`, `[1}`, `{"a":1]`, `{"a" 1}`,
		`{"a":1 "b":2}`, `[1 2]`, `1`, `"s"`, `true`, `null`, `-1`,
	}
	for _, c := range cases {
		t.Run(c, func(t *testing.T) {
			line := []byte(c)
			toks, ok := wire.BuildTape(nil, line)
			trimmed := strings.TrimSpace(c)
			want := json.Valid(line) && (strings.HasPrefix(trimmed, "{") || strings.HasPrefix(trimmed, "["))
			require.Equal(t, want, ok, "wire.BuildTape(%q)", c)
			if !ok {
				assert.Empty(t, toks)
				return
			}
			checkInvariants(t, line, toks)
		})
	}
}

func TestBuildTapeScalarsAndGarbage(t *testing.T) {
	for _, c := range []string{`1`, `"s"`, `true`, `false`, `null`, `banner text`, `data: 1`, `data:`, `[DONE]`, `data: [DONE]`} {
		toks, ok := wire.BuildTape(nil, []byte(c))
		assert.False(t, ok, c)
		assert.Empty(t, toks, c)
	}
}

func TestBuildTapeKeepsDstOnFailure(t *testing.T) {
	dst := []wire.Token{{Kind: wire.KindNull, Next: 1}}
	out, ok := wire.BuildTape(dst, []byte(`{"a":[1,2`))
	assert.False(t, ok)
	assert.Equal(t, dst, out)

	out, ok = wire.BuildTape(dst, []byte(`[1]`))
	require.True(t, ok)
	require.Len(t, out, 3)
	assert.Equal(t, wire.Token{Kind: wire.KindNull, Next: 1}, out[0])
	// Next is relative to the line's own tape.
	assert.Equal(t, uint32(2), out[1].Next)
	assert.Equal(t, uint32(2), out[2].Next)
}

func TestBuildTapeSSE(t *testing.T) {
	for _, c := range []string{`data: {"a":1}`, `data:{"a":1}`, "  data:\t{\"a\":1}  "} {
		line := []byte(c)
		toks, ok := wire.BuildTape(nil, line)
		require.True(t, ok, c)
		checkInvariants(t, line, toks)
		d := &abi.Doc{Line: line, Toks: toks}
		assert.Equal(t, `{"a":1}`, string(d.Root().Raw()))
		n, ok := d.Root().Get("a").Int()
		assert.True(t, ok)
		assert.Equal(t, int64(1), n)
	}
	_, ok := wire.BuildTape(nil, []byte(`data: data: {}`))
	assert.False(t, ok)
	_, ok = wire.BuildTape(nil, []byte(`event: message`))
	assert.False(t, ok)
}

func TestBuildTapeEscapedQuotes(t *testing.T) {
	cases := []struct {
		line string
		want string // the unescaped value of the first array element
	}{
		{`["a\"b"]`, `a"b`},
		{`["a\\"]`, `a\`},
		{`["a\\\"b"]`, `a\"b`},
		{`["\\\\"]`, `\\`},
		{`["\\\\\"",1]`, `\\"`},
		{`["x\"\"y"]`, `x""y`},
		{`["\"\"", "\\"]`, `""`},
	}
	for _, c := range cases {
		line := []byte(c.line)
		toks, ok := wire.BuildTape(nil, line)
		require.True(t, ok, c.line)
		checkInvariants(t, line, toks)
		d := &abi.Doc{Line: line, Toks: toks}
		assert.Equal(t, c.want, d.Root().Index(0).String(), c.line)
		var v []any
		require.NoError(t, json.Unmarshal(line, &v))
		assert.Equal(t, len(v), d.Root().Len())
		assert.Equal(t, v[0], d.Root().Index(0).String())
	}
}

// Depth is not limited, and hostile depth does not exhaust the stack: a
// line nested 100,000 levels deep is indexed, its innermost value and its
// closing brackets in place.
func TestBuildTapeDepth(t *testing.T) {
	nest := func(n int, inner string) []byte {
		return []byte(strings.Repeat("[", n) + inner + strings.Repeat("]", n))
	}
	for _, n := range []int{1, 512, 513, 100_000, 1 << 20} {
		line := nest(n, `"deep"`)
		toks, ok := wire.BuildTape(nil, line)
		require.True(t, ok, "%d nested arrays", n)
		require.Len(t, toks, n+1)
		require.True(t, wire.CheckTape(toks, len(line)))
		d := &abi.Doc{Line: line, Toks: toks}
		v := d.Root()
		for range n {
			v = v.Index(0)
		}
		assert.Equal(t, "deep", v.String())
		_, ok = wire.BuildTape(nil, nest(n, `"deep"`)[:len(line)-1])
		assert.False(t, ok, "%d nested arrays, one left open", n)
	}
	line := []byte(strings.Repeat(`{"a":`, 100_000) + `{"b":1,"c":[]}` + strings.Repeat("}", 100_000))
	toks, ok := wire.BuildTape(nil, line)
	require.True(t, ok)
	require.True(t, wire.CheckTape(toks, len(line)))
}

func TestKeyHashOnKeys(t *testing.T) {
	line := []byte(`{"type":"a","esc\u0061ped":1,"nested":{"type":2}}`)
	toks, ok := wire.BuildTape(nil, line)
	require.True(t, ok)
	hashed := 0
	for _, tk := range toks {
		if tk.Flags&wire.FlagHashed != 0 {
			hashed++
			require.Equal(t, wire.KeyHash(string(line[tk.Start+1:tk.End-1])), tk.Hash)
		}
	}
	require.Equal(t, 3, hashed, "every unescaped key, and only keys, carries its hash")
	doc := &abi.Doc{Line: line, Toks: toks}
	require.True(t, doc.Root().Get("type").Is("a"))
	require.Equal(t, int64(1), mustInt(t, doc.Root().Get("escaped")))
	require.Equal(t, int64(2), mustInt(t, doc.Root().Path("nested", "type")))
	require.False(t, doc.Root().Get("typo").Exists())
	// A tape from a 1.0 host (no hashes) still navigates.
	for i := range toks {
		toks[i].Flags &^= wire.FlagHashed
		toks[i].Hash = 0
	}
	require.True(t, doc.Root().Get("type").Is("a"))
}

func mustInt(t *testing.T, v abi.Value) int64 {
	t.Helper()
	n, ok := v.Int()
	require.True(t, ok)
	return n
}

// BenchmarkBuildTape indexes the claude golden inputs, and the capture
// the AWF baseline was measured on when ../shared has it (bytes per second
// of lines).
func BenchmarkBuildTape(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "golden", "claude", "*.jsonl"))
	b.Run("golden", func(b *testing.B) { benchTape(b, files) })
	b.Run("awf", func(b *testing.B) {
		benchTape(b, []string{filepath.Join("..", "..", "..", "shared", "fixtures", "claude", "switchboard_stream_json_tool_vocabulary.jsonl")})
	})
}

func benchTape(b *testing.B, files []string) {
	var lines [][]byte
	size := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".golden.jsonl") {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			b.Skip(err)
		}
		for _, l := range bytes.Split(raw, []byte("\n")) {
			lines = append(lines, l)
			size += len(l) + 1
		}
	}
	if len(lines) == 0 {
		b.Skip("no input")
	}
	keys := wire.NewKeySet("type", "message", "content", "text", "id", "name", "input", "role", "model", "usage")
	b.SetBytes(int64(size))
	var toks []wire.Token
	for b.Loop() {
		for _, l := range lines {
			toks, _ = wire.BuildTapeKeys(toks[:0], l, keys)
		}
	}
}

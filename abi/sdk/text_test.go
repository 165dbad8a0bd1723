package sdk

import (
	"unsafe"

	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/wire"
)

// field returns member a of the one-object document doc.
func field(t *testing.T, doc string) abi.Value {
	t.Helper()
	d, ok := Parse([]byte(doc))
	require.True(t, ok, doc)
	return d.Root().Get("a")
}

func TestTrimSpaceAndHasPrefix(t *testing.T) {
	assert.Equal(t, "data: x", string(TrimSpace([]byte(" \t\r\ndata: x\r\n "))))
	assert.Empty(t, TrimSpace([]byte(" \t\r\n")))
	assert.True(t, HasPrefix([]byte("data: x"), "data:"))
	assert.True(t, HasPrefix([]byte("x"), ""))
	assert.False(t, HasPrefix([]byte("dat"), "data:"))
}

func TestTypeName(t *testing.T) {
	assert.Equal(t, "turn.started", TypeName(field(t, `{"a":"turn.started"}`)))
	assert.Equal(t, "a\tb", TypeName(field(t, `{"a":"a\tb"}`)))
	assert.Equal(t, "?", TypeName(field(t, `{"a":7}`)))
	assert.Equal(t, "?", TypeName(field(t, `{}`)))
	long := strings.Repeat("x", 100)
	assert.Equal(t, long[:64], TypeName(field(t, `{"a":"`+long+`"}`)))
}

func TestName(t *testing.T) {
	assert.Equal(t, "user", Name(field(t, `{"a":"user"}`)))
	assert.Equal(t, "us\"er", Name(field(t, `{"a":"us\"er"}`)))
	assert.Equal(t, "", Name(field(t, `{"a":1}`)))
	assert.Equal(t, "", Name(field(t, `{}`)))
	// In place: the name is the line's bytes, not a copy.
	v := field(t, `{"a":"user"}`)
	from, _ := v.Span()
	assert.Same(t, &v.Doc().Line[from+1], unsafe.StringData(Name(v)))
	m := map[string]int{"user": 1}
	assert.Zero(t, testing.AllocsPerRun(10, func() { _ = m[Name(v)] + b2i(HasPrefix(v.Raw(), `"us`)) }))
}

func TestStringOfAndAppendText(t *testing.T) {
	assert.Equal(t, "x\ny", StringOf(field(t, `{"a":"x\ny"}`)).String())
	assert.False(t, StringOf(field(t, `{"a":{"b":1}}`)).IsSet())
	assert.True(t, Text(field(t, `{"a":{"b":1}}`)).IsSet(), "where Text gives the JSON text")

	dst := []byte("> ")
	dst = AppendText(dst, field(t, `{"a":"x\ny"}`))
	dst = AppendText(dst, field(t, `{"a":7}`))
	dst = AppendText(dst, field(t, `{"a":"!"}`))
	assert.Equal(t, "> x\ny!", string(dst))
}

func TestUnmappedN(t *testing.T) {
	d := newDriver(plugin(func(abi.BeginOptions) *funcNorm {
		return &funcNorm{end: func(out *Out) error {
			out.UnmappedN(S("non_json"), 3)
			out.UnmappedN(S("never"), 0)
			return nil
		}}
	}))
	st, _ := d.Begin(nil)
	require.Equal(t, wire.StatusOK, st)
	st, msg := d.End()
	require.Equal(t, wire.StatusOK, st, msg)
	recs := decode(t, d.Output(), nil)
	require.Len(t, recs, 1)
	assert.Equal(t, wire.OpUnmapped, recs[0].op)
	assert.Equal(t, "non_json", recs[0].fields[wire.TNative].s)
	assert.Equal(t, int64(3), recs[0].fields[wire.TCount].i)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestStatedExitCode(t *testing.T) {
	unset := Int{}
	for _, tc := range []struct {
		name, text, label string
		want              Int
	}{
		{"gemini trailer", "Command: false\nDirectory: (root)\nOutput: (empty)\nError: (none)\nExit Code: 1\nSignal: 0", "Exit Code: ", N(1)},
		{"the runner's line wins over the command's", "Output: Exit Code: 9\nExit Code: 3\nstep 2\nError: (none)\nExit Code: 0\nSignal: (none)", "Exit Code: ", N(0)},
		{"first line", "Exit Code: 127", "Exit Code: ", N(127)},
		{"negative", "Exit Code: -1\n", "Exit Code: ", N(-1)},
		{"trailing text", "Process exited with code 2 after 3s\n", "Process exited with code ", N(2)},
		{"not at a line start", "the Exit Code: 1 was printed", "Exit Code: ", unset},
		{"no number", "Exit Code: (none)\n", "Exit Code: ", unset},
		{"no number after a number", "Exit Code: 4\nExit Code: (none)", "Exit Code: ", N(4)},
		{"empty", "", "Exit Code: ", unset},
		{"label only", "Exit Code: ", "Exit Code: ", unset},
		{"overflow", "Exit Code: 99999999999999999999999", "Exit Code: ", unset},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, StatedExitCode([]byte(tc.text), tc.label))
		})
	}
}

func TestHeaderExitCode(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       Int
		body       string
	}{
		{"codex freeform", "Exit code: 1\nWall time: 0.2 seconds\nOutput:\nFAIL\n", N(1), "FAIL\n"},
		{"unified exec", "Chunk ID: a\nWall time: 1.0 seconds\nProcess exited with code 2\nOutput:\nboom", N(2), "boom"},
		{"a code the command printed", "Exit code: 0\nWall time: 0.1 seconds\nOutput:\nExit code: 7\n", N(0), "Exit code: 7\n"},
		{"CRLF", "Exit code: 5\r\nOutput:\r\nx", N(5), "x"},
		{"no Output line: first four lines", "a\nb\nc\nd\nExit code: 1\n", Int{}, "a\nb\nc\nd\nExit code: 1\n"},
		{"bare", "Exit code: 3", N(3), "Exit code: 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			head, body := SplitOutputHeader([]byte(tc.text))
			assert.Equal(t, tc.want, HeaderExitCode(head))
			assert.Equal(t, tc.body, string(body))
		})
	}
}

// FuzzStatedExitCode: any text, any label: no panic, and a code found is
// on a line that starts with the label.
func FuzzStatedExitCode(f *testing.F) {
	f.Add([]byte("Output: x\nExit Code: 1\nSignal: 0"), "Exit Code: ")
	f.Add([]byte("Exit code: -3\nOutput:\nExit code: 4"), "Exit code: ")
	f.Add([]byte("\n\n"), "")
	f.Fuzz(func(t *testing.T, text []byte, label string) {
		code := StatedExitCode(text, label)
		if v, ok := code.Value(); ok {
			line := label + strconv.FormatInt(v, 10)
			if !strings.HasPrefix(string(text), line) && !strings.Contains(string(text), "\n"+line) && v >= 0 {
				// A leading zero or a "-0" is the same number written otherwise.
				if !strings.Contains(string(text), label) {
					t.Fatalf("code %d found in %q without the label %q", v, text, label)
				}
			}
		}
		head, body := SplitOutputHeader(text)
		if len(head) > len(text) || len(body) > len(text) {
			t.Fatalf("split longer than the text")
		}
		HeaderExitCode(head)
	})
}

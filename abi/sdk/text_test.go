package sdk

import (
	"unsafe"

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

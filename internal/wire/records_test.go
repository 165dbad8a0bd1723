package wire

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRecordsRoundTrip(t *testing.T) {
	var e Encoder
	e.Begin(OpLine)
	e.Int(TLine, 7)
	e.End()
	e.Begin(OpToolCall)
	e.Str(TCallID, "call_1")
	e.Bytes(TName, []byte("Bash"))
	e.JSON(TInput, []byte(`{"a":1}`))
	e.Span(TCommand, 12, 34, SpanJSONString)
	e.Int(TExitCode, -3)
	e.Int(TCount, math.MinInt64)
	e.Int(TSlot, math.MaxInt64)
	e.Bool(TIsError, true)
	e.Bool(TOverride, false)
	e.Float(TCost, 0.125)
	e.Float(TValue, math.Inf(-1))
	e.Str(TText, "")
	e.End()
	e.Begin(OpWarning) // a record with no fields
	e.End()

	d := NewDecoder(e.Buf)
	r, err := d.Next()
	require.NoError(t, err)
	require.NotNil(t, r)
	assert.Equal(t, OpLine, r.Op)
	f, ok := r.Field(TLine)
	require.True(t, ok)
	assert.Equal(t, Field{Tag: TLine, Kind: VInt, Int: 7}, f)

	r, err = d.Next()
	require.NoError(t, err)
	assert.Equal(t, OpToolCall, r.Op)
	require.Len(t, r.Fields, 12)
	want := []Field{
		{Tag: TCallID, Kind: VStr, Bytes: []byte("call_1")},
		{Tag: TName, Kind: VStr, Bytes: []byte("Bash")},
		{Tag: TInput, Kind: VJSON, Bytes: []byte(`{"a":1}`)},
		{Tag: TCommand, Kind: VSpan, Off: 12, N: 34, Mode: SpanJSONString},
		{Tag: TExitCode, Kind: VInt, Int: -3},
		{Tag: TCount, Kind: VInt, Int: math.MinInt64},
		{Tag: TSlot, Kind: VInt, Int: math.MaxInt64},
		{Tag: TIsError, Kind: VBool, Bool: true},
		{Tag: TOverride, Kind: VBool, Bool: false},
		{Tag: TCost, Kind: VFloat, Float: 0.125},
		{Tag: TValue, Kind: VFloat, Float: math.Inf(-1)},
		{Tag: TText, Kind: VStr, Bytes: []byte{}},
	}
	assert.Equal(t, want, r.Fields)
	_, ok = r.Field(TError)
	assert.False(t, ok)

	r, err = d.Next()
	require.NoError(t, err)
	assert.Equal(t, OpWarning, r.Op)
	assert.Empty(t, r.Fields)

	r, err = d.Next()
	assert.NoError(t, err)
	assert.Nil(t, r, "end of output")

	e.Reset()
	assert.Empty(t, e.Buf)
	r, err = NewDecoder(e.Buf).Next()
	assert.NoError(t, err)
	assert.Nil(t, r)
}

func TestEncoderAbort(t *testing.T) {
	var e Encoder
	e.Begin(OpWarning)
	e.Str(TText, "kept")
	e.End()
	e.Begin(OpToolCall)
	e.Str(TCallID, "half") // a panic here would leave a half record
	e.Abort()
	e.Begin(OpFinal)
	e.Str(TText, "after")
	e.End()
	e.Begin(OpFinal)
	e.Abort()

	d := NewDecoder(e.Buf)
	var ops []Op
	for {
		r, err := d.Next()
		require.NoError(t, err)
		if r == nil {
			break
		}
		ops = append(ops, r.Op)
	}
	assert.Equal(t, []Op{OpWarning, OpFinal}, ops)

	e.Reset()
	e.Begin(OpWarning)
	e.Abort()
	assert.Empty(t, e.Buf, "abort after reset")
}

func record(op Op, body ...byte) []byte {
	b := []byte{byte(op), 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(b[1:], uint32(len(body)))
	return append(b, body...)
}

func TestDecoderMalformed(t *testing.T) {
	cases := map[string][]byte{
		"truncated header":      {byte(OpWarning), 0, 0},
		"op zero":               record(0),
		"length beyond":         append([]byte{byte(OpWarning)}, 10, 0, 0, 0, byte(TText)),
		"huge length":           {byte(OpWarning), 0xff, 0xff, 0xff, 0xff},
		"field header cut":      record(OpWarning, byte(TText)),
		"tag zero":              record(OpWarning, 0, byte(VStr), 0),
		"kind zero":             record(OpWarning, byte(TText), 0),
		"kind unknown":          record(OpWarning, byte(TText), byte(VJSON)+1),
		"str length missing":    record(OpWarning, byte(TText), byte(VStr)),
		"str length beyond":     record(OpWarning, byte(TText), byte(VStr), 5, 'a'),
		"str varint overlong":   record(OpWarning, byte(TText), byte(VStr), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01),
		"json length beyond":    record(OpWarning, byte(TText), byte(VJSON), 3, '{'),
		"span off missing":      record(OpWarning, byte(TText), byte(VSpan)),
		"span n missing":        record(OpWarning, byte(TText), byte(VSpan), 1),
		"span mode missing":     record(OpWarning, byte(TText), byte(VSpan), 1, 2),
		"span mode unknown":     record(OpWarning, byte(TText), byte(VSpan), 1, 2, byte(SpanJSONString)+1),
		"span off beyond int32": record(OpWarning, byte(TText), byte(VSpan), 0x80, 0x80, 0x80, 0x80, 0x10, 0, 0),
		"int missing":           record(OpWarning, byte(TCount), byte(VInt)),
		"int cut":               record(OpWarning, byte(TCount), byte(VInt), 0x80),
		"bool missing":          record(OpWarning, byte(TOverride), byte(VBool)),
		"bool two":              record(OpWarning, byte(TOverride), byte(VBool), 2),
		"float cut":             record(OpWarning, byte(TCost), byte(VFloat), 1, 2, 3),
	}
	for name, b := range cases {
		// A valid record first: it decodes, the bad one errors.
		var e Encoder
		e.Begin(OpWarning)
		e.Str(TText, "ok")
		e.End()
		buf := append(e.Buf, b...)
		d := NewDecoder(buf)
		r, err := d.Next()
		require.NoError(t, err, name)
		require.Equal(t, OpWarning, r.Op, name)
		_, err = d.Next()
		assert.ErrorIs(t, err, ErrBadRecord, name)
	}
}

// A plugin built against a newer minor version may report ops and fields
// this host does not know: they are decoded and left for the caller to
// ignore, not treated as malformed output.
func TestDecoderForwardCompatible(t *testing.T) {
	var e Encoder
	e.Begin(Op(200))
	e.Str(Tag(200), "future")
	e.End()
	e.Begin(OpWarning)
	e.Str(TText, "known")
	e.Str(Tag(250), "future field")
	e.End()
	d := NewDecoder(e.Buf)
	r, err := d.Next()
	require.NoError(t, err)
	assert.Equal(t, Op(200), r.Op)
	r, err = d.Next()
	require.NoError(t, err)
	f, ok := r.Field(TText)
	require.True(t, ok)
	assert.Equal(t, "known", string(f.Bytes))
}

// TestEncoderBytes pins the encoding of fields to the one written with
// encoding/binary's appends, around every varint length boundary, from an
// empty buffer and from one with no spare capacity.
func TestEncoderBytes(t *testing.T) {
	var ints []int64
	for s := 0; s < 64; s += 7 {
		for _, d := range []int64{-1, 0, 1} {
			ints = append(ints, int64(1)<<s+d, -(int64(1)<<s)+d)
		}
	}
	ints = append(ints, math.MaxInt64, math.MinInt64)
	long := string(make([]byte, 300))
	for _, v := range ints {
		u := int(v)
		if u < 0 {
			u = -u
		}
		for _, prefix := range [][]byte{nil, make([]byte, 7)} {
			e := Encoder{Buf: append([]byte(nil), prefix...)}
			want := append([]byte(nil), prefix...)
			e.Int(TCount, v)
			want = binary.AppendVarint(append(want, byte(TCount), byte(VInt)), v)
			e.Span(TText, u, u/3, SpanJSONString)
			want = binary.AppendUvarint(append(want, byte(TText), byte(VSpan)), uint64(u))
			want = append(binary.AppendUvarint(want, uint64(u/3)), byte(SpanJSONString))
			for _, s := range []string{"", "x", long[:uint64(u)%300]} {
				e.Str(TName, s)
				want = append(binary.AppendUvarint(append(want, byte(TName), byte(VStr)), uint64(len(s))), s...)
				e.Bytes(TOutput, []byte(s))
				want = append(binary.AppendUvarint(append(want, byte(TOutput), byte(VStr)), uint64(len(s))), s...)
				e.JSON(TValue, []byte(s))
				want = append(binary.AppendUvarint(append(want, byte(TValue), byte(VJSON)), uint64(len(s))), s...)
			}
			require.Equal(t, want, e.Buf, "%d", v)
		}
	}
}

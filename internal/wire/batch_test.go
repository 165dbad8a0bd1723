package wire

import (
	"encoding/binary"
	"errors"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type testLine struct {
	no   int
	line string
}

func buildBatch(t testing.TB, lines []testLine) []byte {
	t.Helper()
	b := AppendBatchHeader(nil, len(lines))
	for _, l := range lines {
		toks, _ := BuildTape(nil, []byte(l.line))
		before := len(b)
		b = AppendBatchLine(b, l.no, []byte(l.line), toks)
		require.Equal(t, BatchLineSize(len(l.line), len(toks)), len(b)-before)
	}
	return b
}

func decodeAll(buf []byte) ([]BatchLine, error) {
	var out []BatchLine
	err := DecodeBatch(buf, nil, func(bl BatchLine) error {
		bl.Line = append([]byte(nil), bl.Line...)
		bl.Toks = append([]Token(nil), bl.Toks...)
		out = append(out, bl)
		return nil
	})
	return out, err
}

func TestBatchWorkedExample(t *testing.T) {
	// The example in batch.go's documentation.
	want := "01000000070000000200000001000000" + "7b7d0000" + "01000000000000000200000001000000"
	toks, ok := BuildTape(nil, []byte(`{}`))
	require.True(t, ok)
	b := AppendBatchLine(AppendBatchHeader(nil, 1), 7, []byte(`{}`), toks)
	assert.Equal(t, want, hexs(b))
}

func hexs(b []byte) string {
	const h = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, h[c>>4], h[c&15])
	}
	return string(out)
}

func TestBatchRoundTrip(t *testing.T) {
	lines := []testLine{
		{1, `{"type":"a","n":[1,2,{"x":"y\"z"}]}`},
		{2, `not json`},
		{3, ``},
		{5, `[true]`},
		{6, `{"pad":"ab"}`},
		{70000, `data: {"sse":true}`},
	}
	buf := buildBatch(t, lines)
	for _, unaligned := range []bool{false, true} {
		b := buf
		if unaligned {
			// Force the copy path: tokens not 4-byte aligned in memory.
			tmp := make([]byte, len(buf)+1)
			copy(tmp[1:], buf)
			b = tmp[1:]
		}
		got, err := decodeAll(b)
		require.NoError(t, err)
		require.Len(t, got, len(lines))
		for i, l := range lines {
			assert.Equal(t, l.no, got[i].No)
			assert.Equal(t, l.line, string(got[i].Line))
			want, _ := BuildTape(nil, []byte(l.line))
			if len(want) == 0 {
				assert.Empty(t, got[i].Toks)
			} else {
				assert.Equal(t, want, got[i].Toks, "line %d unaligned=%v", l.no, unaligned)
			}
		}
	}
}

func TestBatchCallbackErrorStops(t *testing.T) {
	buf := buildBatch(t, []testLine{{1, `{}`}, {2, `{}`}})
	stop := errors.New("stop")
	n := 0
	err := DecodeBatch(buf, nil, func(BatchLine) error { n++; return stop })
	assert.ErrorIs(t, err, stop)
	assert.Equal(t, 1, n)
}

func TestBatchMalformed(t *testing.T) {
	good := buildBatch(t, []testLine{{1, `{"a":"b"}`}, {2, `xyz`}})
	le := binary.LittleEndian
	mut := func(f func(b []byte) []byte) []byte {
		return f(append([]byte(nil), good...))
	}
	// Offsets: header 4; line 1 header at 4, text at 16 (9 bytes, padded
	// to 12), tokens at 28 (3 tokens); line 2 header at 76.
	cases := map[string][]byte{
		"empty":              {},
		"short header":       {1, 0, 0},
		"count too large":    mut(func(b []byte) []byte { le.PutUint32(b, 3); return b }),
		"truncated line hdr": good[:10],
		"line beyond buffer": mut(func(b []byte) []byte { le.PutUint32(b[8:], 1000); return b }),
		"huge line length":   mut(func(b []byte) []byte { le.PutUint32(b[8:], 0xffffffff); return b }),
		"tokens beyond":      mut(func(b []byte) []byte { le.PutUint32(b[12:], 100); return b }),
		"huge token count":   mut(func(b []byte) []byte { le.PutUint32(b[12:], 0xffffffff); return b }),
		"truncated padding":  good[:len(good)-1],
		"truncated tokens":   buildBatch(t, []testLine{{1, `{"a":"b"}`}})[:40],
		"trailing bytes":     append(append([]byte(nil), good...), 0, 0, 0, 0),
		"token end past line": mut(func(b []byte) []byte {
			le.PutUint32(b[28+8:], 10)
			return b
		}),
		"start after end": mut(func(b []byte) []byte {
			le.PutUint32(b[28+16+4:], 9)
			return b
		}),
		"next backwards": mut(func(b []byte) []byte {
			le.PutUint32(b[28+16+12:], 1)
			return b
		}),
		"next past tape": mut(func(b []byte) []byte {
			le.PutUint32(b[28+12:], 4)
			return b
		}),
		"kind invalid": mut(func(b []byte) []byte {
			le.PutUint32(b[28+16:], 0)
			return b
		}),
		"kind unknown": mut(func(b []byte) []byte {
			le.PutUint32(b[28+16:], uint32(KindNull)+1)
			return b
		}),
		"short string": mut(func(b []byte) []byte {
			le.PutUint32(b[28+16+8:], 2)
			return b
		}),
	}
	// Sanity: the offsets above point where they should.
	require.Equal(t, uint32(9), le.Uint32(good[8:]))
	require.Equal(t, uint32(3), le.Uint32(good[12:]))
	require.Equal(t, uint32(KindObject), le.Uint32(good[28:]))
	require.Equal(t, uint32(KindString), le.Uint32(good[28+16:])&0xff, "a key token: kind in the low byte, flags and hash above")
	require.Equal(t, uint32(2), le.Uint32(good[76:]))
	_, err := decodeAll(good)
	require.NoError(t, err)
	for name, b := range cases {
		for _, unaligned := range []bool{false, true} {
			if unaligned {
				tmp := make([]byte, len(b)+1)
				copy(tmp[1:], b)
				b = tmp[1:]
			}
			_, err := decodeAll(b)
			assert.ErrorIs(t, err, ErrBadBatch, "%s unaligned=%v", name, unaligned)
		}
	}
}

func TestCheckTape(t *testing.T) {
	ok := []Token{{Kind: KindArray, Start: 0, End: 4, Next: 2}, {Kind: KindString, Start: 1, End: 3, Next: 2}}
	assert.True(t, checkTape(ok, 4))
	assert.False(t, checkTape(ok, 3), "end past the line")
	self := []Token{{Kind: KindArray, Start: 0, End: 2, Next: 0}}
	assert.False(t, checkTape(self, 2), "Next pointing at itself would loop")
}

func TestBatchReader(t *testing.T) {
	buf := buildBatch(t, []testLine{{1, `{"a":1}`}, {3, `x`}})
	r := NewBatchReader(buf, nil)
	var nos []int
	for {
		bl, ok := r.Next()
		if !ok {
			break
		}
		nos = append(nos, bl.No)
	}
	assert.Equal(t, []int{1, 3}, nos)
	assert.NoError(t, r.Err())
	_, ok := r.Next()
	assert.False(t, ok, "Next after the end")
	assert.NoError(t, r.Err())

	for _, bad := range [][]byte{nil, buf[:len(buf)-1], append(append([]byte(nil), buf...), 0, 0, 0, 0)} {
		r := NewBatchReader(bad, nil)
		for {
			if _, ok := r.Next(); !ok {
				break
			}
		}
		assert.ErrorIs(t, r.Err(), ErrBadBatch, "%x", bad)
		_, ok := r.Next()
		assert.False(t, ok)
		assert.ErrorIs(t, r.Err(), ErrBadBatch)
	}
}

// The in-place copy of tokens writes the bytes the portable encoding
// writes: a Token's memory layout is the batch's (kind, flags and hash
// in the first word included).
func TestAppendTokensInPlace(t *testing.T) {
	if !littleEndian {
		t.Skip("big-endian: tokens are always encoded field by field")
	}
	line := []byte(`{"type":"a","n":[1,2.5,{"x\u0041":"y\"z"}],"ok":true,"no":false,"nil":null}`)
	toks, ok := BuildTapeKeys(nil, line, NewKeySet("n", "type"))
	require.True(t, ok)
	assert.Equal(t, appendTokens(nil, toks, false), appendTokens(nil, toks, true))
	assert.Equal(t, uintptr(TokenSize), unsafe.Sizeof(Token{}))
}

// TestBatches: blank lines are skipped and the others keep their line
// numbers, at most maxLines a batch, with a tape for a JSON line and none
// for another.
func TestBatches(t *testing.T) {
	raw := []byte(`{"text":"hello"}` + "\n\n  \nbanner\n" + `{"text":"bye"}` + "\n")
	tests := []struct {
		max     int
		batches int
	}{{1, 3}, {2, 2}, {MaxBatchLines, 1}}
	for _, tt := range tests {
		bs := Batches(raw, tt.max)
		require.Len(t, bs, tt.batches, "max %d", tt.max)
		var got []BatchLine
		for _, b := range bs {
			lines, err := decodeAll(b)
			require.NoError(t, err)
			assert.LessOrEqual(t, len(lines), tt.max)
			got = append(got, lines...)
		}
		require.Len(t, got, 3)
		assert.Equal(t, []int{1, 4, 5}, []int{got[0].No, got[1].No, got[2].No})
		assert.NotEmpty(t, got[0].Toks)
		assert.Empty(t, got[1].Toks, "a line that is not JSON has no tape")
	}
	assert.Empty(t, Batches(nil, 1))
}

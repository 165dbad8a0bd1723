package normalize

import (
	"context"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/internal/wire"
)

// TestStreamBuffersKept: streams run one after the other on one
// Buffers (a sync's worker, session after session) use the buffers the
// one before grew, not buffers of their own (the batch, up to twice a
// MiB, was grown again by every session of a first sync), and write
// what a stream without them writes. While a stream runs its Buffers
// holds nothing, so a stream left unclosed shares no buffer with the
// next. Each case covers a buffer: batches of a MiB (batch and tape),
// lines cut across feeds (pending), raw control bytes escaped (fixed),
// a batch that faults and is sent again a line at a time (one).
func TestStreamBuffersKept(t *testing.T) {
	warn := func(s string) string { return do(`{"op":"warn","text":"` + s + `"}`) }
	text := func(s string) string {
		return do(`{"op":"open","key":"m"}`, `{"op":"block","key":"m","type":"text","text":"`+s+`"}`, `{"op":"close","key":"m"}`)
	}
	big := strings.Repeat("x", 96<<10)
	lines := func(n int, f func(i int) string) string {
		var b strings.Builder
		for i := range n {
			b.WriteString(f(i) + "\n")
		}
		return b.String()
	}
	cases := []struct {
		name   string
		plugin func() sdk.Plugin
		raw    string
		chunk  int // bytes a feed (0: all at once)
		grown  int // the buffer the case grows (an index of arrays)
	}{
		{"small lines", scriptPlugin, chunkInput, 0, 0},
		{"batches of a MiB", scriptPlugin, lines(40, func(i int) string { return text(big) }), 0, 0},
		{"lines cut across feeds", scriptPlugin, lines(30, func(i int) string { return text(big[:5000]) }), 4096, 1},
		{"raw control bytes", scriptPlugin, lines(20, func(i int) string { return text("nul \x00 " + big[:3000]) }), 0, 2},
		{"a batch that faults", panicky, lines(20, func(i int) string {
			if i == 7 {
				return "boom"
			}
			return warn(big[:2000])
		}), 0, 3},
	}
	feed := func(t *testing.T, p sdk.Plugin, o Options, raw string, chunk int) string {
		ctx := context.Background()
		sink := &checkSink{t: t}
		s, err := NewStream(ctx, NativeInstance(p), sink, o)
		require.NoError(t, err)
		if b := o.Buffers; b != nil {
			require.Zero(t, *b, "a Buffers lent to a running stream")
		}
		for rest := []byte(raw); len(rest) > 0; {
			n := len(rest)
			if chunk > 0 {
				n = min(n, chunk)
			}
			require.NoError(t, s.Feed(ctx, rest[:n]))
			rest = rest[n:]
		}
		res, err := s.Close(ctx)
		require.NoError(t, err)
		return snapshot(t, sink, res)
	}
	arrays := func(b *Buffers) [5]unsafe.Pointer {
		return [5]unsafe.Pointer{unsafe.Pointer(unsafe.SliceData(b.batch)), unsafe.Pointer(unsafe.SliceData(b.pending)),
			unsafe.Pointer(unsafe.SliceData(b.fixed)), unsafe.Pointer(unsafe.SliceData(b.one)), unsafe.Pointer(unsafe.SliceData(b.toks))}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := feed(t, tc.plugin(), opts(), tc.raw, tc.chunk)
			o := opts()
			o.Buffers = new(Buffers)
			require.Equal(t, want, feed(t, tc.plugin(), o, tc.raw, tc.chunk), "first stream")
			kept := arrays(o.Buffers)
			require.NotNil(t, kept[0], "the batch buffer given back")
			require.NotNil(t, kept[tc.grown], "buffer %d given back", tc.grown)
			require.NotNil(t, kept[4], "the tape given back")
			for i := range 3 {
				require.Equal(t, want, feed(t, tc.plugin(), o, tc.raw, tc.chunk), "stream %d", i+2)
				require.Equal(t, kept, arrays(o.Buffers), "stream %d: the buffers the first grew (batch, pending, fixed, one, tape)", i+2)
			}
		})
	}
}

// TestStreamBuffersBounded: a line longer than a batch (here 3 MiB, cut
// across feeds) grows the batch and the pending line past what a
// Buffers keeps (maxKept): they are dropped at Close, not kept for the
// streams that follow, which write what they would without Buffers.
func TestStreamBuffersBounded(t *testing.T) {
	text := func(s string) string {
		return do(`{"op":"open","key":"m"}`, `{"op":"block","key":"m","type":"text","text":"`+s+`"}`, `{"op":"close","key":"m"}`)
	}
	ctx := context.Background()
	run := func(o Options, raw string) string {
		sink := &checkSink{t: t}
		s, err := NewStream(ctx, NativeInstance(scriptPlugin()), sink, o)
		require.NoError(t, err)
		for rest := []byte(raw); len(rest) > 0; {
			n := min(len(rest), 64<<10)
			require.NoError(t, s.Feed(ctx, rest[:n]))
			rest = rest[n:]
		}
		res, err := s.Close(ctx)
		require.NoError(t, err)
		return snapshot(t, sink, res)
	}
	long := text(strings.Repeat("y", 3<<20)) + "\n" + text("after") + "\n"
	small := text("small") + "\n"
	o := opts()
	o.Buffers = new(Buffers)
	require.Equal(t, run(opts(), long), run(o, long))
	b := o.Buffers
	for _, c := range []struct {
		name string
		n    int
	}{{"batch", cap(b.batch)}, {"pending", cap(b.pending)}, {"fixed", cap(b.fixed)}, {"one", cap(b.one)}, {"tape", cap(b.toks) * int(unsafe.Sizeof(wire.Token{}))}} {
		require.LessOrEqual(t, c.n, maxKept, "%s kept after a line of 3 MiB", c.name)
	}
	require.Equal(t, run(opts(), small), run(o, small))
}

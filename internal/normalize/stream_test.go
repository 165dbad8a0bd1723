package normalize

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/internal/wire"
	"github.com/twasm/twasm/transcript"
)

// feedChunks runs raw through a stream fed in the given chunks.
func feedChunks(t testing.TB, o Options, chunks ...[]byte) (*checkSink, *transcript.AgentResult) {
	t.Helper()
	sink := &checkSink{t: t}
	ctx := context.Background()
	s, err := NewStream(ctx, NativeInstance(scriptPlugin()), sink, o)
	require.NoError(t, err)
	for _, c := range chunks {
		require.NoError(t, s.Feed(ctx, c))
	}
	res, err := s.Close(ctx)
	require.NoError(t, err)
	return sink, res
}

func snapshot(t testing.TB, c *checkSink, res *transcript.AgentResult) string {
	r := *res
	b, err := transcript.AppendEvent(nil, &transcript.Event{Type: transcript.StepCompleted, RunID: "r",
		Payload: &transcript.StepPayload{Kind: transcript.StepKind("agent"), Result: mustJSON(t, r)}})
	require.NoError(t, err)
	return strings.Join(render(t, &c.Collector), "\n") + "\n" + string(b)
}

func mustJSON(t testing.TB, v any) []byte {
	b, err := jsonMarshal(v)
	require.NoError(t, err)
	return b
}

const chunkInput = `{"do":[{"op":"open","key":"m"},{"op":"block","key":"m","type":"text","text":"hi"}]}` + "\r\n" +
	"\n" +
	"banner line\n" +
	`{"do":[{"op":"call","id":"c","name":"N"},{"op":"close","key":"m"},{"op":"warn","text":"w"}]}` + "\n" +
	"   \n" +
	`{"do":[{"op":"unmapped","native":"u"},{"op":"status","status":"ok","level":3}]}`

func TestStreamChunkingIndependent(t *testing.T) {
	o := opts()
	whole, res := feedChunks(t, o, []byte(chunkInput))
	want := snapshot(t, whole, res)
	assert.Equal(t, 6, res.Lines, "blank lines are counted, the last line has no LF")
	assert.Equal(t, map[string]int{"non-json": 1, "u": 1}, res.Unmapped)
	assert.Equal(t, "ok", res.Status)
	require.Len(t, whole.Events(""), 2)

	in := []byte(chunkInput)
	for i := 0; i <= len(in); i++ {
		c, r := feedChunks(t, o, in[:i], in[i:])
		require.Equal(t, want, snapshot(t, c, r), "split at %d", i)
	}
	// Byte by byte.
	var chunks [][]byte
	for i := range in {
		chunks = append(chunks, in[i:i+1])
	}
	c, r := feedChunks(t, o, chunks...)
	assert.Equal(t, want, snapshot(t, c, r))
	// One line per batch gives the same events.
	o1 := o
	o1.BatchLines = 1
	c, r = feedChunks(t, o1, in)
	assert.Equal(t, want, snapshot(t, c, r))
	o2 := o
	o2.BatchBytes = 10
	c, r = feedChunks(t, o2, in)
	assert.Equal(t, want, snapshot(t, c, r))
}

func TestStreamOversizedLines(t *testing.T) {
	long := `{"do":[{"op":"warn","text":"` + strings.Repeat("x", 100) + `"}]}`
	in := []byte(do(`{"op":"warn","text":"before"}`) + "\n" + long + "\n" + do(`{"op":"warn","text":"after"}`) + "\n" + long)
	o := opts()
	o.MaxLineBytes = 64
	whole, res := feedChunks(t, o, in)
	want := snapshot(t, whole, res)
	assert.Equal(t, map[string]int{"oversized_line": 2}, res.Unmapped)
	assert.Equal(t, 4, res.Lines, "oversized lines are lines")
	require.Len(t, res.Warnings, 4)
	assert.Equal(t, "before", res.Warnings[0])
	assert.Contains(t, res.Warnings[1], "line 2 is longer than 64 bytes")
	assert.Equal(t, "after", res.Warnings[2])
	assert.Contains(t, res.Warnings[3], "line 4 is longer")
	for i := 0; i <= len(in); i++ {
		c, r := feedChunks(t, o, in[:i], in[i:])
		require.Equal(t, want, snapshot(t, c, r), "split at %d", i)
	}
}

func TestStreamDoesNotBufferOversizedLines(t *testing.T) {
	o := opts()
	o.MaxLineBytes = 16
	sink := &checkSink{t: t}
	ctx := context.Background()
	s, err := NewStream(ctx, NativeInstance(scriptPlugin()), sink, o)
	require.NoError(t, err)
	for i := 0; i < 100; i++ {
		require.NoError(t, s.Feed(ctx, bytes.Repeat([]byte("y"), 1000)))
		require.LessOrEqual(t, cap(s.pending), 64, "an oversized line is not buffered")
	}
	require.NoError(t, s.Feed(ctx, []byte("\n{}\n")))
	res, err := s.Close(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, res.Unmapped["oversized_line"])
	assert.Equal(t, 2, res.Lines)
	_, err = s.Close(ctx)
	assert.Error(t, err, "closed twice")
	assert.Error(t, s.Feed(ctx, []byte("x")), "feed after close")
}

// panicky panics on lines containing "boom".
func panicky() sdk.Plugin {
	p := scriptPlugin()
	p.New = func(abi.BeginOptions) sdk.Normalizer { return &boom{} }
	return p
}

type boom struct{ script }

func (b *boom) Line(l *sdk.Line, out *sdk.Out) error {
	if bytes.Contains(l.Raw, []byte("boom")) {
		out.Warn("half")
		panic("boom")
	}
	return b.script.Line(l, out)
}

// A fault loses the line that caused it, not the lines batched with it:
// those are sent again one at a time on the fresh instance the fault
// left, so the step records what it records when lines arrive one by one.
func TestStreamPluginFault(t *testing.T) {
	warn := func(s string) string { return do(`{"op":"warn","text":"` + s + `"}`) }
	for _, tc := range []struct {
		name  string
		batch int
		lines []string // "boom" faults, others warn their text
	}{
		{"one line per batch", 1, []string{"one", "two", "boom", "four", "five"}},
		{"batches of two", 2, []string{"one", "two", "boom", "four", "five"}},
		{"fault first in a full batch", 64, append([]string{"boom"}, seq("l", 63)...)},
		{"fault mid batch", 64, append(append(seq("a", 10), "boom"), seq("b", 53)...)},
		{"fault last in a batch", 64, append(seq("a", 63), "boom")},
		{"two faults in a batch", 64, append(append(append(seq("a", 5), "boom"), seq("b", 5)...), "boom", "c")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var raw strings.Builder
			var want []string
			booms := 0
			for _, l := range tc.lines {
				if l == "boom" {
					raw.WriteString("boom\n")
					want = append(want, "half")
					booms++
					continue
				}
				raw.WriteString(warn(l) + "\n")
				want = append(want, l)
			}
			o := opts()
			o.BatchLines = tc.batch
			_, res := runRaw(t, panicky(), o, raw.String())
			assert.Equal(t, booms, res.FailedLines, "only the faulting lines are lost")
			assert.Equal(t, len(tc.lines), res.Lines)
			var got, lost []string
			for _, w := range res.Warnings {
				switch {
				case strings.Contains(w, "line(s) lost"):
					lost = append(lost, w)
				case strings.Contains(w, "each line sent again"):
				default:
					got = append(got, w)
				}
			}
			assert.Equal(t, want, got, "every other line's records, in order")
			require.Len(t, lost, booms)
			for _, w := range lost {
				assert.Contains(t, w, "1 line(s) lost")
				assert.Contains(t, w, "boom", "the reason")
			}
			assert.NotEqual(t, transcript.StatusOK, res.Status)
		})
	}
}

func seq(prefix string, n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = prefix + strconv.Itoa(i+1)
	}
	return s
}

// Lines lost to a plugin fault make the step an error even when the
// provider's stream ended well: the transcript lacks them.
func TestStreamFaultIsNotOK(t *testing.T) {
	raw := do(`{"op":"warn","text":"one"}`) + "\n" + "boom\n" + do(`{"op":"status","status":"ok","level":3}`) + "\n"
	o := opts()
	o.BatchLines = 1
	_, res := runRaw(t, panicky(), o, raw)
	assert.Equal(t, 1, res.FailedLines)
	assert.Equal(t, transcript.StatusError, res.Status)
	assert.Contains(t, res.Error, "1 raw line(s) were not normalized")
	// Without a fault, the same stream is ok.
	_, res = runRaw(t, panicky(), o, strings.Replace(raw, "boom\n", "", 1))
	assert.Equal(t, transcript.StatusOK, res.Status)
}

func TestStreamRejected(t *testing.T) {
	o := opts()
	o.BatchLines = 1
	_, res := runRaw(t, scriptPlugin(), o, do(`{"op":"warn","text":"kept"}`, `{"op":"reject"}`)+"\n"+do(`{"op":"warn","text":"next"}`)+"\n")
	require.Len(t, res.Warnings, 3)
	assert.Equal(t, "kept", res.Warnings[0])
	assert.Contains(t, res.Warnings[1], "rejected input")
	assert.Contains(t, res.Warnings[1], "line 1: script rejects")
	assert.Equal(t, "next", res.Warnings[2])
	assert.Zero(t, res.FailedLines)
}

func TestStreamEndFault(t *testing.T) {
	_, res := runScript(t, `{"end":[{"op":"warn","text":"at end"},{"op":"panic"}]}`)
	require.Len(t, res.Warnings, 2)
	assert.Equal(t, "at end", res.Warnings[0])
	assert.Contains(t, res.Warnings[1], "faulted in end")
}

func TestStreamEndLiteralPath(t *testing.T) {
	sink, res := runScript(t, `{"end":[{"op":"call","id":"e1","name":"End","input":{"a":  1}},{"op":"final","text":"fin\"al"},{"op":"status","status":"ok","level":3}]}`)
	evs := sink.Events("")
	require.Len(t, evs, 1)
	assert.Equal(t, `{"a":1}`, string(evs[0].Tool().Input))
	assert.Zero(t, evs[0].Tool().RawLine, "no raw line for records at End")
	assert.Equal(t, `fin"al`, res.FinalText)
	assert.Equal(t, "ok", res.Status)
}

func TestStreamSinkError(t *testing.T) {
	sink := &checkSink{t: t, failAt: 2}
	raw := do(`{"op":"call","id":"a"}`) + "\n" + do(`{"op":"call","id":"b"}`) + "\n" + do(`{"op":"call","id":"c"}`) + "\n"
	o := opts()
	o.BatchLines = 1
	_, err := Run(context.Background(), NativeInstance(scriptPlugin()), strings.NewReader(raw), sink, o)
	assert.ErrorIs(t, err, errSink)
	assert.Len(t, sink.Items, 1)

	sink = &checkSink{t: t, failAt: 1}
	_, err = Run(context.Background(), NativeInstance(scriptPlugin()), strings.NewReader(`{"end":[{"op":"call","id":"z"}]}`), sink, o)
	assert.ErrorIs(t, err, errSink, "an error at close")
}

func TestRunContextCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Run(ctx, NativeInstance(scriptPlugin()), strings.NewReader("{}\n"), &checkSink{t: t}, opts())
	assert.ErrorIs(t, err, context.Canceled)
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("read failed") }

func TestRunReadError(t *testing.T) {
	_, err := Run(context.Background(), NativeInstance(scriptPlugin()), errReader{}, &checkSink{t: t}, opts())
	assert.ErrorContains(t, err, "read failed")
}

// scripted is an Instance whose calls return what a test says.
type scripted struct {
	begin error
	feed  func(batch []byte) ([]byte, error)
	end   error
}

func (s *scripted) Begin(context.Context, abi.BeginOptions) error { return s.begin }
func (s *scripted) Feed(_ context.Context, b []byte) ([]byte, error) {
	return s.feed(b)
}
func (s *scripted) End(context.Context) ([]byte, error) { return nil, s.end }

func TestStreamInstanceErrors(t *testing.T) {
	ctx := context.Background()
	_, err := NewStream(ctx, &scripted{begin: errors.New("no")}, &checkSink{t: t}, opts())
	assert.ErrorContains(t, err, "begin stream")

	// A disabled instance: the remaining lines count as failed.
	calls := 0
	inst := &scripted{
		begin: &FaultError{Plugin: "p", Op: "begin", Err: errors.New("trap"), Stderr: "oops"},
		feed: func([]byte) ([]byte, error) {
			calls++
			return nil, &FaultError{Plugin: "p", Op: "feed", Err: ErrDisabled}
		},
	}
	o := opts()
	o.BatchLines = 1
	sink := &checkSink{t: t}
	res, err := Run(ctx, inst, strings.NewReader("a\nb\nc\n"), sink, o)
	require.NoError(t, err)
	assert.Equal(t, 1, calls)
	assert.Equal(t, 3, res.FailedLines)
	assert.Contains(t, res.Warnings[0], "plugin stderr: oops")

	// Bad output: the batch counts as failed, the stream goes on.
	inst = &scripted{feed: func([]byte) ([]byte, error) { return []byte{0xff}, nil }}
	res, err = Run(ctx, inst, strings.NewReader("a\n"), sink, opts())
	require.NoError(t, err)
	assert.Equal(t, 1, res.FailedLines)
	assert.Contains(t, res.Warnings[0], "bad plugin output")

	// A span outside the input.
	var e wire.Encoder
	e.Begin(wire.OpWarning)
	e.Span(wire.TText, 0, 1<<20, wire.SpanBytes)
	e.End()
	inst = &scripted{feed: func([]byte) ([]byte, error) { return e.Buf, errors.New("plain error") }}
	res, err = Run(ctx, inst, strings.NewReader("a\n"), sink, opts())
	require.NoError(t, err)
	assert.Contains(t, strings.Join(res.Warnings, "\n"), "outside the input")
	assert.Contains(t, strings.Join(res.Warnings, "\n"), "plain error")

	// A fault at End with bad output.
	inst = &scripted{feed: func([]byte) ([]byte, error) { return nil, nil }, end: errors.New("end err")}
	res, err = Run(ctx, inst, strings.NewReader("a\n"), sink, opts())
	require.NoError(t, err)
	assert.Contains(t, strings.Join(res.Warnings, "\n"), "end err")

	fe := &FaultError{Plugin: "p", Op: "feed", Err: errors.New("x")}
	assert.ErrorIs(t, fe, fe.Err)
	assert.Equal(t, "plugin p faulted in feed: x", fe.Error())
}

// callLog is a Sink that notes each call it gets: the events of an Emit
// by call id (or "msg"), scope openings and closings.
type callLog struct{ calls []string }

func (c *callLog) Emit(_ context.Context, scope string, evs []*transcript.Event) error {
	ids := make([]string, len(evs))
	for i, ev := range evs {
		ids[i] = "msg"
		if p := ev.Tool(); p != nil {
			ids[i] = p.CallID
		}
	}
	c.calls = append(c.calls, "emit "+scope+": "+strings.Join(ids, ","))
	return nil
}

func (c *callLog) OpenScope(_ context.Context, s Scope) error {
	c.calls = append(c.calls, "open "+s.ID)
	return nil
}

func (c *callLog) CloseScope(_ context.Context, scope, _, _ string) error {
	c.calls = append(c.calls, "close "+scope)
	return nil
}

// The events one plugin call completes reach the sink in as few Emits as
// the order allows: one per run of consecutive events of one scope, split
// by scope changes, openings and closings, in the order they were
// reported; an event held behind an open message goes with it.
func TestEmitBatches(t *testing.T) {
	raw := strings.Join([]string{
		do(`{"op":"call","id":"a","name":"X"}`, `{"op":"call","id":"b","name":"X"}`),
		do(`{"op":"scope_open","scope":"s1"}`, `{"op":"call","id":"c","name":"X","scope":"s1"}`, `{"op":"call","id":"d","name":"X","scope":"s1"}`),
		do(`{"op":"call","id":"e","name":"X"}`, `{"op":"scope_close","scope":"s1"}`),
		do(`{"op":"open","key":"m"}`, `{"op":"block","key":"m","type":"text","text":"hi"}`, `{"op":"call","id":"f","name":"X"}`),
		do(`{"op":"call","id":"g","name":"X"}`),
	}, "\n") + "\n"
	var sink callLog
	o := opts()
	s, err := NewStream(context.Background(), NativeInstance(scriptPlugin()), &sink, o)
	require.NoError(t, err)
	require.NoError(t, s.Feed(context.Background(), []byte(raw)))
	assert.Equal(t, []string{"emit : a,b", "open s1", "emit s1: c,d", "emit : e", "close s1"}, sink.calls,
		"one call: the message holds f and g back")
	require.NoError(t, s.Feed(context.Background(), []byte(do(`{"op":"close","key":"m"}`, `{"op":"call","id":"h","name":"X"}`)+"\n")))
	_, err = s.Close(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []string{"emit : msg,f,g,h"}, sink.calls[5:], "the closed message, what waited behind it and the next call's event")
}

// TestStreamBatchGrowsOnce: the batch buffer, kept from batch to batch,
// grows by doubling: a stream fed 256 KiB at a time (as capture feeds
// it) allocates about twice its largest batch for it, not the 1.5 MB
// append's own growth made (the test fails then), and a stream of a few
// lines keeps a buffer of about their size.
func TestStreamBatchGrowsOnce(t *testing.T) {
	line := []byte(`{"type":"assistant","text":"` + strings.Repeat("x", 8000) + `"}` + "\n")
	in := bytes.Repeat(line, (2<<20)/len(line))
	ctx := context.Background()
	var sent, largest int
	inst := &scripted{feed: func(b []byte) ([]byte, error) { sent++; largest = max(largest, len(b)); return nil, nil }}
	feed := func(in []byte) (*Stream, uint64) {
		s, err := NewStream(ctx, inst, &checkSink{t: t}, opts())
		require.NoError(t, err)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for p := in; len(p) > 0; p = p[min(len(p), 256<<10):] {
			require.NoError(t, s.Feed(ctx, p[:min(len(p), 256<<10)]))
		}
		runtime.ReadMemStats(&after)
		return s, after.TotalAlloc - before.TotalAlloc
	}
	s, allocated := feed(in)
	t.Logf("%d bytes in %d batches (the largest %d bytes): %d bytes allocated, batch capacity %d", len(in), sent, largest, allocated, cap(s.batch))
	assert.Greater(t, sent, 6, "a batch per feed")
	assert.Less(t, allocated, uint64(3*largest), "the batch buffer allocated about twice its final size")
	small, _ := feed(bytes.Repeat(line[:300], 10))
	assert.Less(t, cap(small.batch), 8<<10, "a stream of 10 lines keeps a small buffer")
}

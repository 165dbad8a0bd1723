package transcript

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
)

// rec is what the reader reported for one line, flattened for comparison.
type rec struct {
	line  int
	typ   string // event type, or "" when the line did not decode
	err   error  // sentinel the line error must match
	torn  bool
	warns []error // sentinels, one per warning, in order
}

func collect(t *testing.T, r *Reader) []rec {
	t.Helper()
	var out []rec
	for r.Next() {
		x := rec{line: r.lineNo, torn: r.torn}
		if err := r.lineErr; err != nil {
			var le *LineError
			if !errors.As(err, &le) || le.Line != r.lineNo {
				t.Fatalf("line error %v is not a *LineError for line %d", err, r.lineNo)
			}
			if r.Event() != nil {
				t.Fatalf("line %d: event and error both set", x.line)
			}
			x.err = err
		} else {
			x.typ = string(r.Event().Type)
		}
		for _, w := range r.warns {
			var le *LineError
			if !errors.As(w, &le) || le.Line != r.lineNo {
				t.Fatalf("warning %v is not a *LineError for line %d", w, r.lineNo)
			}
			x.warns = append(x.warns, w)
		}
		out = append(out, x)
	}
	must(t, r.Err())
	return out
}

func TestReader(t *testing.T) {
	ev := func(seq uint64, typ EventType) string {
		return string(jsonl(t, mk(seq, runA, typ, "s", 0)))
	}
	good1, good2 := ev(1, RunStarted), ev(2, MessageAssistant)
	unknownType := `{"seq":3,"run_id":"` + runA + `","type":"run.paused","path":"","iteration":0,"timestamp":"2025-05-01T12:00:00.000Z","payload":{"why":1}}` + "\n"
	unknownBlock := `{"seq":4,"run_id":"` + runA + `","type":"message.assistant","path":"s","iteration":0,"timestamp":"2025-05-01T12:00:00.000Z","payload":{"role":"assistant","blocks":[{"type":"image","fidelity":"agent_emitted"},{"type":"audio"}]}}` + "\n"
	tests := []struct {
		name string
		in   string
		opts ReaderOptions
		want []rec
	}{
		{name: "empty", in: "", want: nil},
		{name: "only blanks", in: "\n \n\t\r\n", want: nil},
		{name: "two lines", in: good1 + good2, want: []rec{{line: 1, typ: "run.started"}, {line: 2, typ: "message.assistant"}}},
		{name: "blank lines counted, skipped", in: "\n" + good1 + "  \r\n\n" + good2,
			want: []rec{{line: 2, typ: "run.started"}, {line: 5, typ: "message.assistant"}}},
		{name: "CRLF", in: strings.TrimSuffix(good1, "\n") + "\r\n", want: []rec{{line: 1, typ: "run.started"}}},
		{name: "malformed middle line, reading goes on", in: good1 + "{\"seq\":2,\"run_id\n" + "not json\n" + good2,
			want: []rec{{line: 1, typ: "run.started"}, {line: 2, err: ErrMalformed}, {line: 3, err: ErrMalformed}, {line: 4, typ: "message.assistant"}}},
		{name: "JSON but not an event", in: "[1,2]\n{}\n" + good1,
			want: []rec{{line: 1, err: ErrMalformed}, {line: 2, err: ErrMalformed}, {line: 3, typ: "run.started"}}},
		{name: "torn tail that decodes", in: good1 + strings.TrimSuffix(good2, "\n"),
			want: []rec{{line: 1, typ: "run.started"}, {line: 2, typ: "message.assistant", torn: true, warns: []error{ErrTruncated}}}},
		{name: "torn tail cut mid-JSON", in: good1 + good2[:len(good2)/2],
			want: []rec{{line: 1, typ: "run.started"}, {line: 2, err: ErrTruncated, torn: true}}},
		{name: "unknown event type", in: unknownType,
			want: []rec{{line: 1, typ: "run.paused", warns: []error{errAnyUnknownEventType}}}},
		{name: "unknown block types", in: unknownBlock,
			want: []rec{{line: 1, typ: "message.assistant", warns: []error{errAnyUnknownBlockType, errAnyUnknownBlockType}}}},
		{name: "unknown type on torn tail", in: strings.TrimSuffix(unknownType, "\n"),
			want: []rec{{line: 1, typ: "run.paused", torn: true, warns: []error{errAnyUnknownEventType, ErrTruncated}}}},
		{name: "line too long is skipped", in: good1 + `{"x":"` + strings.Repeat("y", 500) + "\"}\n" + good2,
			opts: ReaderOptions{MaxLineSize: len(good1)},
			want: []rec{{line: 1, typ: "run.started"}, {line: 2, err: ErrLineTooLong}, {line: 3, typ: "message.assistant"}}},
		{name: "line too long spanning buffers", in: good1 + strings.Repeat("z", 5000) + "\n" + good2,
			opts: ReaderOptions{MaxLineSize: len(good1), BufferSize: 64},
			want: []rec{{line: 1, typ: "run.started"}, {line: 2, err: ErrLineTooLong}, {line: 3, typ: "message.assistant"}}},
		{name: "too long torn tail", in: good1 + strings.Repeat("z", 5000),
			opts: ReaderOptions{MaxLineSize: 100, BufferSize: 64},
			want: []rec{{line: 1, err: ErrLineTooLong}, {line: 2, err: ErrLineTooLong, torn: true}}},
		{name: "tiny buffer accumulates lines", in: good1 + "\n" + good2 + good2[:10],
			opts: ReaderOptions{BufferSize: 1},
			want: []rec{{line: 1, typ: "run.started"}, {line: 3, typ: "message.assistant"}, {line: 4, err: ErrMalformed, torn: true}}},
		{name: "max line size reset to default", in: good1, opts: ReaderOptions{MaxLineSize: 0},
			want: []rec{{line: 1, typ: "run.started"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := collect(t, NewReader(strings.NewReader(tc.in), tc.opts))
			if len(got) != len(tc.want) {
				t.Fatalf("got %d lines %+v, want %d", len(got), got, len(tc.want))
			}
			for i, w := range tc.want {
				g := got[i]
				eq(t, g.line, w.line, "line number")
				eq(t, g.typ, w.typ, fmt.Sprintf("line %d type", w.line))
				eq(t, g.torn, w.torn, fmt.Sprintf("line %d torn", w.line))
				if w.err != nil {
					isErr(t, g.err, w.err)
				} else if g.err != nil {
					t.Fatalf("line %d: unexpected error %v", w.line, g.err)
				}
				if len(g.warns) != len(w.warns) {
					t.Fatalf("line %d: warnings %v, want %v", w.line, g.warns, w.warns)
				}
				for j := range w.warns {
					isErr(t, g.warns[j], w.warns[j])
				}
			}
		})
	}
}

func TestReaderUnknownTypesKeepTheirStrings(t *testing.T) {
	in := `{"seq":1,"run_id":"r","type":"run.paused","path":"","iteration":0,"timestamp":"2025-05-01T12:00:00.000Z","payload":{"why":1}}` + "\n" +
		`{"seq":2,"run_id":"r","type":"message.assistant","path":"s","iteration":0,"timestamp":"2025-05-01T12:00:00.000Z","payload":{"role":"assistant","blocks":[{"type":"text","fidelity":"router","text":"a"},{"type":"image","fidelity":"agent_emitted","url":"u"}]}}` + "\n"
	r := NewReader(strings.NewReader(in))
	if !r.Next() {
		t.Fatal("no line")
	}
	var ue *UnknownTypeError
	if !errors.As(r.Problems()[0], &ue) || ue.Type != "run.paused" || ue.Block != -1 {
		t.Fatalf("warning %v does not carry the type string", r.Problems()[0])
	}
	raw, ok := r.Event().Payload.(*RawPayload)
	if !ok || string(raw.JSON) != `{"why":1}` {
		t.Fatalf("unknown payload not kept: %#v", r.Event().Payload)
	}
	if !r.Next() {
		t.Fatal("no second line")
	}
	var ub *UnknownTypeError
	if !errors.As(r.Problems()[0], &ub) || ub.Type != "image" || ub.Block != 1 {
		t.Fatalf("warning %v does not carry the block type", r.Problems()[0])
	}
	b := r.Event().Message().Blocks[1]
	eq(t, string(b.Type), "image", "block type")
	eq(t, string(b.Extra["url"]), `"u"`, "unknown block field")
	if r.Next() {
		t.Fatal("extra line")
	}
}

func TestReaderLineAndOffset(t *testing.T) {
	a := jsonl(t, mk(1, runA, RunStarted, "", 0))
	b := jsonl(t, mk(2, runA, StepStarted, "s", 0))
	in := append(append(append([]byte{}, a...), '\n'), b[:len(b)-1]...)
	r := NewReader(bytes.NewReader(in))
	if !r.Next() {
		t.Fatal("no line")
	}
	bytesEq(t, r.Line(), a[:len(a)-1], "line 1")
	eq(t, r.offset, int64(0), "offset 1")
	if !r.Next() {
		t.Fatal("no line 3")
	}
	eq(t, r.lineNo, 3, "line number")
	eq(t, r.offset, int64(len(a)+1), "offset of the torn line")
	eq(t, r.torn, true, "torn")
	bytesEq(t, r.Line(), b[:len(b)-1], "line 3")
	if r.Next() {
		t.Fatal("Next after the end")
	}
	if r.Next() {
		t.Fatal("Next after the end, twice")
	}
	if r.Event() != nil || r.Line() != nil || r.lineErr != nil || r.warns != nil {
		t.Fatal("state not cleared at the end")
	}
}

// TestReaderEventOwnsItsMemory: the reader reuses its buffer, so a decoded
// event must not alias the line.
func TestReaderEventOwnsItsMemory(t *testing.T) {
	line := `{"seq":1,"run_id":"r","type":"tool.call","path":"a","iteration":0,"timestamp":"2025-05-01T12:00:00.000Z","payload":{"name":"n","call_id":"c","input":{"k":"v"},"fidelity":"router","x":[1]},"y":{"z":2}}` + "\n"
	r := NewReader(strings.NewReader(line))
	if !r.Next() {
		t.Fatal("no line")
	}
	ev := r.Event()
	buf := r.Line()
	for i := range buf {
		buf[i] = '#'
	}
	eq(t, string(ev.Tool().Input), `{"k":"v"}`, "input")
	eq(t, string(ev.Tool().Extra["x"]), `[1]`, "payload extra")
	eq(t, string(ev.Extra["y"]), `{"z":2}`, "envelope extra")
}

type failingReader struct {
	data []byte
	err  error
	n    int
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		f.n++
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

func TestReaderErrIsSticky(t *testing.T) {
	boom := errors.New("disk on fire")
	good := jsonl(t, mk(1, runA, RunStarted, "", 0))
	fr := &failingReader{data: append(good, `{"partial`...), err: boom}
	r := NewReader(fr)
	if !r.Next() || r.Event() == nil {
		t.Fatal("first line not read")
	}
	if r.Next() {
		t.Fatal("Next true after a read error")
	}
	isErr(t, r.Err(), boom)
	calls := fr.n
	if r.Next() {
		t.Fatal("Next true after a sticky error")
	}
	eq(t, fr.n, calls, "reads after the sticky error")
	isErr(t, r.Err(), boom)
}

func TestReadAll(t *testing.T) {
	evs := goodRun(runA)
	in := jsonl(t, evs...)
	in = append(in, "garbage\n"...)
	in = append(in, `{"seq":9,"run_id":"x","type":"run.paused","payload":null}`...)
	got, problems, err := ReadAll(bytes.NewReader(in))
	must(t, err)
	eq(t, len(got), len(evs)+1, "events")
	eq(t, len(problems), 3, "problems")
	isErr(t, problems[0], ErrMalformed)
	isErr(t, problems[1], errAnyUnknownEventType)
	isErr(t, problems[2], ErrTruncated)
	var le *LineError
	if !errors.As(problems[0], &le) || le.Line != len(evs)+1 {
		t.Fatalf("problem %v not on line %d", problems[0], len(evs)+1)
	}
	if !strings.Contains(le.Error(), fmt.Sprintf("line %d:", len(evs)+1)) {
		t.Fatalf("message %q lacks the line number", le.Error())
	}
	for i, e := range evs {
		want, _ := AppendEvent(nil, e)
		gotb, err := AppendEvent(nil, got[i])
		must(t, err)
		bytesEq(t, gotb, want, "round trip")
	}

	_, _, err = ReadAll(&failingReader{err: io.ErrUnexpectedEOF})
	isErr(t, err, io.ErrUnexpectedEOF)
}

// TestReaderHugeLine reads a line of more than 64 MiB (a tool output or a
// file dump inside one message) and the line after it.
func TestReaderHugeLine(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocates a few hundred MiB; slow under -race")
	}
	const size = 64<<20 + 123
	text := strings.Repeat("0123456789abcdef", size/16+1)[:size]
	e := mk(2, runA, MessageAssistant, "s", 0)
	e.Message().Blocks = []Block{TextBlock(text)}
	head := jsonl(t, mk(1, runA, RunStarted, "", 0))
	big := jsonl(t, e)
	tail := jsonl(t, mk(3, runA, RunCompleted, "", 0))
	r := NewReader(io.MultiReader(bytes.NewReader(head), bytes.NewReader(big), bytes.NewReader(tail)))
	var n int
	for r.Next() {
		n++
		if err := r.lineErr; err != nil {
			t.Fatalf("line %d: %v", r.lineNo, err)
		}
		if r.lineNo == 2 {
			got := r.Event().Message().Blocks[0].Text
			if len(got) != size || got != text {
				t.Fatalf("huge text not read back intact (%d bytes)", len(got))
			}
		}
	}
	must(t, r.Err())
	eq(t, n, 3, "lines")
}

// endless yields n bytes of 'x' without ever holding them.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	if e.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > e.n {
		p = p[:e.n]
	}
	for i := range p {
		p[i] = 'x'
	}
	e.n -= int64(len(p))
	return len(p), nil
}

// TestReaderSkipsTooLongLineWithoutStoringIt feeds a 64 MiB line over the
// limit and checks that skipping it costs memory bounded by the limit.
func TestReaderSkipsTooLongLineWithoutStoringIt(t *testing.T) {
	tail := jsonl(t, mk(1, runA, RunStarted, "", 0))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r := NewReader(io.MultiReader(&endless{n: 64 << 20}, strings.NewReader("\n"), bytes.NewReader(tail)), ReaderOptions{MaxLineSize: 1 << 20})
	if !r.Next() {
		t.Fatal("no line")
	}
	isErr(t, r.lineErr, ErrLineTooLong)
	if r.Line() != nil {
		t.Fatal("a too-long line must not be returned")
	}
	if !r.Next() || r.Event() == nil {
		t.Fatalf("line after the long one not read: %v", r.lineErr)
	}
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Fatalf("skipping a long line allocated %d bytes", alloc)
	}
}

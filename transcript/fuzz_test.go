package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/fstest"
	"unicode/utf8"

	"github.com/twasm/twasm/internal/jsonstr"
)

func fuzzSeeds(f *testing.F) [][]byte {
	f.Helper()
	var seeds [][]byte
	for _, e := range fullEvents() {
		b, err := AppendEvent(nil, e)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	seeds = append(seeds,
		[]byte(`{"seq":3,"run_id":"r","type":"run.paused","payload":{"why":1}}`),
		[]byte(`{"type":"message.assistant","payload":{"blocks":[{"type":"image","x":1}]},"extra":"\udc80"}`),
		[]byte(`{"type":"run.started","timestamp":"0000-01-01T00:00:00+01:00"}`),
		[]byte(`{"type":"tool.call","payload":{"call_id":"c","fidelity":"router","input":{"a":01}}}`),
		[]byte("not json"),
	)
	return seeds
}

// checkReencode asserts what the reader promises about an event it returns:
// encoding it either works, and then the output reads back to the same
// bytes, or fails with ErrInvalidEvent, which it must when the line named
// an unknown type.
func checkReencode(t *testing.T, ev *Event, unknownType bool) {
	t.Helper()
	b, err := AppendEvent(nil, ev)
	if err != nil {
		if !errors.Is(err, ErrInvalidEvent) {
			t.Fatalf("re-encode failed with %v, not ErrInvalidEvent", err)
		}
		return
	}
	if unknownType {
		t.Fatalf("event with an unknown type re-encoded: %s", b)
	}
	if !json.Valid(b) || !utf8.Valid(b) || bytes.IndexByte(b, '\n') >= 0 {
		t.Fatalf("encoder wrote a bad line: %q", b)
	}
	again, err := DecodeEvent(b)
	if err != nil {
		t.Fatalf("encoder output does not decode: %v\n%q", err, b)
	}
	b2, err := AppendEvent(nil, again)
	if err != nil {
		t.Fatalf("second encode: %v", err)
	}
	if !bytes.Equal(b, b2) {
		t.Fatalf("encoding is not a fixed point:\n%q\n%q", b, b2)
	}
}

func FuzzReader(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(append(s, '\n'), uint8(0))
	}
	f.Add([]byte("\n\n{}\n[\n"), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, knob uint8) {
		// The knob varies buffer and line limits so that the long-line
		// and accumulation paths are reached with small inputs.
		opts := ReaderOptions{BufferSize: int(knob%64) + 1}
		if knob >= 128 {
			opts.MaxLineSize = int(knob - 127)
		}
		r := NewReader(bytes.NewReader(data), opts)
		last := 0
		for r.Next() {
			if r.lineNo <= last {
				t.Fatalf("line numbers not increasing: %d after %d", r.lineNo, last)
			}
			last = r.lineNo
			if r.offset < 0 || r.offset > int64(len(data)) {
				t.Fatalf("offset %d outside the input", r.offset)
			}
			if err := r.lineErr; err != nil {
				var le *LineError
				if !errors.As(err, &le) || le.Line != last || r.Event() != nil {
					t.Fatalf("bad line error %v", err)
				}
				if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrLineTooLong) {
					t.Fatalf("line error %v is neither malformed nor too long", err)
				}
				continue
			}
			ev := r.Event()
			if ev == nil {
				t.Fatal("no event and no error")
			}
			unknown := false
			for _, w := range r.warns {
				switch {
				case matches(w, errAnyUnknownEventType), matches(w, errAnyUnknownBlockType):
					unknown = true
				case errors.Is(w, ErrTruncated):
					if !r.torn {
						t.Fatal("truncation warning on a complete line")
					}
				default:
					t.Fatalf("unexpected warning %v", w)
				}
			}
			checkReencode(t, ev, unknown)
		}
		if err := r.Err(); err != nil {
			t.Fatalf("Err on an in-memory reader: %v", err)
		}
		if last > bytes.Count(data, []byte("\n"))+1 {
			t.Fatalf("line %d past the end", last)
		}
	})
}

func FuzzDecodeEvent(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		ev, err := DecodeEvent(line)
		switch {
		case err == nil || ev != nil:
			if ev == nil {
				t.Fatal("nil event without a malformed error")
			}
			checkReencode(t, ev, err != nil && (matches(err, errAnyUnknownEventType) || matches(err, errAnyUnknownBlockType)))
		default:
			if ev != nil || !errors.Is(err, ErrMalformed) {
				t.Fatalf("failure %v with event %v", err, ev)
			}
		}
	})
}

func FuzzValidate(f *testing.F) {
	var all []byte
	for _, s := range fuzzSeeds(f) {
		f.Add(append(s, '\n'))
		all = append(append(all, s...), '\n')
	}
	f.Add(all)
	f.Add(jsonl(f, goodRun(runA)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := fstest.MapFS{
			"d/" + runA + ".jsonl": {Data: data},
			"d/" + runB + ".jsonl": {Data: data},
		}
		for _, name := range []string{"d/" + runA + ".jsonl", "d/" + runB + ".jsonl"} {
			r, err := ValidateFile(fsys, name, ValidateOptions{MaxIssuesPerCode: -1})
			if err != nil {
				t.Fatal(err)
			}
			checkReport(t, r)
		}
		checkReport(t, Validate(bytes.NewReader(data), ValidateOptions{MaxLineSize: 64}))
	})
}

func checkReport(t *testing.T, r *Report) {
	t.Helper()
	if r.OK() != (len(r.Errors) == 0) || r.Events > r.Lines {
		t.Fatalf("inconsistent report %+v", r)
	}
	for _, list := range [][]Issue{r.Errors, r.Warnings} {
		for _, is := range list {
			if is.Code == "" || is.Msg == "" || is.Line < 0 || is.Line > r.Lines {
				t.Fatalf("bad issue %+v (lines %d)", is, r.Lines)
			}
		}
	}
	if _, err := json.Marshal(r); err != nil {
		t.Fatal(err)
	}
}

func FuzzQuoteRoundTrip(f *testing.F) {
	for _, s := range []string{"", "plain", "nul\x00", "\x1b[31m", "\xff\xfe", "\xed\xa0\x80", `\udc80`, "😀", `{"a":[1,"\u00e9"]}`, "01", "-0.5e+7"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		q := jsonstr.AppendQuoted(nil, string(s))
		if !json.Valid(q) || !utf8.Valid(q) || bytes.IndexByte(q, '\n') >= 0 {
			t.Fatalf("jsonstr.AppendQuoted(%q) = %q is not a clean JSON string", s, q)
		}
		back, err := jsonstr.AppendUnquoted(nil, q)
		if err != nil || !bytes.Equal(back, s) {
			t.Fatalf("round trip of %q: %q, %v", s, back, err)
		}
		if utf8.Valid(s) && !strings.Contains(string(s), "\ufffd") {
			// For valid UTF-8 the standard decoder must agree.
			var std string
			if err := json.Unmarshal(q, &std); err != nil || std != string(s) {
				t.Fatalf("encoding/json reads %q as %q, %v", q, std, err)
			}
		}
		c, err := jsonstr.AppendCompactJSON(nil, s)
		if err != nil {
			if !errors.Is(err, jsonstr.ErrBadJSON) {
				t.Fatalf("compact error %v does not wrap jsonstr.ErrBadJSON", err)
			}
			if json.Valid(s) && bytes.Count(s, []byte("[")) < jsonstr.MaxDepth && bytes.Count(s, []byte("{")) < jsonstr.MaxDepth {
				t.Fatalf("valid JSON %q rejected: %v", s, err)
			}
			return
		}
		if !json.Valid(c) || !utf8.Valid(c) {
			t.Fatalf("jsonstr.AppendCompactJSON(%q) = %q is not valid", s, c)
		}
		c2, err := jsonstr.AppendCompactJSON(nil, c)
		if err != nil || !bytes.Equal(c, c2) {
			t.Fatalf("compact not idempotent: %q -> %q (%v)", c, c2, err)
		}
	})
}

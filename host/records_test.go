package host

import (
	"fmt"
	"testing"

	"github.com/twasm/twasm/internal/wire"
)

// decodeCheck is the record check as decoding does it: every record
// decoded by wire.Decoder, then every span field of it checked against the
// input. checkRecords must accept and refuse exactly what it does, with
// the same error.
func decodeCheck(chunk []byte, input int) error {
	d := wire.NewDecoder(chunk)
	for {
		r, err := d.Next()
		if err != nil {
			return err
		}
		if r == nil {
			return nil
		}
		for _, f := range r.Fields {
			if f.Kind == wire.VSpan && (f.Off > input || f.N > input-f.Off) {
				return fmt.Errorf("record op %d: span [%d, %d) outside the call's input of %d bytes", r.Op, f.Off, f.Off+f.N, input)
			}
		}
	}
}

// records encodes one record of every field kind, with a span [off,
// off+n), then a second record with one more span.
func records(off, n int) []byte {
	var e wire.Encoder
	e.Begin(wire.OpToolCall)
	e.Str(wire.TCallID, "c")
	e.Span(wire.TInput, off, n, wire.SpanJSON)
	e.Int(wire.TExitCode, -300)
	e.Bool(wire.TIsError, true)
	e.Float(wire.TCost, 1.5)
	e.JSON(wire.TValue, []byte(`{"a":1}`))
	e.End()
	e.Begin(wire.OpWarning)
	e.Span(wire.TText, 0, 1, wire.SpanString)
	e.End()
	return append([]byte(nil), e.Buf...)
}

// checkCases are chunks checkRecords must accept (want "") or refuse with
// the error given, each against an input of 10 bytes.
var checkCases = []struct {
	name  string
	chunk []byte
	want  string
}{
	{"empty", nil, ""},
	{"every kind", records(2, 8), ""},
	{"span ending at the input's end", records(10, 0), ""},
	{"span past the input", records(3, 8), "record op 7: span [3, 11) outside the call's input of 10 bytes"},
	{"span starting past the input", records(11, 0), "record op 7: span [11, 11) outside the call's input of 10 bytes"},
	{"record cut short", records(2, 8)[:20], wire.ErrBadRecord.Error()},
	{"header cut short", []byte{7, 0, 0}, wire.ErrBadRecord.Error()},
	{"op 0", []byte{0, 0, 0, 0, 0}, wire.ErrBadRecord.Error()},
	{"length past the end", []byte{7, 9, 0, 0, 0, 1}, wire.ErrBadRecord.Error()},
	{"tag 0", []byte{7, 2, 0, 0, 0, 0, byte(wire.VBool)}, wire.ErrBadRecord.Error()},
	{"unknown kind", []byte{7, 3, 0, 0, 0, 1, 9, 0}, wire.ErrBadRecord.Error()},
	{"bool 2", []byte{7, 3, 0, 0, 0, 1, byte(wire.VBool), 2}, wire.ErrBadRecord.Error()},
	{"float cut short", []byte{7, 5, 0, 0, 0, 1, byte(wire.VFloat), 0, 0, 0}, wire.ErrBadRecord.Error()},
	{"int without its bytes", []byte{7, 2, 0, 0, 0, 1, byte(wire.VInt)}, wire.ErrBadRecord.Error()},
	{"string longer than the record", []byte{7, 4, 0, 0, 0, 1, byte(wire.VStr), 5, 'a'}, wire.ErrBadRecord.Error()},
	{"span mode 4", []byte{7, 5, 0, 0, 0, 1, byte(wire.VSpan), 0, 0, 4}, wire.ErrBadRecord.Error()},
	{"span without its mode", []byte{7, 4, 0, 0, 0, 1, byte(wire.VSpan), 0, 0}, wire.ErrBadRecord.Error()},
	{"span offset above 2^31", []byte{7, 9, 0, 0, 0, 1, byte(wire.VSpan), 0x80, 0x80, 0x80, 0x80, 0x08, 0, 0}, wire.ErrBadRecord.Error()},
	// A bad span and, later in the same record, a malformed field:
	// the record does not decode, so it is malformed.
	{"bad span, then a bad field", []byte{7, 8, 0, 0, 0, 1, byte(wire.VSpan), 20, 1, 0, 2, byte(wire.VBool), 7}, wire.ErrBadRecord.Error()},
	// A bad span in one record, a malformed record after it: the
	// first record's span is found first.
	{"bad span, then a bad record", append([]byte{7, 5, 0, 0, 0, 1, byte(wire.VSpan), 20, 1, 0}, 0, 0, 0, 0, 0),
		"record op 7: span [20, 21) outside the call's input of 10 bytes"},
}

func TestCheckRecords(t *testing.T) {
	for _, c := range checkCases {
		t.Run(c.name, func(t *testing.T) {
			got := ""
			if err := checkRecords(c.chunk, 10); err != nil {
				got = err.Error()
			}
			if got != c.want {
				t.Errorf("checkRecords = %q, want %q", got, c.want)
			}
			want := ""
			if err := decodeCheck(c.chunk, 10); err != nil {
				want = err.Error()
			}
			if got != want {
				t.Errorf("checkRecords = %q, decoding says %q", got, want)
			}
		})
	}
}

// FuzzCheckRecords: checkRecords accepts and refuses exactly what
// decoding the chunk and checking its spans does, with the same error,
// and never panics.
func FuzzCheckRecords(f *testing.F) {
	for _, c := range checkCases {
		f.Add(c.chunk, uint16(10))
	}
	f.Add(records(0, 0), uint16(0))
	f.Fuzz(func(t *testing.T, chunk []byte, input uint16) {
		got, want := checkRecords(chunk, int(input)), decodeCheck(chunk, int(input))
		if (got == nil) != (want == nil) || got != nil && got.Error() != want.Error() {
			t.Fatalf("checkRecords = %v, decoding says %v", got, want)
		}
	})
}

// BenchmarkCheckRecords compares checkRecords with decoding the records
// (decodeCheck, the check before), on 1,000 records of every field kind.
func BenchmarkCheckRecords(b *testing.B) {
	var chunk []byte
	for range 500 {
		chunk = append(chunk, records(2, 8)...)
	}
	for _, c := range []struct {
		name  string
		check func([]byte, int) error
	}{{"check", checkRecords}, {"decode", decodeCheck}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(chunk)))
			for b.Loop() {
				if err := c.check(chunk, 10); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

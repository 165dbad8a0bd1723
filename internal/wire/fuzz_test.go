package wire

import "testing"

func FuzzDecodeRecords(f *testing.F) {
	var e Encoder
	e.Begin(OpToolCall)
	e.Str(TCallID, "c")
	e.Span(TInput, 1, 2, SpanJSON)
	e.Int(TExitCode, -1)
	e.Bool(TIsError, true)
	e.Float(TCost, 1.5)
	e.JSON(TValue, []byte(`{}`))
	e.End()
	f.Add(append([]byte(nil), e.Buf...))
	f.Add([]byte{1, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, out []byte) {
		d := NewDecoder(out)
		for i := 0; i <= len(out); i++ {
			r, err := d.Next()
			if err != nil || r == nil {
				return
			}
			if r.Op == 0 {
				t.Fatal("op 0 decoded")
			}
			for _, fl := range r.Fields {
				if fl.Tag == 0 || fl.Kind == 0 || fl.Kind > VJSON || fl.Off < 0 || fl.N < 0 || fl.Mode > SpanJSONString {
					t.Fatalf("bad field %+v", fl)
				}
			}
		}
		t.Fatal("decoder did not terminate")
	})
}

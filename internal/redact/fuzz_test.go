package redact

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzMaskBytes: masking never panics, keeps a JSON line JSON, and keeps
// text without a mark as it was; a Stream gives back as many lines as it
// took, each masked.
func FuzzMaskBytes(f *testing.F) {
	for _, s := range []string{
		`{"a":"b"}`, `data: {"delta":"sk-pro"}`, `{"text":"gh\u0070_x"}`, `[1,"\ud800",{"k":"v"}]`,
		`{"arguments":"{\"password\":\"q8Zr2Lx9Vt4Nw7Kp3Hs6\"}"}`, `plain sk-` + "ant-api03-aaaaaaaaaaaaaaaaaaaaaaaa", `{"a":"`, `"\`,
	} {
		f.Add([]byte(s), []byte(`{"delta":"j-Tq7aaaaaaaaaaaaaaaaaaaaaaaa"}`))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		r := New()
		out := r.MaskBytes(a)
		if json.Valid(a) && !json.Valid(out) {
			t.Fatalf("valid JSON became invalid:\n%q\n%q", a, out)
		}
		if !bytes.Contains(out, []byte("[REDACTED:")) && !bytes.Equal(out, a) && !bytes.Contains(a, []byte("[REDACTED:")) {
			t.Fatalf("changed without a mark:\n%q\n%q", a, out)
		}
		st := NewStream()
		lines := [][]byte{a, b, a}
		var got [][]byte
		for _, l := range lines {
			got = append(got, st.Push(l)...)
		}
		got = append(got, st.Flush()...)
		if len(got) != len(lines) {
			t.Fatalf("%d lines in, %d out", len(lines), len(got))
		}
		for i, g := range got {
			if json.Valid(lines[i]) && !json.Valid(g) {
				t.Fatalf("line %d: valid JSON became invalid:\n%q\n%q", i, lines[i], g)
			}
		}
	})
}

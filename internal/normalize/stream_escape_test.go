package normalize

import (
	"encoding/json"
	"testing"
)

func TestEscapeRawControls(t *testing.T) {
	tests := []struct{ in, want string }{
		{"{\"a\":\"x\x00y\"}", `{"a":"x\u0000y"}`},
		{"{\"a\":\"tab\there\x1b[0m\"}", `{"a":"tab\u0009here\u001b[0m"}`},
		{"{\"a\":\"q\\\"\x01\"}", `{"a":"q\"\u0001"}`},
		{"{\n\t\"a\": 1}", "{\n\t\"a\": 1}"},
	}
	for _, tc := range tests {
		got, changed := escapeRawControls(nil, []byte(tc.in))
		if string(got) != tc.want {
			t.Fatalf("%q: got %q, want %q", tc.in, got, tc.want)
		}
		if changed != (tc.in != tc.want) {
			t.Fatalf("%q: changed=%v", tc.in, changed)
		}
		if !json.Valid(got) {
			t.Fatalf("%q: result is not JSON: %q", tc.in, got)
		}
	}
}

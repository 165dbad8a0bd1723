package linediff

import (
	"strings"
	"testing"
)

func TestOps(t *testing.T) {
	tests := []struct{ a, b, want string }{
		{"", "", ""},
		{"a b c", "a b c", "=a =b =c"},
		{"a b c", "a x c", "=a -b +x =c"},
		{"a", "", "-a"},
		{"", "a b", "+a +b"},
		{"a b c d", "b d e", "-a =b -c =d +e"},
	}
	for _, tc := range tests {
		ops, ok := Ops(strings.Fields(tc.a), strings.Fields(tc.b))
		if !ok {
			t.Fatal("not ok")
		}
		a, b := strings.Fields(tc.a), strings.Fields(tc.b)
		var got []string
		for _, op := range ops {
			switch op.Kind {
			case Equal:
				got = append(got, "="+a[op.A])
			case Del:
				got = append(got, "-"+a[op.A])
			case Add:
				got = append(got, "+"+b[op.B])
			}
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("%q → %q: %q, want %q", tc.a, tc.b, g, tc.want)
		}
	}
	if _, ok := Ops(make([]string, 3000), make([]string, 3000)); ok {
		t.Error("a table over MaxCells was built")
	}
}

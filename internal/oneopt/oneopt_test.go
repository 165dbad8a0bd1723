package oneopt

import (
	"strings"
	"testing"
)

func TestGet(t *testing.T) {
	type opts struct{ N int }
	if got := Get[opts]("f", nil); got != (opts{}) {
		t.Fatalf("none: %+v", got)
	}
	if got := Get("f", []opts{{N: 3}}); got.N != 3 {
		t.Fatalf("one: %+v", got)
	}
	defer func() {
		if p, _ := recover().(string); !strings.Contains(p, "pkg.F: 2 options values") {
			t.Fatalf("two: panic %q", p)
		}
	}()
	Get("pkg.F", []opts{{}, {}})
}

package lifecycle

// Small assertion helpers: the module's pinned testify needs a yaml module
// that go.mod does not list, so tests use these instead.

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
)

func msg(args []any) string {
	if len(args) == 0 {
		return ""
	}
	if f, ok := args[0].(string); ok {
		return ": " + fmt.Sprintf(f, args[1:]...)
	}
	return ": " + fmt.Sprint(args...)
}

func noErr(t testing.TB, err error, args ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error %v%s", err, msg(args))
	}
}

func isErr(t testing.TB, err error, args ...any) {
	t.Helper()
	if err == nil {
		t.Fatalf("want an error%s", msg(args))
	}
}

func errIs(t testing.TB, err, target error, args ...any) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v is not %v%s", err, target, msg(args))
	}
}

func eqErr(t testing.TB, err error, want string) {
	t.Helper()
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
}

func eq(t testing.TB, want, got any, args ...any) {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("got %#v, want %#v%s", got, want, msg(args))
	}
}

func isTrue(t testing.TB, cond bool, args ...any) {
	t.Helper()
	if !cond {
		t.Fatalf("condition false%s", msg(args))
	}
}

func isNil(t testing.TB, v any, args ...any) {
	t.Helper()
	if v != nil && !(reflect.ValueOf(v).Kind() == reflect.Pointer && reflect.ValueOf(v).IsNil()) {
		t.Fatalf("got %#v, want nil%s", v, msg(args))
	}
}

func isEmpty(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Map, reflect.String, reflect.Array, reflect.Chan:
		return rv.Len() == 0
	case reflect.Pointer:
		return rv.IsNil()
	}
	return rv.IsZero()
}

func empty(t testing.TB, v any, args ...any) {
	t.Helper()
	if !isEmpty(v) {
		t.Fatalf("got %#v, want empty%s", v, msg(args))
	}
}

func notEmpty(t testing.TB, v any, args ...any) {
	t.Helper()
	if isEmpty(v) {
		t.Fatalf("got empty %#v%s", v, msg(args))
	}
}

func zero(t testing.TB, v any, args ...any) {
	t.Helper()
	if !reflect.ValueOf(v).IsZero() {
		t.Fatalf("got %#v, want zero%s", v, msg(args))
	}
}

func hasLen(t testing.TB, v any, n int, args ...any) {
	t.Helper()
	if l := reflect.ValueOf(v).Len(); l != n {
		t.Fatalf("len %d, want %d%s", l, n, msg(args))
	}
}

func contains(t testing.TB, s, sub string) {
	t.Helper()
	if !strings.Contains(s, sub) {
		t.Fatalf("%q does not contain %q", s, sub)
	}
}

func fileExists(t testing.TB, p string) {
	t.Helper()
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
}

func panics(t testing.TB, f func()) (v any) {
	t.Helper()
	defer func() { v = recover() }()
	f()
	t.Fatal("no panic")
	return nil
}

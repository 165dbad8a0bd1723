package wasminterrupt

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// A tiny assembler for test modules: sections are vectors of items.

func leb(v uint32) []byte { return appendU32(nil, v) }

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func str(s string) []byte { return cat(leb(uint32(len(s))), []byte(s)) }

// vec is a section body (or any vector): the count, then the items.
func vec(items ...[]byte) []byte { return cat(leb(uint32(len(items))), cat(items...)) }

func sec(id byte, body []byte) []byte { return appendSection(nil, id, body) }

func wasmMod(secs ...[]byte) []byte { return cat([]byte("\x00asm\x01\x00\x00\x00"), cat(secs...)) }

// fnType is a function type of value types.
func fnType(params, results []byte) []byte {
	return cat([]byte{0x60}, leb(uint32(len(params))), params, leb(uint32(len(results))), results)
}

// body is a function body with no locals; code ends with its final end.
func body(code ...byte) []byte { return withLocals(nil, code...) }

func withLocals(locals []byte, code ...byte) []byte {
	b := cat(locals, code)
	if locals == nil {
		b = cat([]byte{0}, code)
	}
	return cat(leb(uint32(len(b))), b)
}

func exportFn(name string, idx uint32) []byte { return cat(str(name), []byte{0}, leb(idx)) }

func custom(name string, payload string) []byte { return sec(0, cat(str(name), []byte(payload))) }

const (
	i32 = 0x7f
	i64 = 0x7e
)

// countCode: block loop (n == 0 ? leave; n--; acc++; again) end end acc.
var countCode = []byte{
	0x02, 0x40, 0x03, 0x40,
	0x20, 0x00, 0x45, 0x0d, 0x01,
	0x20, 0x00, 0x41, 0x01, 0x6b, 0x21, 0x00,
	0x20, 0x01, 0x41, 0x01, 0x6a, 0x21, 0x01,
	0x0c, 0x00, 0x0b, 0x0b,
	0x20, 0x01, 0x0b,
}

// Modules used by several tests.
var (
	// spin: () -> () loops forever; count: (n i32) -> i32 counts down
	// from n in a loop and returns how many iterations ran.
	spinCount = wasmMod(
		sec(1, vec(fnType(nil, nil), fnType([]byte{i32}, []byte{i32}))),
		sec(3, vec(leb(0), leb(1))),
		sec(5, vec([]byte{0, 0})),
		sec(7, vec(exportFn("spin", 0), exportFn("count", 1))),
		sec(10, vec(
			body(0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b),
			withLocals(vec(cat(leb(1), []byte{i32})), countCode...),
		)),
	)
)

// compiles reports whether wazero's compiler accepts m.
func compiles(t testing.TB, r wazero.Runtime, m []byte) error {
	t.Helper()
	c, err := r.CompileModule(context.Background(), m)
	if err == nil {
		c.Close(context.Background())
	}
	return err
}

// instantiate compiles and instantiates m in a fresh runtime without
// WithCloseOnContextDone, closed when the test ends.
func instantiate(t testing.TB, m []byte) api.Module {
	t.Helper()
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	t.Cleanup(func() { r.Close(ctx) })
	mod, err := r.Instantiate(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	return mod
}

// stops returns the error of a guest call that the test has told to stop,
// received from done. A guest never stopped fails the test when the test
// nears its own deadline (go test -timeout), after two minutes at most: a
// bound on a hang, never on how soon a guest stops.
func stops(t *testing.T, what string, done <-chan error) error {
	t.Helper()
	bound := 2 * time.Minute
	if dl, ok := t.Deadline(); ok {
		bound = min(bound, time.Until(dl)-5*time.Second)
	}
	timer := time.NewTimer(bound)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		t.Fatalf("the flag was not seen: %s still runs %v later", what, bound) // the goroutine leaks
		return nil
	}
}

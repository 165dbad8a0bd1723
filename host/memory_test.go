package host

import (
	"context"
	"fmt"
	"testing"

	"github.com/twasm/twasm/abi"
)

// Guest memory stays flat over a long stream: the real clocks keep a Go
// guest's garbage collector finishing its cycles (with wazero's fake
// clock this grows without bound after ~100k calls; wasm.md).
func TestMemoryStaysFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("long stream")
	}
	rt := newRuntime(t, testOptions())
	p := load(t, rt, "echo", true)
	ctx := context.Background()
	in, err := p.newInstance(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close(ctx)
	if err := in.Begin(ctx, abi.BeginOptions{Provider: "echo"}); err != nil {
		t.Fatal(err)
	}
	const total, perBatch = 200_000, 64
	lines := make([]string, perBatch)
	var warm uint32
	for no := 1; no <= total; no += perBatch {
		for i := range lines {
			lines[i] = fmt.Sprintf(`{"type":"assistant","text":"line %d with some padding to look like a real message of a coding agent"}`, no+i)
		}
		if _, err := in.Feed(ctx, batch(no, lines...)); err != nil {
			t.Fatal(err)
		}
		if no > 20_000 && warm == 0 {
			warm = in.m.mem.Size()
		}
	}
	if _, err := in.End(ctx); err != nil {
		t.Fatal(err)
	}
	final := in.m.mem.Size()
	t.Logf("memory after warm-up %d KiB, after %d lines %d KiB", warm>>10, total, final>>10)
	if final > 16<<20 {
		t.Fatalf("guest memory grew to %d MiB", final>>20)
	}
}

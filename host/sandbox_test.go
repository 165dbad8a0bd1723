package host

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/normalize"
)

// Every call is stopped at its time limit, with the time limit error (a
// fault), whatever its instructions: a loop whose every pass is one memory.fill of
// 64 MiB (or memory.copy of 32 MiB), a loop of host calls that each take
// long (random_get of 64 MiB) or none (an empty output), deep recursion.
// Bundled plugins have the limit too, and external ones whichever way they
// are stopped.
func TestStoppedWhateverTheInstructions(t *testing.T) {
	const timeout = time.Second
	cfg := set(faultOptions(), func(o *Options) { o.CallTimeout = timeout; o.MemoryLimit = 256 << 20 })
	modes := append(stopModes[:len(stopModes):len(stopModes)], struct {
		name string
		wasm func(testing.TB, string) []byte
	}{"bundled", plugin})
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			rt := newRuntime(t, cfg)
			p, err := rt.Load(context.Background(), mode.wasm(t, "misbehave"), Source{Path: "misbehave.wasm", Bundled: mode.name == "bundled"})
			if err != nil {
				t.Fatal(err)
			}
			for _, cmd := range []string{"fill", "copy", "rand", "outloop", "recurse"} {
				t.Run(cmd, func(t *testing.T) {
					in := begin(t, p, abi.BeginOptions{})
					start := time.Now()
					err := returns(t, cmd, func() error {
						_, err := in.Feed(context.Background(), batch(1, cmd))
						return err
					})
					d := time.Since(start)
					var fe *normalize.FaultError
					if !errors.As(err, &fe) {
						t.Fatalf("%v after %v", err, d)
					}
					// Deep recursion may end in the engine's stack limit
					// first; every other guest is stopped by the time limit,
					// so not before it.
					if cmd != "recurse" && (!errors.Is(err, errTimeout) || d < timeout) {
						t.Errorf("%v after %v, limit %v", err, d, timeout)
					}
				})
			}
		})
	}
}

// The caller's context ending stops an initializer whose loop is one
// memory.fill of 64 MiB a pass as soon as a plain loop: that is how
// SIGINT reaches a plugin being loaded.
func TestInitializerFillIsStopped(t *testing.T) {
	for _, mode := range stopModes {
		t.Run(mode.name, func(t *testing.T) {
			rt := newRuntime(t, set(faultOptions(), func(o *Options) { o.MemoryLimit = 256 << 20 }))
			src := Source{Path: "initfill.wasm"}
			wrt, compiled, err := rt.compile(context.Background(), mode.wasm(t, "initfill"), src)
			if err != nil {
				t.Fatal(err)
			}
			p := newPlugin(rt, wrt, compiled, src, "")
			defer p.close(context.Background())
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			err = returns(t, "initfill", func() error {
				_, err := p.instantiate(ctx)
				return err
			})
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("got %v", err)
			}
		})
	}
}

// A plugin calling proc_exit is a fault of the plugin, whatever the code:
// never a cancellation by the user, even with the codes wazero uses for a
// cancelled or expired context; the lines before it are reported and the
// stream goes on. In begin too.
func TestProcExitIsAFault(t *testing.T) {
	for _, mode := range stopModes {
		t.Run(mode.name, func(t *testing.T) {
			rt := newRuntime(t, faultOptions())
			p := loadAs(t, rt, "misbehave", mode.wasm)
			ctx := context.Background()
			for _, code := range []string{"0", "1", "4294967295", "4026531839"} {
				in := begin(t, p, abi.BeginOptions{})
				b := batch(1, "emit before", "procexit "+code)
				out, err := in.Feed(ctx, b)
				var fe *normalize.FaultError
				if !errors.As(err, &fe) || !errors.Is(err, errTrap) || errors.Is(err, context.Canceled) ||
					!strings.Contains(err.Error(), "proc_exit") {
					t.Fatalf("proc_exit(%s): %v", code, err)
				}
				if got := texts(t, out, b); len(got) != 1 || got[0] != "warning:before" {
					t.Errorf("proc_exit(%s): records before it %q", code, got)
				}
				b = batch(3, "emit after")
				if out, err := in.Feed(ctx, b); err != nil || len(texts(t, out, b)) != 1 {
					t.Errorf("proc_exit(%s): the stream did not go on: %v", code, err)
				}
			}
			in, err := p.newInstance(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close(ctx)
			err = in.Begin(ctx, abi.BeginOptions{Format: "procexit"})
			var fe *normalize.FaultError
			if !errors.As(err, &fe) || !errors.Is(err, errTrap) || errors.Is(err, context.Canceled) {
				t.Fatalf("proc_exit in begin: %v", err)
			}
		})
	}
}

// A call gets its time limit once per MiB of input, so honest work on a
// large input is not taken for a loop; the error names the limit and says
// how to raise it.
func TestTimeLimitScalesWithInput(t *testing.T) {
	rt := newRuntime(t, set(faultOptions(), func(o *Options) {
		o.CallTimeout = time.Second
		o.TimeoutHint, o.MemoryHint = "raise it with --plugin-timeout", "raise it with --plugin-memory"
	}))
	p := load(t, rt, "misbehave", false)
	cases := []struct {
		input int
		want  time.Duration
	}{{0, time.Second}, {1 << 20, time.Second}, {1<<20 + 1, 2 * time.Second}, {8 << 20, 8 * time.Second}}
	for _, c := range cases {
		if got := p.limit(c.input, 0); got != c.want {
			t.Errorf("limit for %d bytes: %v, want %v", c.input, got, c.want)
		}
	}
	in := begin(t, p, abi.BeginOptions{})
	_, err := in.Feed(context.Background(), batch(1, "spin"))
	if !errors.Is(err, errTimeout) || !strings.Contains(err.Error(), "time limit of 1s (1s per MiB of input); raise it with --plugin-timeout") {
		t.Fatalf("%v", err)
	}
	patient := load(t, newRuntime(t, set(faultOptions(), func(o *Options) { o.TimeoutHint, o.MemoryHint = "", "raise it with --plugin-memory" })), "misbehave", false)
	in = begin(t, patient, abi.BeginOptions{})
	_, err = in.Feed(context.Background(), batch(1, "bomb"))
	if !errors.Is(err, errOutOfMemory) || !strings.Contains(err.Error(), "memory limit of 64 MiB") || !strings.Contains(err.Error(), "--plugin-memory") {
		t.Fatalf("%v", err)
	}
}

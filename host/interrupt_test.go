package host

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero/api"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/wasm/wasminterrupt"
	"github.com/twasm/twasm/internal/wire"
)

// stopModes are the two ways an external plugin is stopped: the module
// instrumented with an interrupt flag, or, when the rewriter refuses it,
// the module as it is in the sandboxed runtime.
var stopModes = []struct {
	name string
	wasm func(testing.TB, string) []byte
}{
	{"interrupt", plugin},
	{"sandboxed", func(tb testing.TB, name string) []byte { return optOut(tb, plugin(tb, name)) }},
}

// optOut returns the module with one more export, named
// wasminterrupt.Export (a function: its first import). The rewriter
// refuses a module that exports that name, so the host runs it as it is,
// in the sandboxed runtime.
func optOut(tb testing.TB, wasm []byte) []byte {
	tb.Helper()
	out := bytes.Clone(wasm[:8])
	for r := wasm[8:]; len(r) > 0; {
		id := r[0]
		size, n := readULEB(r[1:])
		body := r[1+n : 1+n+int(size)]
		r = r[1+n+int(size):]
		if id == 7 {
			count, k := readULEB(body)
			body = append(uleb(nil, count+1), body[k:]...)
			body = append(wname(body, wasminterrupt.Export), 0x00, 0x00)
		}
		out = section(out, id, body)
	}
	return out
}

func readULEB(b []byte) (v uint32, n int) {
	for shift := 0; ; shift += 7 {
		c := b[n]
		n++
		v |= uint32(c&0x7f) << shift
		if c < 0x80 {
			return v, n
		}
	}
}

func loadAs(t testing.TB, rt *Runtime, name string, wasm func(testing.TB, string) []byte) *Plugin {
	t.Helper()
	p, err := rt.Load(context.Background(), wasm(t, name), Source{Path: name + ".wasm"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExternalPluginsAreInstrumented(t *testing.T) {
	rt := newRuntime(t, faultOptions())
	cases := []struct {
		name      string
		wasm      []byte
		bundled   bool
		interrupt bool
	}{
		{"external", plugin(t, "misbehave"), false, true},
		{"external, refused by the rewriter", optOut(t, plugin(t, "misbehave")), false, false},
		{"bundled", plugin(t, "misbehave"), true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := rt.Load(context.Background(), c.wasm, Source{Path: "m.wasm", Bundled: c.bundled})
			if err != nil {
				t.Fatal(err)
			}
			defer p.close(context.Background())
			// The sandboxed runtime is made by the first load that needs it.
			want := rt.trusted
			if !c.interrupt {
				want = rt.sandboxed
			}
			if p.interrupt != c.interrupt || want == nil || p.wrt != want {
				t.Errorf("interrupt %v in runtime %p; want %v in %p", p.interrupt, p.wrt, c.interrupt, want)
			}
			// What users see is the file they have, not what runs.
			sum := sha256.Sum256(c.wasm)
			if got := p.Info().SHA256; got != hex.EncodeToString(sum[:]) {
				t.Errorf("sha256 %s, want the file's", got)
			}
			in := begin(t, p, abi.BeginOptions{})
			b := batch(1, "emit ok")
			out, err := in.Feed(context.Background(), b)
			if err != nil || len(texts(t, out, b)) != 1 {
				t.Fatalf("feed: %q, %v", texts(t, out, b), err)
			}
		})
	}
}

// The deadline stops a plugin spinning without a call or a memory access
// (not before it passes), and the caller's context stops it as well.
func TestStoppedOnTime(t *testing.T) {
	const timeout = 300 * time.Millisecond
	for _, mode := range stopModes {
		t.Run(mode.name, func(t *testing.T) {
			rt := newRuntime(t, set(faultOptions(), func(o *Options) { o.CallTimeout = timeout }))
			p := loadAs(t, rt, "misbehave", mode.wasm)
			for _, cmd := range []string{"spin", "sleep"} {
				in := begin(t, p, abi.BeginOptions{})
				start := time.Now()
				err := returns(t, cmd, func() error {
					_, err := in.Feed(context.Background(), batch(1, cmd))
					return err
				})
				d := time.Since(start)
				if !errors.Is(err, errTimeout) || d < timeout {
					t.Errorf("%s: %v after %v", cmd, err, d)
				}

				// The caller's context is what stops it (not the call's
				// limit), whenever it ends.
				ctx, cancel := context.WithTimeout(context.Background(), timeout/3)
				err = returns(t, cmd+" (caller's context)", func() error {
					_, err := in.Feed(ctx, batch(2, cmd))
					return err
				})
				cancel()
				if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, errTimeout) {
					t.Errorf("%s, the caller's context ending: %v", cmd, err)
				}
			}
		})
	}
}

// _initialize runs under the same watchdog as the calls: an initializer
// that never returns is stopped. (The module is compiled first, so that
// a slow compilation does not use up the context.)
func TestInitializerIsStopped(t *testing.T) {
	for _, mode := range stopModes {
		t.Run(mode.name, func(t *testing.T) {
			rt := newRuntime(t, faultOptions())
			src := Source{Path: "initloop.wasm"}
			wrt, compiled, err := rt.compile(context.Background(), mode.wasm(t, "initloop"), src)
			if err != nil {
				t.Fatal(err)
			}
			p := newPlugin(rt, wrt, compiled, src, "")
			defer p.close(context.Background())
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			err = returns(t, "initloop", func() error {
				_, err := p.instantiate(ctx)
				return err
			})
			if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), wire.ExportInitialize) {
				t.Fatalf("got %v", err)
			}
		})
	}
}

// fakeFlag is an interrupt flag that fails the test when it is written
// while its watchdog is disarmed.
type fakeFlag struct {
	api.MutableGlobal
	t        *testing.T
	mu       sync.Mutex
	v        uint64
	disarmed bool
}

func (f *fakeFlag) Set(v uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.disarmed {
		f.t.Errorf("flag set to %d while disarmed", v)
	}
	f.v = v
}

func (f *fakeFlag) state(disarmed bool) uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.disarmed = disarmed
	return f.v
}

// The watchdog's callbacks race with the end of the call: whatever the
// timing, the flag is clear after disarm and nothing writes it until the
// next arm (run it with -race).
//
// The race is exercised when some armings trip and some do not; how many
// do depends on the machine's load (a loaded one oversleeps, and every
// arming trips), so a round that did not mix them is run again, up to 5
// times, rather than failing on the load.
func TestWatchdogNoLateWrites(t *testing.T) {
	f := &fakeFlag{t: t, disarmed: true}
	w := &watchdog{flag: f}
	var trips int
	for round := 0; round < 5 && (trips == 0 || trips == 2000); round++ {
		trips = watchdogRound(t, f, w)
	}
	if trips == 0 || trips == 2000 {
		t.Errorf("%d of 2000 armings tripped, 5 rounds: the race was not exercised", trips)
	}
}

// watchdogRound arms and disarms w 2000 times, at random distances from
// its deadline and with random cancellations, checking the flag after
// every disarm, and returns how many armings tripped.
func watchdogRound(t *testing.T, f *fakeFlag, w *watchdog) (trips int) {
	for i := range 2000 {
		ctx, cancel := context.WithCancel(context.Background())
		f.state(false)
		w.arm(ctx, time.Duration(rand.IntN(40))*time.Microsecond)
		if i%3 == 0 {
			go cancel()
		}
		time.Sleep(time.Duration(rand.IntN(40)) * time.Microsecond)
		if w.disarm() {
			trips++
		}
		if v := f.state(true); v != 0 {
			t.Fatalf("arming %d: flag %d after disarm", i, v)
		}
		cancel()
	}
	// Every callback that disarm could not stop (it had begun) runs now,
	// while the flag is disarmed: one that wrote it fails the test.
	w.pending.Wait()
	return trips
}

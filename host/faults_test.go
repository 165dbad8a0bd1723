package host

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/wire"
)

// faultOptions makes faults quick to provoke: a small memory limit and no
// disabling. Its time limit only bounds a hang (hangBound): a test whose
// fault is the time limit sets a short one (quickLimit) for a guest that
// never returns, so that no other fault or result races the clock.
func faultOptions() Options {
	o := testOptions()
	o.CallTimeout, o.MemoryLimit, o.MaxFaults = hangBound, 64<<20, -1
	return o
}

// quickLimit is the time limit of the tests that provoke it, with guests
// that loop, spin or sleep forever: it is reached first by construction,
// however busy the machine.
const quickLimit = 2 * time.Second

// quick is faultOptions with the time limit quickLimit.
func quick(o *Options) { o.CallTimeout = quickLimit }

// begin starts a stream on a new instance of p, closed when the test
// ends.
func begin(t *testing.T, p *Plugin, opts abi.BeginOptions) *instance {
	t.Helper()
	ctx := context.Background()
	in, err := p.newInstance(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(ctx) })
	if err := in.Begin(ctx, opts); err != nil {
		t.Fatal(err)
	}
	return in
}

// Every fault is contained the same way whichever way the plugin is
// stopped: through its interrupt flag (instrumented, the normal case) or
// through its context (the sandboxed runtime, for modules the rewriter
// refuses).
func TestFaultsAreContained(t *testing.T) {
	for _, mode := range stopModes {
		t.Run(mode.name, func(t *testing.T) { testFaultsAreContained(t, mode.wasm) })
	}
}

func testFaultsAreContained(t *testing.T, wasm func(testing.TB, string) []byte) {
	// Only the faults that are the time limit run under a short one: every
	// other fault (growing memory to its limit, writing 9 MiB of output)
	// takes seconds under the race detector on a busy machine, and its
	// runtime's time limit only bounds a hang, so it cannot fire first.
	short := loadAs(t, newRuntime(t, set(faultOptions(), quick)), "misbehave", wasm)
	patient := loadAs(t, newRuntime(t, faultOptions()), "misbehave", wasm)
	ctx := context.Background()

	cases := []struct {
		cmd    string
		cause  error  // nil: not a fault
		msg    string // in the error
		stderr string // in the fault's stderr
	}{
		{cmd: "loop", cause: errTimeout, msg: "ran longer than its time limit of 2s"},
		{cmd: "spin", cause: errTimeout, msg: "twasm_feed ran longer than its time limit of 2s"},
		{cmd: "sleep", cause: errTimeout, msg: "ran longer than its time limit of 2s"},
		{cmd: "bomb", cause: errOutOfMemory, msg: "memory limit of 64 MiB"},
		{cmd: "trap", cause: errTrap, msg: "out of bounds memory access"},
		// An unrecovered Go panic prints its trace and aborts.
		{cmd: "nilderef", cause: errTrap, msg: "unreachable", stderr: "nil pointer dereference"},
		{cmd: "exit", cause: errTrap, msg: "exited (proc_exit) with code 3"},
		{cmd: "fatal it broke", cause: errFatalStatus, msg: "it broke"},
		{cmd: "status 7", cause: errContract, msg: "status 7"},
		{cmd: "huge", cause: errLimit, msg: "exceeds the limit"},
		{cmd: "flood 9", cause: errLimit, msg: "exceeds the limit of 8388608 bytes"},
		{cmd: "oob", cause: errContract, msg: "output(ptr=0xffff0000, len=16) is outside"},
		{cmd: "oobfail", cause: errContract, msg: "fail(ptr=0xffff0000"},
		{cmd: "ooblog", cause: errContract, msg: "log(ptr=0xffff0000"},
		{cmd: "raw \x07garbage", cause: errContract, msg: "malformed output"},
		{cmd: "raw \x10\x05\x00\x00\x00\x09\x01\x09xyz", cause: errContract, msg: "malformed output"},
		{cmd: "badspan", cause: errContract, msg: "outside the call's input"},
		{cmd: "stderr about to fail\nfatal x", cause: errFatalStatus, stderr: "about to fail"},
		{cmd: "reject bad line", msg: "bad line"},
	}
	for _, c := range cases {
		t.Run(strings.Fields(c.cmd)[0], func(t *testing.T) {
			p := patient
			if errors.Is(c.cause, errTimeout) {
				p = short
			}
			in := begin(t, p, abi.BeginOptions{Provider: "misbehave"})
			// Records reported before the fault, in the same call, are kept.
			lines := append([]string{"emit before"}, strings.Split(c.cmd, "\n")...)
			b := batch(1, lines...)
			out, err := in.Feed(ctx, b)
			if got := texts(t, out, b); len(got) == 0 || got[0] != "warning:before" {
				t.Errorf("records before the fault: %q", got)
			} else if len(got) > 1 && !strings.HasPrefix(c.cmd, "flood") {
				// flood keeps the 1 MiB chunks that fit the limit.
				t.Errorf("records: %q", got)
			}
			var fe *normalize.FaultError
			switch {
			case c.cause == nil:
				var re *normalize.RejectedError
				if !errors.As(err, &re) || !strings.Contains(re.Message, c.msg) {
					t.Fatalf("want a RejectedError with %q, got %v", c.msg, err)
				}
			case !errors.As(err, &fe):
				t.Fatalf("want a FaultError, got %v", err)
			default:
				if !errors.Is(err, c.cause) || !strings.Contains(err.Error(), c.msg) {
					t.Fatalf("want %v with %q, got %v", c.cause, c.msg, err)
				}
				if fe.Plugin != "misbehave" || fe.Op != "feed" {
					t.Errorf("fault names %s/%s", fe.Plugin, fe.Op)
				}
				if !strings.Contains(fe.Stderr, c.stderr) {
					t.Errorf("stderr %q lacks %q", fe.Stderr, c.stderr)
				}
				if len(fe.Stderr) > stderrTail+64 {
					t.Errorf("stderr of %d bytes", len(fe.Stderr))
				}
			}
			// The stream goes on with a fresh module.
			b = batch(3, "emit after")
			out, err = in.Feed(ctx, b)
			if err != nil {
				t.Fatalf("feed after the fault: %v", err)
			}
			if got := texts(t, out, b); !slices.Equal(got, []string{"warning:after"}) {
				t.Fatalf("records after the fault: %q", got)
			}
			if _, err := in.End(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestBadBufferAddressFaults(t *testing.T) {
	rt := newRuntime(t, faultOptions())
	p := load(t, rt, "misbehave", false)
	ctx := context.Background()
	in := begin(t, p, abi.BeginOptions{})
	if _, err := in.Feed(ctx, batch(1, "badbuffer")); err != nil {
		t.Fatal(err)
	}
	_, err := in.Feed(ctx, batch(2, "emit x"))
	if !errors.Is(err, errContract) || !strings.Contains(err.Error(), "twasm_buffer returned 0xffffff00") {
		t.Fatalf("got %v", err)
	}
}

func TestLongFailMessageIsCut(t *testing.T) {
	rt := newRuntime(t, faultOptions())
	p := load(t, rt, "misbehave", false)
	ctx := context.Background()
	in := begin(t, p, abi.BeginOptions{})
	_, err := in.Feed(ctx, batch(1, "longfail"))
	var re *normalize.RejectedError
	if !errors.As(err, &re) || len(re.Message) != wire.MaxFailBytes {
		t.Fatalf("got %v", err)
	}
}

func TestSDKPanicIsFatalStatus(t *testing.T) {
	rt := newRuntime(t, faultOptions())
	p := load(t, rt, "panicky", false)
	ctx := context.Background()
	in := begin(t, p, abi.BeginOptions{})
	b := batch(1, `{"text":"a"}`, `{"text":"panic"}`)
	out, err := in.Feed(ctx, b)
	if !errors.Is(err, errFatalStatus) || !strings.Contains(err.Error(), "plugin panic: panicky: asked to") {
		t.Fatalf("got %v", err)
	}
	// The SDK drops the record in progress; the lines before stand.
	if got := texts(t, out, b); !slices.Equal(got, []string{"op1", "warning:line a"}) {
		t.Fatalf("records %q", got)
	}
	b = batch(3, `{"text":"b"}`)
	out, err = in.Feed(ctx, b)
	if err != nil || !slices.Equal(texts(t, out, b), []string{"op1", "warning:line b"}) {
		t.Fatalf("after the panic: %q, %v", texts(t, out, b), err)
	}
}

func TestLogIsRateLimited(t *testing.T) {
	h := &captureHandler{}
	rt := newRuntime(t, set(faultOptions(), func(o *Options) { o.Logger = slog.New(h); o.LogRate = 5 }))
	p := load(t, rt, "misbehave", false)
	// The limiter's clock moves only when the test says, so no load on
	// the machine splits the first burst across two windows.
	var clock atomic.Int64
	p.logs.now = func() time.Time { return time.Unix(0, clock.Load()) }
	ctx := context.Background()
	in := begin(t, p, abi.BeginOptions{})
	if _, err := in.Feed(ctx, batch(1, "log 100")); err != nil {
		t.Fatal(err)
	}
	if n := h.count("message "); n != 5 {
		t.Fatalf("%d messages logged, want 5", n)
	}
	clock.Add(int64(999 * time.Millisecond))
	if _, err := in.Feed(ctx, batch(2, "log 1")); err != nil {
		t.Fatal(err)
	}
	if n := h.count("message "); n != 5 || h.count("dropped") != 0 {
		t.Fatalf("within the window: %q", h.msgs)
	}
	clock.Add(int64(time.Millisecond))
	if _, err := in.Feed(ctx, batch(3, "log 1")); err != nil {
		t.Fatal(err)
	}
	if h.count("dropped") != 1 || h.count("message ") != 6 {
		t.Fatalf("after the window: %q", h.msgs)
	}
}

func TestDisabledAfterConsecutiveFaults(t *testing.T) {
	h := &captureHandler{}
	rt := newRuntime(t, set(faultOptions(), func(o *Options) { o.MaxFaults = 3; o.Logger = slog.New(h) }))
	p := load(t, rt, "misbehave", false)
	ctx := context.Background()
	in := begin(t, p, abi.BeginOptions{})
	// A success in between resets the count.
	for _, cmd := range []string{"fatal 1", "fatal 2", "emit ok", "fatal 3", "fatal 4"} {
		_, err := in.Feed(ctx, batch(1, cmd))
		if errors.Is(err, errPluginDisabled) {
			t.Fatalf("disabled too early, at %q", cmd)
		}
	}
	_, err := in.Feed(ctx, batch(1, "fatal 5"))
	var fe *normalize.FaultError
	if !errors.As(err, &fe) || !errors.Is(err, errPluginDisabled) || !errors.Is(err, errFatalStatus) {
		t.Fatalf("third consecutive fault: %v", err)
	}
	_, err = in.Feed(ctx, batch(1, "emit x"))
	if !errors.As(err, &fe) || !errors.Is(err, errPluginDisabled) {
		t.Fatalf("a call after disabling: %v", err)
	}
	if _, err := p.NewInstance(ctx); !errors.Is(err, errPluginDisabled) {
		t.Fatalf("NewInstance of a disabled plugin: %v", err)
	}
	if !p.Info().Disabled || h.count("plugin disabled") != 1 {
		t.Fatalf("info %+v, log %q", p.Info(), h.msgs)
	}
}

func TestCallerCancellationIsNotAFault(t *testing.T) {
	rt := newRuntime(t, set(faultOptions(), func(o *Options) { o.MaxFaults = 1 }))
	p := load(t, rt, "misbehave", false)
	in := begin(t, p, abi.BeginOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := in.Feed(ctx, batch(1, "loop"))
	var fe *normalize.FaultError
	if !errors.Is(err, context.DeadlineExceeded) || errors.As(err, &fe) {
		t.Fatalf("got %v", err)
	}
	// Not counted (max faults is 1), and the next call gets a new module.
	b := batch(2, "emit again")
	out, err := in.Feed(context.Background(), b)
	if err != nil || !slices.Equal(texts(t, out, b), []string{"warning:again"}) {
		t.Fatalf("after cancellation: %v", err)
	}
	if _, err := in.Feed(ctx, b); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a call with a dead context: %v", err)
	}
}

// A misbehaving plugin does not disturb streams of a good one running at
// the same time.
func TestFaultsWhileOthersServe(t *testing.T) {
	rt := newRuntime(t, set(faultOptions(), quick))
	// The good plugin's calls only bound a hang: the bad one's loops hold
	// the cores for their time limit, which a good call descheduled meanwhile
	// must not race.
	good := load(t, rt, "echo", false)
	good.timeout = hangBound
	bad := load(t, rt, "misbehave", false)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 4; g++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			in, err := good.newInstance(ctx)
			if err != nil {
				errs <- err
				return
			}
			defer in.Close(ctx)
			for s := 0; s < 5; s++ {
				in.Begin(ctx, abi.BeginOptions{Provider: "echo"})
				for i := 0; i < 50; i++ {
					b := batch(i+1, `{"text":"x"}`)
					out, err := in.Feed(ctx, b)
					if err != nil {
						errs <- err
						return
					}
					if got := texts(t, out, b); len(got) != 4 || got[2] != "block:x" {
						errs <- errors.New("echo records: " + strings.Join(got, ","))
						return
					}
				}
				if _, err := in.End(ctx); err != nil {
					errs <- err
				}
			}
		}()
		go func() {
			defer wg.Done()
			in, err := bad.newInstance(ctx)
			if err != nil {
				errs <- err
				return
			}
			defer in.Close(ctx)
			in.Begin(ctx, abi.BeginOptions{})
			for _, cmd := range []string{"trap", "nilderef", "huge", "loop", "fatal x", "raw \x01junk", "bomb"} {
				if _, err := in.Feed(ctx, batch(1, "emit x", cmd)); err == nil {
					errs <- errors.New(cmd + " did not fault")
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

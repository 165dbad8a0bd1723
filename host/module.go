package host

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/wasm/wasminterrupt"
	"github.com/twasm/twasm/internal/wire"
)

// module is one wazero instance of a plugin, with the host-side state of
// its calls. It is used by one goroutine at a time.
type module struct {
	p       *Plugin
	mod     api.Module
	mem     api.Memory
	fns     [5]api.Function // indexed by the op constants below
	version api.Function
	// abiVersion is what twasm_abi_version returned at the handshake.
	abiVersion uint32
	stderr     *tail
	c          call
	stack      []uint64
	// watch stops the calls of an instrumented module (Plugin.interrupt);
	// nil otherwise.
	watch *watchdog
}

// Exported functions a module calls, indexing module.fns.
const (
	fnBuffer = iota
	fnManifest
	fnBegin
	fnFeed
	fnEnd
)

var fnNames = [...]string{fnBuffer: wire.ExportBuffer, fnManifest: wire.ExportManifest, fnBegin: wire.ExportBegin, fnFeed: wire.ExportFeed, fnEnd: wire.ExportEnd}

// call is the host-side state of one call into a module: the output
// collected so far and the limits to check. The host functions find it in
// the context of the call.
type call struct {
	m       *module
	records bool // output is records (feed, end, begin); else raw (manifest)
	input   int  // bytes of the call's input, for span checks
	limit   int  // most output bytes
	out     []byte
	fail    []byte
	fault   error // set by a host function before it aborts the call
}

type callKey struct{}

func (c *call) reset(records bool, input, limit int) {
	c.records, c.input, c.limit = records, input, limit
	c.out, c.fail, c.fault = c.out[:0], c.fail[:0], nil
}

// abort records why a host function faults the call and unwinds the
// guest: wazero turns the panic into the error of the call, never a
// crash of the host.
func (c *call) abort(err error) {
	c.fault = err
	panic(err)
}

func callOf(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	if c == nil {
		// Only a module being instantiated by something else than
		// this package could get here; refuse rather than guess.
		panic(fmt.Errorf("%w: host function called outside a twasm call", errContract))
	}
	return c
}

// read returns [ptr, ptr+n) of the caller's memory, or faults the call.
func (c *call) read(mod api.Module, what string, ptr, n uint32) []byte {
	b, ok := mod.Memory().Read(ptr, n)
	if !ok {
		c.abort(fmt.Errorf("%w: %s(ptr=%#x, len=%d) is outside the plugin's %d bytes of memory",
			errContract, what, ptr, n, mod.Memory().Size()))
	}
	return b
}

// checkInterrupt stops a guest whose call was interrupted when it calls
// the host: a loop of host calls that each take long would otherwise pass
// few checks of the guest's own code.
func (c *call) checkInterrupt() {
	if w := c.m.watch; w != nil && w.tripped.Load() {
		panic(errInterrupted)
	}
}

func hostOutput(ctx context.Context, mod api.Module, stack []uint64) {
	c := callOf(ctx)
	c.checkInterrupt()
	ptr, n := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
	// Check the limit before touching memory, so a huge length costs
	// nothing.
	if uint64(len(c.out))+uint64(n) > uint64(c.limit) {
		c.abort(fmt.Errorf("%w: output of %d bytes exceeds the limit of %d bytes for this call",
			errLimit, uint64(len(c.out))+uint64(n), c.limit))
	}
	chunk := c.read(mod, wire.ImportOutput, ptr, n)
	if c.records {
		if err := checkRecords(chunk, c.input); err != nil {
			c.abort(fmt.Errorf("%w: malformed output at byte %d of the call: %v", errContract, len(c.out), err))
		}
	}
	c.out = append(c.out, chunk...)
}

func hostFail(ctx context.Context, mod api.Module, stack []uint64) {
	c := callOf(ctx)
	c.checkInterrupt()
	ptr, n := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
	// A long message is cut, not refused: the contract says so, and the
	// message is for people.
	keep := min(n, uint32(max(0, wire.MaxFailBytes-len(c.fail))))
	b := c.read(mod, wire.ImportFail, ptr, keep)
	if n > keep {
		// Still check the whole range: a bad pointer is a fault
		// whatever the length kept.
		c.read(mod, wire.ImportFail, ptr, n)
	}
	if len(c.fail) > 0 && len(b) > 0 && len(c.fail) < wire.MaxFailBytes {
		c.fail = append(c.fail, "; "...)
	}
	c.fail = append(c.fail, b...)
	if len(c.fail) > wire.MaxFailBytes {
		c.fail = c.fail[:wire.MaxFailBytes]
	}
}

// maxLogBytes bounds one log message.
const maxLogBytes = 1 << 10

func hostLog(ctx context.Context, mod api.Module, stack []uint64) {
	c := callOf(ctx)
	c.checkInterrupt()
	level := slog.Level(int32(api.DecodeU32(stack[0])))
	ptr, n := api.DecodeU32(stack[1]), api.DecodeU32(stack[2])
	b := c.read(mod, wire.ImportLog, ptr, n)
	p := c.m.p
	ok, dropped := p.logs.allow()
	logger := p.rt.s.logger
	if dropped > 0 {
		logger.Warn("twasm host: plugin log messages dropped (rate limit)", "plugin", p.name(), "dropped", dropped)
	}
	if !ok {
		return
	}
	level = min(max(level, slog.LevelDebug), slog.LevelError)
	if len(b) > maxLogBytes {
		b = b[:maxLogBytes]
	}
	logger.Log(ctx, level, string(b), "plugin", p.name())
}

// checkRecords validates one output chunk: whole, well-formed records
// whose spans lie inside the call's input. The assembler can then trust
// what an instance returns.
//
// It accepts and refuses exactly what decoding the chunk with
// wire.Decoder and checking every span field would (FuzzCheckRecords
// holds it to that), without building the records: the chunk is decoded
// again by the assembler, and a field decoded here would be built for
// nothing, on every record of every call of every plugin.
func checkRecords(chunk []byte, input int) error {
	for off := 0; off < len(chunk); {
		if len(chunk)-off < 5 {
			return wire.ErrBadRecord
		}
		op := wire.Op(chunk[off])
		n := int(binary.LittleEndian.Uint32(chunk[off+1:]))
		off += 5
		if op == 0 || n < 0 || n > len(chunk)-off {
			return wire.ErrBadRecord
		}
		body := chunk[off : off+n]
		off += n
		// A bad span is reported once the whole record is known to be
		// well-formed, as the decoder finds it.
		spanErr := false
		var spanOff, spanN int
		for i := 0; i < len(body); {
			if len(body)-i < 2 || body[i] == 0 {
				return wire.ErrBadRecord
			}
			kind := wire.VKind(body[i+1])
			i += 2
			switch kind {
			case wire.VStr, wire.VJSON:
				l, k := binary.Uvarint(body[i:])
				if k <= 0 || l > uint64(len(body)-i-k) {
					return wire.ErrBadRecord
				}
				i += k + int(l)
			case wire.VSpan:
				var vals [2]uint64
				for j := range vals {
					v, k := binary.Uvarint(body[i:])
					if k <= 0 || v > math.MaxInt32 {
						return wire.ErrBadRecord
					}
					vals[j] = v
					i += k
				}
				if i >= len(body) || wire.SpanMode(body[i]) > wire.SpanJSONString {
					return wire.ErrBadRecord
				}
				i++
				if o, l := int(vals[0]), int(vals[1]); !spanErr && (o > input || l > input-o) {
					spanErr, spanOff, spanN = true, o, l
				}
			case wire.VInt:
				_, k := binary.Varint(body[i:])
				if k <= 0 {
					return wire.ErrBadRecord
				}
				i += k
			case wire.VBool:
				if i >= len(body) || body[i] > 1 {
					return wire.ErrBadRecord
				}
				i++
			case wire.VFloat:
				if len(body)-i < 8 {
					return wire.ErrBadRecord
				}
				i += 8
			default:
				return wire.ErrBadRecord
			}
		}
		if spanErr {
			return fmt.Errorf("record op %d: span [%d, %d) outside the call's input of %d bytes", op, spanOff, spanOff+spanN, input)
		}
	}
	return nil
}

// instantiate makes a new module and runs its initializer. On error the
// module returned holds only the captured stderr.
func (p *Plugin) instantiate(ctx context.Context) (*module, error) {
	m := &module{p: p, stderr: &tail{}, stack: make([]uint64, 1)}
	if p.wrt == p.rt.trusted {
		if err := p.rt.trustedImports(ctx); err != nil {
			return m, err
		}
	}
	m.c.m = m
	m.c.reset(false, 0, wire.MaxManifestBytes)
	g := guestRand{m: m, r: rand.Reader}
	if f := p.rt.s.randSource; f != nil {
		g.r = f()
	}
	cfg := p.modCfg.WithStderr(m.stderr).WithNanosleep(m.sleep).WithRandSource(g)
	cctx, cancel := p.initContext(context.WithValue(ctx, callKey{}, &m.c))
	mod, err := p.wrt.InstantiateModule(experimental.WithMemoryAllocator(cctx, p.rt.alloc), p.compiled, cfg)
	cancel()
	if err != nil {
		if mod != nil {
			mod.Close(ctx)
		}
		// m carries the stderr of the failed start.
		return m, m.classify(ctx, wire.ExportInitialize, err)
	}
	m.mod = mod
	m.mem = mod.Memory()
	for i, name := range fnNames {
		m.fns[i] = mod.ExportedFunction(name)
	}
	m.version = mod.ExportedFunction(wire.ExportVersion)
	if p.interrupt {
		flag, ok := mod.ExportedGlobal(wasminterrupt.Export).(api.MutableGlobal)
		if !ok {
			mod.Close(ctx)
			m.mod = nil
			return m, fmt.Errorf("host: the instrumented module exports no mutable %s", wasminterrupt.Export)
		}
		m.watch = &watchdog{flag: flag}
	}
	if err := m.call(ctx, mod.ExportedFunction(wire.ExportInitialize), wire.ExportInitialize, p.limit(0, p.rt.s.initTimeout)); err != nil {
		mod.Close(ctx)
		m.mod = nil
		return m, err
	}
	return m, nil
}

// initTimeout is the least time an external plugin's initialisation
// (instantiation and _initialize, the Go or TinyGo runtime starting) is
// given. It is not input processing, and on a loaded machine it can take
// longer than a per-line call budget; an initialiser that never returns is
// still stopped.
const initTimeout = 30 * time.Second

// initContext bounds the instantiation of a plugin in the sandboxed
// runtime, where a start section would run; _initialize is then called
// like any export (module.call), with the same budget.
func (p *Plugin) initContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, p.limit(0, p.rt.s.initTimeout))
}

// timeoutUnit is the input size the call timeout is given for: a call
// gets the timeout once per timeoutUnit of input, started, so that a
// plugin working through an 8 MiB line is not taken for one in a loop.
const timeoutUnit = 1 << 20

// limit returns how long a call with input bytes of input may run: the
// call timeout per MiB of input (started; at least once), or least if that
// is longer.
func (p *Plugin) limit(input int, least time.Duration) time.Duration {
	units := max(1, (int64(input)+timeoutUnit-1)/timeoutUnit)
	return max(p.timeout*time.Duration(units), least)
}

// maxSleep bounds one sleep of an external plugin. A guest with nothing
// to do sleeps in poll_oneoff (that is how the Go and TinyGo schedulers
// wait for a timer), where no check of the guest's code runs: cut short,
// the sleep returns to the guest's scheduler, which finds its timer not
// yet due and sleeps again.
const maxSleep = 10 * time.Millisecond

// sleep is a plugin's nanosleep: at most maxSleep, and a call whose
// interrupt flag is set is stopped here rather than after the guest has
// passed wasminterrupt.Fuel checks.
func (m *module) sleep(ns int64) {
	time.Sleep(min(time.Duration(ns), maxSleep))
	if m.watch != nil && m.watch.tripped.Load() {
		panic(errInterrupted)
	}
}

// guestRand is a module's random source (random_get): crypto/rand, or
// the reader [Options].RandSource made for the module, read in pieces
// between which an interrupted call is stopped, so that a guest asking
// for its whole memory's worth in a loop still stops on time.
type guestRand struct {
	m *module
	r io.Reader
}

func (g guestRand) Read(b []byte) (int, error) {
	const piece = 64 << 10
	for off := 0; off < len(b); off += piece {
		if w := g.m.watch; w != nil && w.tripped.Load() {
			panic(errInterrupted)
		}
		if _, err := io.ReadFull(g.r, b[off:min(off+piece, len(b))]); err != nil {
			return off, err
		}
	}
	return len(b), nil
}

// errInterrupted unwinds a guest stopped in a host function.
var errInterrupted = errors.New("interrupted")

// call runs fn with m.stack and returns the cause of its fault, or nil.
// Past limit, an instrumented module is stopped through its interrupt
// flag, another one through its context (the sandboxed runtime has
// WithCloseOnContextDone); the caller's ctx ending stops either.
func (m *module) call(ctx context.Context, fn api.Function, name string, limit time.Duration) error {
	cctx := context.WithValue(ctx, callKey{}, &m.c)
	var err error
	interrupted, timedOut := false, false
	if m.watch != nil {
		// The flag is read every so many checks: a call on a done
		// context could run to its end.
		if err := ctx.Err(); err != nil {
			return errCanceled{fmt.Errorf("%s: %w", name, err)}
		}
		m.watch.arm(ctx, limit)
		err = fn.CallWithStack(cctx, m.stack)
		interrupted = m.watch.disarm()
	} else {
		dctx, cancel := context.WithTimeout(cctx, limit)
		err = fn.CallWithStack(dctx, m.stack)
		timedOut = errors.Is(dctx.Err(), context.DeadlineExceeded)
		cancel()
	}
	if err == nil {
		return nil
	}
	if m.c.fault == nil && ctx.Err() == nil {
		// The flag makes the guest execute unreachable, or a host
		// function panic; the caller's cancellation is told apart by
		// classify.
		if interrupted && (strings.HasPrefix(err.Error(), "wasm error: unreachable") || errors.Is(err, errInterrupted)) || timedOut {
			return m.p.timeoutError(name, limit)
		}
	}
	return m.classify(ctx, name, err)
}

// timeoutError says which limit a call ran past and how to raise it.
func (p *Plugin) timeoutError(name string, limit time.Duration) error {
	how := ""
	if h := p.rt.s.limitHint; h != "" {
		how = "; " + h
	}
	return fmt.Errorf("%w: %s ran longer than its time limit of %v (%v per MiB of input)%s",
		errTimeout, name, limit, p.timeout, how)
}

// watchdog sets an instrumented module's interrupt flag when a call runs
// past its deadline or its caller's context ends, so that the guest traps
// within wasminterrupt.Fuel checks, or at its next sleep. The module's
// goroutine arms and disarms it around each call; the timer and context
// callbacks run on other goroutines.
type watchdog struct {
	flag api.MutableGlobal
	// tripped: the flag is set. Written under mu; host functions read
	// it without the lock.
	tripped atomic.Bool

	mu      sync.Mutex
	gen     uint64 // counts armings: a callback of an earlier one does nothing
	armed   bool
	timer   *time.Timer
	stopCtx func() bool
	// pending counts the callbacks armed and neither run to their end
	// nor stopped: a callback that disarm could not stop (it had begun)
	// may still run after disarm returns, and finds the watchdog
	// disarmed. Its Wait is when every late callback has run (a test's
	// event; the host never waits).
	pending sync.WaitGroup
}

func (w *watchdog) arm(ctx context.Context, d time.Duration) {
	w.mu.Lock()
	w.gen++
	gen := w.gen
	w.armed = true
	w.tripped.Store(false)
	w.mu.Unlock()
	trip := func() {
		defer w.pending.Done()
		w.mu.Lock()
		if w.armed && w.gen == gen && !w.tripped.Load() {
			w.flag.Set(1)
			w.tripped.Store(true)
		}
		w.mu.Unlock()
	}
	w.pending.Add(1)
	w.timer = time.AfterFunc(d, trip)
	w.stopCtx = nil
	if ctx.Done() != nil {
		w.pending.Add(1)
		w.stopCtx = context.AfterFunc(ctx, trip)
	}
}

// disarm stops the callbacks and clears the flag, and reports whether it
// was set. Once it returns no callback of this arming writes the flag: a
// callback already running has finished (it holds w.mu while it writes),
// and a later one finds the watchdog disarmed.
func (w *watchdog) disarm() bool {
	// A stop that returns true kept its callback from ever running;
	// false means the callback has begun.
	if w.timer.Stop() {
		w.pending.Done()
	}
	if w.stopCtx != nil && w.stopCtx() {
		w.pending.Done()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.armed = false
	tripped := w.tripped.Load()
	if tripped {
		w.flag.Set(0)
	}
	return tripped
}

func (m *module) close(ctx context.Context) {
	if m.mod != nil {
		m.mod.Close(ctx)
	}
}

// handshake checks the ABI version and reads the manifest, and returns
// it with its JSON as the module wrote it. When known holds the JSON a
// build recorded (a bundled plugin) and the module writes those bytes
// again, known's manifest, what the build parsed and checked them into,
// is returned without parsing them again (encoding/json's first decode
// of a manifest cost a warm start 0.2-0.3 ms, before its plugin could
// run).
func (m *module) handshake(ctx context.Context, known *manifestRecord) (abi.Manifest, string, error) {
	m.c.reset(false, 0, wire.MaxManifestBytes)
	if err := m.call(ctx, m.version, wire.ExportVersion, m.p.limit(0, 0)); err != nil {
		return abi.Manifest{}, "", err
	}
	m.abiVersion = uint32(m.stack[0])
	if err := checkVersion(m.abiVersion); err != nil {
		return abi.Manifest{}, "", &abiError{Path: m.p.src.Path, Problems: []string{strings.TrimPrefix(err.Error(), errContract.Error()+": ")}}
	}
	status, err := m.invoke(ctx, fnManifest, nil, false)
	if err != nil {
		return abi.Manifest{}, "", fmt.Errorf("%s: %w", wire.ExportManifest, err)
	}
	if status != wire.StatusOK {
		return abi.Manifest{}, "", fmt.Errorf("%s returned status %d: %s", wire.ExportManifest, status, m.c.fail)
	}
	if known != nil && known.json != "" && string(m.c.out) == known.json {
		return known.Manifest, known.json, nil
	}
	manifest, err := parseManifest(m.c.out)
	if err != nil {
		return manifest, "", &abiError{Path: m.p.src.Path, Problems: []string{err.Error()}}
	}
	return manifest, string(m.c.out), nil
}

// invoke runs one exported function: writes input (if any) into the
// plugin's buffer, calls fn and returns its status. The output is in
// m.c.out. A non-nil error is a fault (or the caller's cancellation) and
// the module must be discarded.
func (m *module) invoke(ctx context.Context, fn int, input []byte, records bool) (wire.Status, error) {
	limit := wire.MaxManifestBytes
	if records {
		limit = max(wire.MinOutputBytes, wire.MaxOutputFactor*len(input))
	}
	m.c.reset(records, len(input), limit)
	deadline := m.p.limit(len(input), 0)
	if fn == fnBegin || fn == fnFeed {
		m.stack[0] = uint64(len(input))
		if err := m.call(ctx, m.fns[fnBuffer], wire.ExportBuffer, deadline); err != nil {
			return 0, err
		}
		ptr := uint32(m.stack[0])
		if !m.mem.Write(ptr, input) {
			return 0, fmt.Errorf("%w: %s returned %#x, and %d bytes from there lie outside the plugin's %d bytes of memory",
				errContract, wire.ExportBuffer, ptr, len(input), m.mem.Size())
		}
		m.stack[0] = uint64(len(input))
	}
	if err := m.call(ctx, m.fns[fn], fnNames[fn], deadline); err != nil {
		return 0, err
	}
	return wire.Status(uint32(m.stack[0])), nil
}

// errCanceled marks a call stopped because the caller's context ended:
// not the plugin's fault.
type errCanceled struct{ err error }

func (e errCanceled) Error() string { return e.err.Error() }
func (e errCanceled) Unwrap() error { return e.err }

// classify turns the error of a call into the cause of a fault.
func (m *module) classify(ctx context.Context, fn string, err error) error {
	if m.c.fault != nil {
		return m.c.fault
	}
	if ctx.Err() != nil {
		return errCanceled{fmt.Errorf("%s: %w", fn, ctx.Err())}
	}
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		// The caller's context is live and the deadline did not pass
		// (module.call): whatever the code, even wazero's own codes for
		// a cancelled or expired context, the plugin called proc_exit.
		code := exit.ExitCode()
		if m.outOfMemory() {
			return fmt.Errorf("%w: %s exceeded the memory limit of %d MiB (exit code %d)%s", errOutOfMemory, fn, m.p.rt.s.memoryPages/16, code, m.p.memoryHint())
		}
		return fmt.Errorf("%w: %s exited (proc_exit) with code %d", errTrap, fn, code)
	}
	if m.outOfMemory() {
		return fmt.Errorf("%w: %s exceeded the memory limit of %d MiB%s", errOutOfMemory, fn, m.p.rt.s.memoryPages/16, m.p.memoryHint())
	}
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return fmt.Errorf("%w: %s: %s", errTrap, fn, msg)
}

// memoryHint says how to raise the memory limit, when the Options say.
func (p *Plugin) memoryHint() string {
	if h := p.rt.s.memoryHint; h != "" {
		return "; " + h
	}
	return ""
}

// outOfMemory tells a trap caused by the memory limit: Go and TinyGo say
// so on stderr before they abort, and the memory is then close to the
// limit (a Go heap grows by a few MiB at a time).
func (m *module) outOfMemory() bool {
	s := m.stderr.Bytes()
	if bytes.Contains(s, []byte("out of memory")) {
		return true
	}
	limit := uint64(m.p.rt.s.memoryPages) * pageSize
	return m.mem != nil && uint64(m.mem.Size())+8<<20 >= limit
}

// tail keeps the first stderrHead and the last stderrTail-stderrHead
// bytes written to it: a Go runtime prints what went wrong first ("fatal
// error: out of memory", "panic: ...") and then every goroutine's stack,
// so the head says why and the tail says where.
type tail struct {
	mu   sync.Mutex
	head []byte
	buf  []byte // ring of the last bytes, in order
	cut  int64  // bytes dropped between head and buf
}

const stderrHead = 1 << 10

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(b)
	if room := stderrHead - len(t.head); room > 0 {
		k := min(room, len(b))
		t.head = append(t.head, b[:k]...)
		b = b[k:]
	}
	const keep = stderrTail - stderrHead
	if len(b) >= keep {
		t.cut += int64(len(t.buf) + len(b) - keep)
		t.buf = append(t.buf[:0], b[len(b)-keep:]...)
		return n, nil
	}
	if over := len(t.buf) + len(b) - keep; over > 0 {
		t.cut += int64(over)
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, b...)
	return n, nil
}

// Bytes returns a copy of what is kept, with a marker where bytes were
// dropped.
func (t *tail) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := append([]byte(nil), t.head...)
	if t.cut > 0 {
		out = fmt.Appendf(out, "\n[... %d bytes cut ...]\n", t.cut)
	}
	return append(out, t.buf...)
}

func (t *tail) String() string { return strings.TrimSpace(string(t.Bytes())) }

func (t *tail) Reset() {
	t.mu.Lock()
	t.head, t.buf, t.cut = t.head[:0], t.buf[:0], 0
	t.mu.Unlock()
}

package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/wire"
)

// instance runs one stream at a time through a plugin; it implements
// normalize.Instance. It must not be used by more than one goroutine at a
// time. Close returns it to its plugin's pool.
//
// # Faults
//
// When a call traps, times out, runs out of memory, returns StatusFatal or
// breaks a limit, the call returns the records the plugin reported before
// the fault and a *normalize.FaultError (wrapping one of errTimeout, errOutOfMemory,
// errTrap, errFatalStatus, errLimit, errContract) with the plugin's
// captured stderr. The module is discarded; a feed fault immediately
// replaces it with a fresh one and begins the stream again with the same
// options, so the caller just carries on. After too many consecutive
// faults the plugin is disabled and every call fails with a *normalize.FaultError
// wrapping errPluginDisabled.
//
// StatusRejected returns the records and a *normalize.RejectedError: nothing is
// discarded.
//
// A call stopped because ctx ended returns an error wrapping ctx.Err()
// (not a fault); the module is replaced on the next call.
type instance struct {
	p      *Plugin
	m      *module // nil after a fault, until the next call
	opts   []byte  // begin options of the current stream, for restarts
	closed bool
	keys   *wire.KeySet
}

// Keys returns the object keys the plugin declared (abi.Manifest.Keys),
// for the stream to mark in its tapes (normalize.KeyedInstance); nil when
// it declared none.
func (in *instance) Keys() *wire.KeySet {
	if in.keys == nil && len(in.p.manifest.Keys) > 0 && len(in.p.manifest.Keys) <= wire.MaxKeys {
		in.keys = wire.NewKeySet(in.p.manifest.Keys...)
	}
	return in.keys
}

// Begin starts a stream: it resets every piece of per-stream state in the
// plugin.
func (in *instance) Begin(ctx context.Context, opts abi.BeginOptions) error {
	b, err := json.Marshal(opts)
	if err != nil {
		return fmt.Errorf("host: encode begin options: %w", err)
	}
	in.opts = b
	if err := in.ready(ctx, "begin"); err != nil {
		return err
	}
	in.m.stderr.Reset()
	_, err = in.run(ctx, "begin", fnBegin, b)
	return err
}

// Feed sends one batch (abi batch layout) and returns the records the
// plugin reported, valid until the next call on this instance.
func (in *instance) Feed(ctx context.Context, batch []byte) ([]byte, error) {
	if err := in.ready(ctx, "feed"); err != nil {
		return nil, err
	}
	return in.run(ctx, "feed", fnFeed, batch)
}

// End ends the stream and returns the records the plugin flushed, valid
// until the next call on this instance.
func (in *instance) End(ctx context.Context) ([]byte, error) {
	if err := in.ready(ctx, "end"); err != nil {
		return nil, err
	}
	out, err := in.run(ctx, "end", fnEnd, nil)
	in.opts = nil
	return out, err
}

// Close returns the instance to its plugin's pool (or discards it after a
// fault). The instance must not be used afterwards. Close is idempotent.
func (in *instance) Close(ctx context.Context) error {
	if in.closed {
		return nil
	}
	in.closed = true
	if in.m != nil {
		if in.p.disabled.Load() {
			in.m.close(ctx)
		} else {
			in.p.put(ctx, in.m)
		}
		in.m = nil
	}
	return nil
}

// ready makes sure there is a module to call: after a fault (or a
// cancelled call) it instantiates a fresh one and, in the middle of a
// stream, begins the stream again.
func (in *instance) ready(ctx context.Context, op string) error {
	if in.closed {
		return fmt.Errorf("host: plugin %s: %s on a closed instance", in.p.name(), op)
	}
	if in.p.disabled.Load() {
		in.discard(ctx)
		return &normalize.FaultError{Plugin: in.p.name(), Op: op, Err: in.p.disabledError()}
	}
	if in.m != nil {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("host: plugin %s: %s: %w", in.p.name(), op, err)
	}
	if stderr, cause := in.restart(ctx, op); cause != nil {
		err, _ := in.report(op, stderr, cause)
		return err
	}
	return nil
}

// restart instantiates a fresh module and, mid-stream, begins again. On
// failure nothing is kept and the cause is returned, not yet counted.
func (in *instance) restart(ctx context.Context, op string) (stderr string, cause error) {
	m, err := in.p.instantiate(ctx)
	if err != nil {
		return m.stderr.String(), err
	}
	if in.opts != nil && op != "begin" {
		status, err := m.invoke(ctx, fnBegin, in.opts, true)
		if err == nil && status != wire.StatusOK {
			err = fmt.Errorf("%w: restarting the stream, %s returned status %d: %s", errFatalStatus, wire.ExportBegin, status, m.c.fail)
		}
		if err != nil {
			stderr = m.stderr.String()
			m.close(context.WithoutCancel(ctx))
			return stderr, err
		}
	}
	in.m = m
	return "", nil
}

// report turns the cause of a failed call into the error returned: a
// plain error for the caller's cancellation, else a counted
// *normalize.FaultError. disabled reports that this fault disabled the plugin.
func (in *instance) report(op, stderr string, cause error) (err error, disabled bool) {
	var canceled errCanceled
	if errors.As(cause, &canceled) {
		// The caller gave up: not the plugin's fault, nothing to
		// count; the next call starts a fresh module.
		return fmt.Errorf("host: plugin %s: %s: %w", in.p.name(), op, canceled.err), false
	}
	fe := &normalize.FaultError{Plugin: in.p.name(), Op: op, Err: cause, Stderr: stderr}
	if in.p.noteFault(cause) {
		fe.Err = fmt.Errorf("%w (%w after %d consecutive faults)", cause, errPluginDisabled, in.p.rt.s.maxFaults)
		return fe, true
	}
	return fe, false
}

// run calls fn and turns its status into the instance's error contract.
func (in *instance) run(ctx context.Context, op string, fn int, input []byte) ([]byte, error) {
	m := in.m
	status, err := m.invoke(ctx, fn, input, true)
	out := m.c.out
	if err != nil {
		return out, in.fault(ctx, op, m, err)
	}
	if fn == fnBegin {
		// Begin reports no records; whatever the plugin sent is dropped.
		out = nil
	}
	switch status {
	case wire.StatusOK:
		in.p.noteOK()
		return out, nil
	case wire.StatusRejected:
		in.p.noteOK()
		return out, &normalize.RejectedError{Plugin: in.p.name(), Message: string(m.c.fail)}
	case wire.StatusFatal:
		msg := string(m.c.fail)
		if msg == "" {
			msg = "(no message)"
		}
		return out, in.fault(ctx, op, m, fmt.Errorf("%w: %s", errFatalStatus, msg))
	default:
		return out, in.fault(ctx, op, m, fmt.Errorf("%w: %s returned status %d, which is not a status", errContract, fnNames[fn], status))
	}
}

// fault discards the module and reports the fault; for a feed it
// restarts the stream on a fresh module at once, so that the caller just
// goes on.
func (in *instance) fault(ctx context.Context, op string, m *module, cause error) error {
	stderr := m.stderr.String()
	m.close(context.WithoutCancel(ctx))
	if in.m == m {
		in.m = nil
	}
	err, disabled := in.report(op, stderr, cause)
	fe, isFault := err.(*normalize.FaultError)
	if disabled || !isFault || op != "feed" || in.opts == nil {
		return err
	}
	if _, cause := in.restart(ctx, op); cause != nil {
		// Counted as a fault of its own; the next call tries again.
		if rerr, _ := in.report(op, "", cause); rerr != nil {
			fe.Err = fmt.Errorf("%w; restarting the stream failed too: %v", fe.Err, cause)
		}
	}
	return fe
}

// discard drops the module without returning it to the pool.
func (in *instance) discard(ctx context.Context) {
	if in.m != nil {
		in.m.close(ctx)
		in.m = nil
	}
}

package normalize

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/internal/wire"
)

// Instance is one plugin instance serving one stream at a time.
type Instance interface {
	// Begin starts a stream and resets all per-stream state.
	Begin(ctx context.Context, opts abi.BeginOptions) error
	// Feed sends one batch and returns the records the plugin reported,
	// valid until the next call. On a fault it returns the records
	// reported before the fault and a *FaultError; the Instance is then
	// usable again (it has replaced its module and begun the stream
	// anew). A rejected batch returns its records and a *RejectedError.
	Feed(ctx context.Context, batch []byte) ([]byte, error)
	// End ends the stream, with the same error contract as Feed.
	End(ctx context.Context) ([]byte, error)
}

// KeyedInstance is an Instance whose plugin declared the object keys it
// reads (abi.Manifest.Keys, ABI 1.2): the stream marks them in the tapes
// it sends (wire.BuildTapeKeys).
type KeyedInstance interface {
	Instance
	// Keys returns the declared keys, nil for none.
	Keys() *wire.KeySet
}

// FaultError reports a plugin call that faulted: a trap, a timeout, running
// out of memory, a fatal status or a limit exceeded.
type FaultError struct {
	Plugin string
	Op     string // "begin", "feed" or "end"
	Err    error
	Stderr string // the plugin's captured stderr, bounded
}

func (e *FaultError) Error() string {
	msg := fmt.Sprintf("plugin %s faulted in %s: %v", e.Plugin, e.Op, e.Err)
	if e.Stderr != "" {
		msg += "; plugin stderr: " + e.Stderr
	}
	return msg
}

func (e *FaultError) Unwrap() error { return e.Err }

// RejectedError reports a batch the plugin rejected with StatusRejected:
// its records stand and the stream goes on.
type RejectedError struct {
	Plugin  string
	Message string
}

func (e *RejectedError) Error() string {
	return fmt.Sprintf("plugin %s rejected input: %s", e.Plugin, e.Message)
}

// ErrDisabled is wrapped by an Instance that will serve no more calls (a
// plugin disabled after repeated faults). The stream counts the remaining
// lines as failed.
var ErrDisabled = errors.New("plugin disabled")

// NativeInstance runs p in-process through the SDK's Driver: the same
// records as the wasm build, without the sandbox.
func NativeInstance(p sdk.Plugin) Instance {
	n := &native{name: p.Manifest.Name, d: p.Driver()}
	if p.Keys != nil {
		n.keys = wire.NewKeySet(p.Keys.Names()...)
	}
	return n
}

type native struct {
	name string
	d    wire.Driver
	opts []byte
	keys *wire.KeySet
}

// Keys implements KeyedInstance.
func (n *native) Keys() *wire.KeySet { return n.keys }

func (n *native) Begin(ctx context.Context, opts abi.BeginOptions) error {
	b, err := json.Marshal(opts)
	if err != nil {
		return fmt.Errorf("encode begin options: %w", err)
	}
	n.opts = b
	st, msg := n.d.Begin(b)
	return n.check("begin", st, msg)
}

func (n *native) Feed(ctx context.Context, batch []byte) ([]byte, error) {
	st, msg := n.d.Feed(batch)
	out := n.d.Output()
	return out, n.check("feed", st, msg)
}

func (n *native) End(ctx context.Context) ([]byte, error) {
	st, msg := n.d.End()
	out := n.d.Output()
	return out, n.check("end", st, msg)
}

func (n *native) check(op string, st wire.Status, msg string) error {
	switch st {
	case wire.StatusOK:
		return nil
	case wire.StatusRejected:
		return &RejectedError{Plugin: n.name, Message: msg}
	default:
		fault := &FaultError{Plugin: n.name, Op: op, Err: errors.New(msg)}
		if op != "end" && n.opts != nil {
			// Like a wasm instance, start afresh so the stream goes on.
			if st, msg := n.d.Begin(n.opts); st != wire.StatusOK {
				fault.Err = fmt.Errorf("%v; restart failed: %s", fault.Err, msg)
			}
		}
		return fault
	}
}

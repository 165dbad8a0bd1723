package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/google/uuid"
	"github.com/twasm/twasm/internal/runstate"
	"github.com/twasm/twasm/internal/vocab"
	"github.com/twasm/twasm/transcript"
)

// Router wraps tools so that every call through it is recorded as a
// tool.call / tool.result pair with fidelity router, at the path and
// iteration of the calling step. The zero value is an empty router,
// ready to use. A Router is safe for concurrent use.
type Router struct {
	mu    sync.RWMutex
	tools map[string]routedTool
}

type routedTool struct {
	kind transcript.ToolKind
	fn   func(ctx context.Context, input json.RawMessage) (string, error)
}

// Register adds a tool under name, with its kind (as in the Agent Client
// Protocol: execute, read, edit, ...; empty for none). fn is the tool:
// input is its JSON input, output what the agent gets back. A name can be
// registered once.
func (r *Router) Register(name string, kind transcript.ToolKind, fn func(ctx context.Context, input json.RawMessage) (output string, err error)) error {
	if name == "" {
		return fmt.Errorf("%w: empty tool name", ErrInvalidName)
	}
	if !vocab.ToolKind(string(kind)) {
		return fmt.Errorf("lifecycle: register tool %s: tool kind %q is not in the vocabulary", name, kind)
	}
	if fn == nil {
		return fmt.Errorf("lifecycle: register tool %s: nil function", name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.tools[name]; dup {
		return fmt.Errorf("%w: tool %s is already registered", ErrInvalidName, name)
	}
	if r.tools == nil {
		r.tools = make(map[string]routedTool)
	}
	r.tools[name] = routedTool{kind: kind, fn: fn}
	return nil
}

// Call calls the tool registered as name with input and records it in
// step: tool.call (a new UUID as call_id, the input) before the tool runs
// and tool.result (output, error text, status ok, error or cancelled)
// after, with the same call_id. An empty input is recorded as {}; input
// that is not JSON is recorded as a JSON string and the tool is not called.
// An unknown name is recorded too: its call and an error result ("unknown
// tool"). A panicking tool gets an error result and the panic
// continues. The returned error wraps the tool's error; the recorded error
// text is the tool's own.
func (r *Router) Call(ctx context.Context, step *Step, name string, input json.RawMessage) (string, error) {
	if step == nil {
		return "", fmt.Errorf("lifecycle: call tool %s: nil step", name)
	}
	r.mu.RLock()
	tool, known := r.tools[name]
	r.mu.RUnlock()

	callID := uuid.NewString()
	var inputErr error
	switch {
	case len(input) == 0:
		input = json.RawMessage(`{}`)
	case !json.Valid(input):
		// Kept as a string so the ledger still shows what was sent.
		quoted, _ := json.Marshal(string(input))
		input = quoted
		inputErr = errors.New("input is not valid JSON")
	}
	call := &transcript.ToolPayload{
		Name: name, CallID: callID, Input: input,
		Fidelity: transcript.FidelityRouter, Kind: tool.kind,
	}
	// Recorded even under a done context: the ledger must show every call
	// the agent made, and the result will say it was cancelled.
	if err := step.Record(context.WithoutCancel(ctx), &transcript.Event{Type: transcript.ToolCall, Payload: call}); err != nil {
		return "", fmt.Errorf("lifecycle: tool %s: record call: %w", name, err)
	}

	var (
		out string
		ran bool
		err error
	)
	switch {
	case !known:
		err = fmt.Errorf("%w: %s", errUnknownTool, name)
	case inputErr != nil:
		err = inputErr
	default:
		out, err = r.invoke(ctx, step, name, callID, tool, input)
		ran = true
	}
	rerr := r.result(ctx, step, name, callID, tool.kind, out, ran, err)
	if err != nil {
		err = fmt.Errorf("lifecycle: tool %s (call %s): %w", name, callID, err)
	}
	return out, errors.Join(err, rerr)
}

// invoke runs the tool; when it panics the result is recorded before the
// panic continues, so the call is not left dangling.
func (r *Router) invoke(ctx context.Context, step *Step, name, callID string, tool routedTool, input json.RawMessage) (out string, err error) {
	returned := false
	defer func() {
		if returned {
			return
		}
		pv := recover()
		cause := errGoexit
		if pv != nil {
			cause = panicErr(pv)
		}
		_ = r.result(ctx, step, name, callID, tool.kind, "", false, cause)
		if pv != nil {
			panic(pv)
		}
	}()
	out, err = tool.fn(ctx, input)
	returned = true
	return out, err
}

// result records a call's result; ran says the tool returned, so that
// out, even empty, is its output (a call refused or that panicked has
// none).
func (r *Router) result(ctx context.Context, step *Step, name, callID string, kind transcript.ToolKind, out string, ran bool, err error) error {
	status, text := runstate.Outcome(err, ctx.Err())
	res := &transcript.ToolPayload{
		Name: name, CallID: callID, Output: out, HasOutput: ran, Error: text,
		Fidelity: transcript.FidelityRouter, Kind: kind, Status: status,
	}
	// A cancelled call still gets its result, or it would look dangling.
	if rerr := step.Record(context.WithoutCancel(ctx), &transcript.Event{Type: transcript.ToolResult, Payload: res}); rerr != nil {
		return fmt.Errorf("lifecycle: tool %s: record result: %w", name, rerr)
	}
	return nil
}

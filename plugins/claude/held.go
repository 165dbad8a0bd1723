package claude

import (
	"strconv"

	"github.com/twasm/twasm/abi/sdk"
)

// heldNative is the native name under which the line of a result that
// waits for its call (heldResult) is declared ignored: the result is
// reported with the line that reports its call.
const heldNative = "(tool result before its call)"

// heldResult is a session log's tool result whose call is not in the
// input yet. Claude Code appends a tool's result record and the
// assistant record that holds the call apart, and can write the result
// first (2.1.9x logs: the result's parentUuid names the assistant record
// that follows it, with an earlier timestamp). Such a result waits while
// assistant records follow; when one of them reports the call, the
// result is reported right after it, as a result of that call (its name,
// its kind, a Bash call's exit code rule). At the first other record, or
// at the end of the log, a result still waiting has no call in the input
// and is reported as before, its call synthesized from what the result
// shows.
type heldResult struct {
	r     sdk.ToolResult // kept: it outlives its line
	scope string
	code  sdk.Int // the exit code the result's text states
	isErr bool
	async bool
	kind  string // synthKind of the result's tool_use_result
}

// keepResult copies r's strings out of the line they alias.
func keepResult(r sdk.ToolResult) sdk.ToolResult {
	r.CallID, r.Output, r.Error, r.Status = r.CallID.Keep(), r.Output.Keep(), r.Error.Keep(), r.Status.Keep()
	r.Scope, r.Time = r.Scope.Keep(), r.Time.Keep()
	return r
}

// releaseHeld reports the held results whose call a line reported.
func (n *normalizer) releaseHeld(out *sdk.Out) {
	kept := n.held[:0]
	for _, h := range n.held {
		id := h.r.CallID.String()
		c := n.calls[callKey(h.scope, id)]
		if c == nil || !c.reported {
			kept = append(kept, h)
			continue
		}
		r := h.r
		r.Name = sdk.S(c.name)
		c.resulted = true
		if code, ok := h.code.Value(); ok && !h.isErr && c.name == "Bash" && r.Status.String() == toolOK {
			// The exit code the text states decides, as for a result
			// that follows its call.
			r.ExitCode = h.code
			if code != 0 {
				r.IsError, r.Status = true, sdk.S(toolError)
				r.Error = sdk.S("exit code " + strconv.FormatInt(code, 10))
			}
		}
		c.perm = nil
		n.finishResult(c, r, h.isErr, h.async, id, h.scope, out)
	}
	n.held = kept
}

// flushHeld reports every held result with a call synthesized from it:
// its call did not come.
func (n *normalizer) flushHeld(out *sdk.Out) {
	held := n.held
	n.held = nil
	for _, h := range held {
		id := h.r.CallID.String()
		c := n.calls[callKey(h.scope, id)]
		if c == nil {
			c = n.synthesizeKind(id, h.kind, h.scope, h.r.Time, out)
		}
		r := h.r
		r.Name = sdk.S(c.name)
		c.resulted = true
		n.finishResult(c, r, h.isErr, h.async, id, h.scope, out)
	}
}

package codex

import (
	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// Tool result statuses: the closed set of the transcript format (spec §4).
// Codex's own words (completed, failed, declined, in_progress) never reach
// the transcript.
const (
	toolOK        = "ok"
	toolError     = "error"
	toolDenied    = "denied"
	toolCancelled = "cancelled"
)

// maxErrText bounds the error text taken from a tool's output (the whole
// output stays in the result's output).
const maxErrText = 2048

// nativeStatus maps a status word Codex writes on an item or an end event
// to the transcript's set; "" when the word says nothing about the outcome
// (in_progress, missing).
func nativeStatus(v abi.Value) string {
	name := sdk.Name(v)
	for _, t := range &nativeStatuses {
		if t.word == name {
			return t.status
		}
	}
	return ""
}

// nativeStatuses is nativeStatus's table (a table, not a switch: see
// toolKinds).
var nativeStatuses = [...]struct{ word, status string }{
	{"completed", toolOK}, {"success", toolOK}, {"succeeded", toolOK}, {"ok", toolOK},
	{"failed", toolError}, {"error", toolError}, {"errored", toolError},
	{"declined", toolDenied}, {"rejected", toolDenied}, {"denied", toolDenied},
	{"cancelled", toolCancelled}, {"canceled", toolCancelled}, {"aborted", toolCancelled},
	{"interrupted", toolCancelled}, {"timed_out", toolCancelled},
}

// outcome is what a tool's output says about how the call ended.
type outcome struct {
	status string // one of the tool statuses, "" when the output says nothing
	code   sdk.Int
	err    string // error text for a status other than ok
}

// settle writes o into r: the status, the exit code and, for anything
// but ok, error text (o's, else a description of the exit code or the
// status), so that no failed result is without its error. out is the
// result's output; text, when not nil, is its text in a buffer the caller
// already holds (it is otherwise copied from out, and only for an error).
func settle(r *sdk.ToolResult, o outcome, out sdk.Str, text []byte) {
	if _, ok := r.ExitCode.Value(); !ok {
		r.ExitCode = o.code
	}
	st := o.status
	code, hasCode := r.ExitCode.Value()
	if st == "" {
		switch {
		case hasCode && code != 0:
			st = toolError
		default:
			st = toolOK
		}
	}
	r.Status = sdk.S(st)
	r.IsError = st != toolOK
	if st == toolOK || !r.Error.IsEmpty() {
		return
	}
	e := o.err
	if e == "" {
		output := text
		if output == nil {
			output = []byte(out.String())
		}
		switch {
		case st == toolError && hasCode && code != 0:
			e = "exit code " + itoa(code)
			if last := lastLine(output); last != "" {
				e += ": " + last
			}
		case st == toolDenied:
			e = firstLine(output, "the call was declined")
		case st == toolCancelled:
			e = firstLine(output, "the call was cancelled")
		default:
			e = firstLine(output, "the call failed")
		}
	}
	r.Error = sdk.S(e)
}

// settleCommand settles the result of a command the CLI ran, given the
// status word of its item or end event and the text of r.Output (in a
// buffer of the normalizer's, not a copy per line): "completed" with a
// non-zero exit code is still a failure, and the runtime's own failures
// (sandbox, timeout, rejection) arrive as the output text.
func settleCommand(r *sdk.ToolResult, status abi.Value, text []byte) {
	st := nativeStatus(status)
	if st == toolOK {
		st = ""
	}
	oc := outcome{status: st}
	if st == "" || st == toolError {
		if c := classify(text); c.status != "" {
			oc = c
		}
	}
	settle(r, oc, r.Output, text)
}

// classify reads what Codex's textual tool output states about the
// outcome. The forms, by Codex version:
//
//   - "Exit code: N\nWall time: ...\nOutput:\n..." (freeform shell and
//     apply_patch outputs);
//   - "Chunk ID: ...\nWall time: ...\nProcess exited with code N\n...
//     Output:\n..." (unified exec; "Process running with session ID N"
//     while it runs);
//   - "failed in sandbox <Sandbox> with execution error: sandbox denied
//     exec error, exit code: N, stdout: ..., stderr: ..." and
//     "execution error: ..." (a command the sandbox or the runtime
//     stopped);
//   - "exec command rejected by user", "patch rejected by user" (the user
//     or the approval policy refused it);
//   - "This action was rejected due to unacceptable risk.\nReason: ..."
//     (the auto-reviewer, guardian, denied it: denied, with its reason),
//     "The automatic permission approval review did not finish before
//     its deadline..." (the review timed out, the call did not run:
//     cancelled), core/src/guardian/review.rs;
//   - "aborted", "aborted by user after Ns", "...\naborted by user" (the
//     turn was interrupted), "command timed out after N milliseconds"
//     (the command was killed), which are cancellations;
//   - "apply_patch verification failed: ...", "unsupported call: ...",
//     "failed to parse function arguments: ..." (the tool refused the
//     request), "err: ..." (an MCP call that failed, 2025 builds), a
//     multi-agent tool's refusal (see collabFailed).
//
// Only the header (the lines before "Output:") is searched for exit
// codes, so a command that prints "Exit code: 3" itself is not misread.
func classify(t []byte) outcome {
	t = trimLeft(t)
	var o outcome
	first := firstLineOf(t)
	switch {
	case sdk.HasPrefix(t, "aborted"):
		return outcome{status: toolCancelled, err: clip(first)}
	case sdk.HasPrefix(t, "This action was rejected due to unacceptable risk"):
		// The auto-reviewer (guardian) denied the call, which did not
		// run: its rationale is the next line, "Reason: ...".
		rest := t[min(len(first)+1, len(t)):]
		return outcome{status: toolDenied, err: clip(first) + " " + clip(firstLineOf(rest))}
	case sdk.HasPrefix(t, "The automatic permission approval review did not finish before its deadline"):
		// The auto-review timed out; the call did not run.
		return outcome{status: toolCancelled, err: clip(first)}
	case sdk.HasPrefix(t, "exec command rejected") || sdk.HasPrefix(t, "patch rejected") ||
		sdk.HasPrefix(t, "rejected by user") || contains(first, "rejected by user"):
		return outcome{status: toolDenied, err: clip(first)}
	case contains(first, "blocked by PreToolUse hook"):
		// A user's PreToolUse hook refused the call, which did not run
		// ("Command blocked by PreToolUse hook: <reason>. Command:
		// <command>"; the model reads it as a failure).
		return outcome{status: toolDenied, err: clip(first)}
	case sdk.HasPrefix(t, "failed in sandbox"):
		return outcome{status: toolError, code: codeAfter(t, "exit code: "), err: clip(t)}
	case sdk.HasPrefix(t, "execution error:"):
		o = outcome{status: toolError, err: clip(t)}
		if contains(first, "Timeout") || contains(first, "timed out") {
			o.status = toolCancelled
		}
		return o
	case sdk.HasPrefix(t, "apply_patch verification failed") || sdk.HasPrefix(t, "unsupported call") ||
		sdk.HasPrefix(t, "unsupported custom tool call") || sdk.HasPrefix(t, "failed to parse function arguments") ||
		sdk.HasPrefix(t, "Failed to apply patch") || sdk.HasPrefix(t, "Invalid patch") || sdk.HasPrefix(t, "invalid patch") ||
		sdk.HasPrefix(t, "err: ") || toolFailed(first) || collabFailed(first):
		return outcome{status: toolError, err: clip(t)}
	}
	head, body := sdk.SplitOutputHeader(t)
	o.code = sdk.HeaderExitCode(head)
	for rest := head; len(rest) > 0; {
		line := firstLineOf(rest)
		rest = rest[min(len(line)+1, len(rest)):]
		if sdk.HasPrefix(line, "aborted by user") {
			return outcome{status: toolCancelled, code: o.code, err: "aborted by user"}
		}
	}
	if line := firstLineOf(trimLeft(body)); sdk.HasPrefix(line, "command timed out after") {
		o.status, o.err = toolCancelled, clip(line)
	} else if contains(line, "rejected this action") {
		// A tool's policy refused the action (Browser Use: "... rejected
		// this action due to browser security policy").
		o.status, o.err = toolDenied, clip(line)
	}
	return o
}

// toolFailed reports whether a first line is a tool's own failure
// report, "<tool_name> failed: <why>" ("write_stdin failed: stdin is
// closed for this session").
func toolFailed(line []byte) bool {
	i := 0
	for i < len(line) && (line[i] >= 'a' && line[i] <= 'z' || line[i] == '_') {
		i++
	}
	return i > 0 && sdk.HasPrefix(line[i:], " failed: ")
}

// collabFailed reports whether a first line is a multi-agent tool's
// refusal (spawn_agent, send_input, wait, close_agent, resume_agent:
// collab_spawn_error and collab_agent_error in Codex's
// core/src/tools/handlers/multi_agents.rs): "collab spawn failed: ..."
// ("agent thread limit reached"), "collab tool failed: ...", "collab
// manager unavailable", "agent with id <id> not found" or "... is
// closed". The rollout keeps no success flag beside the text.
func collabFailed(line []byte) bool {
	switch {
	case sdk.HasPrefix(line, "collab spawn failed: ") || sdk.HasPrefix(line, "collab tool failed: ") ||
		sdk.HasPrefix(line, "collab manager unavailable"):
		return true
	case sdk.HasPrefix(line, "agent with id "):
		return contains(line, " not found") || contains(line, " is closed")
	}
	return false
}

// classifyItems reads an output given as content items (code-mode
// "exec", MCP, view_image): their texts are classified as one output; a
// code-mode "Script failed" is an error (denied when its "Script error:"
// says an approval policy rejected the command), and the results the script printed as JSON lines {"exit_code": N,
// ...} (one per command it ran) make it an error when one failed; the
// exit code is kept when there is one such result.
func classifyItems(items abi.Value, buf []byte) (outcome, []byte) {
	buf = buf[:0]
	it := items.Iter()
	for it.Next() {
		buf = sdk.AppendText(buf, it.Value().Get("text"))
		buf = append(buf, '\n')
	}
	o := classify(buf)
	if o.status != "" {
		return o, buf
	}
	if t := trimLeft(buf); sdk.HasPrefix(t, "Script failed") {
		// The script itself failed; its "Script error:" says why. An
		// approval policy that rejected a command refused it.
		o.status, o.err = toolError, "script failed"
		if i := index(t, "Script error:"); i >= 0 {
			o.err = clip(trimLeft(t[i+len("Script error:"):]))
		}
		if contains([]byte(o.err), "reject") {
			o.status = toolDenied
		}
		return o, buf
	}
	var codes []int64
	for rest := buf; len(rest) > 0; {
		line := firstLineOf(rest)
		rest = rest[min(len(line)+1, len(rest)):]
		if l := trimLeft(line); sdk.HasPrefix(l, `{"exit_code":`) {
			if c, ok := parseInt(l[len(`{"exit_code":`):]); ok {
				codes = append(codes, c)
			}
		}
	}
	for _, c := range codes {
		if c != 0 {
			o.status, o.err = toolError, "a command the script ran exited with code "+itoa(c)
			break
		}
	}
	if len(codes) == 1 {
		o.code = sdk.N(codes[0])
	}
	return o, buf
}

// codeAfter finds "<label>N" in t and returns N.
func codeAfter(t []byte, label string) sdk.Int {
	for i := 0; i+len(label) <= len(t); i++ {
		if sdk.HasPrefix(t[i:], label) {
			return parseCode(t[i+len(label):])
		}
	}
	return sdk.Int{}
}

func parseCode(b []byte) sdk.Int {
	if v, ok := parseInt(b); ok {
		return sdk.N(v)
	}
	return sdk.Int{}
}

func trimLeft(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	return b
}

func firstLineOf(b []byte) []byte {
	for i, c := range b {
		if c == '\n' {
			if i > 0 && b[i-1] == '\r' {
				return b[:i-1]
			}
			return b[:i]
		}
	}
	return b
}

func contains(b []byte, s string) bool { return index(b, s) >= 0 }

// index is the offset of the first s in b, or -1.
func index(b []byte, s string) int {
	for i := 0; i+len(s) <= len(b); i++ {
		if sdk.HasPrefix(b[i:], s) {
			return i
		}
	}
	return -1
}

// clip returns b as a string of at most maxErrText bytes, cut at a UTF-8
// boundary and without trailing white space.
func clip(b []byte) string {
	if len(b) > maxErrText {
		n := maxErrText
		for n > 0 && b[n]&0xC0 == 0x80 {
			n--
		}
		b = b[:n]
	}
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return string(b)
}

// firstLine is the first non-empty line of b, clipped, else def.
func firstLine(b []byte, def string) string {
	if l := firstLineOf(trimLeft(b)); len(l) > 0 {
		return clip(l)
	}
	return def
}

// lastLine is the last non-empty line of b, clipped to a few hundred
// bytes: where a failing command usually says why.
func lastLine(b []byte) string {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	i := len(b)
	for i > 0 && b[i-1] != '\n' {
		i--
	}
	l := b[i:]
	if len(l) > 300 {
		n := 300
		for n > 0 && l[n]&0xC0 == 0x80 {
			n--
		}
		l = append(l[:n:n], "…"...)
	}
	return string(l)
}

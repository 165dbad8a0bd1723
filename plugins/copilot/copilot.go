package copilot

import (
	"strconv"
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// Plugin is the GitHub Copilot CLI normalizer.
var Plugin = sdk.Plugin{
	Manifest: abi.Manifest{
		Name:        "copilot",
		Version:     "0.1.0",
		Providers:   []string{"copilot"},
		Formats:     []string{fmtJSON, fmtEvents},
		Description: "GitHub Copilot CLI --output-format json and events.jsonl session logs",
		Stores: []abi.Store{
			{Name: "Copilot CLI session state", Roots: []abi.Root{{Env: "COPILOT_HOME"}, {Path: "~/.copilot"}}, Dir: "session-state", Pattern: "*/events.jsonl"},
			// Before 1.0 the CLI kept its state under $XDG_STATE_HOME
			// (COPILOT_HOME, when set, replaces both).
			{Name: "Copilot CLI session state (before 1.0)", Roots: []abi.Root{{Env: "XDG_STATE_HOME", Path: ".copilot"}}, UnlessEnv: "COPILOT_HOME",
				Dir: "session-state", Pattern: "*/events.jsonl"},
		},
	},
	New: func(opts abi.BeginOptions) sdk.Normalizer {
		n := newNormalizer()
		if opts.Format == fmtJSON || opts.Format == fmtEvents {
			n.hint = opts.Format
		}
		return n
	},
	Keys: keys,
}

// Format names, as reported in OpMeta and the manifest.
const (
	fmtJSON   = "json"
	fmtEvents = "events-jsonl"
)

// Block slots of an assistant message: the model reasons, then writes,
// then requests tools, so fixed slots keep that order whatever order the
// deltas and the final message arrive in.
const (
	slotThinking = 0
	slotText     = 1
	slotTools    = 2
)

// normalizer is the per-stream state. Everything kept across lines is a Go
// string, a byte slice or a number: spans die with their line.
type normalizer struct {
	hint                   string // the format the host was told, if one of ours
	sawEvent, sawEphemeral bool
	sessionSent, placeSent bool
	sessionID              string // the first session.start's (or resume's), to tell a second session
	versionSent            bool
	modelSent              bool

	msgs  map[string]*message // open assistant messages by messageId
	done  map[string]bool     // messageIds whose final message was written
	open  []*message          // open messages, oldest first
	nKeys int

	// reasoning that arrived before the message it belongs to, and the
	// agent that reasoned.
	thinking      []byte
	hasThinking   bool
	thinkingScope *agent

	// calls, held, refused, completed and callAgent are kept per call,
	// by the agent that made it (reported it) and its toolCallId
	// (callKey).
	calls map[string]bool            // tool calls reported
	held  map[string]*sdk.ToolResult // results whose call was not reported yet
	order []string                   // held keys in arrival order

	usage usageTotals

	sawResult bool
	lastErr   string
	// taskFailed is the last task_complete's failure when no accepted
	// one came after it: the session's error at its end.
	taskFailed string
	// turnOpen: the last assistant.turn_start has no turn_end yet.
	turnOpen bool
	// turnFailed: a provider error was reported since the last
	// assistant.turn_start or turn_retry: the retry that follows it is
	// that error's, not another.
	turnFailed bool

	// ids and uuids are the envelope ids read so far: an id seen again
	// is a replay. The CLI's ids are canonical UUIDs, kept as their 16
	// bytes (no string allocated per line); any other id is kept as is.
	ids   map[string]bool
	uuids map[[16]byte]bool

	// refused holds, per toolCallId, the result a permission.completed
	// that refused the call implies; it is reported at the end unless the
	// call's own tool.execution_complete came (completed).
	refused      map[string]*sdk.ToolResult
	refusedOrder []string
	completed    map[string]bool

	// shutdown is set while the log's last event is a session.shutdown;
	// shutdownErr is the error a shutdown of type error states.
	shutdown    bool
	shutdownErr string

	// deltas are tool calls seen only as assistant.tool_call_delta so
	// far, in arrival order: a stream cut there still records them.
	deltas []*deltaCall

	// skills are skill.invoked events whose content no user.message
	// carried yet, oldest first.
	skills []skillLoad

	// Sub-agents. cur is the one the current line belongs to (nil: the
	// main agent); agents are all of them by scope id, agentList in the
	// order they started; callAgent is the sub-agent a call was made in;
	// tasks are the calls that may start a sub-agent, until it starts.
	cur       *agent
	agents    map[string]*agent
	agentList []*agent
	callAgent map[string]*agent
	tasks     map[string]*taskCall
}

// deltaCall is a tool call being streamed.
type deltaCall struct {
	id, name, ts string
	input        []byte
	scope        *agent
}

// message is an assistant message being built.
type message struct {
	key         string
	hasThinking bool
	scope       *agent // the sub-agent it belongs to; nil: the main agent
}

func newNormalizer() *normalizer {
	return &normalizer{msgs: map[string]*message{}, done: map[string]bool{}, calls: map[string]bool{}, held: map[string]*sdk.ToolResult{}, ids: map[string]bool{}, uuids: map[[16]byte]bool{}, refused: map[string]*sdk.ToolResult{}, completed: map[string]bool{},
		agents: map[string]*agent{}, callAgent: map[string]*agent{}, tasks: map[string]*taskCall{}}
}

// Line implements sdk.Normalizer.
func (n *normalizer) Line(l *sdk.Line, out *sdk.Out) error {
	if !l.JSON().Exists() {
		if len(sdk.TrimSpace(l.Raw)) > 0 {
			out.Unmapped(sdk.S("non_json"))
		}
		return nil
	}
	v := l.JSON()
	if v.Kind() != abi.KindObject {
		out.Unmapped(sdk.S("non_object"))
		return nil
	}
	t := v.Get("type")
	if t.Kind() != abi.KindString {
		out.Unmapped(sdk.S("(no type)"))
		return nil
	}
	n.sawEvent = true
	if id := v.Get("id"); id.Kind() == abi.KindString && !id.Is("") {
		// An event whose id was already read is a replay of it (a log
		// copied after itself): the same event, not a new one.
		if n.replayed(id) {
			out.Ignored(sdk.S("(replayed event)"))
			return nil
		}
	}
	if v.Get("ephemeral").Truthy() || streamOnly(t) {
		n.sawEphemeral = true
	}
	// Only the log's last event decides whether it ended with a
	// shutdown (a resumed log goes on after one).
	n.shutdown = false
	d := v.Get("data")
	n.cur = nil
	if !t.Is("subagent.started") {
		n.cur = n.lineScope(v, d, out)
	}
	n.event(v, t, d, sdk.StringOf(v.Get("timestamp")), out)
	return nil
}

// replayed reports whether the envelope id was read before, and records
// it. A canonical UUID (lower-case hex) is kept as its bytes; another id
// (upper case, another shape) as its text, which never equals a
// canonical UUID's, so the two sets never hold the same id.
func (n *normalizer) replayed(id abi.Value) bool {
	k := sdk.View(id) // aliases the line unless escaped: copied below if kept
	if u, ok := uuidBytes(k); ok {
		if n.uuids[u] {
			return true
		}
		n.uuids[u] = true
		return false
	}
	if n.ids[k] {
		return true
	}
	n.ids[strings.Clone(k)] = true
	return false
}

// uuidBytes parses a canonical UUID: 8-4-4-4-12 lower-case hex digits.
func uuidBytes(s string) (u [16]byte, ok bool) {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return u, false
	}
	j := 0
	for i := 0; i < 36; i += 2 {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			i++
		}
		hi, ok1 := lowerHex(s[i])
		lo, ok2 := lowerHex(s[i+1])
		if !ok1 || !ok2 {
			return u, false
		}
		u[j] = hi<<4 | lo
		j++
	}
	return u, j == 16
}

func lowerHex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// End implements sdk.Normalizer.
func (n *normalizer) End(out *sdk.Out) error {
	n.cur = nil
	n.cutCalls(out)
	for len(n.open) > 0 {
		n.closeMsg(n.open[0], sdk.MessageEnd{}, out)
	}
	n.flushThinking(out)
	// A sub-agent still running when the stream ended has its prompt;
	// the host ends its scope with the step.
	for _, a := range n.agentList {
		if a.open {
			n.prompt(a, sdk.Str{}, out)
		}
	}
	// Skills loaded that no user.message carried, after the prompt of
	// the sub-agent that loaded them.
	for len(n.skills) > 0 {
		n.skillFlush(n.skills[0].scope, out)
	}
	// Calls the permission check refused and that never completed.
	for _, key := range n.refusedOrder {
		if r := n.refused[key]; r != nil && !n.completed[key] {
			r.Scope = scopeOf(n.callAgent[key])
			out.ToolResult(*r)
			// Once: an id reused listed it again (see call).
			delete(n.refused, key)
		}
	}
	// Results whose call never showed up: the host synthesizes the call.
	for _, key := range n.order {
		if r := n.held[key]; r != nil {
			out.ToolResult(*r)
		}
	}
	n.held, n.order = nil, nil
	if n.taskFailed != "" {
		n.providerError(n.taskFailed, sdk.S("task_complete"), out)
		n.taskFailed = ""
	}
	if n.sawEvent {
		f := n.hint
		switch {
		case f != "":
			// The recorder knows which output it captured; a cut stdout
			// looks like a log.
		case n.sawResult || n.sawEphemeral:
			// Only stdout carries the result line and ephemeral events.
			f = fmtJSON
		default:
			f = fmtEvents
		}
		// events.jsonl has no terminal event: the host settles it by
		// the session rule (spec §6.7).
		out.Meta(sdk.Meta{Format: sdk.S(f), NoTerminal: f == fmtEvents})
		if f == fmtEvents && n.turnOpen {
			// The log was read in the middle of a turn (twasm sync
			// archives sessions the CLI still writes): a later read,
			// once the turn ended, settles it.
			out.Status(sdk.StatusIncomplete, sdk.S("the turn has not finished: the log's last assistant.turn_start has no assistant.turn_end"), sdk.LevelError)
		}
	}
	n.usage.end(out)
	if !n.sawResult && n.shutdown && n.shutdownErr != "" {
		// The session ended in a crash: the log's terminal event.
		out.Status(sdk.StatusError, sdk.S(n.shutdownErr), sdk.LevelTerminal)
	}
	return nil
}

// streamOnly reports whether events of type t exist on stdout only (the
// CLI never writes deltas to events.jsonl), for streams that lost the
// ephemeral flag.
func streamOnly(t abi.Value) bool {
	return t.Is("assistant.message_delta") || t.Is("assistant.reasoning_delta") || t.Is("assistant.tool_call_delta")
}

// event dispatches one envelope by type.
func (n *normalizer) event(v, t, d abi.Value, ts sdk.Str, out *sdk.Out) {
	switch {
	case t.Is("session.start"), t.Is("session.resume"):
		said := n.session(d.Get("sessionId"), out)
		if ver := d.Get("copilotVersion"); !n.versionSent && ver.Kind() == abi.KindString && !ver.Is("") {
			n.versionSent = true
			out.Meta(sdk.Meta{ProviderVersion: sdk.Text(ver)})
			said = true
		}
		if n.model(d.Get("selectedModel"), false, out) {
			said = true
		}
		if n.place(d.Get("context"), out) {
			said = true
		}
		if t.Is("session.resume") {
			n.usage.segment()
		}
		if !said {
			// A resume restating the session, version and model
			// already reported.
			out.Ignored(sdk.S(sdk.TypeName(t)))
		}
	case t.Is("session.model_change"):
		// The latest model is the step's model: it produced what follows.
		// "auto" names no model: session.auto_mode_resolved says which.
		if nm := d.Get("newModel"); nm.Is("auto") || !n.model(nm, true, out) {
			out.Ignored(sdk.S(sdk.TypeName(t)))
		}
	case t.Is("session.auto_mode_resolved"):
		// The model auto mode chose: the latest, like a model_change.
		n.model(d.Get("chosenModel"), true, out)
	case t.Is("session.tools_updated"), t.Is("model.call_start"):
		// The model the tools were set up for, and the model called:
		// the step's model when no other event names one.
		if !n.model(d.Get("model"), false, out) {
			out.Ignored(sdk.S(sdk.TypeName(t)))
		}
	case t.Is("system.message"), t.Is("system.notification"):
		n.system(v, t, d, ts, out)
	case t.Is("user.message"):
		n.user(v, d, ts, out)
	case t.Is("skill.invoked"):
		n.skillInvoked(v, d, ts, out)
	case t.Is("assistant.message_delta"):
		// Deltas of a message already complete are previews of it.
		if m := n.msgFor(d.Get("messageId"), ts, out); m != nil {
			out.Append(sdk.S(m.key), slotText, sdk.BlockText, sdk.StringOf(d.Get("deltaContent")))
		} else {
			out.Ignored(sdk.S(sdk.TypeName(t)))
		}
	case t.Is("assistant.message"):
		n.assistantMessage(d, ts, out)
	case t.Is("assistant.reasoning_delta"):
		if !n.reasoning(d.Get("deltaContent"), true, out) {
			out.Ignored(sdk.S(sdk.TypeName(t)))
		}
	case t.Is("assistant.reasoning"):
		if !n.reasoning(d.Get("content"), false, out) {
			out.Ignored(sdk.S(sdk.TypeName(t)))
		}
	case t.Is("tool.execution_start"), t.Is("tool.user_requested"):
		// tool.user_requested: a command the user ran himself ("!ls"),
		// a call of its own.
		if !n.call(d.Get("toolCallId"), d.Get("toolName"), d.Get("arguments"), ts, true, out) {
			// The call the assistant message's toolRequests reported.
			out.Ignored(sdk.S(sdk.TypeName(t)))
		}
	case t.Is("tool.execution_complete"):
		n.toolResult(d, ts, out)
	case t.Is("assistant.usage"):
		said := n.model(d.Get("model"), false, out)
		if d.Get("contentFilterTriggered").Truthy() || d.Get("finishReason").Is("content_filter") {
			// The call's output was blocked or cut by the content
			// filter: an error the provider reported, as a Chat
			// Completions finish_reason content_filter is.
			n.providerError("content_filter: the model's output was blocked or cut by the provider's content filter", sdk.S("content_filter"), out)
			said = true
		}
		if !n.usage.call(d, out) && !said {
			out.Ignored(sdk.S(sdk.TypeName(t))) // no figures, no new model
		}
	case t.Is("assistant.tool_call_delta"):
		// A piece of a call its complete request reports whole (or, cut,
		// the end of the stream).
		n.toolDelta(d, ts)
		out.Ignored(sdk.S(sdk.TypeName(t)))
	case t.Is("session.shutdown"):
		if !n.endSession(d, out) {
			// A routine shutdown with no totals and no new model.
			out.Ignored(sdk.S(sdk.TypeName(t)))
		}
	case t.Is("subagent.started"):
		n.subagentStarted(v, d, out)
	case t.Is("subagent.completed"), t.Is("subagent.failed"):
		n.subagentEnd(v, d, t.Is("subagent.failed"), out)
	case t.Is("session.error"):
		n.providerError(errorText(d.Get("message"), d.Get("errorType"), d.Get("statusCode"), d.Get("errorCode"), "copilot session error"), errorCode(d), out)
	case t.Is("model.call_failure"):
		// A failed API call (ephemeral): an error the provider
		// reported, whether or not a retry followed.
		n.model(d.Get("model"), false, out)
		n.providerError(errorText(d.Get("errorMessage"), d.Get("errorType"), d.Get("statusCode"), d.Get("errorCode"), "model call failed"), errorCode(d), out)
	case t.Is("session.fusion_route_failed"), t.Is("assistant.fusion_phase_failed"):
		n.fusionFailed(t, d, out)
	case t.Is("external_tool.requested"):
		// A client-side tool the CLI asks the SDK's host to run: a call
		// of its own, or the call the assistant message's toolRequests
		// reported. Its outcome is the tool.execution_complete that
		// follows.
		if !n.call(d.Get("toolCallId"), d.Get("toolName"), d.Get("arguments"), ts, false, out) {
			out.Ignored(sdk.S(sdk.TypeName(t)))
		}
	case t.Is("external_tool.completed"):
		// The request was answered (or withdrawn): the client is to
		// dismiss its prompt. It carries no outcome; the call's
		// tool.execution_complete does, and a call without one stays
		// dangling.
		out.Ignored(sdk.S(sdk.TypeName(t)))
	case t.Is("session.warning"):
		w := sdk.StringOf(d.Get("message")).String()
		if w == "" {
			w = "session warning without a message"
		}
		out.Warn("copilot: " + w)
	case t.Is("abort") && d.Get("reason").Is("autopilot_credit_limit"):
		// Autopilot stopped the run because its objective reached the
		// --max-ai-credits limit: a limit the run hit, an error as
		// Claude Code's error_max_budget_usd result is (what was in
		// flight stays dangling).
		n.providerError("autopilot stopped the run: its objective reached the --max-ai-credits limit (abort autopilot_credit_limit)", sdk.S("autopilot_credit_limit"), out)
	case t.Is("abort"):
		// The user stopped the run (user_initiated, remote_command,
		// user_abort): what was in flight stays dangling, and the
		// session log rule decides the status.
		out.Ignored(sdk.S("abort"))
	case t.Is("result"):
		n.result(d, v, out)
	case t.Is("permission.completed"):
		n.permission(d, ts, out)
	case t.Is("session.compaction_complete"):
		n.compaction(v, d, ts, out)
	case t.Is("session.truncation"), t.Is("session.context_cleared"):
		n.contextCut(t, d, out)
	case t.Is("session.info"):
		// The CLI's notices to the user; a rewind changes what the
		// model sees from then on, and the transcript says so.
		if d.Get("infoType").Is("rewind") {
			out.Warn("copilot: " + strOr(d.Get("message"), "the conversation was rewound") +
				" (the shutdown's token totals may leave out the requests the rewind dropped)")
		} else {
			out.Ignored(sdk.S(sdk.TypeName(t)))
		}
	case t.Is("session.task_complete"):
		// Autopilot's task_complete call, repeated with its summary and
		// whether it was accepted. One with success false was not: the
		// CLI refuses an invalid completion and autopilot goes on
		// working, so it is a warning here, and an error of the session
		// only when no accepted completion follows it (End).
		if d.Get("success").Kind() == abi.KindFalse {
			n.taskFailed = "copilot task not completed: " + strOr(d.Get("summary"), "success false")
			out.Warn(n.taskFailed + " (autopilot continues)")
		} else {
			n.taskFailed = ""
			out.Ignored(sdk.S(sdk.TypeName(t)))
		}
	case t.Is("hook.end") && d.Get("success").Kind() == abi.KindFalse:
		// A hook the user configured (sessionStart, userPromptSubmitted,
		// preToolUse, postToolUse, agentStop, ...) failed: a warning,
		// as the claude plugin's hook outcomes. A preToolUse hook's
		// failure denies the call, which its completion records.
		out.Warn("copilot: hook " + strOr(d.Get("hookType"), "(unnamed)") + " failed: " +
			sdk.Clip(strOr(d.Path("error", "message"), "success false"), 500))
	case t.Is("assistant.turn_start"), t.Is("assistant.turn_end"):
		// A model turn's bounds: one started and not ended is a turn
		// the CLI is still in (End).
		n.turnOpen = t.Is("assistant.turn_start")
		if n.turnOpen {
			n.turnFailed = false
		}
		out.Ignored(sdk.S(sdk.TypeName(t)))
	case t.Is("assistant.turn_retry"), t.Is("model.turn_retry"):
		n.turnRetry(d, out)
	case t.Is("hook.start"), t.Is("hook.end"),
		t.Is("tool.execution_partial_result"), t.Is("session.idle"), t.Is("permission.requested"),
		t.Is("session.permissions_changed"), t.Is("session.usage_checkpoint"),
		t.Is("session.mode_changed"), t.Is("session.compaction_start"):
		// Lifecycle markers (a hook's run that succeeded among them),
		// previews of what a later event carries
		// whole (toolRequests, execution_complete), the permission
		// prompt of a call already recorded (it stays dangling until it
		// completes), permission and mode changes (interactive,
		// autopilot), usage checkpoints the shutdown totals repeat, the
		// start of a compaction (its end carries the summary): nothing
		// to record.
		out.Ignored(sdk.S(sdk.TypeName(t)))
	default:
		out.Unmapped(sdk.S(sdk.TypeName(t)))
	}
}

// place reports the working directory and the git root a session's
// context states (the first stated wins: a resume may run elsewhere). It
// reports whether it reported anything.
func (n *normalizer) place(ctx abi.Value, out *sdk.Out) bool {
	if n.placeSent || ctx.Kind() != abi.KindObject {
		return false
	}
	m := sdk.Meta{Cwd: sdk.StringOf(ctx.Get("cwd")), Project: sdk.StringOf(ctx.Get("gitRoot"))}
	if !m.Cwd.IsSet() && !m.Project.IsSet() {
		return false
	}
	n.placeSent = true
	out.Meta(m)
	return true
}

// session reports the session id once.
// It reports whether it reported anything.
func (n *normalizer) session(v abi.Value, out *sdk.Out) bool {
	if v.Kind() != abi.KindString || v.Is("") {
		return false
	}
	if n.sessionSent {
		// A log holding a second session (two runs' events.jsonl
		// appended one after the other) is read as one step: said, so
		// that the merge is never silent.
		if v.Is(n.sessionID) {
			return false
		}
		out.Warn("copilot log holds a second session, " + sdk.TypeName(v) + ": its events are read as part of session " + n.sessionID)
		return true
	}
	n.sessionSent = true
	n.sessionID = sdk.TypeName(v)
	out.Meta(sdk.Meta{SessionID: sdk.Text(v)})
	return true
}

// model reports the step's model; override makes a later one win. It
// reports whether it reported anything.
func (n *normalizer) model(v abi.Value, override bool, out *sdk.Out) bool {
	if v.Kind() != abi.KindString || v.Is("") || n.modelSent && !override {
		return false
	}
	out.Meta(sdk.Meta{Model: sdk.Text(v), Override: n.modelSent})
	n.modelSent = true
	return true
}

// modelName reports a model named by an object key, when no event named
// one.
func (n *normalizer) modelName(k abi.Value, out *sdk.Out) bool {
	if n.modelSent {
		return false
	}
	name := sdk.AppendText(nil, k)
	if len(name) == 0 {
		return false
	}
	out.Meta(sdk.Meta{Model: sdk.S(string(name))})
	n.modelSent = true
	return true
}

func (n *normalizer) newKey(prefix string) string {
	n.nKeys++
	return prefix + strconv.Itoa(n.nKeys)
}

// result handles the last stdout line: the terminal event.
func (n *normalizer) result(d, v abi.Value, out *sdk.Out) {
	n.sawResult = true
	sid := d.Get("sessionId")
	if !sid.Exists() {
		sid = v.Get("sessionId")
	}
	n.session(sid, out)
	code, ok := d.Get("exitCode").Int()
	if !ok {
		code, ok = v.Get("exitCode").Int()
	}
	// The exit code says how the CLI ended; a refused completion not
	// followed by an accepted one only names the failure.
	failed := n.taskFailed
	n.taskFailed = ""
	switch {
	case ok && code == 0:
		out.Status(sdk.StatusOK, sdk.Str{}, sdk.LevelTerminal)
	case n.lastErr != "":
		out.Status(sdk.StatusError, sdk.S(n.lastErr), sdk.LevelTerminal)
	case failed != "":
		out.Status(sdk.StatusError, sdk.S(failed), sdk.LevelTerminal)
	case ok:
		out.Status(sdk.StatusError, sdk.S("copilot exited with code "+strconv.FormatInt(code, 10)), sdk.LevelTerminal)
	default:
		out.Status(sdk.StatusError, sdk.S("copilot result without exitCode"), sdk.LevelTerminal)
	}
}

// endSession handles session.shutdown: the session's usage totals and
// model, and the end of an events.jsonl log (which has no result line);
// the status is settled at the end of the stream, since a
// resumed log goes on after a shutdown. It reports whether it reported
// anything: a shutdown that is not routine always does (a warning, so
// that its error is never lost when a resumed log goes on after it).
func (n *normalizer) endSession(d abi.Value, out *sdk.Out) bool {
	said := n.usage.shutdown(d.Get("modelMetrics"), out)
	// currentModel is the model in use when the session ended: the
	// latest, as a model_change would say. Without it, a model that
	// modelMetrics names serves when no event named one.
	if cm := d.Get("currentModel"); cm.Kind() == abi.KindString && !cm.Is("") {
		said = n.model(cm, true, out) || said
	} else {
		it := d.Get("modelMetrics").Iter()
		for it.Next() {
			said = n.modelName(it.Key(), out) || said
			break
		}
	}
	n.shutdown = true
	n.shutdownErr = ""
	if st := d.Get("shutdownType"); st.Exists() && !st.Is("routine") {
		e := sdk.StringOf(d.Get("errorReason")).String()
		if e == "" {
			e = "copilot shutdown: " + sdk.TypeName(st)
		}
		n.shutdownErr = e
		if !said {
			out.Warn("copilot: " + e)
			said = true
		}
	}
	return said
}

// providerError reports an error the provider stated: listed in the
// step's errors with its code, an error field for the status.
func (n *normalizer) providerError(msg string, code sdk.Str, out *sdk.Out) {
	n.lastErr, n.turnFailed = msg, true
	out.Error(sdk.ProviderError{Message: sdk.S(msg), Code: code, Scope: scopeOf(n.cur)})
}

// fusionFailed handles the failures of a HydraFusion turn (experimental,
// @github/copilot-sdk 1.0.x): session.fusion_route_failed (routing the
// turn failed; it runs on the fallback model) and
// assistant.fusion_phase_failed (a phase of the turn failed, or was
// cancelled; degradedToPhaseId names the phase the turn went on in). A
// failure is an error the provider reported, listed in the step's errors
// (an answer after it leaves the step ok, by the session rule); a phase
// cancelled is a warning. Neither is a failed model call that a
// turn_retry repeats, and neither is the result line's error.
func (n *normalizer) fusionFailed(t, d abi.Value, out *sdk.Out) {
	reason := strOr(d.Get("reason"), "no reason stated")
	var msg string
	if t.Is("session.fusion_route_failed") {
		msg = "HydraFusion routing failed (" + reason + ")"
		if e := strOr(d.Get("errorMessage"), ""); e != "" {
			msg += ": " + sdk.Clip(e, 500)
		}
		if m := strOr(d.Get("fallbackModel"), ""); m != "" {
			msg += "; the turn fell back to " + m
		}
	} else {
		what := "failed"
		if d.Get("status").Is("cancelled") {
			what = "cancelled"
		}
		kind := strOr(d.Get("phaseKind"), "")
		if kind != "" {
			kind += " "
		}
		msg = "HydraFusion " + kind + "phase on " + strOr(d.Get("model"), "an unnamed model") + " " + what + " (" + reason + ")"
		if e := strOr(d.Get("errorMessage"), ""); e != "" {
			msg += ": " + sdk.Clip(e, 500)
		}
		if p := strOr(d.Get("degradedToPhaseId"), ""); p != "" {
			msg += "; the turn went on in phase " + p
		}
		if what == "cancelled" {
			out.Warn("copilot: " + msg)
			return
		}
	}
	out.Error(sdk.ProviderError{Message: sdk.S(msg), Code: sdk.Opt(strOr(d.Get("reason"), "")), Scope: scopeOf(n.cur)})
}

// turnRetry handles assistant.turn_retry {turnId, reason, model} (and
// model.turn_retry, its other name): the CLI calls the model again for a
// turn whose call failed (a rate limit, a provider or transport error).
// The failed call is a provider error of the session, listed once: the
// model.call_failure or session.error before the retry when the log
// holds one (model.call_failure is ephemeral: events.jsonl keeps only
// the retry), else the retry's own, its reason the text. A warning says
// the turn was retried; the status is the final outcome's: an answer
// after the retry leaves the session ok, its error still listed, and a
// log that ends on the retry ends on an error.
func (n *normalizer) turnRetry(d abi.Value, out *sdk.Out) {
	n.model(d.Get("model"), false, out)
	why := strOr(d.Get("reason"), "a failed model call")
	turn := ""
	if id := sdk.StringOf(d.Get("turnId")).String(); id != "" {
		turn = " " + id
	}
	if !n.turnFailed {
		n.providerError(errorText(d.Get("errorMessage"), d.Get("reason"), d.Get("statusCode"), d.Get("errorCode"), "the model call failed")+" (copilot retried the turn)", errorCode(d), out)
	}
	n.turnFailed = false
	out.Warn("copilot: the model turn" + turn + " was retried after " + why)
}

// strOr is the text of v (a string's contents, another value's JSON),
// or def when v is missing, null or "".
// contextCut warns that the conversation the model sees lost messages
// the transcript keeps: session.truncation (the CLI dropped the oldest
// to fit the context window) or session.context_cleared (the host
// cleared it).
func (n *normalizer) contextCut(t, d abi.Value, out *sdk.Out) {
	count := func(k string) string {
		if v, ok := sdk.IntOf(d.Get(k)).Value(); ok {
			return strconv.FormatInt(v, 10)
		}
		return "some"
	}
	if t.Is("session.truncation") {
		out.Warn("copilot: the context was truncated: " + count("messagesRemovedDuringTruncation") + " messages (" +
			count("tokensRemovedDuringTruncation") + " tokens) the model no longer sees; the transcript keeps them")
		return
	}
	out.Warn("copilot: the context was cleared: " + count("messagesCleared") + " messages the model no longer sees; the transcript keeps them")
}

func strOr(v abi.Value, def string) string {
	if t := sdk.Text(v); !t.IsEmpty() {
		return t.String()
	}
	return def
}

// errorCode is an error event's code: errorCode, else the HTTP status,
// else errorType.
func errorCode(d abi.Value) sdk.Str {
	if c := d.Get("errorCode"); c.Kind() == abi.KindString && !c.Is("") {
		return sdk.Text(c)
	}
	if st, ok := d.Get("statusCode").Int(); ok {
		return sdk.S(strconv.FormatInt(st, 10))
	}
	return sdk.StringOf(d.Get("errorType"))
}

// errorText is an error event's message, with its type, HTTP status and
// code when the event states them ("Too many requests (rate_limit, 429)").
func errorText(msg, typ, status, code abi.Value, def string) string {
	s := sdk.StringOf(msg).String()
	var detail []byte
	for _, v := range [...]abi.Value{typ, status, code} {
		var part string
		if v.Kind() == abi.KindString {
			part = v.String()
		} else if i, ok := v.Int(); ok {
			part = strconv.FormatInt(i, 10)
		}
		if part == "" || part == s {
			continue
		}
		if len(detail) > 0 {
			detail = append(detail, ", "...)
		}
		detail = append(detail, part...)
	}
	switch {
	case s == "" && len(detail) == 0:
		return def
	case s == "":
		return string(detail)
	case len(detail) == 0:
		return s
	}
	return s + " (" + string(detail) + ")"
}

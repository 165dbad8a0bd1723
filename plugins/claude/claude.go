package claude

import (
	"strconv"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// Plugin is the Claude Code / Anthropic normalizer.
var Plugin = sdk.Plugin{
	Manifest: abi.Manifest{
		Name:        "claude",
		Version:     "0.1.0",
		Providers:   []string{"claude", "anthropic"},
		Formats:     formatNames[1:],
		Description: "Claude Code stream-json, json and session logs; Anthropic Messages API responses and SSE",
		// Claude Code deletes a session log after cleanupPeriodDays
		// (settings.json, default 30).
		Stores: []abi.Store{{Name: "Claude Code projects", Provider: "claude",
			Roots: []abi.Root{{Env: "CLAUDE_CONFIG_DIR"}, {Path: "~/.claude"}}, Dir: "projects", Pattern: "**/*.jsonl",
			// A sub-agent's conversation (Task/Agent tool) is a file of
			// its own in the directory named after the session
			// (workflow-spawned agents one level deeper); from 2.1.68 a
			// sidecar may name the Task/Agent call that started it
			// (toolUseId; many versions' sidecars do not), and the
			// record of that call's result states the sub-agent's id
			// (toolUseResult.agentId, the file agent-<agentId>.jsonl).
			SubAgents:    "{stem}/subagents/**/agent-*.jsonl",
			SubAgentCall: &abi.SidecarKey{File: "{stem}.meta.json", Key: "toolUseId"},
			SubAgentCalls: &abi.RecordCalls{Calls: "/message/content", Agent: "agentId", ID: "tool_use_id",
				AgentIn: "/toolUseResult", Prefix: "agent-"},
			RetentionDays: 30, RetentionFile: "settings.json", RetentionKey: "cleanupPeriodDays"}},
	},
	New:        func(opts abi.BeginOptions) sdk.Normalizer { return newNormalizer(opts) },
	Keys:       keys,
	Reassemble: true, // the verbose --output-format json, pretty-printed
}

// format is a stream's format: a number, since the normalizer compares
// it on every line and a string compare is two calls inside WebAssembly.
type format uint8

// The formats; formatNames holds their names, as reported in OpMeta and
// the manifest.
const (
	fmtNone format = iota
	fmtStream
	fmtPartial
	fmtJSON
	fmtSessionLog
	fmtMessages
	fmtSSE
	fmtBatch
)

var formatNames = []string{
	fmtNone:       "",
	fmtStream:     "stream-json",
	fmtPartial:    "stream-json-partial",
	fmtJSON:       "json",
	fmtSessionLog: "session-log",
	fmtMessages:   "anthropic-messages",
	fmtSSE:        "anthropic-sse",
	fmtBatch:      "message-batch-results",
}

// normalizer is the per-stream state. Everything kept across lines is a Go
// string or a number: spans die with their line.
type normalizer struct {
	format format

	sessionSent, modelSent, versionSent, cwdSent bool

	byID   map[string]*message // by provider message id
	open   []*message          // open messages, in opening order
	curTop *message            // message being streamed in the step's own scope
	cur    map[string]*message // message being streamed, per sub-agent scope
	nextID int                 // synthetic key counter
	line   int                 // number of the line being handled (see closeIdle)

	calls     map[string]*call  // tool calls by scope and id (callKey)
	held      []heldResult      // session-log results waiting for their call
	tasks     []*call           // Task/Agent calls without a result, oldest first
	taskCalls map[string]*call  // the latest Task/Agent call of each id (subScope)
	scopes    map[string]bool   // scope id -> open
	scopeIDs  map[string]string // scope ids of parent_tool_use_id values, copied once (scopeID)
	uuidScope map[string]uuidEntry
	lastSide  string

	// closedIDs, doneCalls and uuids are the ids of the latest closed
	// messages, answered tool calls and sidechain records: what is kept
	// about one is dropped once it leaves its window, so that state does
	// not grow with the stream.
	closedIDs, doneCalls, uuids window

	pending usage // top-scope message usage not covered by a result
	// beyond is the top-scope messages' usage a result does not cover
	// though it comes before it: what their requests' iterations state
	// beyond their top-level figures (another executor call, a
	// compaction, the advisor's calls), which Claude Code's result.usage,
	// the sum of the top-level figures, leaves out (see result).
	beyond usage
	// modelSum is the sum over models of the last result's modelUsage,
	// cumulative over the process (see resultOnlyUsage).
	modelSum    usage
	resultModel sdk.Str // the model a result names (valid during result)

	// Sub-agent prompts written at scope open: the sub-agent's own first
	// user record, when it repeats the prompt, is not written again.
	scopePrompt map[string]string
	// progressSeen holds the uuids of the latest agent_progress messages,
	// so that a message repeated by a later progress record is written
	// once.
	progressSeen map[string]bool
	progressIDs  window

	// SDK permission requests (control protocol): what each pending
	// can_use_tool request says of its call (kept with the call, or
	// with its permCall), by request_id, until the SDK's answer.
	permReq map[string]*perm
	// permCalls are can_use_tool requests for calls not in the input
	// when asked, reported as dangling calls at the end if still absent.
	permCalls []permCall
	// taskScopes names the scope of each background agent a
	// task_started announced, by task id, until a task_updated or
	// task_notification ends it (task_updated names only the task).
	taskScopes map[string]string
	// orphans are the sub-agent scopes opened without a starting call
	// (sidechains of an agent file on its own).
	orphans []string
	// sawMessages: an assistant message was seen (else, in a result-only
	// json output, the result's text is written as the answer).
	sawMessages bool
	sawResult   bool
	sawClaude   bool // a Claude CLI line (not a bare API payload) was seen
	errSeen     bool
	errText     string
	sseStopped  bool
	// lastCost is the latest result's total_cost_usd; costBase what
	// the conversations before the latest conversation_reset cost (a
	// reset restarts the CLI's running total from zero).
	lastCost, costBase float64
	sseStop            string // stop reason of the SSE stream's last message
	// refusal is what the latest response's stop_details say of a
	// refusal (its policy category and explanation), "" when nothing.
	refusal string
	// aborted: a top-level assistant message of the turn was cut short
	// by an interrupt (its aborted flag); the turn's result, which may
	// still call it a success, ends the turn incomplete.
	aborted bool

	fields fieldCache
}

func newNormalizer(abi.BeginOptions) *normalizer {
	n := &normalizer{
		byID:      map[string]*message{},
		cur:       map[string]*message{},
		calls:     map[string]*call{},
		taskCalls: map[string]*call{},
		scopes:    map[string]bool{},
		scopeIDs:  map[string]string{},
		uuidScope: map[string]uuidEntry{},

		scopePrompt:  map[string]string{},
		progressSeen: map[string]bool{},
		permReq:      map[string]*perm{},
		taskScopes:   map[string]string{},
	}
	if doc, ok := sdk.Parse([]byte("{}")); ok {
		n.fields.sentinel = doc.Root()
	}
	n.fields.reset()
	return n
}

// Line implements sdk.Normalizer.
func (n *normalizer) Line(l *sdk.Line, out *sdk.Out) error {
	n.fields.reset()
	n.line++
	if len(n.open) > 0 {
		n.closeIdle(out)
	}
	if !l.JSON().Exists() {
		n.text(l.Raw, out)
		return nil
	}
	if sdk.HasPrefix(l.Raw, "data:") {
		n.setFormat(fmtSSE, out)
	}
	if len(n.held) > 0 && !l.JSON().Get("type").Is("assistant") {
		n.flushHeld(out)
	}
	n.value(l.JSON(), out)
	if len(n.held) > 0 {
		n.releaseHeld(out)
	}
	return nil
}

// End implements sdk.Normalizer.
func (n *normalizer) End(out *sdk.Out) error {
	n.fields.reset()
	// Close what is still open, oldest first, so tool calls built from
	// deltas are reported and per-message usage is counted.
	for len(n.open) > 0 {
		n.close(n.open[0], out)
	}
	if len(n.held) > 0 {
		n.releaseHeld(out)
		n.flushHeld(out)
	}
	n.endPermissions(out)
	// A sub-agent transcript whose starting call is not in the input (a
	// subagents/agent-*.jsonl file on its own) has nothing else that ends
	// it: the log is the whole record, so it ends with the log.
	for _, sc := range n.orphans {
		n.closeScope(sc, sdk.StatusOK, sdk.Str{}, out)
	}
	if !n.pending.zero() {
		out.Usage(n.pending.sdk(), sdk.ModeAdd)
	}
	if !n.sawResult {
		switch n.format {
		case fmtSSE:
			if n.sseStopped && !n.errSeen {
				n.apiStatus(n.sseStop, out)
			}
		}
	}
	return nil
}

// setFormat reports the format once; stream-json is upgraded to its
// partial variant when the first stream_event shows up. The common case,
// the format already set, inlines.
// Any other change is ignored: a verbose json array holds stream-json
// lines (it stays "json"), an SSE stream's payloads are messages (it stays
// "anthropic-sse"), and a stream that mixes formats keeps its first.
func (n *normalizer) setFormat(f format, out *sdk.Out) {
	if n.format == fmtNone || n.format == fmtStream && f == fmtPartial {
		n.reportFormat(f, out)
	}
}

func (n *normalizer) reportFormat(f format, out *sdk.Out) {
	override := n.format != fmtNone
	n.format = f
	// A session log has no terminal record by design: the host settles
	// its status by the session rule of spec §6.7.
	out.Meta(sdk.Meta{Format: sdk.S(formatNames[f]), Override: override, NoTerminal: f == fmtSessionLog})
}

// text handles a line that is not JSON.
func (n *normalizer) text(raw []byte, out *sdk.Out) {
	t := sdk.TrimSpace(raw)
	switch {
	case len(t) == 0:
		return // blank lines separate SSE events; they carry nothing
	case sdk.HasPrefix(t, "event:") || sdk.HasPrefix(t, "id:") || sdk.HasPrefix(t, "retry:") || t[0] == ':':
		out.Ignored(sdk.S("sse_framing"))
		return
	case sdk.HasPrefix(t, "data:"):
		d := sdk.TrimSpace(t[5:])
		if len(d) == len("[DONE]") && sdk.HasPrefix(d, "[DONE]") || len(d) == 0 {
			out.Ignored(sdk.S("sse_framing"))
			return
		}
	}
	out.Unmapped(sdk.S("non_json"))
}

// value handles one JSON document: an object, or an array of them (the
// verbose --output-format json).
func (n *normalizer) value(v abi.Value, out *sdk.Out) {
	if v.Kind() == abi.KindArray {
		n.setFormat(fmtJSON, out)
		it := v.Iter()
		for it.Next() {
			e := it.Value()
			if e.Kind() != abi.KindObject {
				out.Unmapped(sdk.S("non_object"))
				continue
			}
			n.object(e, out)
		}
		return
	}
	n.object(v, out)
}

func (n *normalizer) object(v abi.Value, out *sdk.Out) {
	if n.get(v, kForkedFrom).Kind() == abi.KindObject {
		n.forked(v, out)
		return
	}
	t := n.get(v, kType)
	switch sdk.Name(t) {
	case "assistant":
		n.claudeLine(v, out)
		n.assistant(v, out)
		return
	case "user":
		n.claudeLine(v, out)
		n.user(v, out)
		return
	case "system":
		n.claudeLine(v, out)
		n.system(v, out)
		return
	case "result":
		if !n.sawClaude && n.format == fmtNone {
			n.setFormat(fmtJSON, out)
		}
		n.claudeLine(v, out)
		n.result(v, out)
		return
	case "stream_event":
		n.claudeLine(v, out)
		n.setFormat(fmtPartial, out)
		n.event(n.get(v, kEvent), n.scopeOf(v, out), false, out)
		return
	case "message_start", "content_block_start", "content_block_delta",
		"content_block_stop", "message_delta", "message_stop", "ping":
		n.setFormat(fmtSSE, out)
		n.event(v, "", true, out)
		return
	case "error":
		if n.get(v, kError).Kind() == abi.KindObject {
			if n.format == fmtNone {
				n.setFormat(fmtMessages, out)
			}
			n.apiError(v, out)
			return
		}
	case "message":
		if n.get(v, kContent).Exists() {
			n.setFormat(fmtMessages, out)
			n.apiMessage(v, out)
			return
		}
	case "progress":
		n.claudeLine(v, out)
		n.progress(v, out)
		return
	case "control_request":
		n.controlRequest(v, out)
		return
	case "control_response":
		n.controlResponse(v, out)
		return
	case "auth_status":
		// The CLI's login flow: an error is a warning (the run's own
		// records say whether it went on).
		if e := n.get(v, kError); e.Kind() == abi.KindString && !e.Is("") {
			out.Warn("claude: authentication failed: " + sdk.Clip(e.String(), 500))
			return
		}
		n.ignore("auth_status", out)
		return
	case "conversation_reset":
		// /clear (or any flow that discards the conversation) in a
		// process that goes on: the results after it state their
		// total_cost_usd from zero, so what was spent before it is
		// added to theirs.
		n.claudeLine(v, out)
		n.costBase += n.lastCost
		n.lastCost = 0
		n.ignore("conversation_reset", out)
		return
	case "tool_progress", "tool_use_summary", "prompt_suggestion":
		// A running tool's elapsed time, the UI's one-line summary of
		// tool calls the transcript holds, a suggested next prompt: no
		// content of the conversation.
		n.ignore(sdk.Name(t), out)
		return
	case "control_cancel_request", "keep_alive":
		// sdk.Name(t) is the case's literal, written at once: no copy
		// (sdk.TypeName's) is needed.
		n.ignore(sdk.Name(t), out)
		return
	case "rate_limit_event":
		n.claudeLine(v, out)
		n.rateLimit(v, out)
		return
	case "summary", "file-history-snapshot", "queue-operation", "last-prompt", "ai-title", "custom-title", "tag",
		"permission-mode", "mode", "agent-name", "worktree-state", "atis-latch",
		"file-history-delta", "pr-link", "bridge-session", "teleported-from",
		"continued-in", "task-summary", "agent-color", "agent-setting", "attribution-snapshot",
		"speculation-accept", "content-replacement", "marble-origami-commit", "marble-origami-snapshot":
		// Session-log bookkeeping: titles, the undo index of edited
		// files (a snapshot, or one file's change to it), the prompt
		// queue (a queued prompt is written again as a user record when
		// it is sent), the session's settings as they change (permission
		// mode, mode, the agent's name, the worktree), the pull request
		// the session linked, the remote-control bridge's session and
		// the web session one was teleported from (2.1.2xx); the
		// successor session a conversation continues in (continued-in),
		// a task's summary, the agent's color and settings, the
		// attribution and speculation state, the previews that replace
		// large tool results in the model's context (the results
		// themselves are in the log), and the context-collapse store.
		n.setFormat(fmtSessionLog, out)
		n.meta(v, out)
		n.ignore(sdk.Name(t), out) // the case's literal, written at once
		return
	case "cost-state":
		// 2.1.28x session logs: the CLI's cost tracker, written when a
		// process ends. totalCostUSD is the provider-stated cost of the
		// session so far (sub-agents included), cumulative like a
		// result line's total_cost_usd, hence set mode; its per-model
		// token counts repeat what the messages already reported.
		n.setFormat(fmtSessionLog, out)
		n.meta(v, out)
		if c, ok := n.get(v, kTotalCostUSDCamel).Float(); ok {
			out.Cost(c, sdk.ModeSet)
		} else {
			n.ignore(sdk.Name(t), out)
		}
		return
	case "attachment":
		n.setFormat(fmtSessionLog, out)
		n.meta(v, out)
		n.attachment(v, out)
		return
	}
	if t.Kind() == abi.KindString {
		n.meta(v, out)
		out.Unmapped(sdk.Text(t))
		return
	}
	if r := n.get(v, kResult); r.Kind() == abi.KindObject && n.get(v, kCustomId).Kind() == abi.KindString {
		n.batchResult(r, out)
		return
	}
	out.Unmapped(sdk.S("(no type)"))
}

// batchResult reads a line of a Message Batch's results ({custom_id,
// result: {type, message | error}}): a succeeded request's message is an
// API response like any other; an errored, canceled or expired one is an
// error the provider reported for that request. Anthropic bills these
// requests at its batch rate, which the step's format tells.
func (n *normalizer) batchResult(r abi.Value, out *sdk.Out) {
	n.setFormat(fmtBatch, out)
	switch typ := r.Get("type"); {
	case typ.Is("succeeded") && n.get(r, kMessage).Kind() == abi.KindObject:
		n.apiMessage(n.get(r, kMessage), out)
	case typ.Is("errored"):
		e := r.Path("error", "error")
		if !e.Exists() {
			e = r.Get("error")
		}
		msg := sdk.Text(e.Get("message"))
		if msg.IsEmpty() {
			msg = sdk.S("batch request errored")
		}
		out.Error(sdk.ProviderError{Message: msg, Code: sdk.Text(e.Get("type"))})
	case typ.Is("canceled"), typ.Is("expired"):
		out.Error(sdk.ProviderError{Message: sdk.S("batch request " + typ.String() + " before it was processed"), Code: sdk.Text(typ)})
	default:
		out.Unmapped(sdk.S("batch_result/" + sdk.TypeName(typ)))
	}
}

// claudeLine notes a Claude CLI record: its format and metadata.
func (n *normalizer) claudeLine(v abi.Value, out *sdk.Out) {
	n.sawClaude = true
	switch {
	case n.get(v, kSessionIdCamel).Exists() || n.get(v, kParentUuid).Exists() || n.get(v, kIsSidechain).Exists():
		n.setFormat(fmtSessionLog, out)
	default:
		n.setFormat(fmtStream, out)
	}
	n.meta(v, out)
}

// meta reports session id, CLI version and working directory the first
// time they appear.
func (n *normalizer) meta(v abi.Value, out *sdk.Out) {
	var m sdk.Meta
	if !n.sessionSent {
		sid := n.get(v, kSessionId)
		if sid.Kind() != abi.KindString {
			sid = n.get(v, kSessionIdCamel)
		}
		if sid.Kind() == abi.KindString && !sdk.Text(sid).IsEmpty() {
			m.SessionID = sdk.Text(sid)
			n.sessionSent = true
		}
	}
	if !n.versionSent {
		ver := n.get(v, kClaudeCodeVersion)
		if ver.Kind() != abi.KindString && n.format == fmtSessionLog {
			ver = n.get(v, kVersion)
		}
		if ver.Kind() == abi.KindString && !sdk.Text(ver).IsEmpty() {
			m.ProviderVersion = sdk.Text(ver)
			n.versionSent = true
		}
	}
	if !n.cwdSent {
		// The working directory every session-log line and the stream's
		// init line state; the first is where the session started. Claude
		// states no repository root (gitBranch says only that there is one).
		if cwd := n.get(v, kCwd); cwd.Kind() == abi.KindString && !cwd.Is("") {
			m.Cwd = sdk.Text(cwd)
			n.cwdSent = true
		}
	}
	if m.SessionID.IsSet() || m.ProviderVersion.IsSet() || m.Cwd.IsSet() {
		out.Meta(m)
	}
}

// model reports the step's model from the first place that names one.
// "<synthetic>" names CLI-generated messages, not a model.
func (n *normalizer) model(v abi.Value, out *sdk.Out) {
	if n.modelSent || v.Kind() != abi.KindString || v.Is("<synthetic>") || sdk.Text(v).IsEmpty() {
		return
	}
	n.modelSent = true
	out.Meta(sdk.Meta{Model: sdk.Text(v)})
}

func (n *normalizer) system(v abi.Value, out *sdk.Out) {
	sub := n.get(v, kSubtype)
	switch {
	case sub.Is("init"):
		if n.modelSent {
			// A later cycle's init (background agents) repeats it.
			n.ignore("system/init", out)
			return
		}
		n.model(n.get(v, kModel), out)
	case sub.Is("task_started"):
		id := n.get(v, kToolUseId)
		if id.Kind() != abi.KindString {
			out.Unmapped(sdk.S("system/task_started"))
			return
		}
		if !isAgentTask(n.get(v, kTaskType)) {
			// A background shell (task_type local_bash) is not a
			// sub-agent: it belongs to the Bash call that started it,
			// whose result already says so.
			n.ignore("system/task_started", out)
			return
		}
		idS := n.scopeID(id)
		sc := n.subScope(idS)
		n.openScope(sc, idS, n.get(v, kSubagentType).String(), n.get(v, kDescription).String(), n.get(v, kPrompt).String(), abi.Value{}, out)
		if t := n.get(v, kTaskId); t.Kind() == abi.KindString && !t.Is("") && n.scopes[sc] {
			n.taskScopes[t.String()] = sc
		}
	case sub.Is("task_notification"):
		id := n.get(v, kToolUseId)
		if id.Kind() != abi.KindString {
			out.Unmapped(sdk.S("system/task_notification"))
			return
		}
		idS := n.subScope(n.scopeID(id))
		if t := n.get(v, kTaskId); t.Kind() == abi.KindString {
			delete(n.taskScopes, sdk.View(t))
		}
		if !n.scopes[idS] {
			// A background shell's end, or an agent already closed.
			n.ignore("system/task_notification", out)
			return
		}
		st := n.get(v, kStatus)
		status, errS := sdk.StatusOK, sdk.Str{}
		if !st.Is("completed") {
			status, errS = sdk.StatusError, sdk.Text(n.get(v, kSummary))
			if st.Is("stopped") {
				// Killed (TaskStop, the user): it did not fail.
				status = toolCancelled
			}
			if errS.IsEmpty() {
				errS = sdk.S("sub-agent " + sdk.TypeName(st))
			}
		}
		n.closeScope(idS, status, errS, out)
		n.agentEnded(idS)
	case sub.Is("task_updated"):
		n.taskUpdated(v, out)
	case sub.Is("api_retry"), sub.Is("control_request_progress") && n.get(v, kStatus).Is("api_retry"):
		// control_request_progress: a client's side request (a side
		// question) whose API request failed and is retried, with
		// api_retry's counters; its other status, started, is progress.
		n.apiRetry(v, out)
	case sub.Is("api_error"):
		n.apiErrorRecord(v, out)
	case sub.Is("hook_response") && !n.get(v, kOutcome).Is("success") && n.get(v, kOutcome).Kind() == abi.KindString:
		n.hookResponse(v, out)
	case sub.Is("informational") && (n.get(v, kLevel).Is("warning") || n.get(v, kLevel).Is("error")):
		// A notice the CLI showed the user (not the model) at a level
		// that says something went wrong: "Usage limit reached", a
		// hook's systemMessage, ...
		out.Warn("claude: " + sdk.Clip(n.get(v, kContent).String(), 500))
	case sub.Is("status") && n.get(v, kCompactResult).Is("failed"):
		// A compaction (status compacting) that failed: the agent goes
		// on with its context as it was, or stops at its limit.
		out.Warn("claude: compaction failed: " + sdk.Clip(n.get(v, kCompactError).String(), 500))
	case sub.Is("model_refusal_fallback"), sub.Is("model_refusal_no_fallback"), sub.Is("model_fallback"):
		n.modelFallback(v, sdk.Name(sub), out)
	case sub.Is("memory_recall"):
		// Memories recalled into the turn (SDKMemoryRecallMessage):
		// context the model is given. Their content is injected
		// context; a memory named by path alone (mode select) was read
		// for the model and its text is not in the record.
		if !n.injected(v, abi.Value{}, n.get(v, kMemories), sdk.OriginInjected, out) {
			n.ignore("system/memory_recall", out)
		}
	case sub.Is("plugin_install") && n.get(v, kStatus).Is("failed"):
		// A marketplace plugin that failed to install before the first
		// turn (CLAUDE_CODE_SYNC_PLUGIN_INSTALL): the run goes on
		// without it.
		out.Warn("claude: plugin " + sdk.Clip(n.get(v, kName).String(), 100) + " failed to install: " + sdk.Clip(n.get(v, kError).String(), 500))
	case sub.Is("session_writes_lost"):
		// The CLI could not write its session log (or its config) for
		// lack of space (SDKSessionWritesLostMessage: ENOSPC, EDQUOT):
		// the run goes on, but the log on disk lacks what followed.
		out.Warn("claude: session writes lost (" + sdk.Clip(n.get(v, kErrorCode).String(), 40) + "): " + sdk.Clip(joinTexts(n.get(v, kLost), ", ").String(), 200) + " not written to disk")
	case sub.Is("mirror_error"):
		// The SDK could not copy a batch of the session to its external
		// session store; the run itself goes on.
		out.Warn("claude sdk: session store append failed: " + sdk.Clip(n.get(v, kError).String(), 500))
	case ignoredSystem(sdk.Name(sub)) != "":
		// Progress pings, hook runs, bookkeeping and the session log's
		// echo of a local slash command (/model, /mcp): no message, tool
		// or usage content (hooks are not agent actions).
		n.ignore(ignoredSystem(sdk.Name(sub)), out)
	default:
		out.Unmapped(sdk.S("system/" + sdk.TypeName(sub)))
	}
}

// How a result's terminal_reason (the Agent SDK's TerminalReason: why
// the query loop ended) ends the turn.
const (
	endDone    = iota // completed, or no reason stated
	endAborted        // the user interrupted the turn
	endStopped        // the loop stopped before the turn was done
	endFailed         // the loop gave up on a limit or an error
)

// terminalEnd classes a result's terminal_reason, and returns it clipped
// for an error text. completed (or none) is done; aborted_streaming and
// aborted_tools are an interrupt; a hook that ended the turn
// (hook_stopped, stop_hook_prevented), a call deferred to the host
// (tool_deferred) and a turn sent to the background
// (background_requested) stopped it before it was done, as does a
// reason this plugin does not know; every limit or failure the SDK names
// (max_turns, budget_exhausted, prompt_too_long, api_error, ...) failed
// it.
func terminalEnd(tr abi.Value) (int, string) {
	if tr.Kind() != abi.KindString || tr.Is("completed") || tr.Is("") {
		return endDone, ""
	}
	reason := sdk.Clip(tr.String(), 40)
	switch reason {
	case "aborted_streaming", "aborted_tools":
		return endAborted, reason
	case "max_turns", "budget_exhausted", "prompt_too_long", "api_error", "model_error",
		"image_error", "blocking_limit", "rapid_refill_breaker", "malformed_tool_use_exhausted",
		"structured_output_retry_exhausted", "tool_deferred_unavailable", "turn_setup_failed":
		return endFailed, reason
	}
	return endStopped, reason
}

func (n *normalizer) result(v abi.Value, out *sdk.Out) {
	n.sawResult = true
	n.closeScopeMessages("", out)
	// --output-format json names the model only as a modelUsage key.
	n.resultModel = sdk.Str{}
	if it := n.get(v, kModelUsage).Iter(); it.Next() {
		n.model(it.Key(), out)
		n.resultModel = sdk.Text(it.Key())
	}
	isErr := n.get(v, kIsError).Truthy()
	text := n.get(v, kResult)
	if !n.get(v, kSubtype).Is("success") {
		isErr = true
	}
	tr := n.get(v, kTerminalReason)
	end, reason := terminalEnd(tr)
	aborted := n.aborted || end == endAborted
	n.aborted = false
	if !isErr && end == endFailed {
		// The loop gave up on a limit or an error (max_turns,
		// budget_exhausted, api_error, ...) though the subtype says
		// success: the turn failed, its text (if any) the last words,
		// whether or not a message of it was cut short on the way.
		e := "the turn ended on terminal_reason " + reason
		if t := sdk.Text(text); !t.IsEmpty() {
			e = t.String() + " (terminal_reason " + reason + ")"
		}
		out.Status(sdk.StatusError, sdk.S(e), sdk.LevelTerminal)
	} else if !isErr && aborted {
		// The user interrupted the turn (interrupt(), Esc): the answer
		// or the calls it made were cut short, whatever the subtype.
		why := "an assistant message was aborted"
		if end == endAborted {
			why = "terminal_reason " + reason
		}
		out.Status(sdk.StatusIncomplete, sdk.S("the turn was interrupted before it completed ("+why+")"), sdk.LevelTerminal)
	} else if !isErr && end == endStopped {
		// The loop stopped before the turn was done (a hook ended it, a
		// call was deferred to the host, the turn went to the
		// background, or a reason this plugin does not know): the
		// result's text is no final answer.
		out.Status(sdk.StatusIncomplete, sdk.S("the turn stopped before it completed (terminal_reason "+reason+")"), sdk.LevelTerminal)
	} else if !isErr && n.get(v, kStopReason).Is("refusal") {
		// The last turn was refused (model_refusal_no_fallback): the
		// CLI calls it a success, with no answer. As for an API
		// response, a refusal is an error.
		out.Status(sdk.StatusError, sdk.S("refusal: the model declined to answer (stop_reason refusal)"), sdk.LevelTerminal)
	} else if isErr {
		e := sdk.Text(text)
		if e.IsEmpty() {
			if errs := n.get(v, kErrors); errs.Len() > 0 {
				e = joinTexts(errs, "; ")
			} else {
				e = sdk.Text(n.get(v, kSubtype))
			}
		}
		out.Status(sdk.StatusError, e, sdk.LevelTerminal)
	} else {
		out.Status(sdk.StatusOK, sdk.Str{}, sdk.LevelTerminal)
		if text.Exists() && text.Kind() != abi.KindNull {
			// A later cycle's answer (background agents) supersedes.
			out.Final(sdk.Text(text), true)
			if !n.sawMessages && !sdk.Text(text).IsEmpty() {
				// --output-format json without --verbose: the answer
				// is only here, and is still the assistant's message.
				key := sdk.S(n.newKey('r'))
				out.Open(key, sdk.Message{Model: n.resultModel})
				out.Block(key, 0, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(text)})
				e := sdk.MessageEnd{}
				if sr := n.get(v, kStopReason); sr.Kind() == abi.KindString {
					e.StopReason = sdk.Text(sr)
				}
				out.Close(key, e)
			}
		}
	}
	n.denials(n.get(v, kPermissionDenials), out)
	var u usage
	u.merge(n.get(v, kUsage))
	// result.usage is the main loop's usage of the cycle (the Agent
	// SDK: "main-loop-only and per-turn"; modelUsage is cumulative and
	// counts sub-agents too, which are child runs here): the sum of
	// its messages' top-level figures. A request that made several
	// model calls states only part of them there (iterations), so
	// what its iterations state beyond is added: every token of the
	// cycle, once.
	if u.tier == "" {
		// The same requests' tier, which the result may not repeat.
		u.tier = n.beyond.tier
	}
	u.add(n.beyond)
	if !n.sawMessages {
		u.add(n.resultOnlyUsage(n.get(v, kModelUsage), u))
	}
	if !u.zero() {
		out.Usage(u.sdk(), sdk.ModeAdd)
	}
	// Each result covers the messages of its cycle.
	n.pending, n.beyond = usage{}, usage{}
	if c, ok := n.get(v, kTotalCostUsd).Float(); ok {
		n.lastCost = c
		out.Cost(n.costBase+c, sdk.ModeSet)
	}
}

// joinTexts is the text of a list of strings (a result's errors,
// SDKResultError.errors; what a session_writes_lost lost): the strings
// joined by sep, as a person reads them, not the list's JSON. An entry
// that is not a string is its JSON.
func joinTexts(errs abi.Value, sep string) sdk.Str {
	var b []byte
	it := errs.Iter()
	for it.Next() {
		e := it.Value()
		if len(b) > 0 {
			b = append(b, sep...)
		}
		if e.Kind() == abi.KindString {
			b = sdk.AppendText(b, e)
		} else {
			b = append(b, sdk.Text(e).String()...)
		}
	}
	return sdk.S(string(b))
}

// modelUsageKeys are the members of a modelUsage entry resultOnlyUsage
// reads.
var modelUsageKeys = abi.NewKeySet("inputTokens", "cacheCreationInputTokens", "cacheReadInputTokens", "outputTokens")

// resultOnlyUsage is what a result's modelUsage counts beyond its usage
// (u) in output without messages (--output-format json without
// --verbose): modelUsage, cumulative over the process, counts every
// call, the sub-agents', the advisor's and the CLI's own side calls
// included, where usage counts the main loop's top-level figures only.
// Without messages there are no sub-agent runs to count them, so the
// step counts them: what this result's modelUsage adds to the last one's
// beyond u, figure by figure (never less than u). With messages, the
// messages and the sub-agents' runs count them instead.
func (n *normalizer) resultOnlyUsage(mu abi.Value, u usage) usage {
	var sum usage
	it := mu.Iter()
	for it.Next() {
		var f [4]abi.Value
		it.Value().Lookup(modelUsageKeys, f[:])
		sum.add(usage{in: sdk.IntOf(f[0]), cacheWrite: sdk.IntOf(f[1]), cacheRead: sdk.IntOf(f[2]), out: sdk.IntOf(f[3])})
	}
	if sum.zero() {
		return usage{}
	}
	delta := sum.minus(n.modelSum)
	n.modelSum = sum
	extra := delta.minus(u).positive()
	// modelUsage states no tier: the process's calls are served at the
	// tier its result states.
	extra.tier = u.tier
	return extra
}

// apiError handles an Anthropic error object or SSE error event.
func (n *normalizer) apiError(v abi.Value, out *sdk.Out) {
	e := n.get(v, kError)
	msg := sdk.Text(e.Get("message"))
	if msg.IsEmpty() {
		msg = sdk.Text(e.Get("type"))
	}
	n.errSeen = true
	out.Status(sdk.StatusError, msg, sdk.LevelTerminal)
}

// ignoredSystem is the native type of a system record subtype the plugin
// ignores ("system/status"), "" for any other.
func ignoredSystem(sub string) string { return listed(ignoredSystems[:], len("system/"), sub) }

// listed is the native type in table whose name, after a prefix of n
// bytes ("system/", "attachment/"), is name, or "": constants, so that
// the most frequent records cost no concatenation.
func listed(table []string, n int, name string) string {
	for _, t := range table {
		if t[n:] == name {
			return t
		}
	}
	return ""
}

// ignoredSystems is ignoredSystem's table. A loop over a table is a few
// hundred bytes of module where a switch of string cases is, under TinyGo
// -opt=2, a byte-by-byte compare of every literal (2 KB), and each byte of
// code costs the host time to validate at every start.
var ignoredSystems = [...]string{
	"system/status", "system/hook_started", "system/hook_response", "system/hook_progress",
	"system/task_progress", "system/task_updated", "system/compact_boundary", "system/turn_duration",
	"system/away_summary", "system/stop_hook_summary", "system/microcompact_boundary", "system/local_command",
	"system/informational", "system/notification", "system/permission_denied", "system/background_tasks_changed",
	"system/session_state_changed", "system/files_persisted", "system/elicitation_complete",
	"system/local_command_output",
	// The install's progress (a failure is a warning above); the
	// notice that a scheduled task fired (the prompt it delivers is a
	// user record of its own); a live estimate of thinking tokens for a
	// spinner, not the billed usage the message states.
	"system/plugin_install", "system/scheduled_task_fire", "system/thinking_tokens",
	// A side request accepted (its retries are errors above); the
	// bridge's notice that the worker is going away, a live-tail signal
	// a resumed session may carry mid-stream.
	"system/control_request_progress", "system/worker_shutting_down",
}

// taskUpdated reads a task_updated record: a background agent whose
// patch.status is failed or killed has ended, and its task_notification
// may never come (the SDK's TaskUpdatedMessage: "a task stopped via
// TaskStop reports status killed here, and the matching notification is
// sometimes suppressed"), so its child run is closed: killed cancelled,
// failed an error. Any other patch (progress, completed, which
// task_notification reports with its summary), or a task that is not
// an open agent's, is ignored.
func (n *normalizer) taskUpdated(v abi.Value, out *sdk.Out) {
	st := n.get(n.get(v, kPatch), kStatus)
	t := n.get(v, kTaskId)
	sc, ok := n.taskScopes[sdk.View(t)]
	if !ok || !n.scopes[sc] || !st.Is("killed") && !st.Is("failed") {
		n.ignore("system/task_updated", out)
		return
	}
	delete(n.taskScopes, sdk.View(t))
	if st.Is("killed") {
		n.closeScope(sc, toolCancelled, sdk.S("sub-agent killed"), out)
		n.agentEnded(sc)
		return
	}
	e := sdk.Text(n.get(n.get(v, kPatch), kError))
	if e.IsEmpty() {
		e = sdk.S("sub-agent failed")
	}
	n.closeScope(sc, sdk.StatusError, e, out)
	n.agentEnded(sc)
}

// modelFallback reports the CLI's notice that a model refused a request
// (a safeguard's policy category) and that it retried on another model
// (model_refusal_fallback), or had none to retry on
// (model_refusal_no_fallback), or that it switched models for another
// reason (model_fallback: trigger overloaded, ...), as a warning: the
// run goes on, or ends with its result. Stream-json names the fields in
// snake case, the session log in camel case.
func (n *normalizer) modelFallback(v abi.Value, sub string, out *sdk.Out) {
	str := func(snake, camel string) string {
		if s := v.Get(snake).String(); s != "" {
			return sdk.Clip(s, 80)
		}
		return sdk.Clip(v.Get(camel).String(), 80)
	}
	from, to := str("original_model", "originalModel"), str("fallback_model", "fallbackModel")
	msg := "claude: " + from
	switch sub {
	case "model_fallback":
		msg += " fell back to " + to
		if t := v.Get("trigger").String(); t != "" {
			msg += " (" + sdk.Clip(t, 40) + ")"
		}
	default:
		msg += " refused the request"
		if c := str("api_refusal_category", "apiRefusalCategory"); c != "" {
			msg += " (" + c + ")"
		}
		if sub == "model_refusal_fallback" {
			msg += "; retried on " + to
		} else {
			msg += "; no fallback model"
		}
	}
	why := v.Get("api_refusal_explanation").String()
	if why == "" {
		why = v.Get("apiRefusalExplanation").String()
	}
	if why == "" {
		why = n.get(v, kContent).String()
	}
	if why != "" {
		msg += ": " + sdk.Clip(why, 500)
	}
	out.Warn(msg)
}

// hookResponse reports a stream-json hook_response (--include-hook-events)
// whose outcome is not a success as a warning of the step, as a session
// log's hook outcome attachment is (hookWarning): the hook's name, its
// outcome and exit code, and its stderr. A PreToolUse hook that blocked
// a call also denies it by the call's result.
func (n *normalizer) hookResponse(v abi.Value, out *sdk.Out) {
	hook := n.get(v, kHookNameSnake).String()
	if hook == "" {
		hook = n.get(v, kHookEventSnake).String()
	}
	msg := "claude: hook " + sdk.Clip(hook, 64) + " " + sdk.Clip(n.get(v, kOutcome).String(), 32)
	if c, ok := n.get(v, kExitCodeSnake).Int(); ok {
		msg += " (exit " + strconv.FormatInt(c, 10) + ")"
	}
	if e := n.get(v, kStderr).String(); e != "" {
		msg += ": " + sdk.Clip(e, 500)
	}
	out.Warn(msg)
}

package codex

import (
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/internal/wire"
)

// The formats the plugin reads, as reported in the step's metadata.
const (
	FormatExec    = "exec-json"
	FormatLegacy  = "legacy-json"
	FormatRollout = "rollout"
)

// codexHome is where Codex CLI keeps its data.
var codexHome = []abi.Root{{Env: "CODEX_HOME"}, {Path: "~/.codex"}}

// subAgentOf says where a sub-agent's rollout names its parent thread
// (session_meta source.subagent.thread_spawn.parent_thread_id), that
// the parent's rollout is named rollout-<time>-<thread id>.jsonl in
// its start day's directory, and how the spawn_agent call's result
// names the sub-agent: its thread id (agent_id, multi-agent v1) or its
// agent path (task_name, v2).
var subAgentOf = &abi.SubAgentOf{
	Member: "/payload/source/subagent/thread_spawn/parent_thread_id",
	File:   "**/rollout-*-{key}.jsonl",
	Result: map[string]string{
		"agent_id":  "/payload/id",
		"task_name": "/payload/source/subagent/thread_spawn/agent_path",
	},
}

// Plugin is the Codex normalizer.
var Plugin = sdk.Plugin{
	Manifest: abi.Manifest{
		Name:        "codex",
		Version:     "0.1.0",
		Providers:   []string{"codex"},
		Formats:     []string{FormatExec, FormatLegacy, FormatRollout},
		Description: "OpenAI Codex CLI: exec --json events, the legacy {id,msg} stream and rollout session files",
		// A spawned sub-agent's thread is a rollout of its own whose
		// session_meta names its parent thread (doc.go, Sub-agents):
		// its run is a child run of the parent's rollout's run, linked
		// at the spawn_agent call whose result names it.
		Stores: []abi.Store{
			{Name: "Codex sessions", Roots: codexHome, Dir: "sessions", Pattern: "**/rollout-*.jsonl", SubAgentOf: subAgentOf},
			{Name: "Codex archived sessions", Roots: codexHome, Dir: "archived_sessions", Pattern: "**/rollout-*.jsonl", SubAgentOf: subAgentOf},
		},
	},
	New:  func(abi.BeginOptions) sdk.Normalizer { return newNormalizer() },
	Keys: keys,
}

// Dedup namespaces: a rollout records the same text twice, once as a
// response item and once as an event message, so texts are matched per
// kind.
const (
	nsAssistant byte = 'a'
	nsUser      byte = 'u'
	nsReasoning byte = 'r'
	nsRaw       byte = 'R'
	nsAgent     byte = 'g'
)

// normalizer holds the state of one stream.
type normalizer struct {
	// rf are the members of a line's object Line dispatches on
	// (rootKeys), found in one pass over it rather than one per Get: an
	// exec line, which has no payload, msg or method, walked its members
	// once for each of them.
	rf [len(rootNames)]abi.Value

	format string

	// items records the exec-json items whose message and tool call
	// were reported, so that item.started and item.completed of the
	// same id give one message and one call.
	items map[string]bool
	// legacyCalls records the call ids of the legacy format whose
	// message and tool call were reported (begin and approval request
	// events of one call give one).
	legacyCalls map[string]bool
	// agents indexes by thread id the sub-agents a collab_tool_call
	// spawned (agentList, in order). Never assigned to by a view of the
	// line: a map assignment stores the key it is given.
	agents    map[string]int
	agentList []subAgent
	// nkeys numbers the messages of formats without message ids; keys
	// holds the keys from number keysFrom on (keyEnds delimit them),
	// written by fillKeys into keyBuf.
	nkeys    int
	keys     string
	keysFrom int
	keyEnds  [keyBatch + 1]uint16
	keyBuf   []byte

	// Open streamed messages of the legacy format (deltas).
	text, think stream

	// lastText is the hash of the last assistant text reported, so
	// that a task_complete repeating it does not add a message.
	lastText     uint64
	haveLastText bool

	// balance matches rollout texts reported twice (response item and
	// event message, in either order): positive counts texts reported
	// from response items not yet matched by an event, negative the
	// reverse.
	balance map[uint64]int

	// model is the rollout's current model (from turn_context), kept to
	// stamp assistant messages.
	model sdk.Str
	// searchCall is the id of the last tool_search_call, which a
	// tool_search_output without a call_id answers.
	searchCall sdk.Str
	modelRaw   string
	// cwdSent: a working directory was reported (session_meta's, else
	// the first turn_context's).
	cwdSent bool

	// terminal is set once a terminal status was reported: a turn that
	// starts after it makes the step incomplete again until it ends.
	terminal bool
	// turnErr is the error that ended the current turn.
	turnErr string
	// awaitAnswer: in a rollout turn, the model was given input (the
	// user's prompt, a tool call or its result) and no assistant message
	// has answered it since. A task_complete in that state ended a turn
	// that failed (see rolloutComplete).
	awaitAnswer bool
	// turnContent: the rollout turn recorded something between its
	// task_started and its end (its input, a compaction, an item): a
	// turn that recorded nothing and completed failed before its input
	// was recorded (see rolloutComplete).
	turnContent bool
	// compactWarned: the current turn's compaction was warned of (its
	// compacted record and compaction item are one compaction).
	compactWarned bool
	// reviewEcho: exitedReview read the end of a review; the assistant
	// message Codex records right after it renders that end.
	reviewEcho bool
	// reviewed: the current turn's review ended (exitedReview).
	reviewed bool
	// selfPath is the agent path the rollout's session_meta states for
	// a spawned sub-agent's thread ("" for the root's): messages between
	// agents that it authored are not its input (see agentMessage).
	selfPath string
	// turnEvents is set once a rollout shows task_started,
	// task_complete or turn_aborted: builds before them wrote none, and
	// such a log's status is the host's session rule (spec §6.7).
	turnEvents bool

	scratch []byte
	// inner and innerDoc hold a JSON document found inside a string
	// (a rollout tool output) while the line that holds it is handled.
	inner    []byte
	innerDoc abi.Doc
	// args and argsDoc hold a function call's arguments (a JSON string)
	// while its command line is read and written (commandFromArgs).
	args    []byte
	argsDoc abi.Doc

	// patches holds the changes (JSON) of legacy patch_apply_begin events
	// by call id, for an end event that reports no output.
	patches map[string]string

	// ends holds what exec_command_end, patch_apply_end and
	// mcp_tool_call_end events said about calls whose output item is
	// still to come (rollouts).
	ends map[string]endInfo

	// usage sums a cumulative token counter across its restarts, and
	// the per-response records no count states.
	usage counter
	// threadID is the raw id (JSON string) of the rollout's own
	// session_meta: the thread whose token_usage_records count.
	threadID string

	// metaSeen: the rollout's own session_meta (its first) was read;
	// forkedFrom the thread a user forked it from (until the copy of its
	// history is said, see copiedHistory).
	metaSeen   bool
	forkedFrom string
	// forking: the lines being read are the history a forked
	// sub-agent's rollout copied from its parent (see forked), and
	// forkOpen says a copied turn is open; or, with userCopy, the
	// history a user's fork copied (see copiedTurn).
	forking, forkOpen, userCopy bool
	// forkMs is the time (Unix milliseconds) the UUIDv7 id of a user's
	// fork states, when it was created (0: not a user fork that can
	// tell its own turns from its copy; see stampsTurns).
	forkMs int64
}

func newNormalizer() *normalizer {
	return &normalizer{items: map[string]bool{}, balance: map[uint64]int{}}
}

type stream struct {
	key  sdk.Str
	open bool
}

// Line dispatches a raw line to the reader of its format.
func (n *normalizer) Line(l *sdk.Line, out *sdk.Out) error {
	// A raw control byte inside a string (a NUL from a tool's output has
	// been seen in the wild) makes a line invalid JSON; the host escapes
	// such bytes before it tapes the line, so that line arrives as JSON.
	if !l.JSON().Exists() {
		out.Unmapped(sdk.S("non-json"))
		return nil
	}
	root := l.JSON()
	if root.Kind() != abi.KindObject {
		out.Unmapped(sdk.S("json-array"))
		return nil
	}
	f := &n.rf
	root.Lookup(rootKeys, f[:])
	typ := f[rType]
	switch {
	case typ.Kind() == abi.KindString && f[rPayload].Exists():
		n.setFormat(out, FormatRollout)
		n.rollout(out, root, typ)
	case f[rMsg].Kind() == abi.KindObject:
		n.setFormat(out, FormatLegacy)
		n.legacy(out, f[rMsg])
	case f[rMethod].Is("codex/event") && f[rParams].Get("msg").Kind() == abi.KindObject:
		n.setFormat(out, FormatLegacy)
		n.legacy(out, f[rParams].Get("msg"))
	case typ.Kind() == abi.KindString && isResponseItemType(typ):
		// The earliest rollouts wrote response items without the
		// {timestamp,type,payload} envelope.
		n.setFormat(out, FormatRollout)
		n.responseItem(out, root, sdk.Str{})
	case typ.Kind() == abi.KindString:
		n.setFormat(out, FormatExec)
		n.exec(out, root, typ)
	case f[rPrompt].Kind() == abi.KindString:
		// Legacy prompt echo: the user's prompt.
		n.setFormat(out, FormatLegacy)
		key := n.newKey()
		out.Open(key, sdk.Message{User: true})
		out.Block(key, 0, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(f[rPrompt]), Origin: sdk.OriginPrompt})
		out.Close(key, sdk.MessageEnd{})
	case f[rRecordType].Exists():
		// Early rollout state marker: carries nothing for a transcript.
		n.setFormat(out, FormatRollout)
		out.Ignored(sdk.S("record_type"))
	case f[rID].Kind() == abi.KindString && f[rTimestamp].Exists():
		// Early rollout header {id,timestamp,instructions,git}.
		n.setFormat(out, FormatRollout)
		out.Meta(sdk.Meta{SessionID: sdk.Text(root.Get("id"))})
		n.systemPrompt(out, root.Get("instructions"), sdk.Text(root.Get("timestamp")))
	case f[rModel].Exists() || f[rProvider].Exists() || f[rSandbox].Exists() || f[rApproval].Exists():
		// Legacy config echo: the only place that format names the model.
		n.setFormat(out, FormatLegacy)
		out.Meta(sdk.Meta{Model: sdk.Text(root.Get("model"))})
	default:
		out.Unmapped(sdk.S("untyped-object"))
	}
	return nil
}

// End flushes what is pending: a response's usage that only its
// token_usage_record stated (counter.flush). Streamed legacy messages still open are
// closed by the host; calls without results stay dangling; a stream that
// never reported a terminal event is left without a terminal status, so
// the host makes it incomplete.
func (n *normalizer) End(out *sdk.Out) error {
	n.usage.flush(out)
	n.closeStream(out, &n.think)
	n.closeStream(out, &n.text)
	return nil
}

// setFormat reports the format of the first line that shows one. A
// rollout is a session log: NoTerminal lets the host settle a log
// without turn events by the session rule (spec §6.7); a rollout with
// them reports each turn's end.
func (n *normalizer) setFormat(out *sdk.Out, f string) {
	if n.format == "" {
		n.format = f
		out.Meta(sdk.Meta{Format: sdk.S(f), NoTerminal: f == FormatRollout})
	}
}

// newKey returns a fresh message key for formats without message ids.
func (n *normalizer) newKey() sdk.Str {
	n.nkeys++
	i := n.nkeys - n.keysFrom
	if n.keys == "" || i >= keyBatch {
		n.fillKeys()
		i = 0
	}
	return sdk.S(n.keys[n.keyEnds[i]:n.keyEnds[i+1]])
}

// keyBatch is how many message keys one allocation holds.
const keyBatch = 64

// fillKeys writes the next keyBatch keys, "m" and the number, into one
// string that each key is a slice of: one allocation per keyBatch keys
// (a string per key was a fifth of the plugin's allocations).
func (n *normalizer) fillKeys() {
	b := n.keyBuf[:0]
	for k := 0; k < keyBatch; k++ {
		n.keyEnds[k] = uint16(len(b))
		b = append(b, 'm')
		var d [20]byte
		j := len(d)
		for v := n.nkeys + k; ; v /= 10 {
			j--
			d[j] = byte('0' + v%10)
			if v < 10 {
				break
			}
		}
		b = append(b, d[j:]...)
	}
	n.keyEnds[keyBatch] = uint16(len(b))
	n.keyBuf = b
	n.keys = string(b)
	n.keysFrom = n.nkeys
}

// startTurn is called when a turn begins: when an earlier turn already
// ended the step, the step is incomplete again until this one ends. A
// rollout (a session log, NoTerminal) says so at every turn, so that a
// log cut inside a turn is incomplete rather than judged by the session
// rule.
func (n *normalizer) startTurn(out *sdk.Out) bool {
	n.turnErr = ""
	n.awaitAnswer, n.turnContent, n.compactWarned, n.reviewEcho, n.reviewed = false, false, false, false, false
	if n.terminal || n.format == FormatRollout {
		out.Status(sdk.StatusIncomplete, sdk.S("a new turn started and did not finish"), sdk.LevelTerminal)
		n.terminal = false
		return true
	}
	return false
}

func (n *normalizer) finish(out *sdk.Out, status string, err sdk.Str) {
	out.Status(status, err, sdk.LevelTerminal)
	n.terminal = true
}

// failTurn reports the error that ends a turn (the legacy and rollout
// error event): terminal, and remembered so that the task_complete Codex
// writes after it does not make the failed turn ok. In a rollout without
// turn events (a session log) it is an error field: the host's session
// rule decides whether a later answer recovered from it.
func (n *normalizer) failTurn(out *sdk.Out, msg abi.Value) {
	e := strOr(errorText(msg), "error")
	if n.format == FormatRollout && !n.turnEvents {
		reportError(out, msg, "error")
		return
	}
	n.turnErr = e.String()
	n.finish(out, sdk.StatusError, e)
}

// completionError notes the error a task_complete states (builds of
// mid-2026 on: TurnCompleteEvent.error, {message, codex_error_info}): the
// turn failed, whatever answer it recorded before; an error event that
// ended the turn first keeps its message.
func (n *normalizer) completionError(e abi.Value) {
	if e.Kind() != abi.KindObject || n.turnErr != "" {
		return
	}
	n.turnErr = strOr(errorText(e.Get("message")), "the turn failed").String()
}

// completeTurn handles task_complete: ok, unless the turn failed.
func (n *normalizer) completeTurn(out *sdk.Out) {
	if n.turnErr != "" {
		n.finish(out, sdk.StatusError, sdk.S(n.turnErr))
		return
	}
	n.finish(out, sdk.StatusOK, sdk.Str{})
}

// textMessage reports a one-block assistant message.
func (n *normalizer) textMessage(out *sdk.Out, key sdk.Str, m sdk.Message, typ string, v sdk.Str) {
	out.Open(key, m)
	b := sdk.Block{Type: typ}
	if typ == sdk.BlockThinking {
		b.Thinking = v
	} else {
		b.Text = v
	}
	out.Block(key, 0, b)
	out.Close(key, sdk.MessageEnd{})
}

// toolUse reports a model-authored tool request: a tool_use block in its
// own assistant message (key, header m), then the tool call, so the
// message is written before the call it requested.
func toolUse(out *sdk.Out, key sdk.Str, m sdk.Message, c sdk.ToolCall) {
	out.Open(key, m)
	out.Block(key, 0, sdk.Block{Type: sdk.BlockToolUse, ToolName: c.Name, ToolID: c.CallID, ToolInput: c.Input})
	out.Close(key, sdk.MessageEnd{})
	out.ToolCall(c)
}

// noteText remembers the last assistant text and reports it as the final
// answer so far (the last one wins).
func (n *normalizer) noteText(out *sdk.Out, v abi.Value) {
	if v.Kind() != abi.KindString {
		return
	}
	n.lastText, n.haveLastText = n.hash(0, v), true
	out.Final(sdk.Text(v), true)
}

// finalText handles the final answer a terminal event repeats
// (task_complete.last_agent_message): when no message carried it yet,
// it becomes one, so every piece of model text is in some block.
func (n *normalizer) finalText(out *sdk.Out, v abi.Value, m sdk.Message) {
	if v.Kind() != abi.KindString || len(v.Raw()) <= 2 {
		return
	}
	h := n.hash(0, v)
	if !n.haveLastText || h != n.lastText {
		n.textMessage(out, n.newKey(), m, sdk.BlockText, sdk.Text(v))
		// A response item that repeats it later is a duplicate.
		n.balance[n.hash(nsAssistant, v)]--
		n.lastText, n.haveLastText = h, true
	}
	out.Final(sdk.Text(v), true)
}

// hash is FNV-1a over ns and the unescaped contents of string v.
func (n *normalizer) hash(ns byte, v abi.Value) uint64 {
	raw := v.Raw()
	if v.Kind() == abi.KindString && len(raw) >= 2 {
		raw = raw[1 : len(raw)-1]
		if v.Escaped() {
			n.scratch = sdk.AppendText(n.scratch[:0], v)
			raw = n.scratch
		}
	}
	h := uint64(14695981039346656037)
	h = (h ^ uint64(ns)) * 1099511628211
	for _, c := range raw {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return h
}

// seen reports whether a text of kind ns was already reported from the
// other source (item=true: a response item; false: an event message),
// and records this report otherwise.
func (n *normalizer) seen(ns byte, v abi.Value, item bool) bool {
	h := n.hash(ns, v)
	b := n.balance[h]
	if item && b < 0 {
		n.balance[h] = b + 1
		return true
	}
	if !item && b > 0 {
		n.balance[h] = b - 1
		return true
	}
	if item {
		n.balance[h] = b + 1
	} else {
		n.balance[h] = b - 1
	}
	return false
}

// appendTextOf appends what sdk.Text(v).String() is (the unescaped
// contents of a string, the JSON text of another value, nothing when v is
// missing or null) without the copy String makes.
func appendTextOf(dst []byte, v abi.Value) []byte {
	switch v.Kind() {
	case abi.KindInvalid, abi.KindNull:
		return dst
	case abi.KindString:
		return sdk.AppendText(dst, v)
	}
	return append(dst, v.Raw()...)
}

// opensObject reports whether the contents of string v begin with '{'
// (an API's JSON error body sent as the message), without copying them.
func opensObject(v abi.Value) bool {
	raw := v.Raw()
	if v.Kind() != abi.KindString || len(raw) < 3 {
		return false
	}
	if raw[1] != '\\' {
		return raw[1] == '{'
	}
	s := v.String() // an escape first: rare
	return len(s) > 0 && s[0] == '{'
}

// errorText makes an error message readable: Codex sometimes sends the
// API's JSON error body as the message string, and then the nested
// message, type and status are what a user needs.
func errorText(v abi.Value) sdk.Str {
	if !opensObject(v) {
		return sdk.Text(v)
	}
	doc, ok := sdk.ParseText(v)
	if !ok {
		return sdk.Text(v)
	}
	root := doc.Root()
	e := root.Get("error")
	msg := e.Get("message")
	if msg.Kind() != abi.KindString {
		msg = root.Get("message")
	}
	if msg.Kind() != abi.KindString {
		return sdk.Text(v)
	}
	text := msg.String()
	detail := ""
	if st, ok := root.Get("status").Int(); ok {
		detail = "status " + itoa(st)
	}
	if t := e.Get("type"); t.Kind() == abi.KindString {
		if detail != "" {
			detail += ", "
		}
		detail += t.String()
	}
	if detail != "" {
		text += " (" + detail + ")"
	}
	return sdk.S(text)
}

// reportError reports an error the provider stated that does not end the
// turn: listed in the step's errors, with the API's error type or HTTP
// status as its code when the message holds the API's JSON error body.
func reportError(out *sdk.Out, msg abi.Value, def string) {
	out.Error(sdk.ProviderError{Message: strOr(errorText(msg), def), Code: errorCode(msg)})
}

// warning reports a warning of Codex's own (EventMsg::Warning: the
// rollout's and the legacy stream's warning event, exec's error item):
// among the step's warnings, not its errors, so that it never becomes
// the error of a run that has no terminal event (an interrupted exec
// run is incomplete).
func warning(out *sdk.Out, msg abi.Value) {
	out.Warn("codex warning: " + strOr(errorText(msg), "(no message)").String())
}

// backgroundEvent reports a BackgroundEventEvent {message} (the legacy
// stream's background_event; a rollout persists none): Codex's word on
// what it is doing in the background (an MCP server starting, a
// compaction trimming history, the guardian assessing an escalation), a
// warning, so that it is seen and never the error of a run. Early builds
// (openai/codex codex-rs/core/src/codex.rs, OPENAI_STREAM_MAX_RETRIES)
// sent a model stream's retry through it too, "stream error: <error>;
// retrying N/M in <delay>…", which later builds send as stream_error: an
// error the provider reported that does not end the turn, as a
// stream_error is.
func backgroundEvent(out *sdk.Out, msg abi.Value) {
	if t := sdk.Text(msg).String(); strings.HasPrefix(t, "stream error: ") && strings.Contains(t, "; retrying ") {
		reportError(out, msg, "stream error")
		return
	}
	out.Warn("codex: " + strOr(sdk.Text(msg), "(background event with no message)").String())
}

// deprecationNotice reports a DeprecationNoticeEvent {summary, details}
// (the legacy stream's deprecation_notice; codex exec --json writes it as
// an error item, a warning since the app server's): a warning.
func deprecationNotice(out *sdk.Out, ev abi.Value) {
	text := strOr(sdk.Text(ev.Get("summary")), "(no summary)").String()
	if d := sdk.Text(ev.Get("details")).String(); d != "" {
		text += " (" + d + ")"
	}
	out.Warn("codex deprecation notice: " + text)
}

// errorCode is the code of an error message that holds the API's JSON
// error body: its error type (or code), else its HTTP status.
func errorCode(v abi.Value) sdk.Str {
	if !opensObject(v) {
		return sdk.Str{}
	}
	doc, ok := sdk.ParseText(v)
	if !ok {
		return sdk.Str{}
	}
	root := doc.Root()
	for _, c := range [...]abi.Value{root.Path("error", "type"), root.Path("error", "code")} {
		if c.Kind() == abi.KindString && len(c.Raw()) > 2 {
			return sdk.S(c.String())
		}
	}
	if st, ok := root.Get("status").Int(); ok {
		return sdk.S(itoa(st))
	}
	return sdk.Str{}
}

// member is one member of an object built from values of the line.
type member struct {
	key string
	v   abi.Value
}

// object builds a JSON object from raw values of the line (missing
// values are left out), for tool inputs Codex does not send as one
// object. The values are copied verbatim, so nothing is re-encoded.
func object(ms ...member) sdk.Str {
	size := 2
	for _, m := range ms {
		size += len(m.key) + 4 + len(m.v.Raw())
	}
	b := make([]byte, 0, size)
	b = append(b, '{')
	first := true
	for _, m := range ms {
		if !m.v.Exists() {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, m.key...)
		b = append(b, '"', ':')
		b = append(b, m.v.Raw()...)
	}
	b = append(b, '}')
	// Members are JSON values of a parsed line and keys are plain, so b
	// is one JSON object: one token indexes it, where sdk.Parse would
	// index every value again (the host still validates it).
	d := &objectDoc{}
	d.tok[0] = wire.Token{Kind: wire.KindObject, End: uint32(len(b)), Next: 1}
	d.doc = abi.Doc{Line: b, Toks: d.tok[:]}
	return sdk.JSON(d.doc.Root())
}

// objectDoc is the document of an object, with its one token: one
// allocation.
type objectDoc struct {
	doc abi.Doc
	tok [1]wire.Token
}

// shellJoin renders an argv array as one shell command line for display,
// quoting the arguments a POSIX shell would split or expand.
func shellJoin(argv abi.Value) sdk.Str {
	if argv.Kind() != abi.KindArray {
		return sdk.Text(argv)
	}
	var b []byte
	it := argv.Iter()
	for it.Next() {
		if len(b) > 0 {
			b = append(b, ' ')
		}
		b = appendShellWord(b, sdk.View(it.Value()))
	}
	return sdk.S(string(b))
}

func appendShellWord(b []byte, s string) []byte {
	if s == "" {
		return append(b, '\'', '\'')
	}
	plain := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '-' || c == '_' || c == '.' || c == '/' || c == ':' || c == '=' || c == ',' || c == '+' || c == '@' || c == '%') {
			plain = false
			break
		}
	}
	if plain {
		return append(b, s...)
	}
	b = append(b, '\'')
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			b = append(b, `'\''`...)
			continue
		}
		b = append(b, s[i])
	}
	return append(b, '\'')
}

// exitCodeInText finds the exit code in Codex's textual tool output
// ("Process exited with code N" or "Exit code: N" at the start of a
// line). s may be the raw, still escaped contents of a JSON string, so an
// escaped "\n" also starts a line.
func exitCodeInText(s []byte) sdk.Int {
	for _, prefix := range [...]string{"Process exited with code ", "Exit code: "} {
		for i := 0; i+len(prefix) <= len(s); i++ {
			lineStart := i == 0 || s[i-1] == '\n' || i >= 2 && s[i-2] == '\\' && s[i-1] == 'n'
			if lineStart && sdk.HasPrefix(s[i:], prefix) {
				if v, ok := parseInt(s[i+len(prefix):]); ok {
					return sdk.N(v)
				}
			}
		}
	}
	return sdk.Int{}
}

func parseInt(s []byte) (int64, bool) {
	neg := false
	if len(s) > 0 && s[0] == '-' {
		neg, s = true, s[1:]
	}
	var v int64
	i := 0
	for ; i < len(s) && i < 18 && s[i] >= '0' && s[i] <= '9'; i++ {
		v = v*10 + int64(s[i]-'0')
	}
	if i == 0 {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

func itoa(v int64) string {
	if v == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := v < 0
	if neg {
		v = -v
	}
	for v > 0 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// toolKind maps a Codex tool name to an Agent Client Protocol kind.
func toolKind(name string) string {
	for _, t := range &toolKinds {
		if t.name == name {
			return t.kind
		}
	}
	return "other"
}

// toolKinds is toolKind's table. A loop over a table is a few hundred bytes of
// module where a switch of string cases is, under TinyGo -opt=2, a
// byte-by-byte compare of every literal (2-3 KB), and each byte of code
// costs the host time to validate at every start.
var toolKinds = [...]struct{ name, kind string }{
	{"shell", "execute"}, {"exec_command", "execute"}, {"shell_command", "execute"},
	{"container.exec", "execute"}, {"local_shell", "execute"}, {"exec", "execute"}, {"unified_exec", "execute"},
	{"write_stdin", "execute"}, {"apply_patch", "edit"}, {"update_plan", "think"}, {"view_image", "read"},
	{"read_file", "read"}, {"web_search", "fetch"}, {"web_fetch", "fetch"}, {"grep_files", "search"},
	{"list_dir", "search"}, {"file_search", "search"}, {"search", "search"},
}

// jsonInput returns v as a tool input, unset when the provider sent none
// (missing or null), so the host records an empty object.
func jsonInput(v abi.Value) sdk.Str {
	if v.Kind() == abi.KindNull {
		return sdk.Str{}
	}
	return sdk.JSON(v)
}

// strOr returns s, or the literal def when s is unset.
func strOr(s sdk.Str, def string) sdk.Str {
	if s.IsSet() {
		return s
	}
	return sdk.S(def)
}

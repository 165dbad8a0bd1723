package kimi

import (
	"slices"
	"strconv"
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// Plugin is the Kimi Code and Kimi CLI normalizer.
var Plugin = sdk.Plugin{
	Manifest: abi.Manifest{
		Name:        "kimi",
		Version:     "0.1.0",
		Providers:   []string{"kimi"},
		Formats:     []string{fmtWire, fmtLegacy, fmtContext},
		Description: "Kimi Code wire.jsonl (~/.kimi-code/sessions/*/*/agents/*/wire.jsonl), the older Kimi CLI's (~/.kimi/sessions/*/*/wire.jsonl) and its context files before 0.59 (~/.kimi/sessions/*/<uuid>.jsonl)",
		// Neither keeps a retention setting: sessions stay until the
		// user deletes them (doc.go, "Store").
		Stores: []abi.Store{
			{Name: "Kimi Code sessions", Roots: []abi.Root{{Env: "KIMI_CODE_HOME"}, {Path: "~/.kimi-code"}}, Dir: "sessions",
				// Each agent's journal is a directory of its own: a
				// sub-agent's (agent-N) is beside the main agent's.
				Pattern: "*/*/agents/*/wire.jsonl", SubAgents: "../agent-*/wire.jsonl",
				// The Agent call's result starts "agent_id: agent-N":
				// the sub-agent's run is linked at that call.
				SubAgentResult: "agent_id: {dir}"},
			{Name: "Kimi CLI sessions", Roots: []abi.Root{{Env: "KIMI_SHARE_DIR"}, {Path: "~/.kimi"}}, Dir: "sessions",
				Pattern: "*/*/wire.jsonl"},
			// Before 0.59 the Kimi CLI kept only the model's context, one
			// file a session named by its uuid4, and each sub-agent's
			// (the Task tool) in <uuid>_sub_N.jsonl beside it: a child
			// run of the session's (contextPattern).
			{Name: "Kimi CLI context files (before 0.59)", Roots: []abi.Root{{Env: "KIMI_SHARE_DIR"}, {Path: "~/.kimi"}}, Dir: "sessions",
				Pattern: contextPattern, SubAgents: "{stem}" + contextSub + ".jsonl",
				// Nothing names the Task call that started a sub-agent,
				// but its context starts with the call's prompt as its
				// first user message: the run is linked at the one Task
				// call stating it.
				SubAgentPrompt: &abi.PromptMatch{Record: "/content", Input: "/prompt", Name: "Task"}},
		},
		// The session id is only in the path (the session's directory).
		SourceFacts: true,
	},
	New:  func(abi.BeginOptions) sdk.Normalizer { return &normalizer{} },
	Keys: keys,
}

// contextPattern is the glob of the Kimi CLI's context files before 0.59
// (context.go), relative to ~/.kimi/sessions: <work dir
// hash>/<uuid4>.jsonl, a session, and <uuid4>_sub_N.jsonl, N from 1 (up
// to 9999), its sub-agents' contexts (tools/multiagent/task.py:
// next_available_rotation of <uuid>_sub.jsonl, numbered from 1 in the
// order the Task calls ran). It leaves out the copies a revert or
// compaction rotated to <uuid>_N.jsonl (a session's) and
// <uuid>_sub_N_M.jsonl (a sub-agent's), which hold what the file held
// before. contextSub is the sub-agents' suffix alone, for the store's
// SubAgents glob.
const (
	contextSub     = "{_sub_[1-9],_sub_[1-9][0-9],_sub_[1-9][0-9][0-9],_sub_[1-9][0-9][0-9][0-9]}"
	contextPattern = "*/*-*-*-*-????????????{,_sub_[1-9],_sub_[1-9][0-9],_sub_[1-9][0-9][0-9],_sub_[1-9][0-9][0-9][0-9]}.jsonl"
)

// Format names, as reported in OpMeta and the manifest: fmtWire is Kimi
// Code's journal ({"type": "turn.prompt", ..., "time"}), fmtLegacy the
// Kimi CLI's wire log ({"timestamp", "message": {"type", "payload"}}),
// fmtContext (context.go) its context file before 0.59.
const (
	fmtWire   = "wire"
	fmtLegacy = "legacy-wire"
)

// normalizer is the per-stream state. Everything kept across lines is a
// Go string, a bool or a number: spans die with their line.
type normalizer struct {
	// lf are the members of a line's object Line reads (lineKeys), found
	// in one pass over it rather than one per Get.
	lf [len(lineNames)]abi.Value

	started   bool
	format    string // the format start reported
	sessionID string
	model     string
	msgs      int // messages opened, for their keys

	steps map[string]*step // the open assistant message per scope ("" the step itself)
	// calls are the call ids' tallies per scope (see tally): a legacy
	// sub-agent's calls may reuse the id of a call of its parent that
	// waits for its result (its own Agent call, or a call run beside it).
	// A sub-agent's scope, once closed, is never written to again: its
	// tallies are dropped then (dropScope), so that the state stays
	// bounded over an endless log whose Agent calls reuse their ids.
	calls map[string]map[string]*tally
	// agents are the legacy sub-agents per scope of the Agent call that
	// started them, by that call's id (a sub-agent without a parent call:
	// in scope "", by "\x01" and its agent id), the latest of each;
	// running the open ones, in the order they started; names the
	// scope names taken (agentScope).
	agents  map[string]map[string]*subAgent
	running []*subAgent
	names   map[string]int

	// unstepped holds the legacy scopes whose turn began and whose model
	// has not been called since (no StepBegin): text there is the CLI's.
	unstepped map[string]bool
	// slashTurn says the session's turn (scope "") began with a slash
	// command; hookBlock is the reason of the UserPromptSubmit hook that
	// blocked the prompt (HookResolved action block, the wire server's),
	// blocked whether one did, until the turn's TurnBegin has read it.
	slashTurn, blocked bool
	hookBlock          string

	// btw holds the scopes of the side questions (BtwBegin) not ended.
	btw       map[string]bool
	prompts   []string // the prompts' texts whose copy in the model's context is still to come
	looped    bool     // a loop step was read since the last prompt
	requested bool     // an llm.request named the model
	stepOpen  bool     // Kimi Code's last step.begin has no step.end, turn.ended or turn.cancel after it
	turnOpen  bool     // the Kimi CLI's last TurnBegin of the session has no TurnEnd
	// repeatStop: the session's last record since its last step is a
	// tool result ending on the Kimi CLI's dead-end reminder (deadEnd):
	// a TurnEnd now is the CLI's stop of the turn.
	repeatStop bool
	// stepErr says Kimi Code's last step ended in error (step.end
	// finishReason error) and that error is not reported yet: the
	// turn.ended (failed) that follows states it with its message, else
	// it is reported at the next step, prompt, turn end or the end.
	stepErr bool

	// counted is the step usage reported so far (the figures it
	// states; see forked); current is the session the latest facts line
	// names (sessionID the first's).
	counted sdk.Usage
	current string

	// facts counts the facts lines read, so that a line's number in the
	// session's file is its number in the stream less them; copyLines is
	// how many of the file's first lines another run holds (the facts
	// line's "copied", see copyEnds), copiedRun that run, until the copy
	// ends.
	facts     int
	copyLines int64
	copiedRun string

	// fail is the print mode's failure message read so far, failN the
	// lines it spans (failure), until failed reports it.
	fail  []byte
	failN int
}

// addUsage adds u to the step's usage.
func (n *normalizer) addUsage(u sdk.Usage, out *sdk.Out) {
	n.counted = n.counted.Plus(u)
	out.Usage(u, sdk.ModeAdd)
}

// forked reads Kimi Code's fork marker ({"type":"forked","time"}): /fork
// copies the session's directory, the agents' wire.jsonl whole, then
// appends the marker to each agent's journal, so everything before it
// is the history of the session it was forked from, whose run counts it
// (a fork of a fork holds its parent's marker too: the last is the
// fork's). The lines before have been read already: their turns stay
// in this run, but the tokens they stated are set back to 0 (each
// figure they stated), so the step's usage is only what follows.
//
// Unless this stream is another session's run grown by the fork's file:
// a fork of a session that wrote nothing since starts with all of its
// bytes, so the host archives the fork's file as more of that session's
// run, the copy being what the run held already (the facts line of the
// part naming the fork's session, the first the parent's). The copied
// tokens are then counted once, in the earlier parts: nothing is reset.
func (n *normalizer) forked(out *sdk.Out) {
	if n.sessionID != n.current || !n.uncount(out) {
		out.Ignored(sdk.S("forked"))
		return
	}
	out.Warn("forked from another session: the turns above the fork are that session's, shown here as the context this one started from; their tokens are not counted here")
}

// uncount sets the step's usage back to 0 (each figure stated so far),
// so that it is only what follows, and reports whether there was any.
func (n *normalizer) uncount(out *sdk.Out) bool {
	zero := func(f sdk.Int) sdk.Int {
		if _, ok := f.Value(); ok {
			return sdk.N(0)
		}
		return f
	}
	c := n.counted
	reset := sdk.Usage{Input: zero(c.Input), CacheRead: zero(c.CacheRead), CacheWrite: zero(c.CacheWrite), Output: zero(c.Output),
		Reasoning: zero(c.Reasoning), Uncached: zero(c.Uncached), CacheWrite1h: zero(c.CacheWrite1h), Total: zero(c.Total)}
	n.counted = sdk.Usage{}
	if reset == (sdk.Usage{}) {
		return false
	}
	out.Usage(reset, sdk.ModeSet)
	return true
}

// copyEnds ends the lines the facts line says another run holds
// (abi.SourceFacts.Copied: a Kimi CLI /fork or /undo, which writes its
// parent's wire.jsonl lines up to a turn into the new session with no
// mark, synced after the parent's run holds them): it is called at the
// first line after them, or at the stream's end, and closes the copy's
// messages still open. As at Kimi Code's fork marker, their turns stay in this run, shown as the context the
// session started from, and the tokens they stated are set back to 0
// (each figure stated), so the step's usage is only what follows; a
// warning names the run that counts them.
func (n *normalizer) copyEnds(out *sdk.Out) {
	lines, run := n.copyLines, n.copiedRun
	n.copyLines, n.copiedRun = 0, ""
	n.closeAll(out) // a message of the copy still open states its usage now
	if n.uncount(out) {
		out.Warn("its first " + strconv.FormatInt(lines, 10) + " lines are those run " + sdk.Clip(run, 64) + " holds of another session (a fork or copy of it, as the Kimi CLI's /fork and /undo write): their turns are shown here as the context this session started from; their tokens are counted there, not here")
	}
}

// step is the assistant message a scope has open: one model call.
type step struct {
	key      string
	id       string
	next     int    // the next block slot
	run      string // BlockText or BlockThinking while deltas go to slot runSlot
	runSlot  int
	calls    []call // calls of the message not reported yet (legacy: arguments may stream)
	text     []byte // the message's text, for the final answer
	ended    bool   // step.end read: closed at the usage.record that follows, or the next record
	stop     string
	usage    sdk.Usage
	hasUsage bool
}

// tally is what is known of a call id: the name of its latest call, and
// how many calls, results and copies of results in the model's context
// (context.append_message, role tool) named it. A provider may give a
// new call the id of one that has its result (ids unique per response,
// not per session: a custom model server names every call call_1), so
// a call is counted when the id's latest call is settled (results caught
// up with calls) and is that call again, repeated, when it is not; a
// result is the latest call's unless that call has one already; the
// k-th copy of a result is the copy of one reported when k results were.
type tally struct {
	name                   string
	calls, results, copies int
}

// settled says whether the latest call of the id has its result (or, with
// no call, a result came).
func (t *tally) settled() bool { return t.results > 0 && t.results >= t.calls }

// tally returns the tally of call id in scope, made when there is none.
func (n *normalizer) tally(scope, id string) *tally {
	if t := n.calls[scope][id]; t != nil {
		return t
	}
	if n.calls == nil {
		n.calls = map[string]map[string]*tally{}
	}
	m := n.calls[scope]
	if m == nil {
		m = map[string]*tally{}
		n.calls[strings.Clone(scope)] = m
	}
	t := &tally{}
	m[strings.Clone(id)] = t
	return t
}

// subAgent is a legacy sub-agent's scope: its name, whether it is open,
// and how many calls its starting call's key had when it opened (a later
// call reusing the key runs a sub-agent of its own).
type subAgent struct {
	scope string
	open  bool
	calls int
}

// call is a legacy tool call whose arguments may still grow.
type call struct {
	id, name, args, ts string
	input              sdk.Str // inputOf(args), kept with them
	slot               int
}

// Line implements sdk.Normalizer.
func (n *normalizer) Line(l *sdk.Line, out *sdk.Out) error {
	v := l.JSON()
	if !v.Exists() {
		if id := resumeHint(l.Raw); id != "" {
			// The Kimi CLI's print mode ends its output with the
			// session's id: "To resume this session: kimi -r <id>".
			n.failed(out)
			out.Meta(sdk.Meta{SessionID: sdk.S(id)})
			out.Ignored(sdk.S("resume_hint"))
			return nil
		}
		if n.failure(sdk.TrimSpace(l.Raw)) {
			out.Ignored(sdk.S("print_failure"))
			return nil
		}
		if len(sdk.TrimSpace(l.Raw)) > 0 {
			out.Unmapped(sdk.S("non_json"))
		}
		return nil
	}
	if n.format == "" && n.failN > 0 {
		// Text before the first record: not the print mode's (which
		// writes no text before its messages), counted unmapped.
		out.UnmappedN(sdk.S("non_json"), n.failN)
		n.fail, n.failN = n.fail[:0], 0
	}
	n.failed(out)
	if v.Kind() != abi.KindObject {
		out.Unmapped(sdk.S("non_object"))
		return nil
	}
	f := &n.lf
	v.Lookup(lineKeys, f[:])
	if t := f[lTwasm]; t.Kind() == abi.KindString {
		n.facts++
		n.readFacts(v, out)
		return nil
	}
	if n.copyLines > 0 && int64(l.No-n.facts) > n.copyLines {
		n.copyEnds(out)
	}
	t := f[lType]
	if !t.Exists() {
		if r := f[lRole]; r.Kind() == abi.KindString {
			n.start(fmtContext, out)
			n.contextLine(v, out)
			return nil
		}
		if v.Get("file_path").Kind() == abi.KindString && v.Get("content").Kind() == abi.KindString {
			// The print mode's PlanDisplay {content, file_path}: the
			// plan file shown to the user, as the wire log's.
			out.Ignored(sdk.S("PlanDisplay"))
			return nil
		}
	} else if v.Get("source_kind").Exists() && v.Get("severity").Exists() {
		// The print mode's Notification {id, category, type,
		// source_kind, source_id, title, body, severity, ...}.
		notification(v, "", out)
		return nil
	}
	if m := f[lMessage]; m.Kind() == abi.KindObject {
		if mt := m.Get("type"); mt.Kind() == abi.KindString && m.Get("payload").Exists() {
			n.start(fmtLegacy, out)
			n.legacy(sdk.Name(mt), m.Get("payload"), stamp{v: f[lTimestamp]}, "", out)
			return nil
		}
	}
	if t.Kind() != abi.KindString {
		out.Unmapped(sdk.S("(no type)"))
		return nil
	}
	if t.Is("metadata") {
		out.Ignored(sdk.S("metadata"))
		return nil
	}
	n.start(fmtWire, out)
	n.wire(sdk.Name(t), v, stamp{v: f[lTime], ms: true}, out)
	return nil
}

// readFacts reads the host's facts line: the session is the directory the
// wire file is in (Kimi CLI: <work dir hash>/<session>/wire.jsonl; Kimi
// Code: <work dir>/<session>/agents/<agent>/wire.jsonl).
func (n *normalizer) readFacts(v abi.Value, out *sdk.Out) {
	if !v.Get("$twasm").Is(abi.SourceFactsType) {
		out.Unmapped(sdk.S("$twasm/" + sdk.TypeName(v.Get("$twasm"))))
		return
	}
	out.Ignored(sdk.S("$twasm/source"))
	if c := v.Get("copied"); n.sessionID == "" && c.Kind() == abi.KindObject {
		// Only a new run's first facts line names a copy (ABI 1.10).
		if lines, ok := c.Get("lines").Int(); ok && lines > 0 {
			n.copyLines, n.copiedRun = lines, sdk.View(c.Get("run"))
			n.copiedRun = strings.Clone(n.copiedRun)
		}
	}
	var id string
	switch parts := strings.Split(sdk.View(v.Get("path")), "/"); {
	case len(parts) >= 3:
		id = parts[1]
	case len(parts) == 2 && strings.HasSuffix(parts[1], ".jsonl"):
		// A Kimi CLI context file before 0.59: <work dir hash>/<session>.jsonl.
		id = strings.TrimSuffix(parts[1], ".jsonl")
	default:
		return
	}
	if id != n.current {
		n.current = strings.Clone(id)
	}
	if n.sessionID == "" {
		n.sessionID = n.current
	}
}

// start reports, at the first record, the format and the session id: a
// wire log has no terminal record, the host settles the status by the
// session rule of spec §6.7.
// failure reports whether the text line t is (part of) the message with
// which the Kimi CLI's print mode (kimi --print) says how a run that did
// not end well ended, and keeps it: the print mode writes it on stdout
// after the messages, or as its only output when the run failed before
// any (src/kimi_cli/ui/print/__init__.py at 4a550ef, each with exit code
// 1, 75 for a retryable provider error): "Interrupted by user" when the
// user stopped it (RunCancelled, Ctrl+C), the MaxStepsReached message
// "Max number of steps reached: N", "Unknown error: ...", the messages of
// LLMNotSet ("LLM not set") and LLMNotSupported ("LLM model '<name>' does
// not support required ..."), and for a ChatProviderError the provider's
// message as it is ("Error code: 429 - ...", "Connection error."). It
// prints them with rich's print, which wraps a message wider than the
// console (80 columns when no terminal is attached) over several lines:
// the lines that follow it are the rest of it. Besides its messages the
// print mode writes no other text, so in a context file's format (its
// stream-json), or before any record, every text line is one; a line
// that opens as JSON does is a message cut short (a log read while
// written), not one. In the other formats (the wire logs, which hold no
// such text), only the print mode's own sentences are.
func (n *normalizer) failure(t []byte) bool {
	switch {
	case len(t) == 0:
		return false
	case n.failN > 0:
		// The rest of a message rich wrapped.
		n.failN++
		if len(n.fail) < maxFailure {
			n.fail = append(append(n.fail, '\n'), t...)
		}
		return true
	case t[0] == '{' || t[0] == '[':
		return false
	case n.format == fmtContext || n.format == "" || printEnd(t):
		n.failN = 1
		n.fail = append(n.fail[:0], t...)
		return true
	}
	return false
}

// maxFailure bounds the print mode's failure text kept (failure).
const maxFailure = 4 << 10

// printEnd reports whether t is one of the print mode's own sentences
// that say how a run ended (failure).
func printEnd(t []byte) bool {
	return string(t) == interrupted || sdk.HasPrefix(t, "Max number of steps reached: ") || sdk.HasPrefix(t, "Unknown error: ") ||
		string(t) == "LLM not set" || sdk.HasPrefix(t, "LLM model '") && strings.Contains(string(t), "' does not support required ")
}

// interrupted is what the print mode prints when the user stopped the
// run (RunCancelled).
const interrupted = "Interrupted by user"

// failed reports the print mode's failure message kept (failure), once
// its lines have all been read (at the next line, or the end): the
// user's stop leaves the run incomplete, nothing failed; anything else
// is an error the CLI reported. Below the terminal level: the session
// rule settles the run, as for every line of the log. A failure with no
// message before it is the whole output of a run that failed at its
// first model call: read as the print mode's stream-json (a context
// file's format).
func (n *normalizer) failed(out *sdk.Out) {
	if n.failN == 0 {
		return
	}
	n.start(fmtContext, out)
	t := string(n.fail)
	n.fail, n.failN = n.fail[:0], 0
	if t == interrupted {
		out.Status(sdk.StatusIncomplete, sdk.S("the user interrupted the run (Interrupted by user)"), sdk.LevelError)
		return
	}
	out.Status(sdk.StatusError, sdk.S(sdk.Clip(t, 500)), sdk.LevelError)
}

// resumeHint is the session id of the line the Kimi CLI's print mode
// (--print, text or stream-json) writes last, "To resume this session:
// kimi -r <id>", else "".
func resumeHint(raw []byte) string {
	const p = "To resume this session: kimi -r "
	t := sdk.TrimSpace(raw)
	if !sdk.HasPrefix(t, p) {
		return ""
	}
	id := string(sdk.TrimSpace(t[len(p):]))
	if id == "" || strings.ContainsAny(id, " \t\"") || len(id) > 200 {
		return ""
	}
	return id
}

func (n *normalizer) start(format string, out *sdk.Out) {
	if n.started {
		return
	}
	n.started, n.format = true, format
	m := sdk.Meta{Format: sdk.S(format), NoTerminal: true}
	if n.sessionID != "" {
		m.SessionID = sdk.S(n.sessionID)
	}
	out.Meta(m)
}

// stepOf is scope's open message, opened (and keyed) when there is none.
func (n *normalizer) stepOf(scope, id string, ts stamp, out *sdk.Out) *step {
	if s := n.steps[scope]; s != nil {
		return s
	}
	if n.steps == nil {
		n.steps = map[string]*step{}
	}
	n.msgs++
	s := &step{key: "m" + strconv.Itoa(n.msgs), id: strings.Clone(id), run: "", runSlot: -1}
	n.steps[strings.Clone(scope)] = s
	out.Open(sdk.S(s.key), sdk.Message{ID: sdk.Opt(id), Model: sdk.Opt(n.model), Scope: sdk.Opt(scope), Time: sdk.Opt(ts.String())})
	return s
}

// content appends a text or thinking delta to scope's open message: a
// delta of the same type as the one before grows the same block.
func (n *normalizer) content(scope, typ string, text sdk.Str, raw abi.Value, ts stamp, out *sdk.Out) {
	if !text.IsSet() {
		return
	}
	s := n.stepOf(scope, "", ts, out)
	if s.run != typ {
		s.run, s.runSlot = typ, s.next
		s.next++
	}
	out.Append(sdk.S(s.key), s.runSlot, typ, text)
	if typ == sdk.BlockText && scope == "" {
		s.text = sdk.AppendText(s.text, raw)
	}
}

// close closes scope's open message: its calls not yet reported first
// (the host holds them until the message is written), then the message
// with its usage; the step's final answer is its text.
func (n *normalizer) close(scope string, out *sdk.Out) {
	s := n.steps[scope]
	if s == nil {
		return
	}
	delete(n.steps, scope)
	for _, c := range s.calls {
		n.reportCall(c, scope, out)
	}
	end := sdk.MessageEnd{StopReason: sdk.Opt(s.stop)}
	if s.hasUsage {
		end.Usage = s.usage
		if scope == "" {
			n.addUsage(s.usage, out)
		}
	}
	out.Close(sdk.S(s.key), end)
	if scope == "" && len(s.text) > 0 {
		out.Final(sdk.S(string(s.text)), true)
	}
	if scope == "" {
		cut(s.stop, out)
	}
}

// cut reports a Kimi Code model call whose step.end says it was cut
// short, once its message is closed: interrupted (the turn or the step
// aborted while the model answered) or max_tokens (the output cut at the
// token limit) is a status incomplete below the terminal level, so a
// session whose last answer it is is incomplete by the session rule (a
// later answer makes it ok again).
func cut(stop string, out *sdk.Out) {
	switch stop {
	case "interrupted":
		out.Status(sdk.StatusIncomplete, sdk.S("the model call was interrupted before it finished (finishReason interrupted)"), sdk.LevelError)
	case "max_tokens":
		out.Warn("the response was cut at the output token limit")
		out.Status(sdk.StatusIncomplete, sdk.S("the response was cut at the output token limit (finishReason max_tokens)"), sdk.LevelError)
	}
}

// closeAll closes every open message, the step's last.
func (n *normalizer) closeAll(out *sdk.Out) {
	for scope := range n.steps {
		if scope != "" {
			n.close(scope, out)
		}
	}
	n.close("", out)
}

// user reports a prompt (or context the agent sent in the user's role)
// from its parts: a string, or a list of {type: text, text}.
func (n *normalizer) user(input abi.Value, origin, scope string, ts stamp, out *sdk.Out) bool {
	key := ""
	emit := func(t abi.Value) {
		if key == "" {
			n.msgs++
			key = "u" + strconv.Itoa(n.msgs)
			out.Open(sdk.S(key), sdk.Message{User: true, Scope: sdk.Opt(scope), Time: sdk.Opt(ts.String())})
		}
		out.Block(sdk.S(key), -1, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(t), Origin: origin})
	}
	switch input.Kind() {
	case abi.KindString:
		if !input.Is("") {
			emit(input)
		}
	case abi.KindArray:
		it := input.Iter()
		for it.Next() {
			if t := it.Value().Get("text"); t.Kind() == abi.KindString && !t.Is("") {
				emit(t)
			}
		}
	}
	if key == "" {
		return false
	}
	out.Close(sdk.S(key), sdk.MessageEnd{})
	return true
}

// toolCall reports a call: its tool_use block now, its tool.call when
// report is set (else at the message's close or its result, whichever
// comes first: a legacy call's arguments may still stream).
func (n *normalizer) toolCall(scope, id, name, args string, ts stamp, report bool, out *sdk.Out) {
	if id == "" {
		out.Warn("kimi tool call without id (" + name + "): no tool.call reported")
		return
	}
	s := n.stepOf(scope, "", ts, out)
	s.run = ""
	c := call{id: strings.Clone(id), name: strings.Clone(name), args: strings.Clone(args), ts: ts.String(), slot: s.next}
	c.input = inputOf(c.args)
	s.next++
	t := n.tally(scope, c.id)
	if t.results >= t.calls {
		// A new call, reusing the id when its latest call is settled;
		// else that call repeated.
		t.calls++
	}
	t.name = c.name
	out.Block(sdk.S(s.key), c.slot, sdk.Block{Type: sdk.BlockToolUse, ToolName: sdk.S(c.name), ToolID: sdk.S(c.id), ToolInput: c.input})
	if report {
		n.reportCall(c, scope, out)
		return
	}
	s.calls = append(s.calls, c)
}

// growCall appends a streamed piece of arguments to scope's latest call
// not yet reported, and sets its block again.
func (n *normalizer) growCall(scope string, part abi.Value, out *sdk.Out) bool {
	s := n.steps[scope]
	if s == nil || len(s.calls) == 0 || part.Kind() != abi.KindString {
		return false
	}
	c := &s.calls[len(s.calls)-1]
	c.args = string(sdk.AppendText([]byte(c.args), part))
	c.input = inputOf(c.args)
	out.Block(sdk.S(s.key), c.slot, sdk.Block{Type: sdk.BlockToolUse, ToolName: sdk.S(c.name), ToolID: sdk.S(c.id), ToolInput: c.input})
	return true
}

// flushCall reports call id's tool.call if its message still holds it.
func (n *normalizer) flushCall(scope, id string, out *sdk.Out) {
	s := n.steps[scope]
	if s == nil {
		return
	}
	for i, c := range s.calls {
		if c.id == id {
			s.calls = append(s.calls[:i], s.calls[i+1:]...)
			n.reportCall(c, scope, out)
			return
		}
	}
}

// reportCall reports c's tool.call.
func (n *normalizer) reportCall(c call, scope string, out *sdk.Out) {
	tc := sdk.ToolCall{CallID: sdk.S(c.id), Name: sdk.S(c.name), Input: c.input, Kind: kindOf(c.name), Scope: sdk.Opt(scope), Time: sdk.Opt(c.ts)}
	if tc.Kind == "execute" {
		if doc, ok := sdk.Parse([]byte(c.args)); ok {
			tc.Command = sdk.StringOf(doc.Root().Get("command"))
		}
	}
	out.ToolCall(tc)
}

// result reports a tool's result: its output (a string, or a list of
// parts whose text is joined), an error when the tool says so (denied
// when the user rejected the call), and, for a legacy Agent call, the end
// of its sub-agent's scope.
func (n *normalizer) result(scope, id string, output abi.Value, isError bool, msg abi.Value, refused string, ts stamp, out *sdk.Out) {
	var o sdk.Str
	outText := ""
	switch output.Kind() {
	case abi.KindString:
		o, outText = sdk.Text(output), sdk.View(output)
	case abi.KindArray:
		o = sdk.S(joinText(output))
	}
	n.resultOf(scope, id, o, outText, isError, sdk.StringOf(msg), sdk.View(msg), refused, ts, out)
}

// resultOf reports a tool's result: its output, and, when it failed,
// its message (msg, msgText: the tool's message, the output's text when
// the output is a string, outText, for the refusal and exit code they
// state). refused is the status of a failed call the record itself says
// never ran (hookRefusal), else "".
func (n *normalizer) resultOf(scope, id string, output sdk.Str, outText string, isError bool, msg sdk.Str, msgText, refused string, ts stamp, out *sdk.Out) {
	if id == "" {
		out.Warn("kimi tool result without a call id: not reported")
		return
	}
	n.flushCall(scope, id, out)
	t := n.tally(scope, id)
	if t.settled() {
		out.Warn("kimi: a second result for call " + id + " not reported")
		return
	}
	t.results++
	r := sdk.ToolResult{CallID: sdk.S(id), Name: sdk.Opt(t.name), Scope: sdk.Opt(scope), Time: sdk.Opt(ts.String()), Output: output}
	status := "ok"
	if isError {
		status = "error"
		r.IsError = true
		r.Error = msg
		if r.Error.IsEmpty() {
			r.Error = r.Output
		}
		if r.Error.IsEmpty() {
			r.Error = sdk.S("the tool reported an error")
		}
		if refused != "" {
			status = refused
		} else if st := refusal(msgText); st != "" {
			status = st
		} else if st := refusal(outText); st != "" {
			status = st
		}
		// Both agents' shell tools end a failed command's message (and
		// Kimi Code its output) with "Command failed with exit code: N.".
		text := []byte(msgText)
		if outText != "" {
			text = append(append(text, '\n'), outText...)
		}
		r.ExitCode = sdk.StatedExitCode(text, "Command failed with exit code: ")
	}
	r.Status = sdk.S(status)
	out.ToolResult(r)
	if len(n.running) == 0 {
		return
	}
	if a := n.agents[scope][id]; a != nil && a.open {
		st := sdk.StatusOK
		if isError {
			st = sdk.StatusError
		}
		n.close(a.scope, out)
		out.ScopeClose(sdk.S(a.scope), st, r.Error)
		n.dropScope(a)
	}
}

// killedOrInterrupted says whether a line is what both agents' shell
// tools say of a command they stopped: "Command killed by timeout (60s)"
// (the Kimi CLI's tools/shell, Kimi Code's BashTool), "Interrupted by
// user" and "Aborted before command started" (Kimi Code's, the turn
// aborted).
func killedOrInterrupted(l string) bool {
	l = strings.TrimSpace(l)
	return strings.HasPrefix(l, "Command killed by timeout (") || l == "Interrupted by user" || l == "Aborted before command started"
}

// refusal is the status of a tool error that says the call never ran:
// "denied" when the user or a permission rule refused it (the Kimi CLI's
// ToolRejectedError, "The tool call is rejected by the user. ..."; Kimi
// Code's toolApprovalService, 'Tool "X" was not run because the user
// rejected the approval request.', and its policies, 'Tool "X" was denied
// by permission policy.' or "... by permission rule."), "cancelled" when
// its approval request was cancelled ('Tool "X" was not run because the
// approval request was cancelled.') or stopped it while it ran (Kimi
// Code's toolExecutorService.ts abortedToolOutput: 'The user manually
// interrupted "X" ...', 'Tool "X" was aborted'), else "".
func refusal(s string) string {
	t := strings.TrimSpace(s)
	first, last := t, t[strings.LastIndexByte(t, '\n')+1:]
	if i := strings.IndexByte(t, '\n'); i >= 0 {
		first = t[:i]
	}
	switch {
	case killedOrInterrupted(first), killedOrInterrupted(last):
		return "cancelled"
	case strings.HasPrefix(s, "The user manually interrupted \""),
		strings.HasPrefix(s, "Tool \"") && strings.HasSuffix(s, "\" was aborted"):
		return "cancelled"
	case strings.Contains(s, "rejected by the user"), strings.Contains(s, "Rejected by user"),
		strings.Contains(s, "because the user rejected the approval request"),
		strings.Contains(s, "was denied by permission policy"), strings.Contains(s, "was denied by permission rule"):
		return "denied"
	case strings.Contains(s, "because the approval request was cancelled"):
		return "cancelled"
	}
	return ""
}

// End implements sdk.Normalizer: open messages are closed, a sub-agent
// whose Agent call got no result is left incomplete.
func (n *normalizer) End(out *sdk.Out) error {
	n.failed(out)
	if n.copyLines > 0 {
		n.copyEnds(out) // nothing after the copy
	}
	n.closeAll(out)
	n.reportStepErr(out)
	if n.format == fmtContext {
		n.contextRepeatStop(true, out)
	}
	switch {
	case n.stepOpen:
		// The log was read while the model answered (twasm sync
		// archives sessions Kimi Code still writes): a later read,
		// the step ended, settles it.
		out.Status(sdk.StatusIncomplete, sdk.S("the turn has not finished: the log's last step.begin has no step.end"), sdk.LevelError)
	case n.turnOpen:
		// The Kimi CLI's wire log read in the middle of a turn.
		out.Status(sdk.StatusIncomplete, sdk.S("the turn has not finished: the log's last TurnBegin has no TurnEnd"), sdk.LevelError)
	}
	for _, a := range n.running {
		if a.open {
			a.open = false
			out.ScopeClose(sdk.S(a.scope), sdk.StatusIncomplete, sdk.S("the log ended before the sub-agent's result was recorded"))
		}
	}
	for _, scope := range sortedKeys(n.btw) {
		out.ScopeClose(sdk.S(scope), sdk.StatusIncomplete, sdk.S("the log ended before the side question's answer was recorded"))
	}
	n.btw = nil
	return nil
}

// usageOf reads a token usage: the Kimi CLI's {input_other, output,
// input_cache_read, input_cache_creation} or Kimi Code's {inputOther,
// output, inputCacheRead, inputCacheCreation}. input_other is the input
// neither read from nor written to the cache.
func usageOf(u abi.Value) (sdk.Usage, bool) {
	if u.Kind() != abi.KindObject {
		return sdk.Usage{}, false
	}
	other, read, write := u.Get("input_other"), u.Get("input_cache_read"), u.Get("input_cache_creation")
	if !other.Exists() && !read.Exists() && !write.Exists() {
		other, read, write = u.Get("inputOther"), u.Get("inputCacheRead"), u.Get("inputCacheCreation")
	}
	us := sdk.Split(sdk.IntOf(other), sdk.IntOf(read), sdk.IntOf(write))
	us.Output = sdk.IntOf(u.Get("output"))
	return us, us != sdk.Usage{}
}

// kindOf is the transcript's kind of a Kimi tool (the Kimi CLI's names
// and Kimi Code's).
func kindOf(name string) string {
	switch name {
	case "Shell", "Bash", "PowerShell":
		return "execute"
	case "ReadFile", "Read", "ReadMediaFile", "LS", "ListDirectory":
		return "read"
	case "WriteFile", "StrReplaceFile", "Write", "Edit", "MultiEdit", "NotebookEdit":
		return "edit"
	case "Glob", "Grep":
		return "search"
	case "SearchWeb", "FetchURL", "WebSearch", "WebFetch":
		return "fetch"
	case "Think", "SetTodoList", "TodoWrite", "TodoRead":
		return "think"
	}
	return "other"
}

// inputOf is a tool input: the JSON the arguments hold, {} when there
// are none, else the text as a string.
func inputOf(args string) sdk.Str {
	if strings.TrimSpace(args) == "" || args == "null" {
		return sdk.RawJSON("{}")
	}
	if _, ok := sdk.Parse([]byte(args)); ok {
		return sdk.RawJSON(args)
	}
	return sdk.S(args)
}

// stamp is a record's time, formatted only where a record written
// states it: most records write none (a streamed delta's message is
// open already), and formatting a time was a twentieth of the plugin's
// time natively.
type stamp struct {
	v  abi.Value
	ms bool // epoch milliseconds (Kimi Code's time); else epoch seconds (the Kimi CLI's timestamp)
}

// String is the time as RFC 3339 ("" when there is none).
func (t stamp) String() string {
	if t.ms {
		return msTime(t.v)
	}
	return secTime(t.v)
}

// secTime is epoch seconds (the Kimi CLI's float timestamp) as RFC 3339
// ("" when v is not a positive number of a plausible size).
func secTime(v abi.Value) string {
	f, ok := v.Float()
	if !ok || f <= 0 || f > 1e11 {
		return ""
	}
	return sdk.RFC3339Millis(int64(f * 1000))
}

// msTime is epoch milliseconds (Kimi Code's time) as RFC 3339.
func msTime(v abi.Value) string {
	f, ok := v.Float()
	if !ok || f <= 0 || f > 1e14 {
		return ""
	}
	return sdk.RFC3339Millis(int64(f))
}

// sortedKeys are m's keys in order (End reports in a fixed order).
func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

package droid

import (
	"strconv"
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// Plugin is the Factory Droid normalizer.
var Plugin = sdk.Plugin{
	Manifest: abi.Manifest{
		Name:        "droid",
		Version:     "0.1.0",
		Providers:   []string{"droid"},
		Formats:     []string{fmtSession, fmtStream, fmtJSON},
		Description: "Factory Droid sessions (~/.factory/sessions/*/<id>.jsonl) with their <id>.settings.json usage, and droid exec --output-format stream-json, debug or json",
		// Droid keeps sessions until the user deletes them (doc.go,
		// "Store"). A session is its JSONL and the settings document
		// beside it, which holds its usage: a tree store, one session
		// per key (the session id), its two files read together. A Task
		// sub-session names the session and the call that started it
		// in its session_start (callingSessionId, callingToolUseId): its
		// run is a child run of that session's, linked at that call.
		Stores: []abi.Store{{
			Name: "Factory Droid sessions", Kind: abi.StoreKindTree,
			Roots:        []abi.Root{{Env: "DROID_SESSIONS_DIR"}, {Path: "~/.factory/sessions"}},
			Pattern:      "*/*.jsonl",
			Files:        []string{"*/{key}.jsonl", "*/{key}.settings.json"},
			Parent:       &abi.StoreParent{File: "*/{key}.jsonl", Member: "callingSessionId"},
			SubAgentCall: &abi.SidecarKey{File: "{stem}.jsonl", Key: "callingToolUseId"},
		}},
	},
	New:  func(abi.BeginOptions) sdk.Normalizer { return &normalizer{} },
	Keys: keys,
	// droid exec --output-format json may print its result object
	// pretty-printed, over several lines.
	Reassemble: true,
}

// fmtSession is the format name reported in OpMeta and the manifest.
const fmtSession = "session"

// normalizer is the per-stream state. Everything kept across lines is a
// Go string, a bool or a number: spans die with their line.
type normalizer struct {
	started  bool
	model    string
	file     string            // the file the host's last file line named
	seen     map[string]bool   // message ids read (a line read again is a replay)
	calls    map[string]string // call id -> tool name
	resulted map[string]bool   // call ids whose latest call has its result
	usage    string            // the latest tokenUsage reported, as JSON (a settings document read again)
	// droid exec's output (exec.go): exec once an event of it was read,
	// sessionID once its session was reported, execCwd once the init
	// event's cwd was; pending the calls still
	// waiting for their results, in order.
	exec, sessionID, execCwd bool
	pending                  []pendingCall
	// A fork's copy of its parent (Forks in doc.go): forkAt the last
	// message it copied (session_start's forkedAtMessageId), copying
	// while the lines read are still the copy, copied the message ids
	// it holds.
	forkAt  string
	copying bool
	copied  map[string]bool
	// turnEnds: the session log holds an agent_turn_outcome (this Droid
	// writes one when a turn ends); turnRunning: a message came after
	// the last one.
	turnEnds, turnRunning bool
	// unanswered: the last prompt has no answer yet (no assistant
	// message or tool result after it); refusal: the text of a notice
	// Droid showed the user only while a prompt was unanswered, held
	// until the next record says whether the model answered after all
	// (a notice in passing) or not (the notice ended the turn: its
	// error).
	unanswered bool
	refusal    string
	// droid exec's calls that did not run (exec.go, notRun): held the
	// result saying so, until the next event tells whether the run
	// lacked permission; permission once an event said it did.
	held       heldResult
	permission bool
}

// Line implements sdk.Normalizer.
func (n *normalizer) Line(l *sdk.Line, out *sdk.Out) error {
	v := l.JSON()
	if !v.Exists() {
		if len(sdk.TrimSpace(l.Raw)) > 0 {
			out.Unmapped(sdk.S("non_json"))
		}
		return nil
	}
	if v.Kind() != abi.KindObject {
		out.Unmapped(sdk.S("non_object"))
		return nil
	}
	if t := v.Get("$twasm"); t.Exists() {
		n.twasm(v, t, out)
		return nil
	}
	if strings.HasSuffix(n.file, ".settings.json") || !v.Get("type").Exists() && v.Get("tokenUsage").Exists() {
		n.start(abi.Value{}, out)
		n.settings(v, out)
		return nil
	}
	if n.execLine(v, l.No, out) {
		return nil
	}
	t := v.Get("type")
	if n.forked(v, t, out) {
		return nil
	}
	switch {
	case t.Is("session_start"):
		n.start(v, out)
	case t.Is("message"):
		n.start(abi.Value{}, out)
		n.message(v, l.No, out)
	case t.Is("agent_turn_outcome"):
		n.start(abi.Value{}, out)
		n.refused(out)
		n.outcome(v, out)
		n.turnEnds, n.turnRunning = true, false
	case t.Is("compaction_state"):
		n.start(abi.Value{}, out)
		n.compaction(v, l.No, out)
	case t.Is("todo_state"), t.Is("session_end"):
		// The plan as TodoWrite left it (the call is in the messages)
		// and the end of a session: nothing the transcript shows.
		n.start(abi.Value{}, out)
		out.Ignored(sdk.S(sdk.TypeName(t)))
	case t.Kind() != abi.KindString:
		out.Unmapped(sdk.S("(no type)"))
	default:
		out.Unmapped(sdk.S(sdk.TypeName(t)))
	}
	return nil
}

// forked reports whether v is a line of the history a fork copied from
// its parent (Forks in doc.go), and declares it ignored if so: every
// record after the fork's session_start up to the message its
// forkedAtMessageId names, and a turn's outcome naming a turn of those
// messages (Droid copies the outcome written after the last copied
// answer too).
func (n *normalizer) forked(v, t abi.Value, out *sdk.Out) bool {
	switch {
	case n.copying && !t.Is("session_start"):
		if t.Is("message") {
			id := v.Get("id").String()
			if n.copied == nil {
				n.copied = map[string]bool{}
			}
			n.copied[id] = true
			n.copying = id != n.forkAt
		}
	case t.Is("agent_turn_outcome") && n.copied[sdk.View(v.Get("turnId"))]:
	default:
		return false
	}
	out.Ignored(sdk.S(forkedHistory))
	return true
}

// forkedHistory is the native type a fork's copied lines are declared
// ignored as.
const forkedHistory = "(forked history)"

// twasm handles the host's lines: the facts of the session, and the
// line naming each of its files before the file's content.
func (n *normalizer) twasm(v, t abi.Value, out *sdk.Out) {
	switch {
	case t.Is(abi.SourceFileType):
		n.file = v.Get("path").String()
		out.Ignored(sdk.S("$twasm/file"))
	case t.Is(abi.SourceFactsType):
		out.Ignored(sdk.S("$twasm/source"))
	default:
		out.Unmapped(sdk.S("$twasm/" + sdk.TypeName(t)))
	}
}

// start reports, at the first record, the format (a session log: no
// terminal record, the host settles the status by spec §6.7) and, from
// session_start, the session id.
func (n *normalizer) start(v abi.Value, out *sdk.Out) {
	if n.started {
		if v.Exists() {
			out.Ignored(sdk.S("session_start"))
		}
		return
	}
	n.started = true
	m := sdk.Meta{Format: sdk.S(fmtSession), NoTerminal: true}
	if at := v.Get("forkedAtMessageId"); at.Kind() == abi.KindString && !at.Is("") {
		// A fork: its lines up to that message are its parent's.
		n.forkAt, n.copying = at.String(), true
	}
	if v.Exists() {
		// session_start states the working directory; Droid names no
		// repository root.
		m.SessionID = sdk.StringOf(v.Get("id"))
		m.Cwd = sdk.StringOf(v.Get("cwd"))
	}
	out.Meta(m)
}

// outcome reads the record Droid writes when a turn ends,
// {"type": "agent_turn_outcome", turnId, reason, resultKind}. A turn that
// went well (resultKind "success"; without a resultKind, reason
// "completed" or "end_turn") reports nothing: a session log's status is
// the host's session rule. One whose resultKind or reason names an error
// ("provider_error", reason "error") is an error the provider reported,
// which that rule makes the step's status when no answer follows it. Any
// other outcome is counted unmapped by its kind, so that the drift report
// shows it rather than a guess.
func (n *normalizer) outcome(v abi.Value, out *sdk.Out) {
	kind, reason := v.Get("resultKind"), v.Get("reason")
	switch {
	case kind.Is("success"), !kind.Exists() && (reason.Is("completed") || reason.Is("end_turn")):
		out.Ignored(sdk.S("agent_turn_outcome"))
	case strings.Contains(sdk.View(kind), "error") || strings.Contains(sdk.View(reason), "error"):
		msg := "droid turn ended with " + sdk.TypeName(kind)
		if reason.Kind() == abi.KindString {
			msg += " (reason " + sdk.TypeName(reason) + ")"
		}
		out.Error(sdk.ProviderError{Message: sdk.S(msg), Code: sdk.StringOf(kind)})
	default:
		out.Unmapped(sdk.S("agent_turn_outcome/" + sdk.TypeName(kind)))
	}
}

// compaction reads compaction_state, written when Droid compacted the
// conversation: its summaryText is what the model sees of the earlier
// conversation from then on, context it was given (a message.user of
// injected context), with a warning that the earlier messages were
// replaced by it in the model's context (they stay in the transcript).
// One without a summary is declared ignored.
func (n *normalizer) compaction(v abi.Value, no int, out *sdk.Out) {
	s := v.Get("summaryText")
	if s.Kind() != abi.KindString || s.Is("") {
		out.Ignored(sdk.S("compaction_state"))
		return
	}
	key := sdk.S("compaction-l" + strconv.Itoa(no))
	out.Open(key, sdk.Message{User: true, Time: sdk.StringOf(v.Get("timestamp"))})
	out.Block(key, 0, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(s), Origin: sdk.OriginInjected})
	out.Close(key, sdk.MessageEnd{})
	out.Warn("droid compacted the conversation: from here on the model sees a summary in place of the earlier messages (they stay in this transcript)")
}

// notice reads a user message Droid shows the user only ("visibility":
// "user_only"): the CLI's own notice ("Error: Connection error.", "No
// active subscription found."), neither a prompt nor anything the model
// saw. Its text is a warning of the step; one that calls itself an error
// ("Error: ...") is an error the provider reported too.
func (n *normalizer) notice(content abi.Value, out *sdk.Out) {
	var text string
	if content.Kind() == abi.KindString {
		text = content.String()
	}
	it := content.Iter()
	for it.Next() {
		if b := it.Value(); b.Get("type").Is("text") {
			if text != "" {
				text += "\n"
			}
			text += b.Get("text").String()
		}
	}
	text = strings.TrimSpace(text)
	if text == "" {
		out.Ignored(sdk.S("message (user_only)"))
		return
	}
	out.Warn("droid told the user: " + text)
	switch {
	case len(text) >= 6 && strings.EqualFold(text[:6], "error:"):
		out.Error(sdk.ProviderError{Message: sdk.S(text)})
	case n.unanswered:
		n.refusal = text
	}
}

// refused reports the notice held (refusal) as the error that ended
// the turn: after it came no answer of the model but the turn's end,
// the next prompt or the end of the log (Droid's "Token limit
// reached. ...", which it writes in place of the turn it does not
// run).
func (n *normalizer) refused(out *sdk.Out) {
	if n.refusal != "" {
		out.Error(sdk.ProviderError{Message: sdk.S(n.refusal)})
		n.refusal = ""
	}
}

// settings reads the session's settings document: its model and its
// usage, the session's totals so far (set, not added: each version
// holds all the tokens before it).
func (n *normalizer) settings(v abi.Value, out *sdk.Out) {
	out.LatestModel(v.Get("model"), &n.model)
	tu := v.Get("tokenUsage")
	if tu.Kind() != abi.KindObject {
		out.Ignored(sdk.S("settings"))
		return
	}
	raw := string(tu.Raw())
	if raw == n.usage {
		out.Ignored(sdk.S("settings"))
		return
	}
	n.usage = raw
	u := droidUsage(sdk.IntOf(tu.Get("inputTokens")), sdk.IntOf(tu.Get("cacheReadTokens")), sdk.IntOf(tu.Get("cacheCreationTokens")),
		sdk.IntOf(tu.Get("outputTokens")), sdk.IntOf(tu.Get("thinkingTokens")))
	u.Total = sdk.IntOf(tu.Get("totalTokens"))
	out.Usage(u, sdk.ModeSet)
}

// droidUsage is a usage as Droid states it: the uncached input apart
// from the cache read and write, and thinking apart from the output
// (ccusage prices outputTokens + thinkingTokens as output): every output
// token is their sum, the thinking its reasoning part.
func droidUsage(uncached, cacheRead, cacheWrite, output, thinking sdk.Int) sdk.Usage {
	u := sdk.Split(uncached, cacheRead, cacheWrite)
	u.Output = output.Plus(thinking)
	u.Reasoning = thinking
	return u
}

// message handles a message line: a user's (the prompt, tool results)
// or the assistant's (text, thinking, tool calls), Anthropic content
// blocks.
func (n *normalizer) message(v abi.Value, no int, out *sdk.Out) {
	id := sdk.View(v.Get("id"))
	if id != "" {
		if n.seen[id] {
			out.Ignored(sdk.S("message (replayed)"))
			return
		}
		if n.seen == nil {
			n.seen = map[string]bool{}
		}
		n.seen[strings.Clone(id)] = true
	}
	// A new message after a turn's outcome: the next turn runs.
	n.turnRunning = n.turnEnds
	m := v.Get("message")
	ts := sdk.StringOf(v.Get("timestamp"))
	key := sdk.StringOf(v.Get("id"))
	if key.IsEmpty() {
		key = sdk.S("l" + strconv.Itoa(no))
	}
	content := m.Get("content")
	if m.Get("role").Is("assistant") {
		// The model answered: a notice held was one in passing.
		n.refusal, n.unanswered = "", false
		n.assistant(key, content, ts, out)
		return
	}
	if !m.Get("role").Is("user") {
		out.Unmapped(sdk.S("message/" + sdk.TypeName(m.Get("role"))))
		return
	}
	if m.Get("visibility").Is("user_only") || v.Get("visibility").Is("user_only") {
		n.notice(content, out)
		return
	}
	// A message only the model sees ("visibility": "llm_only") is
	// context Droid gave it, not the user's prompt.
	llmOnly := m.Get("visibility").Is("llm_only") || v.Get("visibility").Is("llm_only")
	if !llmOnly && prompts(content) {
		// A new prompt: the turn a notice held ended on it.
		n.refused(out)
		n.unanswered = true
	}
	said := false
	opened := false
	open := func() {
		if !opened {
			out.Open(key, sdk.Message{User: true, ID: sdk.StringOf(v.Get("id")), Time: ts})
			opened = true
		}
	}
	if content.Kind() == abi.KindString && !content.Is("") {
		open()
		out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(content), Origin: userOrigin(content, llmOnly)})
	}
	it := content.Iter()
	for it.Next() {
		b := it.Value()
		switch {
		case b.Get("type").Is("text") && b.Get("text").Kind() == abi.KindString && !b.Get("text").Is(""):
			open()
			out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(b.Get("text")), Origin: userOrigin(b.Get("text"), llmOnly)})
		case b.Get("type").Is("tool_result"):
			n.result(b, ts, out)
			n.refusal, n.unanswered = "", false
			said = true
		}
	}
	if opened {
		out.Close(key, sdk.MessageEnd{})
	} else if !said {
		out.Ignored(sdk.S("message/user"))
	}
}

// prompts reports whether a user message's content holds a prompt: a
// text that is not only Droid's <system-reminder>.
func prompts(content abi.Value) bool {
	if content.Kind() == abi.KindString {
		return !content.Is("") && origin(content) == sdk.OriginPrompt
	}
	it := content.Iter()
	for it.Next() {
		b := it.Value()
		if t := b.Get("text"); b.Get("type").Is("text") && t.Kind() == abi.KindString && !t.Is("") && origin(t) == sdk.OriginPrompt {
			return true
		}
	}
	return false
}

// userOrigin is the origin of a user message's text: injected context
// in a message only the model sees (llmOnly), else as origin says.
func userOrigin(t abi.Value, llmOnly bool) string {
	if llmOnly {
		return sdk.OriginInjected
	}
	return origin(t)
}

// origin is a user text's origin: a text that is only Droid's
// <system-reminder> is context the CLI added, anything else the prompt.
func origin(t abi.Value) string {
	s := strings.TrimSpace(sdk.View(t))
	if strings.HasPrefix(s, "<system-reminder>") && strings.HasSuffix(s, "</system-reminder>") {
		return sdk.OriginInjected
	}
	return sdk.OriginPrompt
}

// assistant reports an assistant message: its blocks in order, each
// tool_use a tool.call; the final answer is its text.
func (n *normalizer) assistant(key sdk.Str, content abi.Value, ts sdk.Str, out *sdk.Out) {
	out.Open(key, sdk.Message{ID: key, Model: sdk.Opt(n.model), Time: ts})
	var text []byte
	it := content.Iter()
	for it.Next() {
		b := it.Value()
		t := b.Get("type")
		switch {
		case t.Is("text"):
			if b.Get("text").Is("") {
				continue
			}
			out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(b.Get("text"))})
			if len(text) > 0 {
				text = append(text, '\n')
			}
			text = sdk.AppendText(text, b.Get("text"))
		case t.Is("thinking"):
			out.Block(key, -1, sdk.Block{Type: sdk.BlockThinking, Thinking: sdk.Text(b.Get("thinking"))})
		case t.Is("redacted_thinking"):
			out.Block(key, -1, sdk.Block{Type: sdk.BlockThinking, Redacted: true})
		case t.Is("tool_use"):
			out.Block(key, -1, sdk.Block{Type: sdk.BlockToolUse, ToolName: sdk.StringOf(b.Get("name")), ToolID: sdk.StringOf(b.Get("id")), ToolInput: input(b.Get("input"))})
		}
	}
	it = content.Iter()
	for it.Next() {
		if b := it.Value(); b.Get("type").Is("tool_use") {
			n.call(b, ts, out)
		}
	}
	if content.Kind() == abi.KindString && !content.Is("") {
		out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(content)})
		text = sdk.AppendText(text, content)
	}
	out.Close(key, sdk.MessageEnd{})
	if len(text) > 0 {
		out.Final(sdk.S(string(text)), true)
	}
}

// call reports a tool_use block's tool.call.
func (n *normalizer) call(b abi.Value, ts sdk.Str, out *sdk.Out) {
	id, name := b.Get("id"), b.Get("name")
	if id.Kind() != abi.KindString || id.Is("") {
		out.Warn("droid tool_use without id (" + sdk.TypeName(name) + "): no tool.call reported")
		return
	}
	if n.calls == nil {
		n.calls = map[string]string{}
	}
	n.calls[id.String()] = name.String()
	// A call id reused after its call's result (ids unique per response,
	// not per session: a local model server names every call call_1) is
	// a new call, as the host reads it: its result is its own, not a
	// second one of the first call.
	delete(n.resulted, sdk.View(id))
	tc := sdk.ToolCall{CallID: sdk.Text(id), Name: sdk.StringOf(name), Input: input(b.Get("input")), Kind: kindOf(sdk.View(name)), Time: ts}
	if tc.Kind == "execute" {
		tc.Command = sdk.StringOf(b.Path("input", "command"))
	}
	out.ToolCall(tc)
}

// result reports a tool_result block: its content (a string, or text
// blocks joined), an error when is_error says so or the output states a
// failed command ("Error: Command failed (exit code: N)", Droid's
// Execute). How Droid words a call the user refused is not known from a
// public file: such a result is an error, never ok.
func (n *normalizer) result(b abi.Value, ts sdk.Str, out *sdk.Out) {
	id := b.Get("tool_use_id")
	if id.Kind() != abi.KindString || id.Is("") {
		out.Warn("droid tool_result without tool_use_id: not reported")
		return
	}
	if n.resulted[sdk.View(id)] {
		return
	}
	if n.resulted == nil {
		n.resulted = map[string]bool{}
	}
	n.resulted[id.String()] = true
	r := sdk.ToolResult{CallID: sdk.Text(id), Name: sdk.Opt(n.calls[sdk.View(id)]), Time: ts}
	var text []byte
	c := b.Get("content")
	switch c.Kind() {
	case abi.KindString:
		r.Output = sdk.Text(c)
		text = sdk.AppendText(nil, c)
	case abi.KindArray:
		it := c.Iter()
		for it.Next() {
			if t := it.Value().Get("text"); t.Kind() == abi.KindString {
				if len(text) > 0 {
					text = append(text, '\n')
				}
				text = sdk.AppendText(text, t)
			}
		}
		r.Output = sdk.S(string(text))
	}
	status := "ok"
	r.ExitCode = sdk.StatedExitCode(text, "Error: Command failed (exit code: ")
	if code, ok := r.ExitCode.Value(); b.Get("is_error").Truthy() || ok && code != 0 {
		status, r.IsError = "error", true
		r.Error = r.Output
		if r.Error.IsEmpty() {
			r.Error = sdk.S("the tool reported an error")
		}
	}
	r.Status = sdk.S(status)
	out.ToolResult(r)
}

// kindOf is the transcript's kind of a Droid tool.
func kindOf(name string) string {
	switch name {
	case "Execute", "Bash", "Shell":
		return "execute"
	case "Read", "LS", "ReadFile":
		return "read"
	case "Create", "Edit", "MultiEdit", "ApplyPatch", "Write":
		return "edit"
	case "Grep", "Glob", "Search":
		return "search"
	case "WebSearch", "FetchUrl", "FetchURL":
		return "fetch"
	case "TodoWrite":
		return "think"
	}
	return "other"
}

// input is a tool input as JSON ("{}" when absent).
func input(args abi.Value) sdk.Str {
	if !args.Exists() || args.Kind() == abi.KindNull {
		return sdk.RawJSON("{}")
	}
	return sdk.JSON(args)
}

// End implements sdk.Normalizer.
func (n *normalizer) End(out *sdk.Out) error {
	n.releaseHeld(abi.Value{}, out)
	if n.refusal != "" {
		// The log ends on Droid's notice after an unanswered prompt:
		// the turn ended there, on its error.
		n.refused(out)
		return nil
	}
	if n.turnRunning {
		// A Droid that ends its turns with agent_turn_outcome, read
		// before the last one's (twasm sync archives sessions Droid
		// still writes): a later read, the turn ended, settles it.
		out.Status(sdk.StatusIncomplete, sdk.S("the turn has not finished: the session's earlier turns end with agent_turn_outcome, the last one has none yet"), sdk.LevelError)
	}
	return nil
}

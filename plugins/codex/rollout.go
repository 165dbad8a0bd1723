package codex

import (
	"strconv"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/internal/wire"
)

// rollout reads one {timestamp,type,payload} record of a session file.
//
// A rollout stores what the model saw and said twice: as response items
// (the model's input and output, authoritative) and as event messages
// (what the UI showed). Texts present in both are reported once, from
// whichever comes first (see normalizer.seen); event messages whose
// response item is missing (trimmed or older files) still count.
// Tool results come from the response items only: the *_end events
// repeat them and a call takes one result.
func (n *normalizer) rollout(out *sdk.Out, root, typ abi.Value) {
	ts := sdk.Text(root.Get("timestamp"))
	p := root.Get("payload")
	if n.forking && n.forked(out, typ, p) {
		return
	}
	switch sdk.Name(typ) {
	case "session_meta":
		m := p
		if inner := p.Get("meta"); inner.Kind() == abi.KindObject {
			m = inner
		}
		if !n.metaSeen {
			// The first session_meta is the rollout's own; a forked
			// sub-agent's copies its parent's history after it.
			n.metaSeen = true
			if id := m.Get("id"); id.Kind() == abi.KindString {
				n.threadID = string(id.Raw())
			}
			n.forking, n.forkOpen = isForkedSubAgent(m), true
			n.usage.inherits = isUserFork(m)
			if n.usage.inherits {
				n.forkedFrom = m.Get("forked_from_id").String()
				n.forkMs = forkTime(m)
			}
		}
		id := m.Get("id")
		if id.Kind() != abi.KindString {
			id = m.Get("session_id")
		}
		if n.copiedHistory(id, out) {
			return
		}
		// cwd is where the session runs; its git member names a commit,
		// branch and remote URL, never the repository's root directory.
		cwd := sdk.StringOf(m.Get("cwd"))
		n.cwdSent = n.cwdSent || cwd.IsSet()
		out.Meta(sdk.Meta{SessionID: sdk.Text(id), ProviderVersion: sdk.Text(m.Get("cli_version")), Cwd: cwd})
		instr := m.Path("base_instructions", "text")
		if !instr.Exists() {
			instr = m.Get("instructions")
		}
		n.systemPrompt(out, instr, ts)
		n.noteAgentPath(m)
	case "turn_context":
		// Each turn states its working directory: the first is where
		// the session runs, for a rollout whose session_meta is cut.
		cwd := false
		if c := sdk.StringOf(p.Get("cwd")); !n.cwdSent && c.IsSet() {
			out.Meta(sdk.Meta{Cwd: c})
			n.cwdSent, cwd = true, true
		}
		// Each turn states its model; the step's model is the latest
		// (the one a /model switch chose), as for Copilot's
		// model_change. Messages keep the model of their turn.
		model := p.Get("model")
		if raw := model.Raw(); model.Kind() == abi.KindString && (len(raw) != len(n.modelRaw) || !sdk.HasPrefix(raw, n.modelRaw)) {
			out.Meta(sdk.Meta{Model: sdk.Text(model), Override: n.modelRaw != ""})
			n.modelRaw = string(model.Raw())
			n.model = sdk.Text(model).Keep()
		} else if !cwd {
			out.Ignored(sdk.S("turn_context"))
		}
	case "response_item":
		n.turnContent = true
		n.responseItem(out, p, ts)
	case "event_msg":
		n.eventMsg(out, p, ts)
	case "compacted":
		n.turnContent = true
		// The summary a compaction wrote: what the model sees of the
		// earlier conversation from here on, context it was given.
		if v := p.Get("message"); v.Kind() == abi.KindString && len(v.Raw()) > 2 {
			key := n.newKey()
			out.Open(key, sdk.Message{User: true, Time: ts})
			out.Block(key, 0, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(v), Origin: sdk.OriginInjected})
			out.Close(key, sdk.MessageEnd{})
			n.compacted(out, "")
		} else if p.Get("replacement_history").Kind() == abi.KindArray {
			// No summary: the history that replaced the conversation
			// (items the session's earlier lines recorded, and the
			// server's encrypted compaction item) is what the model
			// sees from here on.
			n.compacted(out, "compacted")
		} else {
			out.Ignored(sdk.S("compacted"))
		}
	case "inter_agent_communication":
		// A message between agents as builds before the agent_message
		// response item wrote it (see agentMessage).
		n.turnContent = true
		n.agentMessage(out, p.Get("author"), p.Get("recipient"), p.Get("content"), ts, false, "inter_agent_communication")
	case "inter_agent_communication_metadata":
		// The delivery flag (trigger_turn) of the agent_message beside
		// it: nothing the transcript shows.
		out.Ignored(sdk.S("inter_agent_communication_metadata"))
	case "world_state":
		// The 0.147+ environment snapshot: state for resuming, nothing
		// the transcript shows.
		out.Ignored(sdk.S("world_state"))
	case "token_usage_record":
		// 0.158+: one response's usage (usage), with its turn's and
		// thread's running totals. The step's usage is token_count's
		// running total and, for a response no token_count states (a
		// remote compaction's), the record's usage (counter.record).
		// The running totals are never read: the thread's also holds
		// those responses, and mixing the two counters would count
		// usage twice. A record of another thread (a one-shot
		// delegate's, such as a review's, that the parent forwards:
		// Codex keeps it out of the parent's totals) is not counted:
		// whether the delegate wrote a rollout of its own, which
		// would count it, is not known here.
		if t := p.Get("thread_id"); t.Kind() == abi.KindString && n.threadID != "" && string(t.Raw()) != n.threadID ||
			!n.usage.record(out, p.Get("response_id"), p.Get("usage")) {
			out.Ignored(sdk.S("token_usage_record"))
		}
	default:
		out.Unmapped(sdk.Text(typ))
	}
}

// systemPrompt reports the instructions a session was started with as
// the system-prompt block of a user message.
func (n *normalizer) systemPrompt(out *sdk.Out, v abi.Value, ts sdk.Str) {
	if v.Kind() != abi.KindString || len(v.Raw()) <= 2 {
		return
	}
	key := n.newKey()
	out.Open(key, sdk.Message{User: true, Time: ts})
	out.Block(key, 0, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(v), Origin: sdk.OriginSystemPrompt})
	out.Close(key, sdk.MessageEnd{})
}

// isResponseItemType reports whether t is a response item type, for the
// earliest rollouts that wrote items without an envelope.
func isResponseItemType(t abi.Value) bool {
	switch sdk.Name(t) {
	case "message", "reasoning", "function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output", "local_shell_call", "web_search_call":
		return true
	}
	return false
}

// injectedPrefixes start the user-role texts that Codex injects (the
// environment, AGENTS.md, permissions, notices): context, not the
// user's prompt.
var injectedPrefixes = [...]string{
	"<environment_context>", "<user_instructions>", "<INSTRUCTIONS>", "# AGENTS.md instructions",
	"<permissions instructions>", "<collaboration_mode>", "<turn_aborted>", "<user_shell_command>",
	"<skill>", "<subagent_notification>", "<user_action>",
}

func isInjected(v abi.Value) bool {
	raw := v.Raw()
	if v.Kind() != abi.KindString || len(raw) < 2 {
		return false
	}
	raw = raw[1 : len(raw)-1]
	// Skip leading white space, raw or escaped.
	for len(raw) > 0 {
		if raw[0] == ' ' || raw[0] == '\t' || raw[0] == '\n' || raw[0] == '\r' {
			raw = raw[1:]
		} else if len(raw) > 1 && raw[0] == '\\' && (raw[1] == 'n' || raw[1] == 't' || raw[1] == 'r') {
			raw = raw[2:]
		} else {
			break
		}
	}
	for _, p := range injectedPrefixes {
		if sdk.HasPrefix(raw, p) {
			return true
		}
	}
	return false
}

// lazyMsg opens its message on the first block, so that a message whose
// blocks were all reported already is not written empty.
type lazyMsg struct {
	key  sdk.Str
	m    sdk.Message
	open bool
}

func (l *lazyMsg) block(n *normalizer, out *sdk.Out, b sdk.Block) {
	if !l.open {
		l.key, l.open = n.newKey(), true
		out.Open(l.key, l.m)
	}
	out.Block(l.key, -1, b)
}

// close ends the message; a line none of whose texts was new (each
// repeats an event message reported first) is declared ignored as
// native.
func (l *lazyMsg) close(out *sdk.Out, native string) {
	if l.open {
		out.Close(l.key, sdk.MessageEnd{})
	} else {
		out.Ignored(sdk.S(native))
	}
}

func (n *normalizer) responseItem(out *sdk.Out, p abi.Value, ts sdk.Str) {
	t := p.Get("type")
	name := sdk.Name(t)
	switch name {
	case "function_call", "custom_tool_call", "local_shell_call", "web_search_call", "tool_search_call",
		"function_call_output", "custom_tool_call_output", "tool_search_output":
		// A call the model made, or its result: the turn goes on until
		// the model answers (see rolloutComplete).
		n.awaitAnswer = true
	}
	switch name {
	case "message":
		n.messageItem(out, p, ts)
	case "agent_message":
		// A message between agents (multi-agent v2): a sub-agent's
		// task, a child's notice, a peer's message (see agentMessage).
		n.agentMessage(out, p.Get("author"), p.Get("recipient"), p.Get("content"), ts, true, "response_item/agent_message")
	case "reasoning":
		n.reasoningItem(out, p, ts)
	case "function_call":
		name, args := p.Get("name"), p.Get("arguments")
		kind := toolKind(sdk.View(name))
		var command sdk.Str
		if kind == "execute" {
			command = n.commandFromArgs(args)
		}
		n.rolloutCall(out, p, ts, sdk.Text(name), kind, sdk.JSON(args), command)
	case "custom_tool_call":
		// Freeform tools (apply_patch): the input is text, kept as a
		// string unless it happens to be JSON.
		name, input := p.Get("name"), p.Get("input")
		kind := toolKind(sdk.View(name))
		var command sdk.Str
		if kind == "execute" {
			command = sdk.Text(input)
		}
		n.rolloutCall(out, p, ts, sdk.Text(name), kind, sdk.JSON(input), command)
	case "local_shell_call":
		action := p.Get("action")
		n.rolloutCall(out, p, ts, sdk.S("local_shell"), "execute", sdk.JSON(action), shellJoin(action.Get("command")))
	case "web_search_call":
		callID := n.rolloutCall(out, p, ts, sdk.S("web_search"), "fetch", sdk.JSON(p.Get("action")), sdk.Str{})
		if st := nativeStatus(p.Get("status")); st != "" {
			// The item states no results: no output (the query is the
			// call's input, not what the search returned).
			r := sdk.ToolResult{CallID: callID, Time: ts}
			settle(&r, outcome{status: st}, sdk.Str{}, nil)
			out.ToolResult(r)
		}
	case "image_generation_call":
		// An image the model generated with the Responses API's
		// built-in tool (ImageGenerationCall: status, revised_prompt,
		// result, the image as base64): a call named image_generation,
		// its input the prompt the tool used, its output the image. It
		// is the model's output, as a message is.
		callID := n.rolloutCall(out, p, ts, sdk.S("image_generation"), "other", object(member{"revised_prompt", p.Get("revised_prompt")}), sdk.Str{})
		if st := nativeStatus(p.Get("status")); st != "" {
			r := sdk.ToolResult{CallID: callID, Time: ts}
			if st == toolOK {
				n.awaitAnswer = false
				r.Output = sdk.StringOf(p.Get("result"))
			}
			settle(&r, outcome{status: st}, r.Output, nil)
			out.ToolResult(r)
		}
	case "tool_search_call":
		// A search of the tools the session defers (ToolSearchCall):
		// a tool call, answered by the tool_search_output of its
		// call_id. A server-executed search may name none: its output
		// then answers the last search.
		n.searchCall = n.rolloutCall(out, p, ts, sdk.S("tool_search"), "search", sdk.JSON(p.Get("arguments")), sdk.Str{}).Keep()
	case "tool_search_output":
		r := sdk.ToolResult{CallID: sdk.Text(p.Get("call_id")), Time: ts, Output: sdk.JSON(p.Get("tools"))}
		if r.CallID.IsEmpty() {
			r.CallID = n.searchCall
		}
		if r.CallID.IsEmpty() {
			out.Unmapped(sdk.S("response_item/tool_search_output"))
			return
		}
		settle(&r, outcome{status: nativeStatus(p.Get("status"))}, sdk.Str{}, nil)
		out.ToolResult(r)
	case "compaction", "compaction_summary", "context_compaction":
		// A compaction the server ran (Compaction, ContextCompaction):
		// from here on the model sees its encrypted content in place of
		// the conversation before it. Nothing readable to inject.
		n.compacted(out, "response_item/"+name)
	case "ghost_snapshot":
		// An undo snapshot (a git commit id): nothing the model said or
		// did.
		out.Ignored(sdk.S("response_item/ghost_snapshot"))
	case "additional_tools":
		// The definitions of tools added to the session's request
		// (AdditionalTools): what the model may call, not a call.
		out.Ignored(sdk.S("response_item/additional_tools"))
	case "function_call_output", "custom_tool_call_output":
		r := n.toolOutput(p, ts)
		out.ToolResult(r)
	default:
		out.Unmapped(sdk.S("response_item/" + t.String()))
	}
}

// rolloutCall reports a model-authored tool call: a tool_use block in
// its own assistant message, and the tool call. It returns the call id.
func (n *normalizer) rolloutCall(out *sdk.Out, p abi.Value, ts, name sdk.Str, kind string, input, command sdk.Str) sdk.Str {
	callID := sdk.Text(p.Get("call_id"))
	if callID.IsEmpty() {
		callID = sdk.Text(p.Get("id"))
	}
	if callID.IsEmpty() {
		callID = sdk.S("call_" + itoa(int64(n.nkeys+1)))
	}
	toolUse(out, n.newKey(), sdk.Message{ID: sdk.Text(p.Get("id")), Model: n.model, Time: ts},
		sdk.ToolCall{CallID: callID, Name: name, Input: input, Kind: kind, Command: command, Time: ts})
	return callID
}

// commandFromArgs returns the command line of a shell function call:
// "command" as argv (shell) or a string (shell_command), or "cmd"
// (exec_command). The arguments arrive as a JSON string, decoded and
// indexed into buffers reused from call to call: the command returned
// must be written before the next call's (rolloutCall writes it at
// once).
func (n *normalizer) commandFromArgs(args abi.Value) sdk.Str {
	root := args
	if args.Kind() == abi.KindString {
		n.args = sdk.AppendText(n.args[:0], args)
		toks, isJSON := wire.BuildTape(n.argsDoc.Toks[:0], n.args)
		n.argsDoc.Toks, n.argsDoc.Line = toks, n.args
		if !isJSON {
			return sdk.Str{}
		}
		root = n.argsDoc.Root()
	}
	if c := root.Get("command"); c.Kind() == abi.KindArray {
		return shellJoin(c)
	} else if c.Kind() == abi.KindString {
		return sdk.Text(c)
	}
	return sdk.Text(root.Get("cmd"))
}

// toolOutput reads a function_call_output or custom_tool_call_output.
// The output is a string holding either JSON {output, metadata:
// {exit_code}} (2025 builds) or text in one of the forms classify reads
// (later builds, and every failure the runtime reports as text); content
// items are kept as JSON. What an *_end event of the same call said first
// (a declined or failed command, a failed patch) completes what the text
// leaves out.
func (n *normalizer) toolOutput(p abi.Value, ts sdk.Str) sdk.ToolResult {
	callID := sdk.Text(p.Get("call_id"))
	r := sdk.ToolResult{CallID: callID, Time: ts}
	o := p.Get("output")
	var oc outcome
	var text []byte // r.Output's text, when the buffers hold it
	switch o.Kind() {
	case abi.KindString:
		// Unescape into a buffer reused across lines (outputs are the
		// bulk of a rollout), and index it when it holds JSON.
		n.inner = sdk.AppendText(n.inner[:0], o)
		var ok bool
		if t := trimLeft(n.inner); len(t) > 0 && t[0] == '{' {
			if toks, isJSON := wire.BuildTape(n.innerDoc.Toks[:0], n.inner); isJSON {
				n.innerDoc.Toks, n.innerDoc.Line = toks, n.inner
				oc, ok = n.jsonOutput(&r, n.innerDoc.Root())
				if !ok {
					r.Output = sdk.Str{}
				}
			}
		}
		if !r.Output.IsSet() {
			r.Output = sdk.Text(o)
			oc = classify(n.inner)
			text = n.inner
		}
	case abi.KindInvalid, abi.KindNull:
	case abi.KindArray:
		r.Output = sdk.JSON(o)
		oc, n.inner = classifyItems(o, n.inner)
	default:
		r.Output = sdk.JSON(o)
		if o.Get("isError").Truthy() || o.Get("is_error").Truthy() {
			oc = outcome{status: toolError, err: firstText(o.Get("content")).String()}
		}
	}
	if s, ok := p.Get("success").Bool(); ok && !s && oc.status == "" {
		oc.status = toolError
	}
	if len(n.ends) > 0 {
		// Looked up by a view of the id (callID.String() would copy it).
		k := sdk.View(p.Get("call_id"))
		if e, ok := n.ends[k]; ok {
			delete(n.ends, k)
			oc = e.refine(oc)
		}
	}
	settle(&r, oc, r.Output, text)
	return r
}

// jsonOutput reads an output that is a JSON document: the structured
// exec output {output, metadata:{exit_code}}, or an MCP result
// {content, isError}. ok is false for any other JSON, which is then
// kept whole as text.
func (n *normalizer) jsonOutput(r *sdk.ToolResult, root abi.Value) (outcome, bool) {
	if inner := root.Get("output"); inner.Kind() == abi.KindString {
		r.Output = sdk.Text(inner)
		r.ExitCode = sdk.IntOf(root.Path("metadata", "exit_code"))
		n.scratch = sdk.AppendText(n.scratch[:0], inner)
		if l := firstLineOf(trimLeft(n.scratch)); sdk.HasPrefix(l, "command timed out after") {
			return outcome{status: toolCancelled, err: clip(l)}, true
		}
		return outcome{}, true
	}
	if c := root.Get("content"); c.Kind() == abi.KindArray {
		r.Output = sdk.JSON(c)
		if root.Get("isError").Truthy() || root.Get("is_error").Truthy() {
			return outcome{status: toolError, err: firstText(c).String()}, true
		}
		return outcome{}, true
	}
	if e := root.Get("Err"); e.Exists() {
		r.Output = sdk.Text(e)
		return outcome{status: toolError, err: sdk.Text(e).String()}, true
	}
	return outcome{}, false
}

// endInfo is what an exec_command_end, patch_apply_end or
// mcp_tool_call_end event says about a call whose output item has not
// been read yet.
type endInfo struct {
	status string
	code   sdk.Int
	err    string
}

// refine completes the outcome read from an output with the end event's:
// a refusal or failure the event states wins over an output that says
// nothing (or only that the command ran), and its exit code fills a gap.
func (e endInfo) refine(o outcome) outcome {
	if _, ok := o.code.Value(); !ok {
		o.code = e.code
	}
	switch {
	case e.status == toolDenied && o.status != toolCancelled:
		o.status = toolDenied
	case e.status != "" && e.status != toolOK && (o.status == "" || o.status == toolOK):
		o.status = e.status
	}
	if o.status != "" && o.status != toolOK && o.err == "" {
		o.err = e.err
	}
	return o
}

// guardian keeps what an auto-reviewer (guardian) assessment decided
// about the call it reviewed (target_item_id, the call's id), for its
// output item: a denial means the call did not run (Codex's tool
// orchestrator rejects it with the reviewer's rationale) and is denied;
// a review that timed out or was aborted left it unrun, cancelled. An
// assessment in progress or approved says nothing about the outcome.
func (n *normalizer) guardian(p abi.Value) {
	id := p.Get("target_item_id")
	if id.Kind() != abi.KindString {
		return
	}
	var e endInfo
	switch st := p.Get("status"); {
	case st.Is("denied"):
		e = endInfo{status: toolDenied, err: "auto-reviewer denied the call"}
		if r := sdk.StringOf(p.Get("rationale")).String(); r != "" {
			e.err += ": " + clip([]byte(r))
		}
	case st.Is("timed_out"):
		e = endInfo{status: toolCancelled, err: "auto-review timed out; the call did not run"}
	case st.Is("aborted"):
		e = endInfo{status: toolCancelled, err: "auto-review aborted; the call did not run"}
	default:
		return
	}
	n.keepEnd(id, e)
}

// keepEnd keeps e as what is known of the end of call id, for its
// output item (guardian, noteEnd).
func (n *normalizer) keepEnd(id abi.Value, e endInfo) {
	if n.ends == nil {
		n.ends = map[string]endInfo{}
	}
	n.ends[id.String()] = e
}

// noteEnd keeps what an *_end event says about a call, for its output
// item (rollouts write the event first).
func (n *normalizer) noteEnd(p abi.Value) {
	id := p.Get("call_id")
	if id.Kind() != abi.KindString {
		return
	}
	var e endInfo
	switch sdk.Name(p.Get("type")) {
	case "exec_command_end":
		e.code = sdk.IntOf(p.Get("exit_code"))
		e.status = nativeStatus(p.Get("status"))
		if e.status == "" {
			if c, ok := e.code.Value(); ok && c != 0 {
				e.status = toolError
			}
		}
		n.scratch = sdk.AppendText(n.scratch[:0], p.Get("stderr")) // StringOf's text: a string's only
		e.err = firstLine(n.scratch, "")
	case "patch_apply_end":
		e.status = nativeStatus(p.Get("status"))
		if s, ok := p.Get("success").Bool(); ok && e.status == "" {
			e.status = toolOK
			if !s {
				e.status = toolError
			}
		}
		e.err = clip([]byte(sdk.StringOf(p.Get("stderr")).String()))
	case "dynamic_tool_call_response":
		// A tool the client registered (the app server's dynamic
		// tools), answered by the client: success false is a failed
		// call, whose function_call_output holds only the content
		// items (the rollout does not keep its success flag).
		if s, ok := p.Get("success").Bool(); ok {
			e.status = toolOK
			if !s {
				e.status, e.err = toolError, sdk.StringOf(p.Get("error")).String()
				if e.err == "" {
					e.err = firstText(p.Get("content_items")).String()
				}
			}
		}
	case "collab_agent_spawn_end":
		// spawn_agent's end (CollabAgentSpawnEndEvent): new_thread_id
		// is the sub-agent's thread, null when none was spawned (the
		// output then says why). The child run of a spawned one is its
		// own rollout, linked at this call by the output's agent_id
		// (subAgentOf), not by this event; its status here is the
		// sub-agent's, not the call's.
		if id := p.Get("new_thread_id"); id.Kind() != abi.KindString || id.Is("") {
			e.status, e.err = toolError, "no sub-agent was spawned"
		} else {
			e.status = toolOK
		}
	case "collab_agent_interaction_end", "collab_close_end", "collab_resume_end":
		// send_input's, close_agent's and resume_agent's ends: the
		// receiver's status as the sender saw it. A receiver that
		// does not exist fails the call (the output says so too);
		// any other status is the sub-agent's own outcome, which its
		// own rollout records, not the call's.
		if collabStatus(p.Get("status")) == "not_found" {
			e.status, e.err = toolError, "sub-agent "+sdk.StringOf(p.Get("receiver_thread_id")).String()+" not found"
		}
	case "collab_waiting_end":
		// wait's end: the statuses of the sub-agents it waited for,
		// their outcomes (each in its own rollout), which the output
		// repeats; the wait itself does not fail by them.
	case "mcp_tool_call_end":
		res := p.Get("result")
		if ok := res.Get("Ok"); ok.Exists() {
			e.status = toolOK
			if ok.Get("isError").Truthy() || ok.Get("is_error").Truthy() {
				e.status, e.err = toolError, firstText(ok.Get("content")).String()
			}
		} else if er := res.Get("Err"); er.Exists() {
			e.status, e.err = toolError, sdk.Text(er).String()
		}
	}
	if e.status == "" {
		return
	}
	n.keepEnd(id, e)
}

// reroute handles a model_reroute event (openai/codex protocol.rs
// ModelRerouteEvent {from_model, to_model, reason}: the server answered
// with another model than the one requested, by its OpenAI-Model header,
// reason high_risk_cyber_activity): the turn's answers from here on are
// to_model's, the model of the messages after it and the step's (the
// latest; a later turn_context states the model requested again), and
// a warning says so.
func (n *normalizer) reroute(out *sdk.Out, p abi.Value) {
	to := p.Get("to_model")
	out.Warn("codex: the server rerouted the model from " + sdk.StringOf(p.Get("from_model")).String() + " to " + sdk.StringOf(to).String() +
		" (" + sdk.StringOf(p.Get("reason")).String() + "): the answers after it are that model's")
	if to.Kind() != abi.KindString || to.Is("") {
		return
	}
	out.Meta(sdk.Meta{Model: sdk.Text(to), Override: true})
	n.modelRaw = string(to.Raw())
	n.model = sdk.Text(to).Keep()
}

// collabStatus is the name of a sub-agent's status as Codex's protocol
// serializes AgentStatus: a string ("pending_init", "running",
// "shutdown", "not_found", "interrupted") or an object of one member
// ({"completed": message|null}, {"errored": message}).
func collabStatus(v abi.Value) string {
	if v.Kind() == abi.KindObject {
		it := v.Iter()
		if it.Next() {
			return sdk.View(it.Key())
		}
		return ""
	}
	return sdk.Name(v)
}

func (n *normalizer) messageItem(out *sdk.Out, p abi.Value, ts sdk.Str) {
	role := p.Get("role")
	l := lazyMsg{m: sdk.Message{ID: sdk.Text(p.Get("id")), Time: ts}}
	switch sdk.Name(role) {
	case "assistant":
		if comm, ok := n.communicationJSON(p); ok {
			// A message from another agent that Codex gave the model
			// as an assistant-role message holding its JSON: input,
			// not the model's answer.
			n.agentMessage(out, comm.Get("author"), comm.Get("recipient"), comm.Get("content"), ts, true, "response_item/message")
			return
		}
		n.awaitAnswer = false
		if n.reviewEchoed(p) {
			// The findings an exited_review_mode reported, as Codex
			// rendered them for the conversation.
			out.Ignored(sdk.S("response_item/message"))
			return
		}
		l.m.Model = n.model
		var last abi.Value
		it := p.Get("content").Iter()
		for it.Next() {
			text := it.Value().Get("text")
			if text.Kind() != abi.KindString || n.seen(nsAssistant, text, true) {
				continue
			}
			l.block(n, out, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(text)})
			last = text
		}
		l.close(out, "response_item/message")
		if last.Exists() {
			n.noteText(out, last)
		}
	case "user":
		l.m.User = true
		it := p.Get("content").Iter()
		for it.Next() {
			text := it.Value().Get("text")
			if text.Kind() != abi.KindString {
				// An image the user attached: input the model is
				// asked to answer.
				n.awaitAnswer = true
				continue
			}
			origin := sdk.OriginPrompt
			if isInjected(text) {
				origin = sdk.OriginInjected
			} else if n.awaitAnswer = true; n.seen(nsUser, text, true) {
				continue
			}
			l.block(n, out, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(text), Origin: origin})
		}
		l.close(out, "response_item/message")
	default:
		// developer and system messages: instructions, not the user.
		l.m.User = true
		it := p.Get("content").Iter()
		for it.Next() {
			if text := it.Value().Get("text"); text.Kind() == abi.KindString {
				l.block(n, out, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(text), Origin: sdk.OriginSystemPrompt})
			}
		}
		l.close(out, "response_item/message")
	}
}

// reasoningItem reports a reasoning item: its summaries, else its raw
// content, as thinking; when only encrypted content is left, a redacted
// thinking block says that reasoning happened.
func (n *normalizer) reasoningItem(out *sdk.Out, p abi.Value, ts sdk.Str) {
	l := lazyMsg{m: sdk.Message{ID: sdk.Text(p.Get("id")), Model: n.model, Time: ts}}
	found := false
	it := p.Get("summary").Iter()
	for it.Next() {
		text := it.Value().Get("text")
		if text.Kind() != abi.KindString {
			continue
		}
		found = true
		if !n.seen(nsReasoning, text, true) {
			l.block(n, out, sdk.Block{Type: sdk.BlockThinking, Thinking: sdk.Text(text)})
		}
	}
	if !found {
		it := p.Get("content").Iter()
		for it.Next() {
			text := it.Value().Get("text")
			if text.Kind() != abi.KindString {
				continue
			}
			found = true
			if !n.seen(nsRaw, text, true) {
				l.block(n, out, sdk.Block{Type: sdk.BlockThinking, Thinking: sdk.Text(text)})
			}
		}
	}
	if !found {
		if enc := p.Get("encrypted_content"); enc.Kind() == abi.KindString && len(enc.Raw()) > 2 {
			l.block(n, out, sdk.Block{Type: sdk.BlockThinking, Redacted: true})
		}
	}
	l.close(out, "response_item/reasoning")
}

func (n *normalizer) eventMsg(out *sdk.Out, p abi.Value, ts sdk.Str) {
	t := p.Get("type")
	switch sdk.Name(t) {
	case "task_started", "task_complete", "turn_aborted", "token_count", "thread_goal_updated", "thread_settings_applied",
		"thread_name_updated", "hook_completed", "hook_started", "model_verification", "model_reroute":
		// Markers and state: not what a turn recorded (a hook's run
		// is the user's own program, not the turn's input).
	default:
		n.turnContent = true
	}
	switch sdk.Name(t) {
	case "token_count":
		// info is null on the first count of a session (rate limits
		// only). total_token_usage is the process's running total,
		// last_token_usage the latest response's.
		// A count that repeats the last total says nothing new.
		if info := p.Get("info"); info.Kind() != abi.KindObject || !n.usage.total(out, info.Get("total_token_usage"), info.Get("last_token_usage")) {
			out.Ignored(sdk.S("event_msg/token_count"))
		}
	case "agent_message":
		v := p.Get("message")
		n.awaitAnswer = false
		if v.Kind() == abi.KindString && !n.seen(nsAssistant, v, false) {
			n.textMessage(out, n.newKey(), sdk.Message{Model: n.model, Time: ts}, sdk.BlockText, sdk.Text(v))
			n.noteText(out, v)
		} else {
			out.Ignored(sdk.S("event_msg/agent_message"))
		}
	case "user_message":
		v := p.Get("message")
		if v.Kind() != abi.KindString {
			out.Ignored(sdk.S("event_msg/user_message"))
			return
		}
		origin := sdk.OriginPrompt
		if isInjected(v) {
			origin = sdk.OriginInjected
		} else if n.awaitAnswer = true; n.seen(nsUser, v, false) {
			out.Ignored(sdk.S("event_msg/user_message"))
			return
		}
		key := n.newKey()
		out.Open(key, sdk.Message{User: true, Time: ts})
		out.Block(key, 0, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(v), Origin: origin})
		out.Close(key, sdk.MessageEnd{})
	case "agent_reasoning":
		if v := p.Get("text"); v.Kind() == abi.KindString && !n.seen(nsReasoning, v, false) {
			n.textMessage(out, n.newKey(), sdk.Message{Model: n.model, Time: ts}, sdk.BlockThinking, sdk.Text(v))
		} else {
			out.Ignored(sdk.S("event_msg/agent_reasoning"))
		}
	case "agent_reasoning_raw_content":
		if v := p.Get("text"); v.Kind() == abi.KindString && !n.seen(nsRaw, v, false) {
			n.textMessage(out, n.newKey(), sdk.Message{Model: n.model, Time: ts}, sdk.BlockThinking, sdk.Text(v))
		} else {
			out.Ignored(sdk.S("event_msg/agent_reasoning_raw_content"))
		}
	case "task_started":
		n.turnEvents = true
		n.startTurn(out)
	case "task_complete":
		n.turnEvents = true
		n.usage.flush(out)
		last := p.Get("last_agent_message")
		n.finalText(out, last, sdk.Message{Model: n.model, Time: ts})
		n.completionError(p.Get("error"))
		n.rolloutComplete(out, last)
	case "turn_aborted":
		n.turnEvents = true
		n.usage.flush(out)
		n.finish(out, sdk.StatusIncomplete, abortText(p))
	case "error":
		// The turn ends with this error (retries are stream_error); a
		// later turn that completes makes the step ok again.
		n.failTurn(out, p.Get("message"))
	case "stream_error":
		// Retries: errors the provider reported that do not end the
		// turn.
		reportError(out, p.Get("message"), "stream error")
	case "warning":
		warning(out, p.Get("message"))
	case "background_event":
		// Not persisted by the builds read (rollout/policy.rs): read
		// as the legacy stream's, should one be.
		backgroundEvent(out, p.Get("message"))
	case "deprecation_notice":
		deprecationNotice(out, p)
	case "exec_command_end", "patch_apply_end", "mcp_tool_call_end", "dynamic_tool_call_response",
		"collab_agent_spawn_end", "collab_agent_interaction_end", "collab_waiting_end", "collab_close_end", "collab_resume_end":
		// UI echoes of results that a response item repeats (a call
		// takes one result); what they say about the outcome is kept
		// for that item, which records it: the event is declared
		// ignored. The multi-agent tools' ends (persisted with
		// extended history, early 2026) are such echoes too: see
		// noteEnd.
		n.noteEnd(p)
		out.Ignored(sdk.S("event_msg/" + t.String()))
	case "guardian_assessment":
		n.guardian(p)
		out.Ignored(sdk.S("event_msg/guardian_assessment"))
	case "item_completed", "item_started":
		// 0.147+ mirrors of the response items (AgentMessage,
		// Reasoning, UserMessage, Plan: the plan is also the assistant
		// message's <proposed_plan>). An error item is an error the
		// provider reported. A completed ExitedReviewMode item is the
		// end of a review, as the exited_review_mode event is (builds
		// that record turn items write it in its place); an
		// EnteredReviewMode item is a marker.
		item := p.Get("item")
		switch it := sdk.Name(item.Get("type")); {
		case it == "Error" || it == "error":
			reportError(out, item.Get("message"), "error")
		case it == "ExitedReviewMode" && t.Is("item_completed"):
			n.exitedReview(out, item.Get("review_output"), ts, "event_msg/item_completed")
		default:
			out.Ignored(sdk.S("event_msg/" + t.String()))
		}
	case "exec_command_begin", "exec_command_output_delta", "patch_apply_begin", "mcp_tool_call_begin", "web_search_begin", "web_search_end",
		"image_generation_begin", "image_generation_end", "agent_reasoning_section_break", "context_compacted",
		"dynamic_tool_call_request", "view_image_tool_call":
		// UI echoes of calls whose request and result are response
		// items (a dynamic tool's request repeats its function_call,
		// view_image_tool_call names the path of a view_image call; the
		// multi-agent v1 collab_*_end events are read above, noteEnd).
		out.Ignored(sdk.S("event_msg/" + t.String()))
	case "undo_completed":
		// /undo (builds of late 2025 to early 2026 persisted its end;
		// it runs as a turn of its own, which asks the model nothing
		// and is ok): the working tree was restored from the ghost snapshot taken
		// before a turn, so the files no longer hold what the turn's
		// edits in this transcript made; a failed undo left them.
		msg := ""
		if m := p.Get("message"); m.Kind() == abi.KindString {
			msg = ": " + sdk.Text(m).String()
		}
		if s, ok := p.Get("success").Bool(); ok && !s {
			out.Warn("codex undo failed, the working tree was not restored" + msg)
		} else {
			out.Warn("codex undo restored the working tree to the snapshot taken before a turn: the edits this transcript shows before it were reverted" + msg)
		}
	case "thread_goal_updated", "entered_review_mode", "thread_settings_applied", "thread_name_updated":
		// The thread's name as a user set it (persisted by builds of
		// early 2026), its goal as /goal set it, the marker that a review
		// began (its findings come with exited_review_mode), and the
		// thread's settings (model, service tier, ...) as they were
		// applied (0.158+: first in a fork that references its
		// parent's history, after a copied one, and when a setting
		// changes; turn_context states each turn's): state, nothing
		// the model said or did.
		out.Ignored(sdk.S("event_msg/" + t.String()))
	case "hook_completed":
		hookCompleted(out, p.Get("run"), "event_msg/hook_completed")
	case "sub_agent_activity":
		// Multi-agent v2's note of what happened to a sub-agent
		// (SubAgentActivityEvent: agent_thread_id, agent_path, kind).
		// Started and interacted repeat the spawn or message call whose
		// request and result are response items; the sub-agent's own
		// work is in its own rollout. An interrupted one is said.
		switch sdk.Name(p.Get("kind")) {
		case "started", "interacted":
			out.Ignored(sdk.S("event_msg/sub_agent_activity"))
		case "interrupted":
			who := "a sub-agent"
			if a := p.Get("agent_path"); a.Kind() == abi.KindString {
				who = "sub-agent " + sdk.Text(a).String()
			}
			out.Warn("codex: " + who + " was interrupted (its work is in its own rollout)")
		default:
			out.Unmapped(sdk.S("event_msg/sub_agent_activity"))
		}
	case "model_reroute":
		n.reroute(out, p)
	case "model_verification", "hook_started":
		// The account's verifications (ModelVerificationEvent) and the
		// start of a hook whose hook_completed is read: state.
		out.Ignored(sdk.S("event_msg/" + t.String()))
	case "exited_review_mode":
		// The review's findings: its result (see exitedReview).
		n.exitedReview(out, p.Get("review_output"), ts, "event_msg/exited_review_mode")
	case "thread_rolled_back":
		// A rollback (Codex's ThreadRolledBackEvent, persisted to the
		// rollout): its last num_turns user turns were removed from
		// the conversation the model sees. They stay in the transcript;
		// a warning says so, as for Gemini's rewind.
		turns := "some"
		if k, ok := p.Get("num_turns").Int(); ok {
			turns = strconv.FormatInt(k, 10)
		}
		out.Warn("codex rolled the thread back by " + turns + " user turn(s): they were removed from the conversation the model sees (they stay in this transcript)")
	default:
		out.Unmapped(sdk.S("event_msg/" + t.String()))
	}
}

// compacted warns, once for the compaction a turn's lines record
// (a compacted record, the compaction item it or a response item
// holds), that the model's context was replaced: the transcript keeps
// the conversation that the model no longer sees as it was.
// native names the line, declared ignored when it repeats a compaction
// already warned of ("" when the line reported something else).
func (n *normalizer) compacted(out *sdk.Out, native string) {
	if n.compactWarned {
		if native != "" {
			out.Ignored(sdk.S(native))
		}
		return
	}
	n.compactWarned = true
	out.Warn("codex compaction: from here on the model sees a summary or an encrypted compaction item in place of the conversation before it; the transcript keeps what it replaced")
}

// noAnswer is the error of a rollout turn that ended without the model's
// answer and without an error event saying why; noInput that of a turn
// that ended before anything of it was recorded.
const (
	noAnswer = "the turn ended without an answer from the model; the rollout does not say why " +
		"(Codex does not write its error events, such as a failed or disconnected request " +
		"or a usage or context limit, to rollouts)"
	noInput = "the turn ended before its input was recorded; the rollout does not say why " +
		"(Codex does not write its error events to rollouts: a compaction that failed before " +
		"the turn, such as on a usage limit, or a hook that stopped the prompt ends a turn so)"
)

// rolloutComplete handles a rollout's task_complete. Codex writes the
// same task_complete after a turn that failed as after one that
// succeeded, and the error event that said why is not written to the
// rollout (Codex's rollout persistence policy, should_persist_event_msg,
// leaves out Error and StreamError): a turn whose model input (a prompt,
// a call, a result) no assistant message answered, and whose
// task_complete states no last_agent_message, ended on an error, since
// an interrupted turn ends with turn_aborted instead. So did a turn that
// recorded nothing at all: run_turn returns before recording the user's
// input when the compaction it runs first fails, or when a hook stops the
// prompt. Both are errors, never ok. A turn that asked the model nothing
// but recorded what it did (a /compact, a user's shell command)
// completes ok as before.
func (n *normalizer) rolloutComplete(out *sdk.Out, last abi.Value) {
	if n.turnErr == "" && (last.Kind() != abi.KindString || len(last.Raw()) <= 2) {
		switch {
		case !n.turnContent:
			n.finish(out, sdk.StatusError, sdk.S(noInput))
			return
		case n.awaitAnswer:
			n.finish(out, sdk.StatusError, sdk.S(noAnswer))
			return
		}
	}
	n.completeTurn(out)
}

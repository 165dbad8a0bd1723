package cline

import (
	"strconv"
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// A task folder whose conversation file is missing (only ui_messages.json,
// as some users keep them) is mapped from the UI's own copy of the
// conversation. The UI's file comes first in the stream, so whether the
// conversation file follows is known only at the end: the UI's
// conversation elements are kept (uiItem, whole, as the line's copy dies
// with it) and written at End when no conversation file was read.

// uiItem is a conversation element of the UI's messages waiting to be
// written: its index in the array and its JSON text.
type uiItem struct {
	idx int
	key int64 // uiKey
	raw string
	// revised: a version of a message an earlier part wrote, changed in
	// place (its ts kept), or of a command whose output grew after:
	// its call and result are written revised (ABI 1.13).
	revised bool
}

// uiKey tells a UI message from another: its ts (else, with none, its
// index as -1-index). A checkpoint restore, or a message deleted or
// edited, cuts the UI's messages back and the task goes on: a later
// message at the index of one cut away is another message.
func uiKey(m abi.Value, idx int) int64 {
	if ts, ok := m.Get("ts").Int(); ok && ts > 0 {
		return ts
	}
	return -1 - int64(idx)
}

// uiName is the suffix of the message key and call id of UI message it:
// its index, and after it, when a message cut away had that index
// before, its ts ("3@1767300000000").
func (n *normalizer) uiName(it uiItem) string {
	name := strconv.Itoa(it.idx)
	if k, ok := n.uiAt[it.idx]; ok && k != it.key {
		name += "@" + strconv.FormatInt(it.key, 10)
	}
	return name
}

// uiWritten notes UI message it as written.
func (n *normalizer) uiWritten(it uiItem) {
	n.uiMapped[it.key] = true
	if _, ok := n.uiAt[it.idx]; !ok {
		if n.uiAt == nil {
			n.uiAt = map[int]int64{}
		}
		n.uiAt[it.idx] = it.key
	}
}

// uiKind is the kind of a UI message: its say, or "ask:" and its ask.
func uiKind(m abi.Value) string {
	if m.Get("type").Is("ask") {
		a := sdk.Name(m.Get("ask"))
		for _, k := range askKinds {
			if len(k) == len("ask:")+len(a) && k[len("ask:"):] == a {
				return k // no concatenation (an allocation in TinyGo)
			}
		}
		return "ask:" + a
	}
	return sdk.Name(m.Get("say"))
}

// askKinds are the kinds of the asks the plugin tells apart (uiKind).
var askKinds = [...]string{"ask:followup", "ask:plan_mode_respond", "ask:act_mode_respond", "ask:tool",
	"ask:command", "ask:command_output", "ask:use_mcp_server", "ask:completion_result", "ask:api_req_failed",
	"ask:mistake_limit_reached", "ask:new_task", "ask:condense", "ask:report_bug", "ask:resume_task",
	"ask:resume_completed_task", "ask:summarize_task"}

// stashConversation keeps the conversation elements of a version of the
// UI's messages (todo: the new or changed ones) to be written; a partial
// one waits for its whole version. Cline keeps a message's ts when it
// changes it in place (ask and say complete a partial message under its
// ts; the command message is marked commandCompleted when the command
// ends; a command the user cancels gets "Command(s) cancelled by user."
// appended to its last command_output): a later version of an element
// not written yet replaces it; one of a call an earlier part wrote (a
// tool, a command, an MCP use) is written again, revised. A command
// whose output changed or grew after an earlier part wrote the command
// is stashed again whole (the command and its outputs, revised), so
// that its result states the whole output.
func (n *normalizer) stashConversation(msgs []abi.Value, todo []int) {
	for _, i := range todo {
		m := msgs[i]
		if m.Kind() != abi.KindObject || m.Get("partial").Truthy() {
			continue
		}
		key, kind := uiKey(m, i), uiKind(m)
		written := n.uiMapped[key]
		switch kind {
		case "task", "user_feedback", "user_feedback_diff", "text", "reasoning", "completion_result",
			"ask:followup", "ask:plan_mode_respond", "ask:act_mode_respond", "command_permission_denied", "mcp_server_response":
			if !written {
				n.stash(uiItem{idx: i, key: key, raw: string(m.Raw())})
			} else if n.uiAt[i] == key {
				n.staleMessage(uiStale{key: key, kind: kind, ts: msTime(m.Get("ts")).String()})
			}
		case "tool", "ask:tool", "use_mcp_server", "ask:use_mcp_server":
			n.stash(uiItem{idx: i, key: key, raw: string(m.Raw()), revised: written})
		case "command", "ask:command", "command_output", "ask:command_output":
			n.stashCommand(msgs, i, key, written)
		case "error":
			// A tool's failure, right after the tool's message: its
			// call's result.
			if !written && i > 0 && toolMessage(uiKind(msgs[i-1])) {
				n.stash(uiItem{idx: i, key: key, raw: string(m.Raw())})
			}
		}
	}
}

// uiStale is a UI message that changed in place after an earlier part
// wrote it: its key (uiKey), kind (uiKind) and time.
type uiStale struct {
	key      int64
	kind, ts string
}

// staleMessage notes a message that changed in place after an earlier
// part wrote it (uiStale), once. Cline changes a message's text in place
// under its ts (say and ask complete a partial message so, and a later
// version of the task's files may hold other text), and the ABI writes a
// new version of a call or result (revised), not of a message: the
// transcript keeps the version it wrote, and a warning says so.
func (n *normalizer) staleMessage(s uiStale) {
	for _, o := range n.uiStale {
		if o.key == s.key {
			return
		}
	}
	n.uiStale = append(n.uiStale, uiStale{key: s.key, kind: strings.Clone(s.kind), ts: strings.Clone(s.ts)})
}

// stashCommand stashes element i of msgs (key), a command or one of its
// outputs. A command an earlier part wrote (its element written, or,
// for an output, the command it follows) is stashed again with all its
// outputs, revised, when it changed in place or its output did or grew.
func (n *normalizer) stashCommand(msgs []abi.Value, i int, key int64, written bool) {
	head := i
	for head >= 0 && isOutput(uiKind(msgs[head])) {
		head--
	}
	if head < 0 || !isCommand(uiKind(msgs[head])) {
		if !written && !isOutput(uiKind(msgs[i])) {
			n.stash(uiItem{idx: i, key: key, raw: string(msgs[i].Raw())})
		}
		return
	}
	headKey := uiKey(msgs[head], head)
	if !n.uiMapped[headKey] {
		// The command is not written yet: it and its outputs are
		// written together.
		if !written {
			n.stash(uiItem{idx: i, key: key, raw: string(msgs[i].Raw())})
		}
		return
	}
	for j := head; j < len(msgs); j++ {
		if j > head && !isOutput(uiKind(msgs[j])) {
			break
		}
		if msgs[j].Get("partial").Truthy() {
			continue
		}
		n.stash(uiItem{idx: j, key: uiKey(msgs[j], j), raw: string(msgs[j].Raw()), revised: true})
	}
}

// isCommand and isOutput tell a command's UI message and its output's
// (uiKind).
func isCommand(kind string) bool { return kind == "command" || kind == "ask:command" }
func isOutput(kind string) bool  { return kind == "command_output" || kind == "ask:command_output" }

// uiSlot is a UI message at its index: a message changed in place keeps
// both (two messages may share a ts).
type uiSlot struct {
	idx int
	key int64
}

// stash keeps UI element it to be written: in the place of an earlier
// version of it not written yet, else after the others.
func (n *normalizer) stash(it uiItem) {
	slot := uiSlot{it.idx, it.key}
	if at, ok := n.uiStashAt[slot]; ok {
		it.revised = it.revised || n.uiStash[at].revised
		n.uiStash[at] = it
		return
	}
	if n.uiStashAt == nil {
		n.uiStashAt = map[uiSlot]int{}
	}
	n.uiStashAt[slot] = len(n.uiStash)
	n.uiStash = append(n.uiStash, it)
}

// uiContinued is a new part of the same task (a facts line after a
// task was read). Sync and renormalize replay the parts archived before,
// their output dropped, then hand the new one; a whole raw capture read
// at once (twasm import of it) holds every part in one stream, and no
// earlier part's end came. So the UI's conversation an earlier part
// held back (a task read from its UI messages alone) is written here:
// dropped with the replay's output, or, read after it, left out by the
// host's filter of what the earlier parts hold (its messages carry
// their ids, ui-<index>, its calls theirs, cline-ui-<index>); kept
// whole in a whole capture's transcript, which otherwise lost every
// part's conversation but the last. The errors an earlier part ended on
// were reported at its end (the part's step) and are not again.
func (n *normalizer) uiContinued(out *sdk.Out) {
	if n.uiOnly() {
		n.uiConversation(out)
	}
	n.uiStale = n.uiStale[:0]
	for _, it := range n.uiStash {
		n.uiWritten(it)
	}
	n.uiStash = n.uiStash[:0]
	clear(n.uiStashAt)
	n.deferred = n.deferred[:0]
}

// uiOnly says whether the task read so far is one of UI messages alone:
// no conversation file, no CLI output.
func (n *normalizer) uiOnly() bool {
	return len(n.api) == 0 && !n.stream && n.agent == nil && n.roo == nil
}

// uiConversation writes the conversation of a task read from its UI
// messages alone, in order: the task and the user's feedback as prompts,
// the model's text, reasoning, questions and completion as its messages,
// its tools, commands and MCP uses as calls (ids cline-ui-<index>). The UI
// states few outcomes: a command's output (the command_output messages
// after it, joined by newlines) is its result, without a status (the UI
// states no exit code); an MCP server's response the result of its use,
// without a status; command_permission_denied a denial. A file tool's
// outcome is not on the screen: its call has no result. Each message's
// id is its key, ui-<index>: the same element is the same message in
// every part that writes it (uiContinued). The calls and results are
// counted across the parts written (uiCalls, uiResults), for End's
// warning.
func (n *normalizer) uiConversation(out *sdk.Out) {
	for _, s := range n.uiStale {
		out.Warn("cline: UI message " + s.kind + " at " + s.ts + " changed in place after an earlier part wrote it: this transcript keeps its earlier version")
	}
	n.uiStale = n.uiStale[:0]
	items := n.uiStash
	n.uiStash = nil
	clear(n.uiStashAt)
	n.uiWriting = true
	defer func() { n.uiWriting = false }()
	var (
		cmdID, cmdTime string
		cmdOut         []string
		cmdOpen        bool
		cmdRevised     bool // the command is written again (uiItem.revised)
		mcpID          string
		mcpRevised     bool
		toolID         string // the call of the tool message just written
		toolAt         int    // its index
	)
	// answered counts a result of call id (revised: a new version of
	// one written before), once per call.
	answered := func(id string) {
		if n.uiAnswered == nil {
			n.uiAnswered = map[string]bool{}
		}
		if !n.uiAnswered[id] {
			n.uiAnswered[id] = true
			n.uiResults++
		}
	}
	// call writes call c of UI message key: a call of its own, or a
	// version of one written before (revised: the call alone, its
	// message is written).
	call := func(key sdk.Str, c sdk.ToolCall, revised bool) {
		if revised {
			c.Revised = true
			out.ToolCall(c)
			return
		}
		callMessage(key, c, out)
		n.uiCalls++
	}
	flushCmd := func() {
		if cmdOpen && len(cmdOut) > 0 {
			output := strings.Join(cmdOut, "\n")
			r := sdk.ToolResult{CallID: sdk.S(cmdID), Name: sdk.S("execute_command"), Output: sdk.S(output), Time: sdk.S(cmdTime), Revised: cmdRevised}
			if strings.HasSuffix(strings.TrimSpace(output), uiCmdCancelled) {
				// The user stopped the command (CommandExecutor appends
				// the notice to its last output).
				r.Status, r.Error = sdk.S("cancelled"), sdk.S(uiCmdCancelled)
			}
			out.ToolResult(r)
			answered(cmdID)
			cmdOpen = false
		}
		cmdOut = cmdOut[:0]
	}
	for _, it := range items {
		name := n.uiName(it)
		n.uiWritten(it)
		doc, ok := sdk.Parse([]byte(it.raw))
		if !ok {
			continue
		}
		m := doc.Root()
		kind := uiKind(m)
		ts := msTime(m.Get("ts"))
		text := m.Get("text")
		key := sdk.S("ui-" + name)
		id := "cline-ui-" + name
		if kind != "command_output" && kind != "ask:command_output" && kind != "command_permission_denied" {
			flushCmd()
		}
		if kind == "error" {
			// A tool's failure (stashConversation keeps only those): the
			// result of the call the message before made, else, that
			// message partial and not written, an error of the task.
			msg := orText(errorText(text.String()), "the tool failed")
			if toolID != "" && toolAt == it.idx-1 {
				out.ToolResult(sdk.ToolResult{CallID: sdk.S(toolID), Status: sdk.S("error"), Error: sdk.S(msg), Time: ts})
				answered(toolID)
			} else {
				out.Error(sdk.ProviderError{Message: sdk.S(msg), Code: sdk.S("error")})
			}
			toolID = ""
			continue
		}
		// The say text before the first request is the task, as Roo Code
		// and Cline's first versions show it.
		if n.conversationMessage(kind, kind == "text" && it.idx < n.uiFirst, key, text, ts, out) {
			continue
		}
		switch kind {
		case "completion_result":
			if t := completionText(text.String()); strings.TrimSpace(t) != "" {
				oneBlock(key, sdk.Message{ID: key, Time: ts}, sdk.Block{Type: sdk.BlockText, Text: sdk.S(t)}, out)
			}
		case "tool", "ask:tool":
			if c, ok := uiToolCall(text); ok {
				c.CallID, c.Time = sdk.S(id), ts
				call(key, c, it.revised)
				toolID, toolAt = id, it.idx
			}
		case "command", "ask:command":
			cmd := strings.TrimSuffix(text.String(), "REQ_APP")
			call(key, sdk.ToolCall{CallID: sdk.S(id), Name: sdk.S("execute_command"), Input: sdk.RawJSON(`{"command":` + quoteJSON(cmd) + `}`),
				Kind: "execute", Command: sdk.S(cmd), Time: ts}, it.revised)
			cmdID, cmdOpen, cmdTime, cmdRevised = id, true, ts.String(), it.revised
		case "command_output", "ask:command_output":
			if cmdOpen {
				cmdOut = append(cmdOut, text.String())
				cmdTime = ts.String()
			}
		case "command_permission_denied":
			if cmdOpen {
				out.ToolResult(sdk.ToolResult{CallID: sdk.S(cmdID), Name: sdk.S("execute_command"), Status: sdk.S("denied"),
					Error: sdk.S(orText(text.String(), "the command was denied by Cline's command permissions")), Time: ts})
				answered(cmdID)
				cmdOpen, cmdOut = false, cmdOut[:0]
			}
		case "use_mcp_server", "ask:use_mcp_server":
			if c, ok := uiMCPCall(text); ok {
				c.CallID, c.Time = sdk.S(id), ts
				call(key, c, it.revised)
				mcpID, mcpRevised = id, it.revised
				toolID, toolAt = id, it.idx
			}
		case "mcp_server_response":
			if mcpID != "" {
				out.ToolResult(sdk.ToolResult{CallID: sdk.S(mcpID), Output: sdk.Text(text), Time: ts, Revised: mcpRevised})
				answered(mcpID)
				mcpID = ""
			}
		}
	}
	flushCmd()
}

// uiCmdCancelled is the notice Cline's CommandExecutor appends to the
// last command_output of a command the user cancelled (cline/cline
// 59e5eac3e0, src/integrations/terminal/CommandExecutor.ts
// cancelBackgroundCommand).
const uiCmdCancelled = "Command(s) cancelled by user."

// toolMessage says whether a UI message of kind (uiKind) shows a tool's
// use: a file, search or web tool, or an MCP server's. A say "error"
// right after one is that tool's failure.
func toolMessage(kind string) bool {
	switch kind {
	case "tool", "ask:tool", "use_mcp_server", "ask:use_mcp_server":
		return true
	}
	return false
}

// uiWarn says, at the end of a task read from its UI messages alone, how
// few of its calls' outcomes the UI states.
func (n *normalizer) uiWarn(out *sdk.Out) {
	if n.uiCalls > 0 {
		out.Warn("the task folder holds no api_conversation_history.json: its conversation is the UI's copy, which states " +
			strconv.Itoa(n.uiResults) + " of its " + strconv.Itoa(n.uiCalls) + " tool call(s)' outcome (a command's output without its exit status, an MCP response, a denial); the others have no result")
	}
}

// callMessage writes tool call c as the model's message key (its id).
func callMessage(key sdk.Str, c sdk.ToolCall, out *sdk.Out) {
	out.Open(key, sdk.Message{ID: key, Time: c.Time})
	out.ToolUse(key, -1, c)
	out.Close(key, sdk.MessageEnd{})
}

// questionText is the model's question or plan-mode answer of an ask
// ({question|response, options}), else the text.
func questionText(t string) string {
	if doc, ok := sdk.Parse([]byte(t)); ok {
		r := doc.Root()
		if q := r.Get("question"); q.Kind() == abi.KindString {
			return strings.Clone(q.String())
		}
		if q := r.Get("response"); q.Kind() == abi.KindString {
			return strings.Clone(q.String())
		}
	}
	return t
}

package claude

import (
	"bytes"
	"slices"
	"strconv"
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// call is what is remembered about a tool call across lines: about the
// latest call of its id in its scope (see fresh).
type call struct {
	// scope is the scope the call was made in ("" for the step's own):
	// calls are kept by scope and id (callKey), since a sub-agent's calls
	// may reuse the id of a call of its parent that waits for its result.
	id, scope, name string
	// perm is what a permission request asked of the call (nil: none).
	perm *perm
	// key is the key of the message whose tool_use block reported the
	// call ("" for a call reported from elsewhere: synthesized, a
	// permission request or denial).
	key string
	// task is what a Task/Agent call keeps of the sub-agent it starts
	// (nil for any other call): behind a pointer, so that the ordinary
	// calls kept until their result, however late (spec 6.3), are 12
	// words on a 64-bit host rather than 20.
	task *task
	// windowed counts the entries of n.doneCalls naming this call.
	windowed           int
	reported, resulted bool
}

// task is what a Task or Agent call keeps of its sub-agent.
type task struct {
	// What a sub-agent scope is named after, and the prompt a
	// session-log sidechain is matched with.
	subagent, description, prompt string
	// sub is the scope of the sub-agent the call starts: its id, or,
	// when a sub-agent of another call of that id had a scope already,
	// the id and a number (id#2, id#3, ...; subScopeName).
	sub string
}

// subName is the scope of the sub-agent c starts ("" when c is not a
// Task or Agent call).
func (c *call) subName() string { return c.taskOf().sub }

// taskOf is what c keeps of the sub-agent it starts: none (all "") when
// c is not a Task or Agent call, or no longer is (a reused id).
func (c *call) taskOf() task {
	if c.task == nil {
		return task{}
	}
	return *c.task
}

// keepDone is how many answered tool calls are remembered. A call's
// tool_use that comes back later than that is reported again; the
// assembler, which keeps every call id, drops the repeat.
const keepDone = 1024

// callKey is the key of call id made in scope in n.calls: the id
// itself in the step's own scope, else the scope and the id.
func callKey(scope, id string) string {
	if scope == "" {
		return id
	}
	return scope + "\x00" + id
}

// done notes that call c (nil when unknown) has its result, once what
// the result ends is ended (a sub-agent's scope closed). A Task or Agent
// call whose sub-agent runs on stays: a background agent (async: its
// result says it was launched) or one whose scope is still open, for the
// records still to come to find their scope. Once out of the window, an
// answered Task or Agent call is forgotten with the latest-call entry of
// its id (taskCalls) and its scope id's copy; the scope's name stays
// taken (scopes), so a call reusing the id still gets a scope of its own.
func (n *normalizer) done(c *call, async bool) {
	if c == nil || isTask(c) && (async || n.scopes[c.subName()]) {
		return
	}
	c.windowed++
	if old, ok := n.doneCalls.push(callKey(c.scope, c.id), keepDone); ok {
		if o := n.calls[old]; o != nil {
			// A call that reused the id and waits for its result is
			// kept: its result pushes it into the window again.
			if o.windowed--; o.windowed == 0 && o.resulted {
				delete(n.calls, old)
				if isTask(o) && n.taskCalls[o.id] == o {
					delete(n.taskCalls, o.id)
					delete(n.scopeIDs, o.id)
				}
			}
		}
	}
}

// agentEnded notes that the background sub-agent of scope sc ended (its
// scope closed after its call's result): the answered call that started
// it is done with (done), found by the scope's name (its id, or id#n).
func (n *normalizer) agentEnded(sc string) {
	c := n.taskCalls[sc]
	if c == nil || c.subName() != sc {
		if i := strings.LastIndexByte(sc, '#'); i > 0 {
			c = n.taskCalls[sc[:i]]
		}
	}
	if c != nil && c.subName() == sc && c.resulted && c.windowed == 0 {
		n.done(c, false)
	}
}

// isTask says c starts a sub-agent: a Task or Agent call.
func isTask(c *call) bool { return c.name == "Task" || c.name == "Agent" }

// noteCall records a call of id in scope (once) and returns it.
func (n *normalizer) noteCall(scope, id, name string, input abi.Value) *call {
	k := callKey(scope, id)
	c := n.calls[k]
	if c == nil {
		c = &call{id: id, scope: scope, name: name}
		n.calls[k] = c
		n.noteTask(c, input)
		if len(n.permCalls) > 0 {
			// A call a permission request asked about is in the
			// input, in whichever scope: the request is its.
			n.permCalls = slices.DeleteFunc(n.permCalls, func(p permCall) bool {
				if p.id != id {
					return false
				}
				c.perm = p.perm
				return true
			})
		}
	}
	if c.name == "" {
		c.name = name
	}
	return c
}

// noteTask keeps what a Task or Agent call c names its sub-agent by,
// the scope its sub-agent runs in (a new one when a sub-agent of another
// call of its id ran already), and c among the calls without a result.
func (n *normalizer) noteTask(c *call, input abi.Value) {
	if c.id == "" || c.name != "Task" && c.name != "Agent" {
		return
	}
	if c.task == nil {
		c.task = new(task)
	}
	tk := c.task
	tk.subagent = input.Get("subagent_type").String()
	tk.description = input.Get("description").String()
	tk.prompt = input.Get("prompt").String()
	if t := n.taskCalls[c.id]; t != c || tk.sub == "" {
		tk.sub = n.subScopeName(c.id)
		n.taskCalls[c.id] = c
	}
	for _, t := range n.tasks {
		if t == c {
			return // a background agent's call, reused
		}
	}
	n.tasks = append(n.tasks, c)
}

// subScopeName is the name of a new sub-agent scope started by a call
// of id: id itself, unless a scope of that name was opened already (a
// sub-agent of another call that reused the id), then id#2, id#3, ...
func (n *normalizer) subScopeName(id string) string {
	name := id
	for i := 2; ; i++ {
		if _, used := n.scopes[name]; !used {
			return name
		}
		name = id + "#" + strconv.Itoa(i)
	}
}

// subScope is the scope of the sub-agent the call id started, as a line
// naming id as its parent (parent_tool_use_id, parentToolUseID,
// task_started) means it: that of the latest Task/Agent call of id, else
// id itself (a sub-agent whose call is not in the input).
func (n *normalizer) subScope(id string) string {
	if t := n.taskCalls[id]; t != nil {
		return t.subName()
	}
	return id
}

// fresh says whether the tool_use block of call c (the latest call of
// its id in its scope) in message m is a call to report, and notes it reported. A
// call not reported yet is one. A call id the provider reused is one
// too: ids are unique per response, not per session (a custom model
// server names every call call_1), so a tool_use block in another
// message, after c's result, is a new call, which takes c's place with
// its own name and input (the host reads it so: internal/normalize,
// reused). The same block again (a snapshot after its deltas, a message
// repeated, or one back after its window under its first key), or a
// repeat before c's result, is c.
func (n *normalizer) fresh(c *call, m *message, name string, input abi.Value) bool {
	if c.reported {
		if !c.resulted || c.key == m.key {
			return false
		}
		c.name, c.resulted = name, false
		c.task = nil
		n.noteTask(c, input)
	}
	c.reported, c.key = true, m.key
	return true
}

// toolCall reports the tool.call of the tool_use block in slot s.
func (n *normalizer) toolCall(m *message, s *slot, input, ts abi.Value, out *sdk.Out) {
	c := n.noteCall(m.scope, s.toolID, s.toolName, input)
	if !n.fresh(c, m, s.toolName, input) {
		return
	}
	tc := sdk.ToolCall{
		CallID: sdk.S(s.toolID),
		Name:   sdk.S(s.toolName),
		Input:  sdk.JSON(input),
		Kind:   kindOf(s.toolName),
		Scope:  sdk.Opt(m.scope),
		Time:   sdk.StringOf(ts),
	}
	if !tc.Input.IsSet() {
		tc.Input = emptyObject()
	}
	if tc.Kind == "execute" {
		tc.Command = sdk.StringOf(input.Get("command"))
	}
	out.ToolCall(tc)
}

// kindOf maps a Claude Code tool name to the transcript's tool kind (see
// the package documentation for the reasons).
func kindOf(name string) string {
	for _, t := range &toolKinds {
		if t.name == name {
			return t.kind
		}
	}
	return "other"
}

// toolKinds is kindOf's table (a table, not a switch: see ignoredSystems).
var toolKinds = [...]struct{ name, kind string }{
	{"Bash", "execute"}, {"bash_code_execution", "execute"}, {"code_execution", "execute"}, {"Read", "read"},
	{"NotebookRead", "read"}, {"LS", "read"}, {"Edit", "edit"}, {"Write", "edit"}, {"MultiEdit", "edit"},
	{"NotebookEdit", "edit"}, {"text_editor_code_execution", "edit"}, {"Grep", "search"}, {"Glob", "search"},
	{"ToolSearch", "search"}, {"tool_search_tool_regex", "search"}, {"tool_search_tool_bm25", "search"},
	{"WebFetch", "fetch"}, {"WebSearch", "fetch"}, {"web_search", "fetch"}, {"web_fetch", "fetch"},
	{"TodoWrite", "think"}, {"TaskCreate", "think"}, {"TaskUpdate", "think"}, {"TaskList", "think"},
	{"TaskGet", "think"}, {"EnterPlanMode", "think"}, {"ExitPlanMode", "think"},
}

// The tool result statuses (spec §4), the same words in every plugin.
const (
	toolOK        = "ok"
	toolError     = "error"
	toolDenied    = "denied"
	toolCancelled = "cancelled"
)

// toolResult handles a tool_result item of a user line.
// tur is the line's structured tool_use_result (missing when it cannot
// be attributed to this item); meta the line's tool_result_meta.
func (n *normalizer) toolResult(b, tur, meta abi.Value, scope string, ts abi.Value, out *sdk.Out) {
	id := b.Get("tool_use_id")
	// idS aliases the line: looked up, compared, copied where kept.
	idS := sdk.View(id)
	content := b.Get("content")
	isErr := b.Get("is_error").Truthy()
	r := sdk.ToolResult{CallID: sdk.Text(id), Output: outputOf(content), IsError: isErr, Scope: sdk.Opt(scope), Time: sdk.StringOf(ts)}
	c := n.calls[callKey(scope, idS)]
	hold := c == nil && idS != "" && n.format == fmtSessionLog
	if c == nil && idS != "" && !hold {
		// The call is not in the input (a sub-agent's tool in a stream
		// that does not carry the sub-agent's messages): the result
		// still gets its call (spec §6.12), named after what the result
		// shows.
		c = n.synthesize(strings.Clone(idS), tur, scope, ts, out)
	}
	if c != nil {
		r.Name = sdk.S(c.name)
		c.resulted = true
	}
	r.Status = sdk.S(toolOK)
	raw := content.Raw()
	if isErr {
		r.Status = sdk.S(toolError)
		r.Error = r.Output
		switch {
		case tur.Kind() == abi.KindString && !sdk.Text(tur).IsEmpty():
			// The CLI's own error message ("Error: ...").
			r.Error = sdk.Text(tur)
		case tur.Kind() == abi.KindObject && !sdk.Text(tur.Get("stderr")).IsEmpty():
			r.Error = sdk.Text(tur.Get("stderr"))
		}
		r.ExitCode = exitCodeOf(content)
		switch {
		case deniedText(raw) || tur.Is("User rejected tool use"):
			r.Status = sdk.S(toolDenied)
		case c != nil && c.perm != nil && (c.perm.deny != "" || c.perm.asked):
			// The SDK's permission callback refused the call (its
			// answer is not always in the captured stream).
			r.Status = sdk.S(toolDenied)
			if m := c.perm.deny; m != "" && r.Error.IsEmpty() {
				r.Error = sdk.S(m)
			}
		case sdk.HasPrefix(raw, `"[Request interrupted by user`) || sdk.HasPrefix(raw, `"Interrupted by user`) ||
			sdk.HasPrefix(raw, `"<tool_use_error>Sibling tool call errored`):
			// Stopped by the user, or never run because a parallel
			// call failed first.
			r.Status = sdk.S(toolCancelled)
		}
		r.Error = errorText(r.Error, "the tool reported an error")
	}
	if !isErr && c != nil && c.name == "Bash" {
		// The CLI marks a failed command is_error; should a result not
		// be marked, the exit code its text states still decides.
		if code, ok := exitCodeOf(content).Value(); ok {
			r.ExitCode = sdk.N(code)
			if code != 0 {
				r.IsError, r.Status = true, sdk.S(toolError)
				r.Error = sdk.S("exit code " + strconv.FormatInt(code, 10))
			}
		}
	}
	if c != nil {
		c.perm = nil // a call that reuses the id asks anew
	}
	if tur.Get("interrupted").Truthy() {
		r.Status = sdk.S(toolCancelled)
		r.Error = errorText(r.Error, "interrupted")
	}
	if st, feedback := nonExecution(meta, idS); st != "" {
		// The CLI says why the call never ran: that outranks what its
		// text suggests (a hook's or a callback's own denial text).
		r.Status, r.IsError = sdk.S(st), true
		r.Error = errorText(errorText(r.Error, feedback), st)
	}
	// A synchronous sub-agent ends with its tool's result; a background
	// one has only been launched (it ends with task_notification).
	async := tur.Get("isAsync").Truthy() || tur.Get("status").Is("async_launched")
	if hold {
		// Claude Code can write a result before the assistant record
		// that holds its call (the two are appended apart): the
		// result waits for that record (see heldResult).
		n.held = append(n.held, heldResult{r: keepResult(r), scope: strings.Clone(scope), code: exitCodeOf(content),
			isErr: isErr, async: async, kind: synthKind(tur)})
		out.Ignored(sdk.S(heldNative))
		return
	}
	n.finishResult(c, r, isErr, async, idS, scope, out)
}

// finishResult reports r, the result of call c (nil: none) of id in
// scope, and ends what it ends: the call, and a synchronous sub-agent.
func (n *normalizer) finishResult(c *call, r sdk.ToolResult, isErr, async bool, idS, scope string, out *sdk.Out) {
	out.ToolResult(r)
	// The scope is that of the call the result answers: a result in the
	// sub-agent's own scope is one of its calls', even of the same id.
	sub := ""
	switch {
	case c != nil && c.subName() != "":
		sub = c.subName()
	case len(n.scopes) > 0:
		if s := n.subScope(idS); s != scope {
			sub = s
		}
	}
	if sub != "" && n.scopes[sub] && !async {
		status, e := sdk.StatusOK, sdk.Str{}
		if isErr {
			status, e = sdk.StatusError, errorText(r.Output, "the sub-agent failed")
		}
		// sub may alias the line (subScope's fallback is the id): a
		// map key written from it would too.
		n.closeScope(strings.Clone(sub), status, e, out)
	}
	for i, t := range n.tasks {
		if t == c && !async {
			n.tasks = append(n.tasks[:i], n.tasks[i+1:]...)
			break
		}
	}
	n.done(c, async)
}

// nonExecution reads the entry of a user line's tool_result_meta
// (stream-json 2.1.216+: [{id, non_execution_kind, user_feedback}])
// for call id: the result status its non_execution_kind means, "" when
// there is none or the kind is unknown, and the user's feedback. A call
// a permission rule, a PreToolUse hook or the SDK's permission callback
// refused is "permission-rule", one the user (or no one, in a headless
// run) did not allow "user-rejected": denied; "interrupted" and
// "cancelled" calls were stopped: cancelled.
func nonExecution(meta abi.Value, id string) (string, string) {
	if meta.Kind() != abi.KindArray || id == "" {
		return "", ""
	}
	it := meta.Iter()
	for it.Next() {
		e := it.Value()
		if !e.Get("id").Is(id) {
			continue
		}
		switch k := e.Get("non_execution_kind"); {
		case k.Is("permission-rule"), k.Is("user-rejected"), k.Is("denied"):
			return toolDenied, e.Get("user_feedback").String()
		case k.Is("interrupted"), k.Is("cancelled"):
			return toolCancelled, e.Get("user_feedback").String()
		}
		return "", ""
	}
	return "", ""
}

// errorText is e, or def when e is empty: a result that is not ok
// always says why.
func errorText(e sdk.Str, def string) sdk.Str {
	if e.IsEmpty() {
		return sdk.S(def)
	}
	return e
}

// deniedText reports whether a tool result's content (raw JSON) is the
// CLI's text for a call that a person, a permission rule or a
// PreToolUse hook refused: a hook that blocks a call (exit code 2) stops
// it before it runs, and the CLI answers the model with
// "PreToolUse:<tool> hook error: [<command>]: <the hook's stderr>".
func deniedText(raw []byte) bool {
	return sdk.HasPrefix(raw, `"The user doesn't want to proceed with this tool use`) ||
		sdk.HasPrefix(raw, `"The user doesn't want to take this action`) ||
		sdk.HasPrefix(raw, `"Claude requested permissions to `) ||
		sdk.HasPrefix(raw, `"Permission to use `) ||
		sdk.HasPrefix(raw, `"Permission denied`) ||
		sdk.HasPrefix(raw, `"PreToolUse:`) && bytes.Contains(raw[:min(len(raw), 160)], []byte(" hook error: "))
}

// exitCodeOf reads the exit code a Bash result states ("Exit code 2\n...").
func exitCodeOf(content abi.Value) sdk.Int {
	raw := content.Raw()
	const p = `"Exit code `
	if !sdk.HasPrefix(raw, p) {
		return sdk.Int{}
	}
	var v int64
	i := len(p)
	neg := i < len(raw) && raw[i] == '-'
	if neg {
		i++
	}
	start := i
	for ; i < len(raw) && raw[i] >= '0' && raw[i] <= '9' && i-start < 9; i++ {
		v = v*10 + int64(raw[i]-'0')
	}
	if i == start {
		return sdk.Int{}
	}
	if neg {
		v = -v
	}
	return sdk.N(v)
}

// synthesize reports a tool.call for a result whose call is not in the
// input, named after the tool's kind as far as its result shows it
// ("unknown" when it does not), and says so in a warning.
func (n *normalizer) synthesize(id string, tur abi.Value, scope string, ts abi.Value, out *sdk.Out) *call {
	return n.synthesizeKind(id, synthKind(tur), scope, sdk.StringOf(ts), out)
}

// synthKind is the kind of tool a result's tool_use_result (tur) shows,
// "" when it shows none.
func synthKind(tur abi.Value) string {
	switch {
	case isSet(exitCodeOf(tur)) || sdk.HasPrefix(tur.Raw(), `"Error: Exit code `):
		return "execute"
	case tur.Kind() != abi.KindObject:
	case tur.Get("stdout").Exists() || tur.Get("stderr").Exists() || tur.Get("interrupted").Exists():
		return "execute"
	case tur.Get("filenames").Exists():
		return "search"
	case tur.Get("file").Kind() == abi.KindObject:
		return "read"
	case tur.Get("filePath").Exists() && tur.Get("structuredPatch").Exists():
		return "edit"
	case tur.Get("url").Exists():
		return "fetch"
	}
	return ""
}

// synthesizeKind is synthesize with the kind known (see synthKind).
func (n *normalizer) synthesizeKind(id, kind, scope string, ts sdk.Str, out *sdk.Out) *call {
	name := kind
	if name == "" {
		name, kind = "unknown", "other"
	}
	c := n.noteCall(scope, id, name, abi.Value{})
	c.reported = true
	out.ToolCall(sdk.ToolCall{CallID: sdk.S(id), Name: sdk.S(name), Input: emptyObject(), Kind: kind, Scope: sdk.Opt(scope), Time: ts})
	// name is one of the words above: quoted as strconv.Quote would,
	// without linking it.
	out.Warn("claude: tool result " + id + " has no tool call in the input; a tool.call named \"" + name + "\" was synthesized from the result")
	return c
}

// outputOf is a tool result's content as text: a string as it is, one
// text item as its text, several text items joined with newlines (the one
// case that copies), anything else (images) as its JSON.
func outputOf(v abi.Value) sdk.Str {
	switch v.Kind() {
	case abi.KindString:
		return sdk.Text(v)
	case abi.KindArray:
		n, texts := 0, 0
		var last abi.Value
		it := v.Iter()
		for it.Next() {
			n++
			e := it.Value()
			if e.Get("type").Is("text") && e.Get("text").Kind() == abi.KindString {
				texts++
				last = e.Get("text")
			}
		}
		switch {
		case n == 0:
			return sdk.S("")
		case n == 1 && texts == 1:
			return sdk.Text(last)
		case n == texts:
			var b []byte
			it := v.Iter()
			for it.Next() {
				if len(b) > 0 {
					b = append(b, '\n')
				}
				b = append(b, it.Value().Get("text").String()...)
			}
			return sdk.S(string(b))
		}
		return sdk.JSON(v)
	case abi.KindInvalid, abi.KindNull:
		return sdk.S("")
	}
	return sdk.JSON(v)
}

// scopeOf returns the sub-agent scope a Claude line belongs to ("" for
// the step itself), opening it on first sight.
func (n *normalizer) scopeOf(v abi.Value, out *sdk.Out) string {
	if p := n.get(v, kParentToolUseId); p.Kind() == abi.KindString && !sdk.Text(p).IsEmpty() {
		id := n.scopeID(p)
		scope := n.subScope(id)
		if _, seen := n.scopes[scope]; !seen {
			name, desc := n.get(v, kSubagentType).String(), n.get(v, kTaskDescription).String()
			n.openScope(scope, id, name, desc, "", n.get(v, kTimestamp), out)
		}
		return scope
	}
	if !n.get(v, kIsSidechain).Truthy() {
		return ""
	}
	return n.sidechain(v, out)
}

// scopeID is v.String(), a sub-agent's scope id (its starting call's
// id), copied once per scope: the lines of a sub-agent all name it, and
// a copy per line is an allocation inside WebAssembly.
func (n *normalizer) scopeID(v abi.Value) string {
	if !v.Exists() {
		return ""
	}
	if id, ok := n.scopeIDs[sdk.View(v)]; ok {
		return id
	}
	id := v.String()
	if id != "" {
		n.scopeIDs[id] = id
	}
	return id
}

// sidechain finds the scope of a session-log sidechain record.
func (n *normalizer) sidechain(v abi.Value, out *sdk.Out) string {
	uuid := n.get(v, kUuid).String()
	scope := ""
	if p := n.get(v, kParentUuid); p.Kind() == abi.KindString {
		scope = n.uuidScope[sdk.View(p)].scope
	}
	if scope == "" {
		// The first record of a sidechain is the sub-agent's prompt:
		// match it with a pending Task call.
		var found *call
		if c := v.Path("message", "content"); c.Kind() == abi.KindString {
			prompt := c.String()
			for _, t := range n.tasks {
				if t.taskOf().prompt == prompt && !t.resulted {
					found = t
					break
				}
			}
		}
		if found == nil {
			for i := len(n.tasks) - 1; i >= 0; i-- {
				if !n.tasks[i].resulted {
					found = n.tasks[i]
					break
				}
			}
		}
		switch {
		case found != nil:
			scope = found.subName()
			n.openScope(scope, found.id, "", "", "", n.get(v, kTimestamp), out)
		case n.lastSide != "" && !n.get(v, kParentUuid).Exists():
			scope = n.lastSide
		default:
			scope = "sidechain"
			if a := n.get(v, kAgentId); a.Kind() == abi.KindString {
				scope = "agent-" + a.String()
			}
			n.openScope(scope, "", "", "", "", n.get(v, kTimestamp), out)
		}
	}
	if uuid != "" {
		n.noteUUID(uuid, scope)
	}
	n.lastSide = scope
	return scope
}

// keepUUIDs is how many sidechain record uuids keep their scope: a
// record names the one before it as its parent, and a long session log
// has a uuid on every line.
const keepUUIDs = 1024

// uuidEntry is the scope of a sidechain record.
type uuidEntry struct {
	scope    string
	windowed int // entries of n.uuids naming the record
}

// noteUUID remembers the scope of sidechain record uuid, forgetting the
// records that leave the window.
func (n *normalizer) noteUUID(uuid, scope string) {
	e := n.uuidScope[uuid]
	e.scope = scope
	e.windowed++
	n.uuidScope[uuid] = e
	if old, ok := n.uuids.push(uuid, keepUUIDs); ok {
		if o := n.uuidScope[old]; o.windowed > 1 {
			o.windowed--
			n.uuidScope[old] = o
		} else {
			delete(n.uuidScope, old)
		}
	}
}

// openScope opens a sub-agent scope once, with the prompt the parent
// gave it (prompt, else the prompt input of the call that started it) as
// its first user message (at time ts, when known).
func (n *normalizer) openScope(scope, parent, name, desc, prompt string, ts abi.Value, out *sdk.Out) {
	if _, seen := n.scopes[scope]; seen {
		return
	}
	if c := n.taskCalls[parent]; c != nil && c.subName() == scope {
		t := c.taskOf()
		if name == "" {
			name = t.subagent
		}
		if desc == "" {
			desc = t.description
		}
		if prompt == "" {
			prompt = t.prompt
		}
	}
	n.scopes[scope] = true
	if parent == "" {
		n.orphans = append(n.orphans, scope)
	}
	out.ScopeOpen(sdk.S(scope), sdk.Opt(parent), sdk.Opt(name), sdk.Opt(desc))
	if prompt != "" {
		key := sdk.S(n.newKey('u'))
		out.Open(key, sdk.Message{User: true, Scope: sdk.S(scope), Time: sdk.StringOf(ts)})
		out.Block(key, 0, sdk.Block{Type: sdk.BlockText, Text: sdk.S(prompt), Origin: sdk.OriginPrompt})
		out.Close(key, sdk.MessageEnd{})
		n.scopePrompt[scope] = prompt
	}
}

// repeatsPrompt reports whether a user record's content in scope is the
// sub-agent's prompt already written when the scope opened. Only the
// scope's first user record is compared.
func (n *normalizer) repeatsPrompt(scope string, content abi.Value) bool {
	p, ok := n.scopePrompt[scope]
	if !ok {
		return false
	}
	delete(n.scopePrompt, scope)
	switch content.Kind() {
	case abi.KindString:
		return content.String() == p
	case abi.KindArray:
		if content.Len() == 1 {
			if e := content.Index(0); e.Get("type").Is("text") {
				return e.Get("text").String() == p
			}
		}
	}
	return false
}

// closeScope closes an open scope (its messages first).
func (n *normalizer) closeScope(scope, status string, e sdk.Str, out *sdk.Out) {
	if !n.scopes[scope] {
		return
	}
	n.closeScopeMessages(scope, out)
	n.scopes[scope] = false
	// Its name stays taken (subScopeName); its prompt, waiting for its
	// first user record, and its id's copy (scopeID) are done with.
	delete(n.scopePrompt, scope)
	delete(n.scopeIDs, scope)
	out.ScopeClose(sdk.S(scope), status, e)
}

// emptyObject is the JSON value {}: the input of a call whose input is
// not known (a literal sdk.S("{}") would be the string "{}").
func emptyObject() sdk.Str {
	doc, _ := sdk.Parse([]byte("{}"))
	return sdk.JSON(doc.Root()).Keep()
}

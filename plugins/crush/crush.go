package crush

import (
	"strconv"
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// fmtRows is the format of the host's row lines of crush.db.
const fmtRows = "rows"

// roots are where Crush keeps a project's data directory (.crush, with
// crush.db in it) when it runs outside a project: its global data
// directory (config.GlobalConfigData: $CRUSH_GLOBAL_DATA, else
// $XDG_DATA_HOME/crush, else %LOCALAPPDATA%\crush on Windows and
// ~/.local/share/crush elsewhere).
var roots = []abi.Root{
	{Env: "CRUSH_GLOBAL_DATA"},
	{Env: "XDG_DATA_HOME", Path: "crush"},
	{Env: "LOCALAPPDATA", Path: "crush", OS: "windows"},
	{Path: "~/.local/share/crush"},
}

// projectRoots are the data directories of the projects Crush ran in:
// the data_dir of each entry of projects.json in the same global
// directory (internal/projects: {"projects": [{"path", "data_dir",
// "last_accessed"}]}, data_dir absolute), read by the host (ABI 1.7);
// path is the directory Crush ran in (projects.Register's workingDir),
// which the host hands back in each session's facts line (ABI 1.8).
var projectRoots = listed(roots, &abi.RootList{File: "projects.json", Array: "projects", Field: "data_dir", Project: "path"})

// listed are roots, each the directory holding the list l.
func listed(roots []abi.Root, l *abi.RootList) []abi.Root {
	out := make([]abi.Root, len(roots))
	for i, r := range roots {
		r.List = l
		out[i] = r
	}
	return out
}

// Plugin is the Crush normalizer.
var Plugin = sdk.Plugin{
	Manifest: abi.Manifest{
		Name:        "crush",
		Version:     "0.1.0",
		Providers:   []string{"crush"},
		Formats:     []string{fmtRows},
		Description: "Crush (charmbracelet/crush) sessions from a project's crush.db",
		SourceFacts: true,
		Stores: []abi.Store{{
			Name: "Crush", Kind: abi.StoreKindSQLite,
			Roots: roots, Pattern: ".crush/crush.db",
			SQLite: Queries,
		}, {
			Name: "Crush projects", Kind: abi.StoreKindSQLite,
			Roots: projectRoots, Pattern: "crush.db",
			SQLite: Queries,
		}},
	},
	New:  func(opts abi.BeginOptions) sdk.Normalizer { return &normalizer{names: map[string]string{}} },
	Keys: keys,
}

// Queries are what the host reads of crush.db (internal/db/migrations:
// sessions, and messages with their parts).
//
// Crush writes its times in seconds (strftime('%s', 'now'); the schema's
// comments say milliseconds, and a figure past 10^11 is read as such), and
// rewrites a message in place while it streams (parts, finished_at,
// updated_at). A session's cursor is the latest updated_at of the session
// and its messages times 1000, plus, modulo 1000, the parts' length, the
// message count and the cost in micro-dollars: a message written or
// rewritten within the same second still moves it. A later sync reads
// the messages updated in the cursor's second or after (:since / 1000);
// a message read again replaces itself (the same key). The session row
// comes whole each time, with its children's cost (Crush adds a
// sub-agent's cost to its parent's: children_cost is taken back out).
// Crush adds it only when the sub-agent ran to its end (the agent tool
// before 2025-11, coordinator.runSubAgent since): children_cost sums the
// children whose call (the child's id is the call id, or, since 2025-11,
// <message id>$$<call id>) has a result in the parent's tool messages
// that says so: not an error and not empty (a failed sub-agent's call
// reads "", "no response", "error generating response" or "Failed to
// generate response: ..."), or "Sub-agent completed but produced no text
// output." (written after the cost was added). A failed child's cost, or
// a running one's, was never in its parent's.
// parent is parent_session_id: a sub-agent's session (and the one
// that titles a session) is a child run of its parent's.
var Queries = &abi.SQLiteSource{
	Sessions: `SELECT s.id AS key,
  max(s.updated_at, coalesce((SELECT max(m.updated_at) FROM messages m WHERE m.session_id = s.id), 0)) * 1000
  + (coalesce((SELECT sum(length(m.parts)) FROM messages m WHERE m.session_id = s.id), 0) + s.message_count
     + CAST(s.cost * 1000000 AS INTEGER)) % 1000 AS cursor,
  s.parent_session_id AS parent
FROM sessions s ORDER BY s.created_at, s.id`,
	Tables: []abi.SQLiteTable{
		{Table: "sessions", Key: "id", Version: "version",
			JSON: []string{"todos"},
			Query: `SELECT s.updated_at AS version, s.*,
  coalesce((SELECT sum(c.cost) FROM sessions c WHERE c.parent_session_id = s.id AND EXISTS (
    SELECT 1 FROM messages m, json_each(CASE WHEN json_valid(m.parts) THEN m.parts ELSE '[]' END) p
    WHERE m.session_id = s.id AND m.role = 'tool'
      AND json_extract(p.value, '$.type') = 'tool_result' AND json_extract(p.value, '$.data.tool_call_id') <> ''
      AND (c.id = json_extract(p.value, '$.data.tool_call_id')
        OR substr(c.id, -length(json_extract(p.value, '$.data.tool_call_id')) - 2) = '$$' || json_extract(p.value, '$.data.tool_call_id'))
      AND (coalesce(json_extract(p.value, '$.data.is_error'), 0) IN (0, 'false') AND json_extract(p.value, '$.data.content') <> ''
        OR json_extract(p.value, '$.data.content') = 'Sub-agent completed but produced no text output.'))), 0) AS children_cost
FROM sessions s WHERE s.id = :session`},
		{Table: "messages", Key: "id", Version: "updated_at", Time: "time_ms",
			JSON: []string{"parts"},
			Query: `SELECT CASE WHEN created_at > 100000000000 THEN created_at ELSE created_at * 1000 END AS time_ms, *
FROM messages WHERE session_id = :session AND updated_at >= :since / 1000
ORDER BY created_at, rowid`},
	},
}

type normalizer struct {
	meta  bool
	model string
	// names are the tools' names by call id (a result names its call).
	names map[string]string
	// summary is the session's summary_message_id: the message that
	// holds the summary of what came before ("": none).
	summary string
	// newest is the message first seen last (the rows come in the order
	// of their creation), open whether it is an assistant's message
	// Crush has not finished yet (no finish part, no finished_at), as
	// its latest version read says.
	newest string
	open   bool
	seen   map[string]bool
	// canceled: that message's finish part says the user cancelled it.
	canceled bool
	// The members of a line's object and of its row, each found in one
	// pass over the object (fields.of) rather than one per Get.
	fRoot, fRow fields
}

// fields are the members of an object in the order of keys (missing
// when absent, or when the value is no object).
type fields [nKeys]abi.Value

// of fills f with v's members and returns it.
func (f *fields) of(v abi.Value) *fields {
	v.Lookup(keys, f[:])
	return f
}

// Line implements sdk.Normalizer.
func (n *normalizer) Line(l *sdk.Line, out *sdk.Out) error {
	v := l.JSON()
	if v.Kind() != abi.KindObject {
		if len(sdk.TrimSpace(l.Raw)) > 0 {
			out.Unmapped(sdk.S("non_json"))
		}
		return nil
	}
	f := n.fRoot.of(v)
	switch {
	case f[kTwasm].Is(abi.SourceFactsType):
		// The directory Crush ran in, as projects.json names it beside
		// the database's data directory (ABI 1.8): the session's cwd.
		if p := sdk.FactsProject(v); p.IsSet() {
			out.Meta(sdk.Meta{Cwd: p})
		}
		out.Ignored(sdk.S("twasm_source"))
	case f[kTwasm].Is(abi.RowType):
		n.setFormat(out)
		r := f[kRow]
		switch sdk.View(f[kTable]) {
		case "sessions":
			n.session(r, out)
		case "messages":
			n.message(f[kKey].String(), n.fRow.of(r), out)
		default:
			out.Unmapped(sdk.S("row:" + f[kTable].String()))
		}
	default:
		t := "object"
		if s := f[kTwasm]; s.Kind() == abi.KindString {
			t = "$twasm:" + s.String()
		}
		out.Unmapped(sdk.S(t))
	}
	return nil
}

func (n *normalizer) setFormat(out *sdk.Out) {
	if n.meta {
		return
	}
	n.meta = true
	out.Meta(sdk.Meta{Format: sdk.S(fmtRows), NoTerminal: true}) // a session log
}

// session handles the session's row: its id, its parent and its cost.
// Crush's prompt_tokens and completion_tokens are the last request's
// (the context the session fills, shown beside the model), not the
// session's usage: they are not reported as tokens.
func (n *normalizer) session(r abi.Value, out *sdk.Out) {
	out.Meta(sdk.Meta{SessionID: sdk.Text(r.Get("id"))})
	n.summary = ""
	if id := r.Get("summary_message_id"); id.Kind() == abi.KindString {
		n.summary = id.String()
	}
	if p := r.Get("parent_session_id"); p.Kind() == abi.KindString && p.String() != "" {
		out.Warn("a sub-agent session of " + p.String() + " (a child run of its run)")
	}
	if c, ok := r.Get("cost").Float(); ok {
		if cc, ok := r.Get("children_cost").Float(); ok && cc > 0 {
			c -= cc
			if c < 0 {
				c = 0
			}
		}
		out.Cost(c, sdk.ModeSet)
	}
}

// message handles one message row: its parts are its blocks, in their
// slots; tool calls are calls, a tool message's results their results.
func (n *normalizer) message(key string, r *fields, out *sdk.Out) {
	role := sdk.View(r[kRole])
	if role != "user" && role != "assistant" && role != "tool" {
		out.Unmapped(sdk.S("role:" + role))
		return
	}
	created := seconds(r[kCreatedAt])
	user := role != "assistant"
	hdr := sdk.Message{User: user, ID: sdk.Opt(r[kID].String()), Time: sdk.Opt(created)}
	if !user {
		// The model is copied only when it changed (n.model holds it).
		if m := r[kModel]; m.Kind() == abi.KindString && !m.Is("") {
			if !m.Is(n.model) {
				n.model = m.String()
				out.Meta(sdk.Meta{Model: sdk.S(n.model)})
			}
			hdr.Model = sdk.S(n.model)
		}
	}
	// Crush before 0.13 (d7619a5c0) marked the summary only by the
	// session's summary_message_id, and its migration set
	// is_summary_message 0 on every message it found, the summaries
	// included: either says so.
	if v, _ := r[kIsSummaryMessage].Int(); v != 0 || r[kIsSummaryMessage].Truthy() || n.summary != "" && r[kID].Is(n.summary) {
		out.Warn("the conversation was summarized here: the model saw this summary of what came before")
	}
	parts := r[kParts]
	if parts.Kind() == abi.KindString {
		if doc, ok := sdk.Parse(sdk.AppendText(nil, parts)); ok {
			parts = doc.Root()
		}
	}
	if parts.Kind() != abi.KindArray {
		out.Unmapped(sdk.S("parts_not_list"))
		return
	}
	if n.seen == nil {
		n.seen = map[string]bool{}
	}
	if !n.seen[key] {
		n.seen[key] = true
		n.newest = key
	}
	if key == n.newest {
		fin, _ := r[kFinishedAt].Int()
		reason, finished := finishReason(parts)
		n.open = !user && fin <= 0 && !finished
		n.canceled = !user && reason == "canceled"
	}
	k := sdk.S(key)
	out.Open(k, hdr)
	it := parts.Iter()
	for i := 0; it.Next(); i++ {
		n.part(k, i, user, it.Value(), created, out)
	}
	out.Close(k, sdk.MessageEnd{})
}

// part handles part p at slot i of message k: {type, data}.
func (n *normalizer) part(k sdk.Str, i int, user bool, p abi.Value, created string, out *sdk.Out) {
	d := p.Get("data")
	origin := func(o string) string {
		if user {
			return o
		}
		return ""
	}
	switch typ := sdk.View(p.Get("type")); typ {
	case "text":
		out.Block(k, i, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(d.Get("text")), Origin: origin(sdk.OriginPrompt)})
	case "reasoning":
		if t := d.Get("thinking"); t.Kind() == abi.KindString && t.String() != "" {
			out.Block(k, i, sdk.Block{Type: sdk.BlockThinking, Thinking: sdk.Text(t)})
		} else if d.Get("signature").String() != "" || d.Get("thought_signature").String() != "" || d.Get("responses_data").Kind() == abi.KindObject {
			out.Block(k, i, sdk.Block{Type: sdk.BlockThinking, Redacted: true})
		}
	case "image_url":
		out.Block(k, i, sdk.Block{Type: sdk.BlockText, Text: sdk.S("[image]"), Origin: origin(sdk.OriginInjected)})
	case "binary":
		// An attachment (BinaryContent has no JSON tags: Path,
		// MIMEType, Data).
		out.Block(k, i, sdk.Block{Type: sdk.BlockText, Text: sdk.S("[attachment " + d.Get("Path").String() + " " + d.Get("MIMEType").String() + "]"), Origin: origin(sdk.OriginInjected)})
	case "tool_call":
		n.call(k, i, d, created, out)
	case "tool_result":
		n.result(k, i, d, created, out)
	case "finish":
		n.finish(d, out)
	case "shell_command":
		n.shell(k, i, d, created, out)
	default:
		out.Unmapped(sdk.S("part:" + typ))
	}
}

// call handles a tool_call part: a tool_use block and a tool.call. Its
// input is a JSON string (cut short while the call streams: then the
// text is kept under "input").
func (n *normalizer) call(k sdk.Str, i int, d abi.Value, created string, out *sdk.Out) {
	id, name := d.Get("id").String(), d.Get("name").String()
	in := sdk.RawJSON("{}")
	var input abi.Value
	if s := d.Get("input"); s.Kind() == abi.KindString && strings.TrimSpace(sdk.View(s)) != "" {
		// The text parsed is copied once (sdk.AppendText, where
		// []byte(s.String()) copies it twice).
		if doc, ok := sdk.Parse(sdk.AppendText(nil, s)); ok && doc.Root().Kind() == abi.KindObject {
			input = doc.Root()
			in = sdk.JSON(input)
		} else {
			in = sdk.RawJSON(`{"input":` + strconv.Quote(s.String()) + `}`)
		}
	} else if s.Kind() == abi.KindObject {
		input = s
		in = sdk.JSON(s)
	}
	n.names[id] = name
	kind, cmd := toolKind(name, input)
	out.ToolUse(k, i, sdk.ToolCall{CallID: sdk.S(id), Name: sdk.S(name), Input: in, Kind: kind, Command: cmd, Time: sdk.Opt(created)})
}

// result handles a tool_result part: a tool_result block and a
// tool.result. is_error is a failure; "User denied permission" (Crush's
// answer when the user refuses a call) denied, "Tool execution canceled
// by user" (later "Error: user cancelled assistant tool calling")
// cancelled, a call a hook blocked ("Tool call blocked by hook. Reason:
// ...", "Turn halted by hook. Reason: ...") denied; a bash output ending on
// "Exit code N" (N not 0) an error with that exit code, one ending on
// "Command was aborted before completion" cancelled, both read before
// the "<cwd>DIR</cwd>" line Crush's bash tool writes after an output; an
// agent or agentic_fetch call's empty result a failed sub-agent's.
func (n *normalizer) result(k sdk.Str, i int, d abi.Value, created string, out *sdk.Out) {
	id := d.Get("tool_call_id").String()
	name := d.Get("name").String()
	if name == "" {
		name = n.names[id]
	}
	text := d.Get("content").String()
	if text == "" && d.Get("mime_type").String() != "" {
		text = "[" + d.Get("mime_type").String() + "]"
	}
	res := sdk.ToolResult{CallID: sdk.S(id), Name: sdk.Opt(name), Output: sdk.S(text), Time: sdk.Opt(created), IsError: d.Get("is_error").Truthy()}
	t := strings.TrimSpace(text)
	switch {
	case strings.HasPrefix(t, "User denied permission"), res.IsError && t == "Permission denied":
		// Crush's answer to a call the user refused (before 2025-09,
		// "Permission denied" with is_error).
		res.IsError, res.Status, res.Error = true, sdk.S("denied"), sdk.S(t)
	case res.IsError && strings.HasPrefix(t, "Tool call blocked by hook. Reason:"), res.IsError && strings.HasPrefix(t, "Turn halted by hook. Reason:"):
		// A PreToolUse hook refused the call before it ran (and, for
		// a halt, ended the turn): internal/agent/hooked_tool.go.
		res.Status, res.Error = sdk.S("denied"), sdk.S(clip(t))
	case res.IsError && (t == "Tool execution canceled by user" || t == "Error: user cancelled assistant tool calling"):
		// The user cancelled the request before the call had its
		// result: the first before 2025-07, the second since 2026-03
		// (agent.go, crush 2928dcb2e).
		res.Status, res.Error = sdk.S("cancelled"), sdk.S(t)
	case !res.IsError && t == "" && (name == "agent" || name == "agentic_fetch"):
		// A sub-agent that failed: Crush before 2025-11 wrote a tool's
		// error as an empty result without is_error, and the agent tools
		// answer with the sub-agent's text when it ends.
		res.IsError, res.Error = true, sdk.S("the sub-agent failed: Crush wrote an empty result (its child run says why)")
	case strings.HasSuffix(withoutCwd(t), "Command was aborted before completion"):
		res.IsError, res.Status, res.Error = true, sdk.S("cancelled"), sdk.S("Command was aborted before completion")
	default:
		if name == "bash" {
			b := withoutCwd(t)
			code := sdk.StatedExitCode([]byte(b), "Exit code ")
			if v, ok := code.Value(); ok && lastLineHas(b, "Exit code ") {
				res.ExitCode = code
				if v != 0 {
					res.IsError = true
					if !res.Error.IsSet() {
						res.Error = sdk.S("exit code " + strconv.FormatInt(v, 10))
					}
				}
			}
		}
		if res.IsError && !res.Error.IsSet() {
			res.Error = sdk.S(clip(t))
		}
	}
	if !res.IsError {
		res.Status = sdk.S("ok")
	}
	out.Block(k, i, sdk.Block{Type: sdk.BlockToolResult, ToolID: sdk.S(id), ToolContent: sdk.S(text), IsError: res.IsError})
	out.ToolResult(res)
}

// withoutCwd returns a command's output t without the "<cwd>DIR</cwd>"
// line Crush's bash tool appends after it (after the exit code and the
// abort notice too), trimmed; t as it is when it does not end on one.
func withoutCwd(t string) string {
	if !strings.HasSuffix(t, "</cwd>") {
		return t
	}
	j := strings.LastIndex(t, "<cwd>")
	if j < 0 || strings.IndexByte(t[j:], '\n') >= 0 || j > 0 && t[j-1] != '\n' {
		return t
	}
	return strings.TrimSpace(t[:j])
}

// lastLineHas says whether t's last line starts with label (Crush writes
// the exit code last).
func lastLineHas(t, label string) bool {
	if j := strings.LastIndexByte(t, '\n'); j >= 0 {
		t = t[j+1:]
	}
	return strings.HasPrefix(t, label)
}

// finish handles a message's finish part: error and content_filter are
// provider errors (Crush shows them as failures), canceled, max_tokens
// and unknown warnings; end_turn and tool_use end the message as it
// should.
func (n *normalizer) finish(d abi.Value, out *sdk.Out) {
	msg := d.Get("message").String()
	if det := d.Get("details").String(); det != "" {
		if msg != "" {
			msg += ": "
		}
		msg += det
	}
	switch reason := sdk.View(d.Get("reason")); reason {
	case "end_turn", "tool_use", "stop", "", "permission_denied":
		// permission_denied (before 2025-09): the refused call's result
		// says so.
	case "error", "content_filter":
		if msg == "" {
			msg = reason
		}
		out.Error(sdk.ProviderError{Message: sdk.S(msg), Code: sdk.S(reason)})
	case "canceled":
		if msg == "" {
			msg = "the request was cancelled"
		}
		out.Warn("Crush: " + msg)
	case "max_tokens":
		out.Warn("the response was cut at the output token limit")
	default:
		if msg != "" {
			msg = ": " + msg
		}
		out.Warn("the response ended with reason " + reason + msg)
	}
}

// shell handles a shell_command part: a command the user ran in bang
// mode (!cmd), a call and its result in the user's message.
func (n *normalizer) shell(k sdk.Str, i int, d abi.Value, created string, out *sdk.Out) {
	id := k.String() + "-shell-" + strconv.Itoa(i)
	cmd := d.Get("command").String()
	in := sdk.RawJSON(`{"command":` + strconv.Quote(cmd) + `}`)
	out.ToolCall(sdk.ToolCall{CallID: sdk.S(id), Name: sdk.S("shell_command"), Input: in, Kind: "execute", Command: sdk.S(cmd), Time: sdk.Opt(created)})
	res := sdk.ToolResult{CallID: sdk.S(id), Name: sdk.S("shell_command"), Output: sdk.Text(d.Get("output")), Time: sdk.Opt(created)}
	if code, ok := d.Get("exit_code").Int(); ok {
		res.ExitCode = sdk.N(code)
		if code != 0 {
			res.IsError, res.Error = true, sdk.S("exit code "+strconv.FormatInt(code, 10))
		}
	}
	if !res.IsError {
		res.Status = sdk.S("ok")
	}
	out.ToolResult(res)
}

// toolKind classifies Crush's tools (internal/agent/tools).
func toolKind(name string, input abi.Value) (string, sdk.Str) {
	switch name {
	case "bash":
		return "execute", sdk.StringOf(input.Get("command"))
	case "job_output", "job_kill":
		return "execute", sdk.Str{}
	case "view", "ls", "read_mcp_resource", "list_mcp_resources", "lsp_diagnostics", "lsp_definition", "lsp_references", "lsp_symbols", "lsp_call_hierarchy", "crush_info", "crush_logs":
		return "read", sdk.Str{}
	case "edit", "multiedit", "write", "lsp_rename", "lsp_replace_symbol":
		return "edit", sdk.Str{}
	case "glob", "grep", "sourcegraph":
		return "search", sdk.Str{}
	case "fetch", "agentic_fetch", "web_fetch", "web_search", "download":
		return "fetch", sdk.Str{}
	case "todos":
		return "think", sdk.Str{}
	}
	return "other", sdk.Str{}
}

// seconds is a Crush time as RFC 3339 ("" when there is none): seconds
// since 1970, or milliseconds (a figure past 10^11).
func seconds(v abi.Value) string {
	s, ok := v.Int()
	if !ok || s <= 0 {
		return ""
	}
	if s > 100_000_000_000 {
		return sdk.RFC3339Millis(s)
	}
	return sdk.RFC3339Seconds(s)
}

// clip bounds a result's text for its error.
func clip(s string) string { return sdk.Clip(s, 300) }

// End implements sdk.Normalizer.
func (n *normalizer) End(out *sdk.Out) error {
	if n.open {
		// The database was read in the middle of a turn (twasm sync
		// archives sessions Crush still writes): its newest message is
		// an answer still streaming. A later sync reads it again,
		// finished.
		out.Status(sdk.StatusIncomplete, sdk.S("the turn has not finished: the last assistant message has no finish part yet (the database was read while Crush was writing it)"), sdk.LevelError)
	}
	if n.canceled {
		// The user cancelled the session's last answer: the turn was
		// cut, as a Codex turn_aborted is (a warning too).
		out.Status(sdk.StatusIncomplete, sdk.S("the response was cancelled by the user"), sdk.LevelError)
	}
	return nil
}

// finishReason is the reason of a message's finish part, and whether
// it has one: Crush adds it when the response ends (message.AddFinish:
// ended, failed or cancelled).
func finishReason(parts abi.Value) (string, bool) {
	it := parts.Iter()
	for it.Next() {
		if p := it.Value(); p.Get("type").Is("finish") {
			return p.Path("data", "reason").String(), true
		}
	}
	return "", false
}

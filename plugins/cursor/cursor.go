package cursor

import (
	"strconv"
	"strings"
	"time"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// fmtTranscript is the format of an agent transcript (OpMeta, manifest).
const fmtTranscript = "agent-transcript"

// roots: Cursor keeps its agent transcripts in ~/.cursor on every OS
// (%USERPROFILE%\.cursor on Windows, which "~" is).
var roots = []abi.Root{{Path: "~/.cursor"}}

// Plugin is the Cursor normalizer.
var Plugin = sdk.Plugin{
	Manifest: abi.Manifest{
		Name:        "cursor",
		Version:     "0.1.0",
		Providers:   []string{"cursor"},
		Formats:     []string{fmtTranscript, fmtIDE, fmtStream},
		Description: "Cursor's agent transcripts (~/.cursor/projects/<project>/agent-transcripts/<id>/<id>.jsonl: no times but the prompts', no usage, no model, no tool results) and the IDE's conversations in its global state.vscdb and, before that, in each workspace's state.vscdb",
		Stores: []abi.Store{{
			// One directory per conversation (before those, the files
			// were beside each other in agent-transcripts/), its
			// sub-agents' transcripts in subagents/ below it: each a
			// child run of the conversation's.
			Name: "Cursor agent transcripts", Roots: roots, Dir: "projects",
			Pattern: "*/agent-transcripts/**/*.jsonl", SubAgents: "subagents/*.jsonl",
			// A transcript's name is its conversation's id, the IDE's
			// composerData id: a conversation the IDE keeps too is
			// archived from the IDE's database, which states more
			// (times, usage, model).
			Session: abi.StoreSessionKey,
		}, {
			// The IDE's conversations (composers) with their messages
			// (bubbles) and tool calls, sub-composers as child runs.
			Name: "Cursor IDE", Kind: abi.StoreKindSQLite, Roots: ideRoots,
			Pattern: "state.vscdb", SQLite: IDEQueries,
		}, {
			// An older Cursor's (2024 to early 2025) conversations,
			// inline in each workspace's own database: composers and
			// chat tabs, the workspace's folder beside it.
			Name: "Cursor IDE workspaces (before the global database)", Kind: abi.StoreKindSQLite, Roots: workspaceRoots,
			Pattern: "*/state.vscdb", SQLite: WorkspaceQueries,
			// A composer a newer Cursor moved to its global database
			// (composerData:<id>, the same id) is archived from there.
			Session: abi.StoreSessionKey,
		}},
		// The session id is only in the path (the file's name).
		SourceFacts: true,
	},
	New:  func(abi.BeginOptions) sdk.Normalizer { return &normalizer{} },
	Keys: keys,
}

// maxPending bounds the calls a stream keeps waiting for a result.
const maxPending = 1024

// normalizer is the per-stream state.
type normalizer struct {
	meta     bool
	noted    bool // the format's gaps said (once a stream)
	msgs     int  // messages opened, for their keys and the calls' ids
	pending  []string
	names    map[string]string
	final    string // the last assistant text, for the final answer
	ideModel string // the composer's model (IDE rows)
	tabModel string // the latest answer's model (an older Cursor's chat tab)
	cwd      bool   // the workspace's folder reported (IDE rows)
	// rows are the hashes of the IDE rows read, by table and key. The
	// IDE's calls are told by bubble and call id (ideCall): callOf is
	// the call each bubble's tool is (its own, or the one it repeats),
	// latest the latest call of each call id, answered the calls with a
	// result.
	rows     map[string]uint64
	rowKey   []byte // the table and key of the row being read (ideRow)
	callOf   map[string]string
	latest   map[string]string
	answered map[string]bool
	counted  map[string]bool // bubbles whose usage the step counts
	// ended is the status of the turn_ended record the stream ends on
	// ("" when a message followed it, or there was none), endErr its
	// error.
	ended, endErr string
	// turnEnds: the stream holds a turn_ended record (this Cursor writes
	// them), so a last turn without one is still running.
	turnEnds bool
	// s: a stream-json input's state (stream.go).
	s stream
	// fact: the file's name as the host's facts line states it (a
	// transcript's session id), reported with the first record.
	fact string
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
	if v.Get("$twasm").Is(abi.SourceFactsType) {
		if v.Get("session").Exists() {
			// The IDE's database: the rows that follow name the
			// composer.
			out.Ignored(sdk.S("twasm_source"))
			return nil
		}
		// The file's name is the conversation's id (Cursor's
		// composerId); nothing in the file says it.
		name := v.Get("name").String()
		if i := strings.LastIndexByte(name, '.'); i > 0 {
			name = name[:i]
		}
		// Reported with the first record: a transcript's, or a
		// stream-json output's (which names its session itself).
		n.fact = name
		out.Ignored(sdk.S("twasm_source"))
		return nil
	}
	if v.Get("$twasm").Is(abi.RowType) {
		n.ideRow(l, v, out)
		return nil
	}
	if typ := v.Get("type"); typ.Kind() == abi.KindString && !v.Get("role").Exists() && (n.s.on || !n.meta && !typ.Is("turn_ended")) {
		// cursor-agent --output-format stream-json (stream.go).
		n.streamLine(typ.String(), v, out)
		return nil
	}
	n.setMeta(out, n.fact)
	if typ := v.Get("type"); typ.Kind() == abi.KindString && !v.Get("role").Exists() {
		n.record(typ.String(), v, out)
		return nil
	}
	n.ended, n.endErr = "", ""
	switch role := sdk.View(v.Get("role")); role {
	case "user", "system":
		n.user(role, v.Get("message").Get("content"), out)
	case "assistant":
		n.assistant(v.Get("message").Get("content"), out)
	default:
		out.Unmapped(sdk.S("role:" + role))
	}
	return nil
}

func (n *normalizer) setMeta(out *sdk.Out, session string) {
	if n.meta {
		return
	}
	n.meta = true
	m := sdk.Meta{Format: sdk.S(fmtTranscript), NoTerminal: true}
	if session != "" {
		m.SessionID = sdk.S(session)
	}
	out.Meta(m)
}

// note says once what the format cannot: it is said, not guessed.
func (n *normalizer) note(out *sdk.Out) {
	if n.noted {
		return
	}
	n.noted = true
	out.Warn("cursor agent transcript: the format states no usage, no model and no time but the prompts' (the rest is dated by the file's modification time), and keeps no tool results: a call without one did not fail or stop, its outcome is not known")
}

// record handles a line of Cursor's own ({"type": ...}, no role).
func (n *normalizer) record(typ string, v abi.Value, out *sdk.Out) {
	if typ != "turn_ended" {
		out.Unmapped(sdk.S(typ))
		return
	}
	// The end of a turn: "success", "aborted" (the user stopped it) or
	// "error", with its text in error.
	n.turnEnds = true
	msg := v.Get("error").String()
	switch st := v.Get("status").String(); st {
	case "success", "completed":
		n.ended, n.endErr = transcriptOK, ""
		out.Ignored(sdk.S("turn_ended"))
	case "aborted", "cancelled", "canceled", "interrupted":
		if msg == "" {
			msg = "the user aborted the turn"
		}
		n.ended, n.endErr = transcriptIncomplete, "turn "+st+": "+msg
		out.Warn("cursor: turn " + st + ": " + msg)
	default:
		if msg == "" {
			msg = "turn ended with status " + sdk.TypeName(v.Get("status"))
		}
		n.ended, n.endErr = transcriptError, msg
		out.Error(sdk.ProviderError{Message: sdk.S(msg), Code: sdk.Opt(st)})
	}
}

// The step statuses a turn_ended record the stream ends on gives.
const (
	transcriptOK         = "ok"
	transcriptError      = "error"
	transcriptIncomplete = "incomplete"
)

func (n *normalizer) open(user bool, t string, out *sdk.Out) sdk.Str {
	n.msgs++
	k := sdk.S("m" + strconv.Itoa(n.msgs))
	out.Open(k, sdk.Message{User: user, Time: sdk.Opt(t)})
	return k
}

// user handles a user line (and a system line: context the harness
// added). A prompt is wrapped in <user_query>; what precedes it (a
// <timestamp>, attached images' notes) is Cursor's, not the user's.
func (n *normalizer) user(role string, content abi.Value, out *sdk.Out) {
	var texts []string
	var results []abi.Value
	switch content.Kind() {
	case abi.KindString:
		texts = append(texts, content.String())
	case abi.KindArray:
		it := content.Iter()
		for it.Next() {
			b := it.Value()
			switch sdk.View(b.Get("type")) {
			case "text":
				texts = append(texts, b.Get("text").String())
			case "tool_result":
				results = append(results, b)
			default:
				out.Unmapped(sdk.S("content:" + b.Get("type").String()))
			}
		}
	default:
		out.Unmapped(sdk.S("user_without_content"))
		return
	}
	type part struct{ text, origin string }
	var parts []part
	stamp := ""
	for _, t := range texts {
		if role == "system" {
			parts = append(parts, part{t, sdk.OriginInjected})
			continue
		}
		pre, body, post, ok := splitQuery(t)
		if !ok {
			parts = append(parts, part{t, sdk.OriginPrompt})
			continue
		}
		if ts, rest, found := cutTag(pre, "timestamp"); found {
			if at, ok := parseStamp(ts); ok && stamp == "" {
				stamp = at
				pre = rest
			}
		}
		if strings.TrimSpace(pre) != "" {
			parts = append(parts, part{strings.TrimSpace(pre), sdk.OriginInjected})
		}
		origin := sdk.OriginPrompt
		if injectedQuery(body) {
			origin = sdk.OriginInjected
		}
		parts = append(parts, part{body, origin})
		if strings.TrimSpace(post) != "" {
			parts = append(parts, part{strings.TrimSpace(post), sdk.OriginInjected})
		}
	}
	if len(parts) == 0 && len(results) == 0 {
		out.Unmapped(sdk.S("user_without_text"))
		return
	}
	k := n.open(true, stamp, out)
	slot := 0
	for _, p := range parts {
		out.Block(k, slot, sdk.Block{Type: sdk.BlockText, Text: sdk.S(p.text), Origin: p.origin})
		slot++
	}
	for _, r := range results {
		n.result(k, slot, r, out)
		slot++
	}
	out.Close(k, sdk.MessageEnd{})
}

// splitQuery cuts a user text at its <user_query>: what is before the
// first opening tag, the query up to the last closing tag (the user may
// paste the tag), and what follows it.
func splitQuery(t string) (pre, body, post string, ok bool) {
	const open, close = "<user_query>", "</user_query>"
	i := strings.Index(t, open)
	if i < 0 {
		return "", "", "", false
	}
	pre, rest := t[:i], t[i+len(open):]
	if j := strings.LastIndex(rest, close); j >= 0 {
		rest, post = rest[:j], rest[j+len(close):]
	}
	return pre, strings.TrimSuffix(strings.TrimPrefix(rest, "\n"), "\n"), post, true
}

// cutTag finds <tag>...</tag> in s: its text, and s without it.
func cutTag(s, tag string) (text, rest string, ok bool) {
	i := strings.Index(s, "<"+tag+">")
	if i < 0 {
		return "", s, false
	}
	j := strings.Index(s[i:], "</"+tag+">")
	if j < 0 {
		return "", s, false
	}
	return s[i+len(tag)+2 : i+j], s[:i] + s[i+j+len(tag)+3:], true
}

// injectedQuery: Cursor's own continuations, written as queries though
// no one typed them (after a sub-agent's or a background task's result).
func injectedQuery(body string) bool {
	b := strings.TrimSpace(body)
	return strings.HasPrefix(b, "The above subagent result is already visible to the user") ||
		strings.HasPrefix(b, "Briefly inform the user about the task result")
}

// parseStamp reads Cursor's prompt time, "Friday, May 8, 2026, 6:05 AM
// (UTC+5:30)", to the minute, with its offset (none: UTC): RFC 3339 in
// UTC.
func parseStamp(s string) (string, bool) {
	s = strings.TrimSpace(s)
	off := 0
	if i := strings.LastIndex(s, "("); i >= 0 && strings.HasSuffix(s, ")") {
		z := strings.TrimSpace(s[i+1 : len(s)-1])
		s = strings.TrimSpace(s[:i])
		o, ok := parseOffset(z)
		if !ok {
			return "", false
		}
		off = o
	}
	for _, layout := range []string{"Monday, Jan 2, 2006, 3:04 PM", "Monday, January 2, 2006, 3:04 PM", "Mon, Jan 2, 2006, 3:04 PM"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.Add(-time.Duration(off) * time.Second).UTC().Format("2006-01-02T15:04:05Z"), true
		}
	}
	return "", false
}

// parseOffset reads "UTC", "UTC+3", "UTC-5", "UTC+5:30" (GMT too) as
// seconds east of UTC.
func parseOffset(z string) (int, bool) {
	if !strings.HasPrefix(z, "UTC") && !strings.HasPrefix(z, "GMT") {
		return 0, false
	}
	z = z[3:]
	if z == "" {
		return 0, true
	}
	sign := 1
	switch z[0] {
	case '+':
	case '-':
		sign = -1
	default:
		return 0, false
	}
	h, m, _ := strings.Cut(z[1:], ":")
	hh, err := strconv.Atoi(h)
	if err != nil || hh > 14 {
		return 0, false
	}
	mm := 0
	if m != "" {
		if mm, err = strconv.Atoi(m); err != nil || mm > 59 {
			return 0, false
		}
	}
	return sign * (hh*3600 + mm*60), true
}

// assistant handles an assistant line: one whole message (Cursor writes
// no deltas), its blocks in order.
func (n *normalizer) assistant(content abi.Value, out *sdk.Out) {
	if content.Kind() != abi.KindArray && content.Kind() != abi.KindString {
		out.Unmapped(sdk.S("assistant_without_content"))
		return
	}
	n.note(out)
	k := n.open(false, "", out)
	if content.Kind() == abi.KindString {
		n.text(k, 0, content, out)
		out.Close(k, sdk.MessageEnd{})
		return
	}
	// slot is the block's place in the line's content (a call's id
	// holds it), at the place in the message a text that carried the
	// redacted-thinking marker made one further.
	it := content.Iter()
	at := 0
	for slot := 0; it.Next(); slot, at = slot+1, at+1 {
		b := it.Value()
		switch typ := sdk.View(b.Get("type")); typ {
		case "text":
			at = n.text(k, at, b.Get("text"), out)
		case "thinking", "reasoning":
			t := b.Get("thinking")
			if t.Kind() != abi.KindString {
				t = b.Get("text")
			}
			out.Block(k, at, sdk.Block{Type: sdk.BlockThinking, Thinking: sdk.Text(t)})
		case "reasoning_summary":
			out.Block(k, at, sdk.Block{Type: sdk.BlockThinking, Thinking: sdk.Text(b.Get("summary"))})
		case "tool_use":
			n.call(k, slot, at, b, out)
		case "tool_result":
			n.result(k, at, b, out)
		default:
			out.Unmapped(sdk.S("content:" + typ))
		}
	}
	out.Close(k, sdk.MessageEnd{})
}

// redactedMark is what Cursor's agent transcripts write in place of the
// model's thinking they leave out: a text block of it alone (a turn
// that only thought before its calls), or after a blank line at the end
// of the text the model said.
const redactedMark = "[REDACTED]"

// text reports an assistant text block v at place at of message k, and
// returns the place of its last block: the text the model said, then
// Cursor's redacted-thinking marker, if it ends with one, as a thinking
// block marked redacted (nothing the model said; never the answer). A
// text that ends with the marker but not after a blank line is the
// model's text as written.
func (n *normalizer) text(k sdk.Str, at int, v abi.Value, out *sdk.Out) int {
	t := sdk.View(v)
	s := strings.TrimRight(t, " \t\r\n")
	said, marked := strings.CutSuffix(s, "\n\n"+redactedMark)
	if !marked {
		if s != redactedMark {
			out.Block(k, at, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(v)})
			if strings.TrimSpace(t) != "" {
				n.final = v.String()
			}
			return at
		}
		said = ""
	}
	if said != "" {
		out.Block(k, at, sdk.Block{Type: sdk.BlockText, Text: sdk.S(said)})
		if strings.TrimSpace(said) != "" {
			n.final = strings.Clone(said)
		}
		at++
	}
	out.Block(k, at, sdk.Block{Type: sdk.BlockThinking, Redacted: true})
	return at
}

// call handles a tool_use block: a block and a tool.call. Cursor writes
// no call id: the call's is its message's number and slot, the same on
// every read of the file.
func (n *normalizer) call(k sdk.Str, slot, at int, b abi.Value, out *sdk.Out) {
	id := b.Get("id").String()
	if id == "" {
		id = "cursor-" + strconv.Itoa(n.msgs) + "-" + strconv.Itoa(slot)
	}
	name := b.Get("name").String()
	if i := strings.IndexByte(name, '\n'); i >= 0 {
		// Seen once: a name with the start of its input after a
		// newline (the input holds the rest).
		name = strings.TrimSpace(name[:i])
	}
	if name == "" {
		name = "unknown"
	}
	// ApplyPatch's input is the patch's text: kept as that string.
	input := b.Get("input")
	in := sdk.JSON(input)
	if !input.Exists() || input.Kind() == abi.KindNull {
		in = sdk.RawJSON("{}")
	}
	if n.names == nil {
		n.names = map[string]string{}
	}
	n.names[id] = name
	n.pending = append(n.pending, id)
	if len(n.pending) > maxPending {
		// The transcripts hold no results: a stream's calls would pile
		// up. The oldest is given up on (it stays a call without a
		// result, as it would at the end anyway).
		delete(n.names, n.pending[0])
		n.pending = n.pending[1:]
	}
	kind, cmd := toolKind(name, input)
	out.ToolUse(k, at, sdk.ToolCall{CallID: sdk.S(id), Name: sdk.S(name), Input: in, Kind: kind, Command: cmd})
}

// result handles a tool_result block (the transcripts seen so far hold
// none; a peer's reader does): by its tool_use_id, else the oldest call
// still without a result.
func (n *normalizer) result(k sdk.Str, slot int, b abi.Value, out *sdk.Out) {
	id := b.Get("tool_use_id").String()
	if id == "" && len(n.pending) > 0 {
		id = n.pending[0]
	}
	for i, p := range n.pending {
		if p == id {
			n.pending = append(n.pending[:i:i], n.pending[i+1:]...)
			break
		}
	}
	name := n.names[id]
	delete(n.names, id)
	if id == "" {
		out.Warn("cursor: a tool result with no call to answer: not read as a result")
		return
	}
	text := contentText(b.Get("content"))
	isErr := b.Get("is_error").Truthy()
	res := sdk.ToolResult{CallID: sdk.S(id), Name: sdk.Opt(name), IsError: isErr, Status: sdk.S(sdk.StatusOK)}
	if isErr {
		if text == "" {
			text = "error"
		}
		res.Error, res.Status = sdk.S(text), sdk.S(sdk.StatusError)
	} else if b.Get("content").Exists() {
		res.Output = sdk.S(text)
	}
	out.Block(k, slot, sdk.Block{Type: sdk.BlockToolResult, ToolID: sdk.S(id), ToolContent: sdk.S(text), IsError: isErr})
	out.ToolResult(res)
}

// contentText is a result's content: a string, or a list of text blocks.
func contentText(c abi.Value) string {
	if c.Kind() == abi.KindString {
		return c.String()
	}
	var b strings.Builder
	it := c.Iter()
	for it.Next() {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		if t := it.Value().Get("text"); t.Kind() == abi.KindString {
			b.WriteString(t.String())
		} else {
			b.WriteString("[" + it.Value().Get("type").String() + "]")
		}
	}
	return b.String()
}

// toolKind classifies Cursor's tools (the names its transcripts hold).
func toolKind(name string, input abi.Value) (string, sdk.Str) {
	switch strings.ToLower(name) {
	case "shell", "run_terminal_cmd", "bash":
		return "execute", sdk.StringOf(input.Get("command"))
	case "readfile", "read", "read_file", "list_dir", "ls":
		return "read", sdk.Str{}
	case "applypatch", "strreplace", "write", "edit", "edit_file", "editnotebook", "delete", "delete_file", "search_replace", "multiedit":
		return "edit", sdk.Str{}
	case "glob", "grep", "rg", "semanticsearch", "codebase_search", "grep_search", "file_search", "readlints", "read_lints":
		return "search", sdk.Str{}
	case "websearch", "webfetch", "web_search", "fetch":
		return "fetch", sdk.Str{}
	case "todowrite", "todo_write", "updatecurrentstep":
		return "think", sdk.Str{}
	}
	return "other", sdk.Str{}
}

// End implements sdk.Normalizer.
//
// A stream that ends on Cursor's turn_ended record has the status it
// states: a turn that succeeded is ok though its calls have no results
// (the format keeps none: they are not cut off). Without one, where
// earlier turns have theirs, the last turn is still running: incomplete;
// where none has (a Cursor that writes none), the host's session rule
// applies, and a call without a result leaves the run incomplete.
func (n *normalizer) End(out *sdk.Out) error {
	if n.s.on {
		n.flushStream(out)
	}
	if !n.meta && n.fact != "" {
		n.setMeta(out, n.fact)
	}
	if n.ended != "" {
		out.Status(n.ended, sdk.Opt(n.endErr), sdk.LevelTerminal)
	} else if n.turnEnds {
		// A Cursor that ends its turns with turn_ended, read before the
		// last one's (twasm sync archives transcripts Cursor still
		// writes): a later read, the turn ended, settles it.
		out.Status(sdk.StatusIncomplete, sdk.S("the turn has not finished: the transcript's earlier turns end with turn_ended, the last one has none yet"), sdk.LevelError)
	}
	if n.final != "" {
		out.Final(sdk.S(n.final), true)
	}
	return nil
}

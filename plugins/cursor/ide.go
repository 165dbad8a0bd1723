package cursor

import (
	"strings"
	"time"
	"unsafe"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// fmtIDE is the format of the rows of the IDE's state.vscdb.
const fmtIDE = "ide-rows"

// ideRoots are the candidates for the directory of the IDE's global
// state.vscdb: VS Code's user data directory of the Cursor app, per OS.
var ideRoots = []abi.Root{
	{Env: "XDG_CONFIG_HOME", Path: "Cursor/User/globalStorage", OS: "linux"},
	{Path: "~/.config/Cursor/User/globalStorage", OS: "linux"},
	{Path: "~/Library/Application Support/Cursor/User/globalStorage", OS: "darwin"},
	{Env: "APPDATA", Path: "Cursor/User/globalStorage", OS: "windows"},
}

// IDEQueries are what the host reads of the IDE's state.vscdb: its
// key-value table cursorDiskKV, where composerData:<id> is a
// conversation (a composer: one run) and bubbleId:<id>:<bubble> one of
// its messages, in the order of the composer's fullConversationHeadersOnly.
//
// Values are read as text (the column is declared BLOB; Cursor writes
// JSON text). A composer is read only where its value is JSON; every
// bubble row its headers name is read, a bubble Cursor cleaned up (NULL,
// as a user's database showed: agentsview#1676) or whose value is not
// JSON included, so that the run says the message is lost (lostBubble)
// instead of reading as whole without it; a header whose bubble has no
// row yet is not read (Cursor may write it next). The rows carry no time they were changed at: a session's
// cursor is the composer's lastUpdatedAt (else createdAt) times 1000 plus
// the composer's length and its bubbles' number modulo 1000, so that a new
// bubble or a rewritten composer moves it; a session whose cursor moved is
// read whole again (the queries do not use :since), and the host keeps of
// it only what the run does not hold yet (messages by bubble id, calls by
// toolCallId, compared by content). parent: the composer whose
// subComposerIds lists this one (a sub-agent's: a child run).
var IDEQueries = &abi.SQLiteSource{
	Sessions: `WITH c AS MATERIALIZED (
  SELECT substr(key, 14) AS id, CAST(value AS TEXT) AS v FROM cursorDiskKV
  WHERE key >= 'composerData:' AND key < 'composerData;' AND value IS NOT NULL AND json_valid(CAST(value AS TEXT))
), subs AS MATERIALIZED (
  SELECT j.value AS child, min(p.id) AS parent FROM c AS p, json_each(p.v, '$.subComposerIds') AS j
  WHERE json_type(p.v, '$.subComposerIds') = 'array' AND j.type = 'text' GROUP BY j.value
)
SELECT c.id AS key,
  coalesce(CAST(json_extract(c.v, '$.lastUpdatedAt') AS INTEGER), CAST(json_extract(c.v, '$.createdAt') AS INTEGER), 0) * 1000
  + (length(c.v) + (SELECT count(*) FROM cursorDiskKV b WHERE b.key >= 'bubbleId:' || c.id || ':' AND b.key < 'bubbleId:' || c.id || ';')) % 1000 AS cursor,
  subs.parent AS parent
FROM c LEFT JOIN subs ON subs.child = c.id AND subs.parent <> c.id
ORDER BY coalesce(CAST(json_extract(c.v, '$.createdAt') AS INTEGER), 0), c.id`,
	Tables: []abi.SQLiteTable{
		{Table: "composer", Key: "id", Version: "version", Time: "created_ms", JSON: []string{"value"},
			Query: `SELECT substr(key, 14) AS id,
  coalesce(CAST(json_extract(CAST(value AS TEXT), '$.lastUpdatedAt') AS INTEGER), 0) AS version,
  CAST(json_extract(CAST(value AS TEXT), '$.createdAt') AS INTEGER) AS created_ms,
  CAST(value AS TEXT) AS value
FROM cursorDiskKV WHERE key = 'composerData:' || :session AND value IS NOT NULL AND json_valid(CAST(value AS TEXT))`},
		{Table: "bubble", Key: "id", Version: "version", Time: "time_ms", JSON: []string{"value"},
			Query: `WITH h AS (
  SELECT CAST(j.key AS INTEGER) AS pos, json_extract(j.value, '$.bubbleId') AS bid
  FROM cursorDiskKV c, json_each(CAST(c.value AS TEXT), '$.fullConversationHeadersOnly') AS j
  WHERE c.key = 'composerData:' || :session AND c.value IS NOT NULL AND json_valid(CAST(c.value AS TEXT))
)
SELECT h.bid AS id, h.pos AS pos, length(CAST(b.value AS TEXT)) AS version,
  CASE WHEN b.value IS NULL OR NOT json_valid(CAST(b.value AS TEXT)) THEN NULL
    WHEN json_type(CAST(b.value AS TEXT), '$.createdAt') IN ('integer', 'real')
    THEN CAST(json_extract(CAST(b.value AS TEXT), '$.createdAt') AS INTEGER)
    ELSE CAST((julianday(json_extract(CAST(b.value AS TEXT), '$.createdAt')) - 2440587.5) * 86400000 AS INTEGER) END AS time_ms,
  CAST(b.value AS TEXT) AS value
FROM h JOIN cursorDiskKV b ON b.key = 'bubbleId:' || :session || ':' || h.bid
ORDER BY h.pos`},
	},
	// The workspace map (ABI 1.7): each workspace's own state.vscdb,
	// beside globalStorage in workspaceStorage/<hash>/, lists the
	// composers opened in it (ItemTable's composer.composerData,
	// allComposers[].composerId), and workspace.json beside it names the
	// workspace: {"folder": a URI} or, for a multi-root workspace,
	// {"workspace": the .code-workspace file's URI}.
	Related: []abi.SQLiteRelated{{
		Table: "workspace", Glob: "../workspaceStorage/*/state.vscdb", Key: "composer", File: "workspace.json",
		Query: `SELECT json_extract(j.value, '$.composerId') AS composer
FROM ItemTable AS t, json_each(CAST(t.value AS TEXT), '$.allComposers') AS j
WHERE t.key = 'composer.composerData' AND t.value IS NOT NULL AND json_valid(CAST(t.value AS TEXT))
  AND json_type(CAST(t.value AS TEXT), '$.allComposers') = 'array' AND json_type(j.value, '$.composerId') = 'text'`,
	}},
}

// ideRow handles one row of state.vscdb.
func (n *normalizer) ideRow(l *sdk.Line, v abi.Value, out *sdk.Out) {
	if !n.meta {
		n.meta = true
		out.Meta(sdk.Meta{Format: sdk.S(fmtIDE), NoTerminal: true})
	}
	// The host reads a session whole again when it changed: a row it
	// hands again unchanged was read already; a changed one is read
	// anew (its calls and results once each: ideTool).
	if n.rows == nil {
		n.rows = map[string]uint64{}
	}
	// The map is read by a view of the key built in rowKey, and a key
	// is copied only when a row is stored (every row unchanged costs no
	// allocation).
	table := v.Get("table")
	n.rowKey = append(append(append(n.rowKey[:0], sdk.View(table)...), 0), sdk.View(v.Get("key"))...)
	sum := sdk.Hash64(l.Raw)
	if n.rows[unsafe.String(unsafe.SliceData(n.rowKey), len(n.rowKey))] == sum {
		out.Ignored(sdk.S("row_unchanged"))
		return
	}
	n.rows[string(n.rowKey)] = sum
	r := v.Get("row")
	if table.Is("workspace") {
		n.workspace(r.Get("file"), out)
		return
	}
	val := r.Get("value")
	if val.Kind() != abi.KindObject {
		if table.Is("bubble") {
			lostBubble(r.Get("id").String(), val, out)
			return
		}
		out.Unmapped(sdk.S("row_not_json"))
		return
	}
	switch sdk.View(table) {
	case "composer":
		n.composer(r.Get("id").String(), val, out)
	case "bubble":
		n.bubble(r.Get("id").String(), val, out)
	case "chattab":
		n.chatTab(r.Get("id").String(), val, out)
	default:
		out.Unmapped(sdk.S("row:" + table.String()))
	}
}

// lostBubble handles a message the conversation's headers list whose row
// holds no record to read: NULL (Cursor cleaned it up), an empty value,
// or one that is not a JSON object. It is left out, and the run says so:
// without the warning the conversation would read as whole.
func lostBubble(id string, val abi.Value, out *sdk.Out) {
	what := "no record (NULL)"
	switch {
	case val.Kind() == abi.KindString && val.Is(""):
		what = "an empty value"
	case val.Kind() == abi.KindString:
		what = "a value that is not JSON"
	case val.Kind() != abi.KindNull:
		what = "a value that is not a JSON object"
	}
	out.Warn("cursor: message " + id + " of the conversation holds " + what + ": it is left out")
	out.Ignored(sdk.S("bubble:lost"))
}

// composer handles a conversation's record: its id and model (the model
// the user picked; "default" is Cursor's Auto, no model), and the bubbles
// an older Cursor kept inline (conversation[]).
func (n *normalizer) composer(id string, c abi.Value, out *sdk.Out) {
	m := sessionMeta(id, c, "composerId")
	if name := c.Get("modelConfig").Get("modelName").String(); modelName(name) {
		n.ideModel = name
		m.Model = sdk.S(name)
	}
	out.Meta(m)
	inline := c.Get("conversation")
	if inline.Kind() != abi.KindArray || inline.Len() == 0 {
		out.Ignored(sdk.S("composer"))
		return
	}
	it := inline.Iter()
	for it.Next() {
		b := it.Value()
		n.bubble(b.Get("bubbleId").String(), b, out)
	}
}

// sessionMeta is the meta naming a session whose record states its id in
// member, else by id (the row's key).
func sessionMeta(id string, v abi.Value, member string) sdk.Meta {
	if own := v.Get(member).String(); own != "" {
		id = own
	}
	m := sdk.Meta{}
	if id != "" {
		m.SessionID = sdk.S(id)
	}
	return m
}

// workspace handles a row of the workspace map: the workspace that lists
// the composer. A folder workspace's folder, a local file URI, is the
// agent's working directory; a multi-root workspace (several folders),
// a remote one or a workspace.json missing says no one directory: the
// run's is left unknown, never guessed.
func (n *normalizer) workspace(file abi.Value, out *sdk.Out) {
	if dir, ok := sdk.FilePath(file.Get("folder").String()); ok && !n.cwd {
		n.cwd = true
		out.Meta(sdk.Meta{Cwd: sdk.S(dir)})
		return
	}
	switch {
	case n.cwd:
		out.Ignored(sdk.S("workspace_again"))
	case file.Get("workspace").Kind() == abi.KindString:
		out.Ignored(sdk.S("workspace_multi_root"))
	case file.Get("folder").Kind() == abi.KindString:
		out.Ignored(sdk.S("workspace_remote"))
	default:
		out.Ignored(sdk.S("workspace_unknown"))
	}
}

func modelName(s string) bool { return strings.TrimSpace(s) != "" && s != "default" }

// bubble handles one message (type 1 the user's, 2 the assistant's): its
// text, thinking, and the tool call it made (toolFormerData) with its
// result where Cursor has one, and the images a user's bubble attached.
// A bubble with none of these is one of the empty states Cursor writes
// while it streams: ignored.
func (n *normalizer) bubble(id string, b abi.Value, out *sdk.Out) {
	if bid := b.Get("bubbleId").String(); bid != "" {
		id = bid
	}
	text := b.Get("text")
	if text.Kind() != abi.KindString || text.Is("") {
		text = b.Get("rawText")
	}
	thinking := b.Get("thinking").Get("text")
	tool := b.Get("toolFormerData")
	// Tested without copying the texts (sdk.View, Is).
	hasText := text.Kind() == abi.KindString && strings.TrimSpace(sdk.View(text)) != ""
	hasThinking := thinking.Kind() == abi.KindString && !thinking.Is("")
	hasTool := tool.Kind() == abi.KindObject && tool.Get("name").Kind() == abi.KindString
	typ, _ := b.Get("type").Int()
	switch t := b.Get("type"); {
	case t.Is("user"): // an older Cursor's chat tab (chatTab)
		typ = 1
	case t.Is("ai"):
		typ = 2
	}
	var images []string
	if typ == 1 {
		images = bubbleImages(b)
	}
	if !hasText && !hasThinking && !hasTool && len(images) == 0 {
		out.Ignored(sdk.S("bubble:empty"))
		return
	}
	user := typ == 1
	if !user && typ != 2 {
		out.Unmapped(sdk.S("bubble:type:" + sdk.TypeName(b.Get("type"))))
		return
	}
	ts := bubbleOwnTime(b, user)
	hdr := sdk.Message{User: user, ID: sdk.Opt(id), Time: sdk.Opt(ts)}
	if !user {
		model := b.Get("modelInfo").Get("modelName").String()
		if !modelName(model) {
			model = b.Get("modelType").String() // a chat tab's answer
		}
		if !modelName(model) {
			model = n.ideModel
		}
		hdr.Model = sdk.Opt(model)
	}
	k := sdk.S("b:" + id)
	out.Open(k, hdr)
	slot := 0
	if hasThinking {
		out.Block(k, slot, sdk.Block{Type: sdk.BlockThinking, Thinking: sdk.Text(thinking)})
		slot++
	}
	if hasText {
		bl := sdk.Block{Type: sdk.BlockText, Text: sdk.Text(text)}
		if user {
			bl.Origin = sdk.OriginPrompt
		} else {
			n.final = text.String()
		}
		out.Block(k, slot, bl)
		slot++
	}
	for _, img := range images {
		// The images the user attached (a screenshot pasted with no
		// words is a turn of its own): named, the transcript has no
		// image block.
		out.Block(k, slot, sdk.Block{Type: sdk.BlockText, Text: sdk.S("[image " + img + "]"), Origin: sdk.OriginPrompt})
		slot++
	}
	end := sdk.MessageEnd{}
	if !user {
		// tokenCount is often {0, 0}: Cursor did not count that call
		// (no response has no input); such a pair is no figure.
		in, out1 := b.Get("tokenCount").Get("inputTokens"), b.Get("tokenCount").Get("outputTokens")
		iv, _ := in.Int()
		ov, _ := out1.Int()
		if iv > 0 || ov > 0 {
			end.Usage = sdk.Usage{Input: sdk.IntOf(in), Output: sdk.IntOf(out1)}
			if !n.counted[id] {
				// The step's total counts a bubble once, whichever
				// versions of it are read.
				if n.counted == nil {
					n.counted = map[string]bool{}
				}
				n.counted[id] = true
				out.Usage(end.Usage, sdk.ModeAdd)
			}
		}
	}
	if hasTool {
		n.ideTool(k, slot, id, tool, ts, out)
	}
	out.Close(k, end)
}

// bubbleImages names the images a user's bubble attached
// (context.selectedImages, else images: each its path, else its uuid).
func bubbleImages(b abi.Value) []string {
	var names []string
	for _, list := range []abi.Value{b.Get("context").Get("selectedImages"), b.Get("images")} {
		it := list.Iter()
		for it.Next() {
			img := it.Value()
			name := img.Get("path").String()
			if name == "" {
				name = img.Get("uuid").String()
			}
			if name == "" {
				name = "(unnamed)"
			}
			names = append(names, name)
		}
		if len(names) > 0 {
			break
		}
	}
	return names
}

// bubbleTime is a bubble's createdAt: an ISO time as Cursor writes it, or
// milliseconds since 1970.
func bubbleTime(v abi.Value) string {
	switch v.Kind() {
	case abi.KindString:
		if t, ok := utcMillis(v.Raw()); ok {
			return t
		}
		if t, err := time.Parse(time.RFC3339Nano, v.String()); err == nil {
			return t.UTC().Format("2006-01-02T15:04:05.000Z")
		}
	case abi.KindNumber:
		if ms, ok := v.Int(); ok && ms > 0 {
			return sdk.RFC3339Millis(ms)
		}
	}
	return ""
}

// utcMillis is the fast path of bubbleTime for the times Cursor writes,
// "2026-01-01T10:00:09.123Z": the JSON string raw (quotes included) read
// as time.Parse(time.RFC3339Nano) and written as
// Format("2006-01-02T15:04:05.000Z") would, when it is in UTC (Z) and
// has no escape; ok false for anything else, which bubbleTime then
// parses. It checks every range time.Parse checks, so that it accepts
// no time that time.Parse refuses. In UTC the digits written are the
// digits read (the fraction cut to milliseconds, as Format cuts it):
// time.Parse and Format cost a fifth of the plugin's WebAssembly time.
func utcMillis(raw []byte) (string, bool) {
	if len(raw) < len(`"2006-01-02T15:04:05Z"`) || raw[0] != '"' || raw[len(raw)-1] != '"' || raw[len(raw)-2] != 'Z' {
		return "", false
	}
	s := raw[1 : len(raw)-2] // without the quotes and the Z
	num := func(b []byte, lo, hi int) (int, bool) {
		x := 0
		for _, c := range b {
			if c < '0' || c > '9' {
				return 0, false
			}
			x = x*10 + int(c-'0')
		}
		return x, lo <= x && x <= hi
	}
	if s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return "", false
	}
	year, ok1 := num(s[0:4], 0, 9999)
	month, ok2 := num(s[5:7], 1, 12)
	_, ok3 := num(s[11:13], 0, 23)
	_, ok4 := num(s[14:16], 0, 59)
	_, ok5 := num(s[17:19], 0, 59)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
		return "", false
	}
	if _, ok := num(s[8:10], 1, daysIn(month, year)); !ok {
		return "", false
	}
	frac := s[19:]
	if len(frac) > 0 {
		if len(frac) < 2 || frac[0] != '.' {
			return "", false
		}
		if _, ok := num(frac[1:min(len(frac), 10)], 0, 999999999); !ok {
			return "", false
		}
		for _, c := range frac[min(len(frac), 10):] {
			if c < '0' || c > '9' {
				return "", false
			}
		}
	}
	var b [24]byte
	copy(b[:19], s[:19])
	b[19] = '.'
	for i := range 3 {
		b[20+i] = '0'
		if 1+i < len(frac) {
			b[20+i] = frac[1+i]
		}
	}
	b[23] = 'Z'
	return string(b[:]), true
}

// daysIn is the number of days of month in year, as time.Parse counts
// them.
func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// bubbleOwnTime is the bubble's own time: its createdAt, else (the
// bubbles an older Cursor kept inline in the composer have none) its
// timingInfo's times in milliseconds, clientStartTime, clientRpcSendTime,
// clientSettleTime and clientEndTime: an answer's is when it was whole
// (the end first), a user's when it was sent (the start first). "" when
// the bubble states none: the host then dates it by its row, the
// composer's createdAt.
func bubbleOwnTime(b abi.Value, user bool) string {
	if t := bubbleTime(b.Get("createdAt")); t != "" {
		return t
	}
	ti := b.Get("timingInfo")
	if ti.Kind() != abi.KindObject {
		return ""
	}
	order := []string{"clientEndTime", "clientSettleTime", "clientRpcSendTime", "clientStartTime"}
	if user {
		order = []string{"clientStartTime", "clientRpcSendTime", "clientSettleTime", "clientEndTime"}
	}
	for _, k := range order {
		// Epoch milliseconds only (after 2001): never a relative clock.
		if f, ok := ti.Get(k).Float(); ok && f >= 1e12 {
			return sdk.RFC3339Millis(int64(f))
		}
	}
	return ""
}

// ideTool handles a bubble's toolFormerData: a tool_use block and a
// tool.call (its input rawArgs, the model's JSON, else params, Cursor's
// reading of it), and a tool.result by its status: completed ok, error an
// error, cancelled or aborted cancelled, rejected (or the user's decision
// rejected) denied; a call still loading has no result yet.
func (n *normalizer) ideTool(k sdk.Str, slot int, bubbleID string, t abi.Value, ts string, out *sdk.Out) {
	id := t.Get("toolCallId").String()
	if id == "" {
		id = "cursor-" + bubbleID
	}
	name := t.Get("name").String()
	input := t.Get("rawArgs")
	if input.Kind() != abi.KindString || input.String() == "" {
		input = t.Get("params")
	}
	in := sdk.JSON(input)
	if !input.Exists() || input.Kind() == abi.KindNull {
		in = sdk.RawJSON("{}")
	}
	out.Block(k, slot, sdk.Block{Type: sdk.BlockToolUse, ToolName: sdk.S(name), ToolID: sdk.S(id), ToolInput: in})
	c, isNew := n.ideCall(bubbleID, id)
	if n.answered[c] {
		return
	}
	args := input
	if input.Kind() == abi.KindString {
		if doc, ok := sdk.ParseText(input); ok {
			args = doc.Root()
		}
	}
	kind, cmd := toolKind(ideToolBase(name), args)
	if isNew {
		out.ToolCall(sdk.ToolCall{CallID: sdk.S(id), Name: sdk.S(name), Input: in, Kind: kind, Command: cmd, Time: sdk.Opt(ts)})
	}

	status := ""
	switch st := sdk.View(t.Get("status")); {
	case t.Get("userDecision").Is("rejected") || st == "rejected":
		status = "denied"
	case st == "completed" || st == "success":
		status = sdk.StatusOK
	case st == "error" || st == "failed":
		status = sdk.StatusError
	case st == "cancelled" || st == "canceled" || st == "aborted":
		status = "cancelled"
	case st == "" || st == "loading" || st == "pending" || st == "running" || st == "inProgress":
		return // no outcome yet
	default:
		out.Warn("cursor: tool call " + id + " has status " + st + ": not read as a result")
		return
	}
	n.answered[c] = true
	res := resultText(t.Get("result"))
	r := sdk.ToolResult{CallID: sdk.S(id), Name: sdk.S(name), Status: sdk.S(status), Time: sdk.Opt(ts)}
	if ec, ok := exitCode(t.Get("result")); ok {
		r.ExitCode = sdk.N(ec)
		if ec != 0 && status == sdk.StatusOK {
			status, r.Status = sdk.StatusError, sdk.S(sdk.StatusError)
		}
	}
	if status == sdk.StatusOK {
		if t.Get("result").Exists() && t.Get("result").Kind() != abi.KindNull {
			r.Output = sdk.S(res)
		}
	} else {
		r.IsError = true
		msg := res
		if e := t.Get("error"); e.Kind() == abi.KindString && e.String() != "" {
			msg = e.String()
		}
		if msg != "" {
			r.Error = sdk.S(msg)
		}
		if res != "" {
			r.Output = sdk.S(res)
		}
	}
	out.ToolResult(r)
}

// ideCall is the call a bubble's toolFormerData names (its key in
// answered: the bubble's id, a 0 byte, the call id) and whether it is a
// call not reported yet. A bubble read again (a changed row, a session
// read whole again) names the call it named before. Another bubble
// naming a call id is a new call when the id's latest call has its
// result (model servers make ids unique per response, not per session:
// a local one names every call call_1), as the host reads it; before
// that result it names that same call.
func (n *normalizer) ideCall(bubbleID, id string) (string, bool) {
	k := bubbleID + "\x00" + id
	if c, ok := n.callOf[k]; ok {
		return c, false
	}
	if n.callOf == nil {
		n.callOf, n.latest, n.answered = map[string]string{}, map[string]string{}, map[string]bool{}
	}
	if l, ok := n.latest[id]; ok && !n.answered[l] {
		n.callOf[k] = l // a repeat before the call's result
		return l, false
	}
	n.callOf[k], n.latest[id] = k, k
	return k, true
}

// ideToolBase is a tool's name without Cursor's version suffix
// (run_terminal_command_v2, edit_file_v2).
func ideToolBase(name string) string {
	if i := strings.LastIndex(name, "_v"); i > 0 && i+2 < len(name) && strings.Trim(name[i+2:], "0123456789") == "" {
		return name[:i]
	}
	return name
}

// resultText is a tool's result as text: a JSON string holding an
// object with output (a terminal's), else the string itself.
func resultText(v abi.Value) string {
	if v.Kind() == abi.KindString {
		if doc, ok := sdk.ParseText(v); ok && doc.Root().Kind() == abi.KindObject {
			if o := doc.Root().Get("output"); o.Kind() == abi.KindString {
				return o.String()
			}
		}
		return v.String()
	}
	if v.Kind() == abi.KindObject {
		if o := v.Get("output"); o.Kind() == abi.KindString {
			return o.String()
		}
	}
	if !v.Exists() || v.Kind() == abi.KindNull {
		return ""
	}
	return sdk.Text(v).String()
}

// exitCode is a terminal result's exit code ({"exitCode": n} or
// {"exit_code": n}, as an object or a JSON string).
func exitCode(v abi.Value) (int64, bool) {
	if v.Kind() == abi.KindString {
		doc, ok := sdk.ParseText(v)
		if !ok {
			return 0, false
		}
		v = doc.Root()
	}
	for _, k := range []string{"exitCode", "exit_code"} {
		if n, ok := v.Get(k).Int(); ok {
			return n, true
		}
	}
	return 0, false
}

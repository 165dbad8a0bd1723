package opencode

import (
	"slices"
	"strconv"
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// Plugin is the OpenCode normalizer.
var Plugin = sdk.Plugin{
	Manifest: abi.Manifest{
		Name:        "opencode",
		Version:     "0.1.0",
		Providers:   []string{"opencode", "kilo"},
		Formats:     []string{fmtRows, fmtTree, fmtJSON, fmtExport},
		Description: "OpenCode (and Kilo CLI) sessions from its SQLite store and its older file tree, opencode run --format json, and opencode export",
		Stores: []abi.Store{{
			Name: "OpenCode", Kind: abi.StoreKindSQLite,
			// OpenCode keeps its data in $XDG_DATA_HOME/opencode, else
			// ~/.local/share/opencode, on every OS (xdg-basedir); a
			// release channel other than latest has a database of its
			// own (opencode-beta.db). Sessions are kept until deleted.
			Roots:   []abi.Root{{Env: "XDG_DATA_HOME", Path: "opencode"}, {Path: "~/.local/share/opencode"}},
			Pattern: "opencode*.db",
			SQLite:  Queries,
		}, {
			// The older file tree (up to 1.1, and left in place when
			// 1.2 copied it into opencode.db): a session's info, its
			// messages, and each message's parts, one JSON document
			// each (storage/session/<project>/<id>.json,
			// message/<session>/<id>.json, part/<message>/<id>.json). A
			// session the database holds too is archived from there.
			Name: "OpenCode (older file tree)", Kind: abi.StoreKindTree,
			Roots:   []abi.Root{{Env: "XDG_DATA_HOME", Path: "opencode"}, {Path: "~/.local/share/opencode"}},
			Dir:     "storage",
			Pattern: "session/*/*.json",
			Files:   TreeFiles,
			Parent:  &abi.StoreParent{File: TreeFiles[0], Member: "parentID"},
		}, {
			// Kilo CLI, an OpenCode fork: the same schema in
			// $XDG_DATA_HOME/kilo/kilo.db (kilo-<channel>.db, or the
			// opencode-<channel>.db an older build left there).
			Name: "Kilo CLI", Provider: "kilo", Kind: abi.StoreKindSQLite,
			Roots:   []abi.Root{{Env: "XDG_DATA_HOME", Path: "kilo"}, {Path: "~/.local/share/kilo"}},
			Pattern: "{kilo,opencode}*.db",
			SQLite:  Queries,
		}},
	},
	New:  func(opts abi.BeginOptions) sdk.Normalizer { return &normalizer{msgs: map[string]*message{}} },
	Keys: keys,
	// opencode export prints the session as one pretty-printed document.
	Reassemble: true,
}

// Queries are what the host reads of OpenCode's database (drizzle
// schema: session, message and part, each row's data a JSON column).
// A session's cursor is the latest time_updated of its row, its messages
// and its parts, its parent the session a sub-agent's was started from
// (the host links their runs); its rows are the session row and, per message in
// order, the message joined with each of its parts (a message without
// parts once), so that the rows of one message come together.
//
// OpenCode's v2 runtime (packages/core) keeps a session's messages in
// session_message instead (core/src/session/sql.ts: id, session_id,
// type, seq, time_created, time_updated, data; one row a message,
// rewritten in place as it grows), in the same database and session
// table; a database of an older build lacks the table (Newer,
// IfTable). Its rows are read after the message and part rows, each
// row whole; those created at or before the session's last message of
// the older tables are left out: the v2 runtime copies an older
// session's messages into its table (session/message-backfill.ts,
// their times as they were), and those the older rows already hold.
//
// The runtime's split (migration 20260804233008_loose_psylocke) keeps
// its sessions in session_v2, beside the older binary's session or
// renamed from it (Schemas: the first whose tables the database all has
// lists the sessions; each session row query runs only where its table
// is, doc.go).
var Queries = &abi.SQLiteSource{
	Sessions: `SELECT s.id AS key, max(s.time_updated,
  coalesce((SELECT max(m.time_updated) FROM message m WHERE m.session_id = s.id), 0),
  coalesce((SELECT max(p.time_updated) FROM part p WHERE p.session_id = s.id), 0)) AS cursor,
  s.parent_id AS parent
FROM session s ORDER BY s.time_created, s.id`,
	Newer: &abi.SQLiteNewer{Table: "session_message",
		Sessions: `SELECT s.id AS key, ` + sessionCursor + ` AS cursor,
  s.parent_id AS parent
FROM session s ORDER BY s.time_created, s.id`},
	Schemas: []abi.SQLiteSchema{
		// The split's fresh lineage: the older binary's sessions in
		// session, the v2 runtime's in session_v2 (an id in both is
		// listed once, as session_v2's).
		{Tables: []string{"session_v2", "session", "message", "part", "session_message"},
			Sessions: `SELECT s.id AS key, ` + sessionCursor + ` AS cursor,
  s.parent_id AS parent, s.time_created AS created
FROM session_v2 s
UNION ALL
SELECT s.id AS key, ` + sessionCursor + ` AS cursor,
  s.parent_id AS parent, s.time_created AS created
FROM session s WHERE s.id NOT IN (SELECT v.id FROM session_v2 v)
ORDER BY created, key`},
		// The split's pre-split lineage: session renamed session_v2,
		// every session in it.
		{Tables: []string{"session_v2", "message", "part", "session_message"},
			Sessions: `SELECT s.id AS key, ` + sessionCursor + ` AS cursor,
  s.parent_id AS parent
FROM session_v2 s ORDER BY s.time_created, s.id`},
	},
	Tables: []abi.SQLiteTable{
		{Table: "session", IfTable: "session", Key: "id", Version: "time_updated", Time: "time_created",
			JSON:  []string{"summary_diffs", "revert", "permission", "goal", "model"},
			Query: `SELECT * FROM session WHERE id = :session AND time_updated >= :since`},
		{Table: "session_v2", IfTable: "session_v2", Key: "id", Version: "time_updated", Time: "time_created",
			JSON:  []string{"summary_diffs", "revert", "permission", "metadata", "model"},
			Query: `SELECT * FROM session_v2 WHERE id = :session AND time_updated >= :since`},
		{Table: "part", IfTable: "part", Key: "key", Version: "version", Time: "message_time_created",
			JSON: []string{"message", "data"},
			Query: `SELECT coalesce(p.id, m.id) AS key, max(m.time_updated, coalesce(p.time_updated, 0)) AS version,
  m.id AS message_id, m.time_created AS message_time_created, m.time_updated AS message_time_updated, m.data AS message,
  p.id AS id, p.time_created AS time_created, p.time_updated AS time_updated, p.data AS data
FROM message m LEFT JOIN part p ON p.message_id = m.id
WHERE m.session_id = :session AND (m.time_updated >= :since OR p.time_updated >= :since)
ORDER BY m.time_created, m.id, p.id`},
		{Table: "session_message", IfTable: "session_message", Key: "id", Version: "time_updated", Time: "time_created",
			JSON: []string{"data"},
			Query: `SELECT sm.id, sm.session_id, sm.type, sm.seq, sm.time_created, sm.time_updated, sm.data
FROM session_message sm
WHERE sm.session_id = :session AND sm.time_updated >= :since
  AND sm.time_created > coalesce((SELECT max(m.time_created) FROM message m WHERE m.session_id = :session), 0)
ORDER BY sm.seq`},
	},
}

// sessionCursor is a session's cursor where the database has
// session_message: the latest time_updated of the row of session s, its
// messages and parts and its messages of the v2 runtime.
const sessionCursor = `max(s.time_updated,
  coalesce((SELECT max(m.time_updated) FROM message m WHERE m.session_id = s.id), 0),
  coalesce((SELECT max(p.time_updated) FROM part p WHERE p.session_id = s.id), 0),
  coalesce((SELECT max(sm.time_updated) FROM session_message sm WHERE sm.session_id = s.id), 0))`

// TreeFiles are the files of one session of the older file tree, in the
// order the host hands them: the session's info, then each message
// followed by its parts (abi.StoreKindTree).
var TreeFiles = []string{"session/*/{key}.json", "message/{key}/*.json", "part/{*}/*.json"}

// Format names, as reported in OpMeta and the manifest.
const (
	fmtRows   = "rows"   // the host's row lines of the SQLite store
	fmtTree   = "tree"   // the host's file lines and documents of the older file tree
	fmtJSON   = "json"   // opencode run --format json
	fmtExport = "export" // opencode export: the session as one document
)

// What a document of the older file tree is, by its path's first
// element.
const (
	docNone = iota
	docSession
	docMessage
	docPart
)

// part is what the normalizer keeps of one part (everything a Go value:
// spans die with their line).
type part struct {
	id, typ      string
	text         string // text, reasoning; a file's or subtask's description
	synthetic    bool
	ignored      bool // a user message's text OpenCode never sends to the model
	tool, callID string
	status       string  // pending, running, completed, error
	input        sdk.Str // the JSON input (kept)
	command      string  // bash: the command line
	output       string
	errText      string
	interrupted  bool // a tool error's metadata.interrupted
	exit         sdk.Int
	noExit       bool   // metadata.exit stated null: the command did not exit by itself
	background   bool   // metadata.background: a command left running (some forks)
	signal       string // metadata.structured.signal (v2): the signal that ended the command
	timedOut     bool   // metadata.structured.timeout (v2): the command ran out of time
	start, end   string // RFC 3339
	tokens       sdk.Usage
	cost         float64
	hasCost      bool
	reason       string // step-finish
	// open: a step-finish of run --format json whose tokens state
	// reasoning and no total: whether its output holds the reasoning
	// depends on which client wrote it (stepUsage).
	open bool
}

// message is what the normalizer keeps of one message.
type message struct {
	id      string
	user    bool
	model   string
	created string // RFC 3339
	// createdMs is the milliseconds created was last formatted from (0
	// when it came from elsewhere): a row repeats its message's info,
	// which then costs no formatting.
	createdMs int64
	finish    string
	errName   string
	errText   string
	tokens    sdk.Usage // the message's own (when it has no step-finish)
	parts     []*part   // by id, in order (find)
	open      bool
	reported  map[string]bool // errors reported (message, retry parts)
	// info: its info was read; done: the info says the message is
	// finished (time.completed, a finish reason or an error set).
	info, done bool
	// failed: the info's error, read and not reported yet: it is
	// reported when the message closes (close), after all of its
	// blocks. Every row of a message repeats its info, error included,
	// and a failed response's parts (its step's start, the text it had
	// streamed) are rows of their own: reported on the first, the error
	// would come before the text of the rows after it, which the host's
	// session rule then reads as an answer after the error (ok, where
	// the response failed).
	failed bool
}

type normalizer struct {
	format string
	meta   bool
	// placeSent: the working directory and root of a message path were
	// reported.
	placeSent bool
	doc       int // the older file tree: what the document after a file line is
	msgs      map[string]*message
	current   *message
	// steps holds every step-finish's tokens and cost, in order of
	// their part ids (find), for the session's totals.
	steps []*part
	// model is the step's model: the latest an assistant message names.
	model string
	// created is when the session was created (milliseconds, 0 when its
	// info was not read); forked are the messages created before it:
	// copied from the session it was forked from (see copied).
	created int64
	forked  map[string]bool
	// last is the message first seen last: the session's newest (the
	// rows come in the order of their messages' creation).
	last *message
	// stepOpen: run --format json printed a step_start whose
	// step_finish has not come.
	stepOpen bool
	// idle is how the session's latest execution ended, as the session
	// row of the v2 runtime states it (idleOf), idleMs when.
	idle   idleOutcome
	idleMs int64
	// v2: the run --format json output shows the client of OpenCode's
	// v2 runtime (v2Line): its step_finish tokens state the output less
	// the reasoning, and no total.
	v2 bool
	// stale are the messages closed with an open step (part.open)
	// before the output showed which client wrote it, in the order they
	// closed: End closes them again (settleOpenSteps).
	stale []*message
	// The members of the objects a line is read from, each found in one
	// pass over its object (fields.of) rather than one per Get.
	fRoot, fRow, fInfo, fPart, fState, fTokens fields
	fMsg                                       fields // a message of opencode export: {info, parts}
}

// fields are the members of an object in the order of keys (missing
// when absent, or when the value is no object).
type fields [nKeys]abi.Value

// of fills f with v's members and returns it.
func (f *fields) of(v abi.Value) *fields {
	v.Lookup(keys, f[:])
	return f
}

// forkedHistory is the native name under which a message a fork copied
// from its parent session (and its parts) is declared ignored.
const forkedHistory = "(forked history)"

// copied reports whether message msgID was copied into this session by
// Session.fork, which creates the session, then writes the parent's
// messages into it with new ids and their info as it was: a message
// created (info.time.created, else its row's time_created) before the
// session was is the parent's. The answer is kept for the message's
// later parts.
func (n *normalizer) copied(msgID string, info abi.Value, rowCreated abi.Value) bool {
	if n.forked[msgID] {
		return true
	}
	if n.created <= 0 || n.msgs[msgID] != nil {
		return false
	}
	c, ok := info.Path("time", "created").Int()
	if !ok {
		c, ok = rowCreated.Int()
	}
	if !ok || c <= 0 || c >= n.created {
		return false
	}
	if n.forked == nil {
		n.forked = map[string]bool{}
	}
	n.forked[msgID] = true
	return true
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
	tw := f[kTwasm]
	switch {
	case tw.Is(abi.SourceFileType):
		n.setFormat(out, fmtTree, "")
		n.doc = treeDoc(f[kPath].String())
		out.Ignored(sdk.S("twasm_file"))
	case n.doc != docNone:
		n.treeDoc(v, f, out)
	case tw.Is(abi.SourceFactsType):
		n.setFormat(out, fmtRows, "")
		out.Ignored(sdk.S("twasm_source"))
	case tw.Is(abi.RowType):
		n.setFormat(out, fmtRows, "")
		n.row(f, out)
	case f[kPart].Kind() == abi.KindObject && f[kType].Kind() == abi.KindString:
		n.setFormat(out, fmtJSON, f[kSessionID].String())
		p := n.fPart.of(f[kPart])
		switch {
		case p[kType].Is("step-start"):
			n.stepOpen = true
		case p[kType].Is("step-finish"):
			n.stepOpen = false
		case p[kType].Is("tool") && p[kState].Path("metadata", "providerResult").Kind() != abi.KindInvalid:
			// Only the v2 client writes a tool's metadata with the
			// provider's result (noninteractive.ts: providerResult, the
			// tool.success and tool.failed event's provider); OpenCode's
			// v1 run prints the part as the session holds it, its
			// metadata the tool's own.
			n.v2 = true
		}
		n.part(n.id(p[kMessageID]), p[kID].String(), p, abi.Value{}, f[kTimestamp], out)
	case f[kType].Is("error"):
		n.setFormat(out, fmtJSON, f[kSessionID].String())
		e := f[kError]
		if e.Get("name").Kind() == abi.KindInvalid && e.Get("type").Kind() == abi.KindString {
			// A session error {type, message}: the v2 client's (v1
			// prints the session's {name, data}).
			n.v2 = true
		}
		report(errCode(e), errMessage(e), out)
	case f[kType].Is("done"):
		// OpenCode's run prints it last once the session went idle
		// (cli/cmd/run.ts finish(): {reason: "idle", rejected}): the run
		// completed, whether or not it succeeded (its errors stand).
		// rejected names the permissions it refused on its own, run
		// without --auto (their calls' errors say so too).
		n.setFormat(out, fmtJSON, f[kSessionID].String())
		out.Ignored(sdk.S("done"))
		var names []string
		for it := v.Get("rejected").Iter(); it.Next(); {
			names = append(names, it.Value().String())
		}
		if len(names) > 0 {
			out.Warn("opencode run refused the permission(s) the session asked for on its own (run without --auto): " + strings.Join(names, ", "))
		}
	case f[kInfo].Kind() == abi.KindObject && f[kMessages].Kind() == abi.KindArray:
		n.export(f, out)
	default:
		out.Unmapped(sdk.S(nativeType(v)))
	}
	return nil
}

func nativeType(v abi.Value) string {
	if t := v.Get("$twasm"); t.Kind() == abi.KindString {
		return "$twasm:" + t.String()
	}
	if t := v.Get("type"); t.Kind() == abi.KindString {
		return t.String()
	}
	return "object"
}

func (n *normalizer) setFormat(out *sdk.Out, f, session string) {
	if n.meta {
		return
	}
	n.meta, n.format = true, f
	m := sdk.Meta{Format: sdk.S(f)}
	if session != "" {
		m.SessionID = sdk.S(session)
	}
	// The stores are session logs, and `opencode run --format json`
	// stops printing when the session goes idle: no format has a
	// terminal event.
	m.NoTerminal = true
	out.Meta(m)
}

// row handles one row line of the SQLite store.
func (n *normalizer) row(f *fields, out *sdk.Out) {
	r := f[kRow]
	switch sdk.View(f[kTable]) {
	case "session", "session_v2":
		n.session(r, r.Get("parent_id"), r.Get("time_created"), out)
		n.idleOf(n.fRow.of(r))
	case "part":
		rf := n.fRow.of(r)
		msgID := n.id(rf[kMessageIDCol])
		if msgID == "" {
			out.Unmapped(sdk.S("part_without_message"))
			return
		}
		if n.copied(msgID, rf[kMessage], rf[kMessageTimeCreated]) {
			out.Ignored(sdk.S(forkedHistory))
			return
		}
		// data and message hold neither their ids nor the session's:
		// those are columns.
		var p *fields
		if d := rf[kData]; d.Kind() == abi.KindObject {
			p = n.fPart.of(d)
		}
		n.part(msgID, rf[kID].String(), p, rf[kMessage], rf[kMessageTimeCreated], out)
	case "session_message":
		n.v2Message(r, out)
	default:
		out.Unmapped(sdk.S("row:" + f[kTable].String()))
	}
}

// id is the string v holds, without allocating when it is the current
// message's id (a message's rows come together).
func (n *normalizer) id(v abi.Value) string {
	if n.current != nil && v.Is(n.current.id) {
		return n.current.id
	}
	return v.String()
}

// session handles a session's info (a row of the database, or a
// document of the older file tree, whose parent is parentID), created
// when created says (milliseconds).
func (n *normalizer) session(info, parent, created abi.Value, out *sdk.Out) {
	if c, ok := created.Int(); ok && c > 0 {
		n.created = c
	}
	// directory is where the session runs.
	out.Meta(sdk.Meta{SessionID: sdk.Text(info.Get("id")), ProviderVersion: sdk.Text(info.Get("version")), Cwd: sdk.StringOf(info.Get("directory"))})
	if parent.Kind() == abi.KindString && parent.String() != "" {
		out.Warn("a sub-agent session of " + parent.String() + " (a child run of its run; the parent's task call holds the sub-agent's result)")
	}
}

// treeDoc is what a document of the older file tree at path (relative
// to the storage directory) is.
func treeDoc(path string) int {
	first, _, _ := strings.Cut(path, "/")
	switch first {
	case "session":
		return docSession
	case "message":
		return docMessage
	case "part":
		return docPart
	}
	return docNone
}

// treeDoc handles a document of the older file tree: the same data as
// the database's rows (OpenCode's migration copies each file into its
// row, the ids out of the data into columns), read by the same code. A
// message comes before its parts, each part names its message.
func (n *normalizer) treeDoc(v abi.Value, f *fields, out *sdk.Out) {
	kind := n.doc
	n.doc = docNone // one document per file line
	switch kind {
	case docSession:
		n.session(v, f[kParentID], f[kTime].Get("created"), out)
	case docMessage:
		n.messageInfo(v, f, out)
	case docPart:
		msgID := n.id(f[kMessageID])
		if msgID == "" {
			out.Unmapped(sdk.S("part_without_message"))
			return
		}
		if n.forked[msgID] {
			out.Ignored(sdk.S(forkedHistory))
			return
		}
		n.part(msgID, f[kID].String(), f, abi.Value{}, abi.Value{}, out)
	}
}

// setCreated sets m.created to v, milliseconds since 1970, when v holds
// such a time (millis), formatting it only when it changed.
func (m *message) setCreated(v abi.Value) {
	ms, ok := v.Int()
	if !ok || ms <= 0 {
		return
	}
	if ms != m.createdMs || m.created == "" {
		m.created, m.createdMs = sdk.RFC3339Millis(ms), ms
	}
}

// keepString is the string v holds (missing: ""), old itself when it
// holds the same (no copy).
func keepString(old string, v abi.Value) string {
	if v.Is(old) {
		return old
	}
	return v.String()
}

// export handles the output of opencode export (cli/cmd/export.ts): one
// document {info, messages: [{info, parts}], todos}, the session's info,
// then each message's info and its parts, as Session.messages returns
// them (the same data as the database's rows and the older file tree's
// documents, read by the same code). todos, the session's plan, is not
// read. Kilo CLI's export is the same.
func (n *normalizer) export(f *fields, out *sdk.Out) {
	info := f[kInfo]
	n.setFormat(out, fmtExport, info.Get("id").String())
	n.session(info, info.Get("parentID"), info.Path("time", "created"), out)
	it := f[kMessages].Iter()
	for it.Next() {
		m := n.fMsg.of(it.Value())
		id, ok := n.messageInfo(m[kInfo], n.fInfo.of(m[kInfo]), out)
		if !ok {
			continue
		}
		pt := m[kParts].Iter()
		for pt.Next() {
			var p *fields
			if v := pt.Value(); v.Kind() == abi.KindObject {
				p = n.fPart.of(v)
			}
			n.part(id, partID(p), p, abi.Value{}, abi.Value{}, out)
		}
	}
}

// partID is the id of the part of members p ("" when p is nil).
func partID(p *fields) string {
	if p == nil {
		return ""
	}
	return p[kID].String()
}

// messageInfo handles a message's info (a document of the older file
// tree, or a message of opencode export's), f its members: the message,
// opened with it. ok is false, and the id empty, for a message without
// an id (counted unmapped) or one a fork copied from its parent
// (declared ignored): its parts are not read.
func (n *normalizer) messageInfo(info abi.Value, f *fields, out *sdk.Out) (id string, ok bool) {
	id = n.id(f[kID])
	if id == "" {
		out.Unmapped(sdk.S("message_without_id"))
		return "", false
	}
	if n.copied(id, info, abi.Value{}) {
		out.Ignored(sdk.S(forkedHistory))
		return "", false
	}
	n.part(id, "", nil, info, f[kTime].Get("created"), out)
	return id, true
}

// millis is an integer of milliseconds since 1970 as RFC 3339 ("" when
// there is none).
func millis(v abi.Value) string {
	ms, ok := v.Int()
	if !ok || ms <= 0 {
		return ""
	}
	return sdk.RFC3339Millis(ms)
}

// part handles part partID of message msgID (p, the part's members, is
// nil for a message without parts), with the message's info when the
// source has it; created is the message's creation (milliseconds) when
// the source has it apart from its info.
func (n *normalizer) part(msgID, partID string, p *fields, info, created abi.Value, out *sdk.Out) {
	// A message's rows come together: the current one needs no map
	// lookup (a string compare, where TinyGo's map hashes the key and
	// compares it through calls).
	m := n.current
	if m == nil || m.id != msgID {
		m = n.msgs[msgID]
	}
	if m == nil {
		m = &message{id: msgID, reported: map[string]bool{}}
		m.setCreated(created)
		n.msgs[msgID] = m
		n.last = m
	}
	if n.current != nil && n.current != m {
		n.close(n.current, out)
	}
	n.current = m
	if info.Kind() == abi.KindObject {
		n.info(m, info, out)
	}
	var changed *part
	if p != nil {
		changed = n.keep(m, partID, p)
	}
	// Every row opens its message (opening an open message only fills
	// its empty header fields): each row has its record.
	out.Open(sdk.S(m.id), sdk.Message{User: m.user, ID: sdk.S(m.id), Model: sdk.Opt(m.model), Time: sdk.Opt(m.created)})
	if !m.open {
		// Opened again in this stream (a later sync brought rows of a
		// message closed before): all of its blocks, in their slots.
		m.open = true
		for i, q := range m.parts {
			n.block(m, i, q, out)
		}
	} else if changed != nil {
		i, _ := find(m.parts, changed.id)
		n.block(m, i, changed, out)
	}
	if changed != nil {
		n.effects(m, changed, out)
	}
}

// info keeps a message's info (the message row's data). A message's
// every row repeats it: a string it holds again is not copied again.
func (n *normalizer) info(m *message, info abi.Value, out *sdk.Out) {
	f := n.fInfo.of(info)
	m.user = f[kRole].Is("user")
	if id := f[kModelID]; id.Kind() == abi.KindString {
		m.model = keepString(m.model, id)
		if !m.user {
			out.LatestModel(id, &n.model)
		}
	} else if mm := f[kModel]; mm.Kind() == abi.KindObject {
		m.model = keepString(m.model, mm.Get("modelID"))
	}
	m.setCreated(f[kTime].Get("created"))
	if f := f[kFinish]; f.Kind() == abi.KindString {
		m.finish = keepString(m.finish, f)
	}
	if t := f[kTokens]; t.Kind() == abi.KindObject {
		m.tokens = usage(n.fTokens.of(t))
	}
	// OpenCode's processor sets time.completed when it stops working
	// on an assistant message (answered, failed or aborted), and the
	// finish reason at a step's end: a message with neither, and no
	// error, is still being written.
	m.info = true
	if c, ok := f[kTime].Get("completed").Int(); (ok && c > 0) || m.finish != "" || f[kError].Kind() == abi.KindObject {
		m.done = true
	}
	n.place(f[kPath], out)
	if e := f[kError]; e.Kind() == abi.KindObject && !m.reported["message"] {
		m.reported["message"] = true
		m.errName, m.errText = e.Get("name").String(), errMessage(e)
		m.failed = true
	}
}

// report reports a message's error (or an error event): a provider
// error, except MessageAbortedError, which OpenCode sets when the user
// stops the response (session/processor.ts, an AbortError): a warning,
// as an interrupted turn is no provider failure.
func report(name, msg string, out *sdk.Out) {
	if aborted(name) {
		out.Warn("the response was aborted: " + msg)
		return
	}
	out.Error(sdk.ProviderError{Message: sdk.S(msg), Code: sdk.S(name)})
}

// aborted reports whether an error's name (v1) or type (v2) is the
// user's stop of the response: MessageAbortedError, which the v2
// runtime's session errors call "aborted" (session/message-backfill.ts
// maps the one to the other).
func aborted(name string) bool { return name == "MessageAbortedError" || name == "aborted" }

// place reports the working directory and the project's root an
// assistant message's path states ({cwd, root}), once. OpenCode's root
// is the git worktree, or "/" for a directory outside any repository:
// that names no root.
func (n *normalizer) place(path abi.Value, out *sdk.Out) {
	if n.placeSent || path.Kind() != abi.KindObject {
		return
	}
	m := sdk.Meta{Cwd: sdk.StringOf(path.Get("cwd"))}
	if root := path.Get("root"); !root.Is("/") {
		m.Project = sdk.StringOf(root)
	}
	if m.Cwd.IsSet() || m.Project.IsSet() {
		n.placeSent = true
		out.Meta(m)
	}
}

// errCode is an OpenCode error's code: its name (v1, {name, data}), else
// its type (the v2 runtime's session error {type, message},
// schema/session-error.ts).
func errCode(e abi.Value) string {
	if name := e.Get("name"); name.Kind() == abi.KindString {
		return name.String()
	}
	return e.Get("type").String()
}

// errMessage is an OpenCode error's text: data.message, else its name.
func errMessage(e abi.Value) string {
	if msg := e.Get("data").Get("message"); msg.Kind() == abi.KindString && msg.String() != "" {
		return msg.String()
	}
	if msg := e.Get("message"); msg.Kind() == abi.KindString && msg.String() != "" {
		return msg.String()
	}
	if name := e.Get("name"); name.Kind() == abi.KindString {
		return name.String()
	}
	return "error"
}

// usage reads OpenCode's tokens {input, output, reasoning, cache{read,
// write}, total}: its input leaves the cached tokens out (sdk.Split),
// twasm's counts every input token. Its output leaves the reasoning out
// when the total says so (doc.go): the total is then every
// input, output and reasoning token, and twasm's output, every output
// token, is output plus reasoning.
func usage(t *fields) sdk.Usage {
	cache := t[kCache]
	in, read, write := sdk.IntOf(t[kInput]), sdk.IntOf(cache.Get("read")), sdk.IntOf(cache.Get("write"))
	u := sdk.Split(in, read, write)
	u.Output, u.Reasoning, u.Total = sdk.IntOf(t[kOutput]), sdk.IntOf(t[kReasoning]), sdk.IntOf(t[kTotal])
	total, ok := u.Total.Value()
	reasoning, _ := u.Reasoning.Value()
	if ok && reasoning > 0 {
		if sum, _ := in.Plus(read).Plus(write).Plus(u.Output).Plus(u.Reasoning).Value(); sum == total {
			u.Output = u.Output.Plus(u.Reasoning)
		}
	}
	return u
}

// noTotal reports whether tokens t state reasoning and no total.
func noTotal(t *fields) bool {
	r, _ := sdk.IntOf(t[kReasoning]).Value()
	return r > 0 && t[kTotal].Kind() == abi.KindInvalid
}

// keep stores a part, p its members (replacing what the message held
// under its id).
func (n *normalizer) keep(m *message, id string, p *fields) *part {
	if id == "" {
		id = "#" + strconv.Itoa(len(m.parts))
	}
	q := &part{id: id, typ: known(p[kType], partTypes), synthetic: p[kSynthetic].Truthy(), ignored: p[kIgnored].Truthy()}
	switch q.typ {
	case "text", "reasoning":
		q.text = p[kText].String()
		if i, ok := find(m.parts, id); ok && n.format == fmtJSON && q.typ == "text" && m.parts[i].typ == "text" && !strings.HasPrefix(q.text, m.parts[i].text) {
			// run --format json of the v2 runtime prints a text as it
			// streams, each delta a text line of the same part id
			// holding that delta alone, then what the deltas lacked
			// (noninteractive.ts); OpenCode before it printed a text
			// once, whole, when it ended.
			q.text = m.parts[i].text + q.text
			n.v2 = true
		}
	case "tool":
		st := n.fState.of(p[kState])
		q.tool, q.callID, q.status = p[kTool].String(), p[kCallID].String(), known(st[kStatus], statuses)
		if q.callID == "" {
			// A part that names no call (OpenCode's own always does,
			// message-v2.ts ToolPart; a client or plugin posting
			// parts may not): the part is the call and its result
			// in one, paired by its id, not left without either.
			q.callID = id
		}
		if in := st[kInput]; in.Kind() == abi.KindObject {
			q.input = sdk.JSON(in).Keep()
			q.command = in.Get("command").String()
		}
		q.output = st[kOutput].String()
		q.errText = st[kError].String()
		meta := st[kMetadata]
		exit := meta.Get("exit")
		if exit.Kind() == abi.KindInvalid {
			// OpenCode's v2 runtime states how a command ended in the
			// tool's structured output (run --format json:
			// metadata.structured, shell.ts {exit?, signal?, timeout?}).
			so := meta.Get("structured")
			exit = so.Get("exit")
			q.signal = so.Get("signal").String()
			q.timedOut = so.Get("timeout").Truthy()
		}
		q.exit = sdk.IntOf(exit)
		q.noExit = exit.Kind() == abi.KindNull
		q.background = meta.Get("background").Truthy()
		q.interrupted = meta.Get("interrupted").Truthy()
		if o := meta.Get("output"); q.status == "error" && q.interrupted && o.Kind() == abi.KindString {
			// What a call stopped unfinished had written by then
			// (OpenCode gives it to the model as the call's output).
			q.output = o.String()
		}
		if _, ok := q.exit.Value(); !ok && !q.noExit && q.status == "completed" {
			q.exit = exitNotice(q)
		}
		t := st[kTime]
		q.start, q.end = millis(t.Get("start")), millis(t.Get("end"))
	case "step-finish":
		q.reason = p[kReason].String()
		t := n.fTokens.of(p[kTokens])
		q.tokens = usage(t)
		q.open = n.format == fmtJSON && noTotal(t)
		q.cost, q.hasCost = p[kCost].Float()
	case "file":
		q.text = "[file " + p[kFilename].String() + " " + p[kMime].String() + "]"
	case "subtask":
		q.text = "[subtask " + p[kAgent].String() + ": " + p[kDescription].String() + "]\n" + p[kPrompt].String()
	case "retry":
		q.errText = errMessage(p[kError])
		q.reason = p[kError].Get("name").String()
		q.exit = sdk.IntOf(p[kAttempt])
	}
	m.parts = put(m.parts, q)
	return q
}

// The part types and tool statuses OpenCode writes (message-v2.ts), kept
// without copying them from every row (known).
var (
	partTypes = []string{"text", "reasoning", "tool", "step-start", "step-finish", "file", "subtask", "retry", "compaction", "patch", "snapshot", "agent"}
	statuses  = []string{"pending", "running", "completed", "error"}
)

// known is the string v holds: the element of names it equals (no copy),
// else a copy.
func known(v abi.Value, names []string) string {
	for _, s := range names {
		if v.Is(s) {
			return s
		}
	}
	return v.String()
}

// put stores q in ps, parts in order of their ids, replacing the part of
// the same id. A sorted slice rather than a map that each row then
// sorts: a row's part finds its slot without copying or sorting the
// message's parts (map iteration and sort.Slice were an eighth of the
// plugin's time inside the TinyGo module).
func put(ps []*part, q *part) []*part {
	i, ok := find(ps, q.id)
	if ok {
		ps[i] = q
		return ps
	}
	return slices.Insert(ps, i, q)
}

// find is the slot of the part with id in ps (in order of their ids),
// or where it would go, and whether it is there.
func find(ps []*part, id string) (int, bool) {
	lo, hi := 0, len(ps)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if ps[mid].id < id {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, lo < len(ps) && ps[lo].id == id
}

// block sets the block a part makes at slot i of its message (a part
// that makes none leaves its slot empty).
func (n *normalizer) block(m *message, i int, q *part, out *sdk.Out) {
	key := sdk.S(m.id)
	switch q.typ {
	case "text":
		if q.ignored && (m.user || n.format == fmtJSON) {
			// Shown to the user, never sent to the model (OpenCode's
			// toModelMessages drops it): not the prompt, not context.
			// A run --format json part names no role: an ignored text
			// there is such a note (OpenCode itself marks no text of
			// the model's so), not the assistant's answer.
			return
		}
		b := sdk.Block{Type: sdk.BlockText, Text: sdk.S(q.text)}
		if m.user {
			b.Origin = sdk.OriginPrompt
			if q.synthetic {
				b.Origin = sdk.OriginInjected
			}
		}
		out.Block(key, i, b)
	case "reasoning":
		out.Block(key, i, sdk.Block{Type: sdk.BlockThinking, Thinking: sdk.S(q.text)})
	case "file", "subtask":
		b := sdk.Block{Type: sdk.BlockText, Text: sdk.S(q.text)}
		if m.user {
			b.Origin = sdk.OriginInjected
		}
		out.Block(key, i, b)
	case "tool":
		if q.status == "pending" {
			return // its input is not known yet
		}
		out.Block(key, i, sdk.Block{Type: sdk.BlockToolUse, ToolName: sdk.S(q.tool), ToolID: sdk.S(q.callID), ToolInput: jsonOr(q.input)})
	}
}

// jsonOr is a kept JSON input, or {} when there is none.
func jsonOr(s sdk.Str) sdk.Str {
	if !s.IsSet() {
		return emptyObject()
	}
	return s
}

func emptyObject() sdk.Str {
	doc, _ := sdk.Parse([]byte("{}"))
	return sdk.JSON(doc.Root()).Keep()
}

// effects reports what a part means beyond its block: calls and results,
// usage and cost, retries and compactions.
func (n *normalizer) effects(m *message, q *part, out *sdk.Out) {
	switch q.typ {
	case "tool":
		if q.status == "pending" || q.callID == "" {
			return
		}
		kind, cmd := toolKind(q)
		out.ToolCall(sdk.ToolCall{CallID: sdk.S(q.callID), Name: sdk.S(q.tool), Input: jsonOr(q.input), Kind: kind, Command: cmd, Time: sdk.Opt(q.start)})
		switch q.status {
		case "completed":
			// A command that exited non-zero is an error (the host
			// reads it from the exit code); any other completed run
			// is ok.
			r := sdk.ToolResult{CallID: sdk.S(q.callID), Name: sdk.S(q.tool), Output: sdk.S(q.output), ExitCode: q.exit, Time: sdk.Opt(q.end)}
			if st, why := stopped(q); st != "" {
				// The command was stopped (timed out, aborted, killed):
				// OpenCode completes the part all the same.
				r.Status, r.Error, r.IsError = sdk.S(st), sdk.S(why), true
			} else if code, ok := q.exit.Value(); !ok || code == 0 {
				r.Status = sdk.S("ok")
			}
			out.ToolResult(r)
		case "error":
			r := sdk.ToolResult{CallID: sdk.S(q.callID), Name: sdk.S(q.tool), Error: sdk.S(q.errText), IsError: true, Status: sdk.S(errorStatus(q)), ExitCode: q.exit, Time: sdk.Opt(q.end)}
			if q.output != "" {
				r.Output = sdk.S(q.output)
			}
			out.ToolResult(r)
		}
	case "step-finish":
		n.steps = put(n.steps, q)
		if !m.reported[q.id] {
			// The step's finish reason is the AI SDK's: a provider's
			// content filter stopped the model (a refusal, no error
			// set on the message) or the output hit its token limit.
			switch q.reason {
			case "content-filter":
				m.reported[q.id] = true
				out.Error(sdk.ProviderError{Message: sdk.S("the provider's content filter stopped the response"), Code: sdk.S("content-filter")})
			case "length":
				m.reported[q.id] = true
				out.Warn("the response was cut at the output token limit")
			}
		}
		n.sessionUsage(out)
	case "retry":
		if !m.reported[q.id] {
			m.reported[q.id] = true
			out.Error(sdk.ProviderError{Message: sdk.S(q.errText), Code: sdk.S(q.reason)})
			out.Warn("the provider call was retried (attempt " + intString(q.exit) + "): " + q.errText)
		}
	case "compaction":
		if !m.reported[q.id] {
			m.reported[q.id] = true
			out.Warn("the session was compacted here: the model saw a summary of what came before")
		}
	}
}

// sessionUsage reports the session's usage and cost: the sums over every
// step-finish.
func (n *normalizer) sessionUsage(out *sdk.Out) {
	var total sdk.Usage
	cost, costs := 0.0, 0
	for _, s := range n.steps {
		total = total.Plus(n.stepUsage(s))
		if s.hasCost {
			cost += s.cost
			costs++
		}
	}
	out.Usage(total, "set")
	if costs > 0 {
		out.Cost(cost, "set")
	}
}

// stepUsage is the usage of step-finish q. A run --format json step
// whose tokens state reasoning and no total (q.open) was written by
// the client of OpenCode's v2 runtime, whose output leaves the
// reasoning out (core session/usage.ts: output the visible output, no
// total), or by OpenCode's v1 run before AI SDK 6, whose output is the
// provider's (the reasoning in it): the line cannot tell them apart,
// the rest of the output can (n.v2). Until it has, the output is read
// as written.
func (n *normalizer) stepUsage(q *part) sdk.Usage {
	u := q.tokens
	if q.open && n.v2 {
		u.Output = u.Output.Plus(u.Reasoning)
	}
	return u
}

// errorStatus is the status of a tool part that ended in error: denied
// when a person or a permission rule refused the call before it ran
// (permission/index.ts: RejectedError "The user rejected permission to
// use this specific tool call", CorrectedError the same with the user's
// feedback, DeniedError "The user has specified a rule which prevents
// you from using this specific tool call"; the question tool's
// RejectedError, question/index.ts, "The user dismissed this question":
// the person declined to answer), each after the error's name where an
// older OpenCode wrote it ("Error: ...", errorName); cancelled when OpenCode
// stopped it unfinished (session/processor.ts: "Tool execution aborted",
// metadata.interrupted); else error.
func errorStatus(q *part) string {
	t := errorName(strings.TrimSpace(q.errText))
	switch {
	case strings.HasPrefix(t, "The user rejected permission to use this specific tool call"),
		strings.HasPrefix(t, "The user has specified a rule which prevents you from using this specific tool call"),
		strings.HasPrefix(t, "The user dismissed this question"),
		strings.HasPrefix(t, "Permission denied: "):
		return "denied"
	case q.interrupted || t == "Tool execution aborted" || strings.HasPrefix(t, "Tool execution interrupted"):
		return "cancelled"
	}
	return "error"
}

// stopped is the status of a completed command part that did not end by
// itself, and why, else "". OpenCode's bash tool completes the part
// whatever ended the command: on its timeout or the user's abort it kills
// the command, states its exit as null and appends the reason, in a
// "<bash_metadata>" block ("bash tool terminated command after exceeding
// timeout N ms..." or "User aborted the command"; a shell tool the same
// in "<shell_metadata>") or, before 1.0, as a last line "(Command
// timed out after N ms)" or "(Command was aborted)": cancelled. An exit
// stated null with neither is a command a signal ended (Node's exitCode
// is null then): an error.
func stopped(q *part) (status, why string) {
	if kind, _ := toolKind(q); q.status != "completed" || q.background || kind != "execute" {
		return "", ""
	}
	tail := strings.TrimRight(q.output, " \n")
	if i := strings.LastIndex(tail, "_metadata>\n"); i >= 0 && strings.HasSuffix(tail, "_metadata>") {
		for _, l := range strings.Split(tail[i:], "\n") {
			l = strings.TrimSpace(l)
			if strings.Contains(l, " terminated command after exceeding ") || l == "User aborted the command" {
				return "cancelled", l
			}
		}
	}
	last := tail[strings.LastIndexByte(tail, '\n')+1:]
	if (strings.HasPrefix(last, "(Command timed out after ") && strings.HasSuffix(last, ")")) || last == "(Command was aborted)" {
		return "cancelled", strings.Trim(last, "()")
	}
	switch {
	case q.timedOut || last == v2TimedOut:
		// The v2 shell tool: "Command exceeded timeout of N ms. ..."
		// after the output, then the notice.
		for _, l := range strings.Split(tail, "\n") {
			if strings.HasPrefix(l, "Command exceeded timeout of ") {
				return "cancelled", l
			}
		}
		return "cancelled", v2TimedOut
	case strings.HasPrefix(last, v2Stopped):
		return "cancelled", last
	case q.signal != "":
		return "error", "the command was ended by " + q.signal
	case q.noExit:
		return "error", "the command ended without an exit code (a signal stopped it)"
	}
	return "", ""
}

// The notices OpenCode's v2 shell tool appends to a command's output,
// after a blank line (core/src/shell/result.ts notice): how it ended.
const (
	v2Exited   = "Command exited with code " // N.
	v2TimedOut = "Command timed out before completion."
	v2Stopped  = "Command stopped by user."
)

// exitNotice is the exit code the v2 shell tool's notice states at the
// end of a command's output ("Command exited with code N."), for a
// command whose metadata states none; else unset.
func exitNotice(q *part) sdk.Int {
	if kind, _ := toolKind(q); kind != "execute" {
		return sdk.Int{}
	}
	tail := strings.TrimRight(q.output, " \n")
	last := tail[strings.LastIndexByte(tail, '\n')+1:]
	code, ok := strings.CutPrefix(last, v2Exited)
	if !ok || !strings.HasSuffix(code, ".") {
		return sdk.Int{}
	}
	n, err := strconv.ParseInt(strings.TrimSuffix(code, "."), 10, 64)
	if err != nil {
		return sdk.Int{}
	}
	return sdk.N(n)
}

// errorName is an error text without the error's name before it:
// OpenCode before its Effect processor wrote a tool's error as the thrown
// error's toString() ("Error: The user rejected permission ...", as the
// real 1.2.5 exports show "Error: No such file or directory: ..."), its
// Effect processor the message alone (errorMessage).
func errorName(t string) string {
	name, rest, ok := strings.Cut(t, ": ")
	if !ok || !strings.HasSuffix(name, "Error") || strings.ContainsAny(name, " \n") {
		return t
	}
	return rest
}

func intString(i sdk.Int) string {
	v, ok := i.Value()
	if !ok {
		return "?"
	}
	return strconv.FormatInt(v, 10)
}

// toolKind classifies OpenCode's built-in tools.
func toolKind(q *part) (string, sdk.Str) {
	switch strings.ToLower(q.tool) {
	case "bash", "shell":
		if q.command != "" {
			return "execute", sdk.S(q.command)
		}
		return "execute", sdk.Str{}
	case "read", "list":
		return "read", sdk.Str{}
	case "edit", "write", "patch", "multiedit", "apply_patch":
		return "edit", sdk.Str{}
	case "grep", "glob", "codesearch":
		return "search", sdk.Str{}
	case "webfetch", "websearch":
		return "fetch", sdk.Str{}
	case "todowrite", "todoread":
		return "think", sdk.Str{}
	}
	return "other", sdk.Str{}
}

// close closes a message: its usage is its steps' (else its own).
func (n *normalizer) close(m *message, out *sdk.Out) {
	if !m.open {
		return
	}
	m.open = false
	var u sdk.Usage
	steps, stale := 0, false
	for _, q := range m.parts {
		if q.typ == "step-finish" {
			u = u.Plus(n.stepUsage(q))
			steps++
			stale = stale || (q.open && !n.v2)
		}
	}
	if stale && !slices.Contains(n.stale, m) {
		n.stale = append(n.stale, m)
	}
	if steps == 0 && !m.user {
		u = m.tokens
	}
	out.Close(sdk.S(m.id), sdk.MessageEnd{StopReason: sdk.S(m.finish), Usage: u})
	if m.failed {
		m.failed = false
		report(m.errName, m.errText, out)
	}
}

// settleOpenSteps settles, at the end of a run --format json output,
// the steps whose output waited on which client wrote it (stepUsage).
// Shown the v2 client's, the session's usage is set again with their
// output counting the reasoning (a sign after a step comes after its
// usage was reported), and the messages closed before the sign are
// closed again. Never shown it, the output stays as
// written, and a warning says what it may leave out.
func (n *normalizer) settleOpenSteps(out *sdk.Out) {
	var open, reasoning int64
	for _, q := range n.steps {
		if q.open {
			open++
			r, _ := q.tokens.Reasoning.Value()
			reasoning += r
		}
	}
	if open == 0 {
		return
	}
	if !n.v2 {
		out.Warn("opencode run --format json: " + strconv.FormatInt(open, 10) + " step(s) state " + strconv.FormatInt(reasoning, 10) + " reasoning tokens and no total, and nothing in this output says which OpenCode wrote it: the v2 client's output leaves the reasoning out, OpenCode's v1 run before AI SDK 6 wrote the provider's, the reasoning in it (most providers): the output is read as written, and may lack those reasoning tokens")
		return
	}
	for _, m := range n.stale {
		n.part(m.id, "", nil, abi.Value{}, abi.Value{}, out)
		n.close(m, out)
		n.current = nil
	}
	n.stale = nil
	n.sessionUsage(out)
}

// End implements sdk.Normalizer.
func (n *normalizer) End(out *sdk.Out) error {
	if n.current != nil {
		n.close(n.current, out)
		n.current = nil
	}
	n.settleOpenSteps(out)
	if n.stepOpen {
		// run --format json stopped inside a step: the process was cut
		// while the model answered.
		out.Status(sdk.StatusIncomplete, sdk.S("the turn has not finished: the output stops inside a step (a step_start without its step_finish)"), sdk.LevelError)
	}
	if n.idleSettles() && n.idleEnd(out) {
		return nil
	}
	if m := n.last; m != nil && !m.user && m.info {
		switch {
		case !m.done:
			// The store was read in the middle of a turn (twasm sync
			// archives sessions the agent still writes): the session's
			// newest message is an answer OpenCode has not finished. A
			// later sync, after it finished, hands its rows again with
			// time.completed set.
			read := "the store was read"
			if n.format == fmtExport {
				read = "the session was exported"
			}
			out.Status(sdk.StatusIncomplete, sdk.S("the turn has not finished: the last assistant message "+m.id+" has no time.completed ("+read+" while OpenCode was writing it)"), sdk.LevelError)
		case aborted(m.errName):
			// The user stopped the session's last answer: the turn
			// was cut, as a Codex turn_aborted or a Pi response
			// aborted is (a warning too, no provider error).
			out.Status(sdk.StatusIncomplete, sdk.S("the response was aborted: "+m.errText), sdk.LevelError)
		}
	}
	return nil
}

package goose

import (
	"strconv"
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// Format names, as reported in OpMeta and the manifest.
const (
	fmtRows    = "rows"    // the host's row lines of sessions.db
	fmtSession = "session" // a session file of Goose before sessions.db
	fmtExport  = "export"  // goose session export --format json
	fmtJSON    = "json"    // goose run --output-format json
)

// roots are the candidates for Goose's sessions directory, in Goose's
// order (config/paths.rs): $GOOSE_PATH_ROOT/data when set (Goose takes it
// only when absolute), else etcetera's app strategy: Windows's roaming
// application data, XDG elsewhere (macOS included).
var roots = []abi.Root{
	{Env: "GOOSE_PATH_ROOT", Path: "data/sessions"},
	{Env: "APPDATA", Path: "Block/goose/data/sessions", OS: "windows"},
	{Env: "XDG_DATA_HOME", Path: "goose/sessions"},
	{Path: "~/.local/share/goose/sessions"},
}

// Plugin is the Goose normalizer.
var Plugin = sdk.Plugin{
	Manifest: abi.Manifest{
		Name:        "goose",
		Version:     "0.1.0",
		Providers:   []string{"goose"},
		Formats:     []string{fmtRows, fmtSession, fmtStream, fmtExport, fmtJSON},
		Description: "Goose (block/goose) sessions from its sessions.db, its session files before it, goose session export's JSON and goose run's stream-json output",
		SourceFacts: true,
		Stores: []abi.Store{{
			Name: "Goose", Kind: abi.StoreKindSQLite,
			Roots: roots, Pattern: "sessions.db",
			SQLite: Queries,
		}, {
			// Goose before sessions.db wrote one JSON Lines file per
			// session in the same directory; the first Goose with
			// sessions.db imports them into it, under the same ids
			// (import_legacy: the file's name), and leaves them there.
			// A session found in both is archived from the database
			// only (the key store, abi.StoreSessionKey), and one
			// archived from its file before is superseded.
			Name:  "Goose session files (before sessions.db)",
			Roots: roots, Pattern: "*.jsonl", Session: abi.StoreSessionKey,
		}, {
			// The first Goose CLI (late 2024) kept its session files
			// under ~/.config/goose/sessions on every system
			// (goose-cli's session/session_file.rs, ensure_session_dir),
			// their content items untagged (Normalizer.untagged).
			Name:  "Goose CLI session files (2024)",
			Roots: []abi.Root{{Path: "~/.config/goose/sessions"}}, Pattern: "*.jsonl",
		}},
	},
	New:  func(opts abi.BeginOptions) sdk.Normalizer { return &normalizer{names: map[string]string{}} },
	Keys: keys,
	// goose session export --format json prints one pretty-printed
	// document.
	Reassemble: true,
}

// Queries are what the host reads of Goose's sessions.db (session_manager.rs:
// sessions, and messages with their content_json and metadata_json).
//
// A session's cursor is its last message row's id times 10^9 plus its
// updated_at (seconds) and accumulated token count, modulo 10^9: a new
// or rewritten message (Goose's replace_conversation inserts the
// conversation again, under new row ids) moves the first figure, a
// change of the session's counters alone the second. A later sync reads
// the messages from the last assistant message it read on (they come
// again, under the same keys, and replace themselves): a tool's response
// written since is read with the request it answers. The session row
// comes whole each time (it holds the counters and the model). parent is
// parent_session_id: a sub-agent's session is a child run of its
// parent's.
//
// Goose migrates sessions.db when it opens it, so a database an older
// Goose last wrote has an older schema: schema v5 (block/goose 0164300,
// session_manager.rs) has neither messages.message_id nor
// sessions.parent_session_id, which later migrations added. The queries
// name those two columns only through a subquery that selects every
// column and then a NULL under the same name ("SELECT *, NULL AS c"):
// SQLite names the second c:1, so c is the table's column where it has
// one and NULL where it has none, and the same queries read every schema
// (a message row of a database without message_id is keyed by its row
// id, a session has no parent). Every other column they name is in
// schema v5's CREATE TABLE already; the session row and the message rows
// come whole (SELECT *), so a column an older schema lacks is absent from
// the row, which the plugin reads as unset.
var Queries = &abi.SQLiteSource{
	Sessions: `SELECT s.id AS key,
  coalesce((SELECT max(m.id) FROM messages m WHERE m.session_id = s.id), 0) * 1000000000
  + (coalesce(CAST(strftime('%s', s.updated_at) AS INTEGER), 0) + coalesce(s.accumulated_total_tokens, 0)) % 1000000000 AS cursor,
  s.parent_session_id AS parent
FROM (SELECT *, NULL AS parent_session_id FROM sessions) s ORDER BY s.created_at, s.id`,
	Tables: []abi.SQLiteTable{
		{Table: "sessions", Key: "id", Version: "version",
			JSON:  []string{"extension_data", "recipe_json", "user_recipe_values_json", "model_config_json"},
			Query: `SELECT coalesce(CAST(strftime('%s', updated_at) AS INTEGER), 0) AS version, * FROM sessions WHERE id = :session`},
		{Table: "messages", Key: "key", Version: "id", Time: "time_ms",
			JSON: []string{"content_json", "metadata_json"},
			Query: `SELECT coalesce((SELECT x.message_id FROM (SELECT *, NULL AS message_id FROM messages) x WHERE x.id = messages.id), 'row-' || id) AS key,
  CASE WHEN created_timestamp > 10000000000 THEN created_timestamp ELSE created_timestamp * 1000 END AS time_ms, *
FROM messages WHERE session_id = :session AND id >= coalesce((SELECT max(a.id) FROM messages a
  WHERE a.session_id = :session AND a.role = 'assistant' AND a.id <= :since / 1000000000), 0)
ORDER BY id`},
	},
}

type normalizer struct {
	meta  bool
	model string
	// created is when the session was created, as its row's created_at
	// states it to the second ("YYYY-MM-DDTHH:MM:SS", UTC; "" when not
	// known, or the session is none a copy can be: see copied).
	created string
	// names are the tools' names by request id (a response names only
	// the request).
	names map[string]string
	// early are the results of responses stored before their requests
	// (by call id; earlyIDs in the order they came): each is written
	// after its call, when the request comes, or at End (result).
	early    map[string]sdk.ToolResult
	earlyIDs []string
	seq      int // messages of a session file
	// lf and rf are the members of a line's object (lineKeys) and of a
	// message row (rowKeys), each found in one pass over the object
	// rather than one per Get; buf is contentText's.
	lf  [len(lineNames)]abi.Value
	rf  [len(rowNames)]abi.Value
	buf []byte
	// isStream is set once the input reads as goose run's stream-json
	// output; st is what it keeps between lines (stream.go).
	isStream bool
	st       stream
	// head is the header of goose run's later banner read last ("●
	// new session · ...": headSession, "● ephemeral · ...":
	// headEphemeral), whose next line names the session and the working
	// directory (banner).
	head int
	// bannerSession is the session id goose run's banner named (stream.go,
	// banner); resumed says the banner said the run resumed a session.
	bannerSession string
	resumed       bool
}

// Headers of goose run's later banner (normalizer.head).
const (
	headNone = iota
	headSession
	headEphemeral
)

// lineNames are the members of a line's object Line and row read, in the
// order of the l* constants; rowNames those of a messages row, in the
// order of the r* constants. Both are in keys (TestLookupKeysDeclared).
var (
	lineNames = [...]string{"$twasm", "role", "content", "table", "row", "key"}
	rowNames  = [...]string{"created_timestamp", "message_id", "role", "content_json", "metadata_json"}
	lineKeys  = abi.NewKeySet(lineNames[:]...)
	rowKeys   = abi.NewKeySet(rowNames[:]...)
)

const (
	lTwasm = iota
	lRole
	lContent
	lTable
	lRow
	lKey
)

const (
	rCreated = iota
	rMessageID
	rRole
	rContent
	rMetadata
)

// Line implements sdk.Normalizer.
func (n *normalizer) Line(l *sdk.Line, out *sdk.Out) error {
	v := l.JSON()
	if v.Kind() != abi.KindObject {
		if len(sdk.TrimSpace(l.Raw)) > 0 && (n.meta || !n.banner(l.Raw, out)) {
			out.Unmapped(sdk.S("non_json"))
		}
		return nil
	}
	n.head = headNone
	// The members read, found in one pass over the object.
	f := &n.lf
	v.Lookup(lineKeys, f[:])
	tw := f[lTwasm]
	facts, row := tw.Is(abi.SourceFactsType), tw.Is(abi.RowType)
	var role, content abi.Value
	if !facts && !row {
		role, content = f[lRole], f[lContent]
	}
	switch {
	case facts:
		if !f[lTable].Exists() && strings.HasSuffix(v.Get("name").String(), ".jsonl") {
			// A session file: its name is the session's id.
			n.setFormat(out, fmtSession, strings.TrimSuffix(v.Get("name").String(), ".jsonl"))
		}
		out.Ignored(sdk.S("twasm_source"))
	case row:
		n.setFormat(out, fmtRows, "")
		n.row(v, out)
	case role.Kind() == abi.KindString && (content.Kind() == abi.KindArray || content.Kind() == abi.KindString):
		n.setFormat(out, fmtSession, "")
		n.seq++
		id, key := "", ""
		if idv := v.Get("id"); idv.Kind() == abi.KindString {
			id = idv.String()
			key = id
		}
		if id == "" {
			key = "m" + strconv.Itoa(n.seq)
		}
		n.message(key, id, sdk.View(role), content, v.Get("metadata"), seconds(v.Get("created")), out)
	case v.Get("messages").Kind() == abi.KindArray && v.Get("metadata").Get("status").Kind() == abi.KindString:
		// goose run --output-format json: the run's conversation and how
		// it ended, as one document.
		n.runJSON(v, out)
	case v.Get("working_dir").Exists() && (v.Get("conversation").Kind() == abi.KindArray || v.Get("conversation").Kind() == abi.KindNull):
		// goose session export --format json: the session and its
		// conversation as one document.
		n.export(v, out)
	case n.seq == 0 && (v.Get("working_dir").Exists() || v.Get("message_count").Exists()):
		// A session file's first line: the session's metadata.
		n.setFormat(out, fmtSession, "")
		n.session(v, out)
	case n.streamLine(v, sdk.View(v.Get("type")), out):
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
	n.meta = true
	m := sdk.Meta{Format: sdk.S(f), NoTerminal: true} // a session log
	if session != "" {
		m.SessionID = sdk.S(session)
	}
	out.Meta(m)
}

// row handles one row line of sessions.db.
func (n *normalizer) row(v abi.Value, out *sdk.Out) {
	r := n.lf[lRow]
	switch sdk.View(n.lf[lTable]) {
	case "sessions":
		out.Meta(sdk.Meta{SessionID: sdk.Text(r.Get("id"))})
		n.session(r, out)
	case "messages":
		f := &n.rf
		r.Lookup(rowKeys, f[:])
		created := seconds(f[rCreated])
		if n.copied(created) {
			// A message the session was created with, copied from the
			// session it was forked or duplicated from: that session's
			// turn, which its own run holds.
			out.Ignored(sdk.S(forkedHistory))
			return
		}
		// The key, id and role are views of the line: message writes
		// them at once and keeps none.
		id := ""
		if f[rMessageID].Kind() == abi.KindString {
			id = sdk.View(f[rMessageID])
		}
		n.message(sdk.View(n.lf[lKey]), id, sdk.View(f[rRole]), f[rContent], f[rMetadata], created, out)
	default:
		out.Unmapped(sdk.S("row:" + n.lf[lTable].String()))
	}
}

// export handles the output of goose session export --format json
// (goose-cli's commands/session.rs: serde_json::to_string_pretty of the
// session as SessionManager's get_session returns it, with its
// messages): the session's record (its id, working_dir, counters and
// model_config, as a sessions row holds them) and conversation, its
// messages in order, each as a session file holds one.
func (n *normalizer) export(v abi.Value, out *sdk.Out) {
	if !n.meta {
		n.meta = true
		out.Meta(sdk.Meta{Format: sdk.S(fmtExport), NoTerminal: true, SessionID: sdk.Text(v.Get("id"))})
	}
	n.session(v, out)
	n.conversation(v.Get("conversation"), out)
}

// conversation handles a list of messages (a session export's
// conversation, goose run json's messages), each as a session file holds
// one; a copy's messages from before its creation are the original's.
func (n *normalizer) conversation(list abi.Value, out *sdk.Out) {
	it := list.Iter()
	for it.Next() {
		m := it.Value()
		created := seconds(m.Get("created"))
		if n.copied(created) {
			out.Ignored(sdk.S(forkedHistory))
			continue
		}
		n.seq++
		id, key := "", "m"+strconv.Itoa(n.seq)
		if idv := m.Get("id"); idv.Kind() == abi.KindString && idv.String() != "" {
			id, key = idv.String(), idv.String()
		}
		role := m.Get("role")
		if role.Kind() != abi.KindString {
			out.Unmapped(sdk.S("message_without_role"))
			continue
		}
		n.message(key, id, role.String(), m.Get("content"), m.Get("metadata"), created, out)
	}
}

// runJSON handles the output of goose run --output-format json
// (goose-cli's session/mod.rs, JsonOutput): {messages, metadata:
// {total_tokens, status}}, printed once when the run ends. messages is
// the session's conversation; metadata.status "completed" ends the run
// ok, any other (a fork of Goose writes "failed", with an error code)
// in error. total_tokens is the session's plain counter, the last model
// call's alone (update_session_metrics, as for a sessions row): not the
// run's usage, which the document does not state; a warning gives it.
func (n *normalizer) runJSON(v abi.Value, out *sdk.Out) {
	if !n.meta {
		n.meta = true
		out.Meta(sdk.Meta{Format: sdk.S(fmtJSON)})
	}
	n.conversation(v.Get("messages"), out)
	md := v.Get("metadata")
	if t, ok := md.Get("total_tokens").Int(); ok {
		out.Warn("goose run's json output states only its last model call's total (" + strconv.FormatInt(t, 10) + " tokens), not the run's: no usage is reported")
	}
	if st := md.Get("status"); st.Is("completed") {
		out.Status(sdk.StatusOK, sdk.Str{}, sdk.LevelTerminal)
	} else {
		e := "Goose ended the run with status " + st.String()
		if code := md.Get("error"); code.Kind() == abi.KindString && !code.Is("") {
			e += ": " + code.String()
		}
		out.Status(sdk.StatusError, sdk.S(e), sdk.LevelTerminal)
	}
}

// forkedHistory is the native name under which a message a session was
// created with, copied from another session, is declared ignored.
const forkedHistory = "(forked history)"

// createdSecond is a sessions row's created_at to the second in RFC 3339
// form ("2025-11-02T10:00:00"), or "" when the row is none a copy can be
// or its time is not UTC. Goose writes created_at as SQLite's
// CURRENT_TIMESTAMP ("2025-11-02 10:00:00", UTC); a session imported
// from a session file of Goose before sessions.db
// (import_legacy_session) gets the file's creation time, else its last
// modification, which can follow every message in it: such a session is
// named by its file ("20250325_200615", or a name the user gave), never
// "<date>_<n>" as create_session names a session, so only a session of
// that name can be a copy.
func createdSecond(r abi.Value) string {
	id, at := r.Get("id").String(), r.Get("created_at").String()
	date, num, ok := strings.Cut(id, "_")
	if !ok || len(date) != 8 || !digits(date) || len(num) == 0 || len(num) > 5 || !digits(num) {
		return ""
	}
	if len(at) < 19 || (at[10] != ' ' && at[10] != 'T') {
		return ""
	}
	switch rest := at[19:]; {
	case rest == "", rest == "Z", rest == "+00:00", rest[0] == '.':
	default:
		return ""
	}
	return at[:10] + "T" + at[11:19]
}

// digits says whether s is all ASCII digits.
func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// copied says whether a message created at t (its row's
// created_timestamp, as seconds formats it) was copied into the session
// from another.
// copy_session (goose session --resume --fork, the desktop's Duplicate
// and its fork of a session at an edited message) creates a new session,
// then writes the original's conversation into it as it was, each
// message's created_timestamp and message_id kept, its token counters
// not copied (session_manager.rs, replace_conversation): a message
// created in a second before the session was is one of those.
func (n *normalizer) copied(t string) bool {
	if n.created == "" {
		return false
	}
	return len(t) >= 19 && t[:19] < n.created
}

// session handles the session's record (a sessions row, or a session
// file's first line): its model, its parent, its usage and cost.
func (n *normalizer) session(r abi.Value, out *sdk.Out) {
	n.created = createdSecond(r)
	mc := r.Get("model_config_json")
	if !mc.Exists() {
		mc = r.Get("model_config") // a session export's
	}
	if m := mc.Get("model_name"); m.Kind() == abi.KindString && m.String() != "" {
		n.model = m.String()
		out.Meta(sdk.Meta{Model: sdk.S(n.model)})
	}
	// working_dir is where the session ran; Goose names no repository
	// root.
	if wd := sdk.StringOf(r.Get("working_dir")); wd.IsSet() {
		out.Meta(sdk.Meta{Cwd: wd})
	}
	if p := r.Get("parent_session_id"); p.Kind() == abi.KindString && p.String() != "" {
		out.Warn("a sub-agent session of " + p.String() + " (a child run of its run)")
	}
	// Goose's accumulated counters are the session's, over every call:
	// as Goose states them, its input counting cached tokens. A session
	// export of Goose since block/goose#9752 (2026-06) holds them as
	// accumulated_usage, an object named as the stream's complete names
	// them, and the last call's as usage: the struct's, not the row's.
	if u, ok := countersOf(r, sessionCounters); ok {
		out.Usage(outputStated(u, out), sdk.ModeSet)
	} else if u, ok := countersOf(r.Get("accumulated_usage"), streamCounters); ok {
		out.Usage(outputStated(u, out), sdk.ModeSet)
	} else if plain := lastCallUsage(r); plain != "" {
		// The plain counters are the last model call's alone: every
		// Goose overwrites them with each call's usage
		// (update_session_metrics: metadata.total_tokens =
		// usage.usage.total_tokens), and an older one kept no others.
		// They are not the session's: none is reported.
		out.Warn("Goose kept only its last model call's usage for this session (" + plain + "), not the session's: no usage is reported")
	}
	if c, ok := r.Get("accumulated_cost").Float(); ok {
		out.Cost(c, sdk.ModeSet)
	}
}

// Where Goose states a session's counters: its record's accumulated ones
// (input, output, cache read, cache write, total), and goose run
// stream-json's complete event, which gives the same under other names.
var (
	sessionCounters = [5]string{"accumulated_input_tokens", "accumulated_output_tokens", "accumulated_cache_read_tokens", "accumulated_cache_write_tokens", "accumulated_total_tokens"}
	streamCounters  = [5]string{"input_tokens", "output_tokens", "cache_read_input_tokens", "cache_write_input_tokens", "total_tokens"}
)

// countersOf reads v's counters named by names (input, output, cache
// read, cache write, total: Goose's input counts cached tokens); ok is
// false when v states neither input nor output.
func countersOf(v abi.Value, names [5]string) (sdk.Usage, bool) {
	u := sdk.Usage{
		Input: sdk.IntOf(v.Get(names[0])), Output: sdk.IntOf(v.Get(names[1])),
		CacheRead: sdk.IntOf(v.Get(names[2])), CacheWrite: sdk.IntOf(v.Get(names[3])),
		Total: sdk.IntOf(v.Get(names[4])),
	}
	_, in := u.Input.Value()
	_, o := u.Output.Value()
	return u, in || o
}

// outputStated is u, its output left out where its total counts tokens
// beyond its input and output (sdk.Usage.OutputUnstated), with a warning
// giving Goose's figures: Goose's Google format counts a call's output
// as the answer's tokens (candidatesTokenCount) and its total as the
// API's (totalTokenCount, a thinking model's thoughts included), so
// every output token is not stated.
func outputStated(u sdk.Usage, out *sdk.Out) sdk.Usage {
	o, _ := u.Output.Value()
	total, _ := u.Total.Value()
	v, gap := u.OutputUnstated()
	if gap > 0 {
		out.Warn("Goose's total of " + strconv.FormatInt(total, 10) + " tokens counts " + strconv.FormatInt(gap, 10) +
			" beyond its input and its output of " + strconv.FormatInt(o, 10) +
			" (a thinking model's thoughts, which Goose's Google format leaves out of the output): output_tokens left out")
	}
	return v
}

// lastCallUsage is the plain counters of a session record, as words
// ("input 5000, output 200, total 5200"; "" when it has none).
func lastCallUsage(r abi.Value) string {
	names := [][2]string{{"input", "input_tokens"}, {"output", "output_tokens"}, {"cache read", "cache_read_tokens"}, {"cache write", "cache_write_tokens"}, {"total", "total_tokens"}}
	if u := r.Get("usage"); u.Kind() == abi.KindObject {
		// A session export's usage object (Goose since #9752).
		r = u
		names[2][1], names[3][1] = streamCounters[2], streamCounters[3]
	}
	var parts []string
	for _, c := range names {
		if v, ok := r.Get(c[1]).Int(); ok {
			parts = append(parts, c[0]+" "+strconv.FormatInt(v, 10))
		}
	}
	return strings.Join(parts, ", ")
}

// seconds is Goose's message time as RFC 3339 ("" when there is none):
// seconds since 1970, or milliseconds where a build wrote those (a
// figure past 10^10).
func seconds(v abi.Value) string {
	s, ok := v.Int()
	if !ok || s <= 0 {
		return ""
	}
	if s > 10_000_000_000 {
		return sdk.RFC3339Millis(s)
	}
	return sdk.RFC3339Seconds(s)
}

// message handles one message: its content items are its blocks, in
// their slots; tool requests are calls, tool responses their results.
func (n *normalizer) message(key, id, role string, content, metadata abi.Value, created string, out *sdk.Out) {
	k, origin, ok := n.open(key, id, role, metadata, created, out)
	if !ok {
		return
	}
	if content.Kind() == abi.KindString {
		// A session file may hold the content as a string: the list
		// encoded as JSON, or the text itself.
		if doc, ok := sdk.ParseText(content); ok && doc.Root().Kind() == abi.KindArray {
			content = doc.Root()
		} else {
			out.Block(k, 0, sdk.Block{Type: sdk.BlockText, Text: sdk.S(content.String()), Origin: map[bool]string{true: origin}[role == "user"]})
		}
	} else if content.Kind() != abi.KindArray {
		out.Unmapped(sdk.S("content_not_list"))
	}
	it := content.Iter()
	for i := 0; it.Next(); i++ {
		n.item(k, i, role == "user", origin, it.Value(), created, out)
	}
	out.Close(k, sdk.MessageEnd{})
}

// open opens message key of the role (ok false, and the message counted
// unmapped, for a role other than user and assistant): its header, and
// the origin of its user texts.
func (n *normalizer) open(key, id, role string, metadata abi.Value, created string, out *sdk.Out) (k sdk.Str, origin string, ok bool) {
	user := role == "user"
	if role != "user" && role != "assistant" {
		out.Unmapped(sdk.S("role:" + role))
		return k, "", false
	}
	hdr := sdk.Message{User: user, ID: sdk.Opt(id), Time: sdk.Opt(created)}
	if !user {
		hdr.Model = sdk.Opt(n.model)
		// The model that answered, where Goose states it per message
		// (metadata.inference: the model the provider resolved the
		// request to, else the one requested); the session's
		// model_config_json names only the one configured last.
		inf := metadata.Get("inference")
		for _, f := range []string{"resolvedModel", "requestedModel"} {
			if m := inf.Get(f); m.Kind() == abi.KindString && !m.Is("") {
				hdr.Model = sdk.Text(m)
				break
			}
		}
	}
	k = sdk.S(key)
	out.Open(k, hdr)
	// A user text the user did not see (userVisible false) is Goose's
	// own: context it added, not the prompt.
	origin = sdk.OriginPrompt
	if metadata.Get("userVisible").Kind() == abi.KindFalse {
		origin = sdk.OriginInjected
	}
	return k, origin, true
}

// item handles content item c at slot i of message k.
func (n *normalizer) item(k sdk.Str, i int, user bool, origin string, c abi.Value, created string, out *sdk.Out) {
	orig := func(o string) string {
		if user {
			return o
		}
		return ""
	}
	t := c.Get("type")
	if c.Kind() == abi.KindObject && !t.Exists() {
		n.untagged(k, i, orig(origin), c, created, out)
		return
	}
	// typ is used at once, never kept: a view of the line.
	switch typ := sdk.View(t); typ {
	case "text":
		text := c.Get("text")
		out.Block(k, i, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(text), Origin: orig(origin)})
		if !user {
			// A view, not a copy: what failureText returns is
			// written at once.
			if e, ok := failureText(sdk.View(text)); ok {
				n.fail(out, e)
			}
		}
	case "image":
		out.Block(k, i, sdk.Block{Type: sdk.BlockText, Text: sdk.S("[image " + c.Get("mimeType").String() + "]"), Origin: orig(sdk.OriginInjected)})
	case "thinking":
		out.Block(k, i, sdk.Block{Type: sdk.BlockThinking, Thinking: sdk.Text(c.Get("thinking"))})
	case "reasoning":
		// An older Goose's reasoning item ({text}), which a later one
		// reads as thinking (conversation/message/mod.rs's migration).
		out.Block(k, i, sdk.Block{Type: sdk.BlockThinking, Thinking: sdk.Text(c.Get("text"))})
	case "redactedThinking":
		out.Block(k, i, sdk.Block{Type: sdk.BlockThinking, Redacted: true})
	case "toolRequest", "frontendToolRequest":
		n.request(k, i, c, created, out)
	case "toolResponse":
		n.response(k, i, c, created, out)
	case "toolConfirmationRequest", "actionRequired":
		// A question put to the user (a tool to approve, an
		// elicitation): its answer is in the tool's response.
		out.Ignored(sdk.S(typ))
	case "systemNotification":
		switch msg := c.Get("msg").String(); c.Get("notificationType").String() {
		case "creditsExhausted":
			// The provider refused the request for want of credits:
			// Goose ends the turn on it (agent.rs, ProviderError::
			// CreditsExhausted).
			n.fail(out, sdk.ProviderError{Message: sdk.S(msg), Code: sdk.S("credits_exhausted")})
		case "inlineMessage":
			if strings.HasPrefix(msg, "Unable to continue:") {
				// The context was still too long after compacting:
				// Goose ends the turn (agent.rs).
				n.fail(out, sdk.ProviderError{Message: sdk.S(msg), Code: sdk.S("context_length_exceeded")})
			} else {
				out.Warn("Goose: " + msg)
			}
		default:
			out.Ignored(sdk.S("systemNotification:" + c.Get("notificationType").String()))
		}
	case "error":
		// An error Goose showed in the conversation (a provider's).
		msg := c.Get("message")
		if msg.Kind() != abi.KindString {
			msg = c.Get("error")
		}
		n.fail(out, sdk.ProviderError{Message: sdk.S(errText(msg))})
	case "conversationCompacted":
		out.Warn("the conversation was compacted here: the model saw a summary of what came before")
	case "contextLengthExceeded":
		// Goose before systemNotification (message.rs's
		// MessageContent::ContextLengthExceeded {msg}, block/goose
		// 1f2f6b1): the provider refused the request as too long and
		// Goose ended the turn (agent.rs, ProviderError::
		// ContextLengthExceeded).
		n.fail(out, sdk.ProviderError{Message: sdk.Text(c.Get("msg")), Code: sdk.S("context_length_exceeded")})
	case "summarizationRequested":
		// The same Goose's notice that it summarized the conversation
		// ({msg}): the model saw a summary of what came before.
		out.Warn("Goose: " + c.Get("msg").String())
	default:
		out.Unmapped(sdk.S("content:" + typ))
	}
}

// request handles a toolRequest (or a frontendToolRequest, a tool the
// desktop app runs): a tool_use block and a tool.call. A call Goose could
// not parse ({status: error}) is still a call: its response says what
// became of it.
func (n *normalizer) request(k sdk.Str, i int, c abi.Value, created string, out *sdk.Out) {
	id := c.Get("id").String()
	tc := c.Get("toolCall")
	val := tc.Get("value")
	name, input := val.Get("name").String(), val.Get("arguments")
	if tc.Get("status").Is("error") || val.Kind() != abi.KindObject {
		name = "invalid_tool_call"
		out.Warn("Goose could not read a tool call the model made: " + errText(tc.Get("error")))
	}
	n.call(k, i, id, name, input, created, out)
}

// call writes the tool_use block and tool.call of a call id to the tool
// name with its arguments (input; {} when they are no object), and keeps
// the name for the call's result.
func (n *normalizer) call(k sdk.Str, i int, id, name string, input abi.Value, created string, out *sdk.Out) {
	in := sdk.JSON(input)
	if input.Kind() != abi.KindObject {
		in = sdk.RawJSON("{}")
	}
	n.names[id] = name
	kind, cmd := toolKind(name, input)
	out.ToolUse(k, i, sdk.ToolCall{CallID: sdk.S(id), Name: sdk.S(name), Input: in, Kind: kind, Command: cmd, Time: sdk.Opt(created)})
	if res, ok := n.early[id]; ok {
		// Its response was stored first: it answers this call.
		delete(n.early, id)
		res.Name = sdk.S(name)
		out.ToolResult(res)
	}
}

// result writes the tool.result of a response, or keeps it (early) when
// its request has not come: Goose can store a tool's response before
// the assistant message that requested it (a real export,
// testdata/captures/goose, holds a response 8 s before its request), and
// the result answers that call, not one the host would make of it.
func (n *normalizer) result(res sdk.ToolResult, out *sdk.Out) {
	id := res.CallID.String()
	if _, called := n.names[id]; called || id == "" {
		out.ToolResult(res)
		return
	}
	if _, kept := n.early[id]; kept {
		// A second response to a call not made yet: the host says
		// what becomes of it.
		out.ToolResult(res)
		return
	}
	if n.early == nil {
		n.early = map[string]sdk.ToolResult{}
	}
	n.early[id] = res
	n.earlyIDs = append(n.earlyIDs, id)
}

// flushEarly writes the results whose request never came, in the order
// their responses did: the host makes a call of each, and says so.
func (n *normalizer) flushEarly(out *sdk.Out) {
	for _, id := range n.earlyIDs {
		if res, ok := n.early[id]; ok {
			delete(n.early, id)
			out.ToolResult(res)
		}
	}
	n.earlyIDs = n.earlyIDs[:0]
}

// response handles a toolResponse: a tool_result block and a
// tool.result. {status: error} is a failure (the tool could not run, or
// failed); a result the tool marked isError is one too; any other is ok.
func (n *normalizer) response(k sdk.Str, i int, c abi.Value, created string, out *sdk.Out) {
	id := c.Get("id").String()
	tr := c.Get("toolResult")
	res := sdk.ToolResult{CallID: sdk.S(id), Name: sdk.Opt(n.names[id]), Time: sdk.Opt(created)}
	var text string
	if tr.Get("status").Is("success") {
		// The value is a CallToolResult {content, isError}; Goose before
		// rmcp's wrote the content list alone.
		val := tr.Get("value")
		list := val
		if val.Kind() == abi.KindObject {
			list = val.Get("content")
			res.IsError = val.Get("isError").Truthy()
			// Goose's shell tool states the exit code in its
			// structured content (absent when it killed the command).
			res.ExitCode = sdk.IntOf(val.Get("structuredContent").Get("exit_code"))
		}
		text = n.contentText(list)
		res.Output = sdk.S(text)
		if res.IsError {
			shellOutcome(&res, text)
		}
	} else {
		res.IsError = true
		text = errText(tr.Get("error"))
		res.Error = sdk.S(text)
	}
	if t := strings.TrimSpace(text); strings.HasPrefix(t, declined) || strings.HasPrefix(t, skippedChat) {
		// Refused before it ran: by the user, or by a permission rule
		// (Goose writes the same answer, as a plain content list
		// before it marked it isError), or skipped in chat mode.
		res.IsError, res.Status, res.Error = true, sdk.S("denied"), sdk.S(sdk.Clip(t, 300))
	}
	if !res.IsError {
		res.Status = sdk.S("ok")
	}
	out.Block(k, i, sdk.Block{Type: sdk.BlockToolResult, ToolID: sdk.S(id), ToolContent: sdk.S(text), IsError: res.IsError})
	n.result(res, out)
}

// shellOutcome reads the line Goose's shell tool (platform_extensions/
// developer/shell.rs) ends a failed command's output with: "Command timed
// out after N seconds" (or "Command timed out"), the command killed at
// its timeout, cancelled; "Command exited with code N", its exit code
// when the structured content gave none. Either is the result's error.
func shellOutcome(res *sdk.ToolResult, text string) {
	t := strings.TrimRight(text, " \n")
	last := strings.TrimSpace(t[strings.LastIndexByte(t, '\n')+1:])
	switch {
	case last == "Command timed out" || strings.HasPrefix(last, "Command timed out after ") && strings.HasSuffix(last, " seconds"):
		res.Status, res.Error = sdk.S("cancelled"), sdk.S(last)
	case strings.HasPrefix(last, "Command exited with code "):
		code, err := strconv.ParseInt(strings.TrimPrefix(last, "Command exited with code "), 10, 64)
		if err != nil {
			return
		}
		if _, ok := res.ExitCode.Value(); !ok {
			res.ExitCode = sdk.N(code)
		}
		res.Error = sdk.S(last)
	}
}

// untagged handles a content item of the first Goose CLI's session
// files (Nov 2024, ~/.config/goose/sessions/<name>.jsonl: goose-cli's
// session/message_serialize.rs, SerializableContent, serde untagged: the
// items have no type): {text}, {id, tool_name, arguments} (a tool
// request; its first version wrote no id), {id, tool_result} (the
// response: the JSON text of its content list, [{type, text}], or
// {"error": "..."} when the tool failed) and {mime_type} (an image,
// its data not kept). A request Goose could not parse was written as a
// text "Tool Request Error: ...".
func (n *normalizer) untagged(k sdk.Str, i int, origin string, c abi.Value, created string, out *sdk.Out) {
	switch {
	case c.Get("tool_name").Kind() == abi.KindString:
		id := c.Get("id").String()
		if c.Get("id").Kind() != abi.KindString || id == "" {
			// The first version kept no id: the call is unpaired.
			id = "goose-" + k.String() + "-" + strconv.Itoa(i)
		}
		n.call(k, i, id, c.Get("tool_name").String(), c.Get("arguments"), created, out)
	case c.Get("tool_result").Kind() == abi.KindString && c.Get("id").Kind() == abi.KindString:
		id := c.Get("id").String()
		raw := c.Get("tool_result").String()
		res := sdk.ToolResult{CallID: sdk.S(id), Name: sdk.Opt(n.names[id]), Time: sdk.Opt(created)}
		var text string
		doc, ok := sdk.Parse([]byte(raw))
		switch {
		case ok && doc.Root().Kind() == abi.KindArray:
			// Ok(content): the content list.
			text = n.contentText(doc.Root())
			res.Output = sdk.S(text)
		case ok && doc.Root().Get("error").Kind() == abi.KindString:
			text = doc.Root().Get("error").String()
			res.IsError, res.Error = true, sdk.S(text)
		default:
			// Err(e) written as {"error": "<e>"} without escaping e: not
			// always JSON.
			text = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(raw), `{"error": "`), `"}`)
			res.IsError, res.Error = true, sdk.S(text)
		}
		if t := strings.TrimSpace(text); strings.HasPrefix(t, declined) {
			res.IsError, res.Status, res.Error = true, sdk.S("denied"), sdk.S(sdk.Clip(t, 300))
		}
		if !res.IsError {
			res.Status = sdk.S("ok")
		}
		out.Block(k, i, sdk.Block{Type: sdk.BlockToolResult, ToolID: sdk.S(id), ToolContent: sdk.S(text), IsError: res.IsError})
		n.result(res, out)
	case c.Get("text").Kind() == abi.KindString:
		out.Block(k, i, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(c.Get("text")), Origin: origin})
		if t := c.Get("text").String(); strings.HasPrefix(t, "Tool Request Error: ") {
			out.Warn("Goose could not read a tool call the model made: " + sdk.Clip(strings.TrimPrefix(t, "Tool Request Error: "), 200))
		}
	case c.Get("mime_type").Kind() == abi.KindString:
		o := ""
		if origin != "" { // a user's: attached, not typed
			o = sdk.OriginInjected
		}
		out.Block(k, i, sdk.Block{Type: sdk.BlockText, Text: sdk.S("[image " + c.Get("mime_type").String() + "]"), Origin: o})
	default:
		out.Unmapped(sdk.S("content:untagged"))
	}
}

// Goose's answers to a call that did not run (agents/tool_execution.rs:
// DECLINED_RESPONSE, when the user or a permission rule refuses it;
// CHAT_MODE_TOOL_SKIPPED_RESPONSE, in chat mode), as they begin.
const (
	declined    = "The user has declined to run this tool."
	skippedChat = "Let the user know the tool call was skipped in"
)

// failureText reads the assistant text Goose writes in place of an
// answer when a provider request fails and the turn ends on it
// (agents/agent.rs: the general provider error, a network error, a
// refusal): a provider error, with the text as its message. Each is
// recognised by its whole template, beginning and end.
func failureText(t string) (sdk.ProviderError, bool) {
	switch {
	case strings.HasPrefix(t, "Ran into this error: ") && strings.HasSuffix(t, ".\n\nPlease retry if you think this is a transient or recoverable error."):
		msg := strings.TrimSuffix(strings.TrimPrefix(t, "Ran into this error: "), ".\n\nPlease retry if you think this is a transient or recoverable error.")
		return sdk.ProviderError{Message: sdk.S(msg)}, true
	case strings.HasSuffix(t, "\n\nPlease resend your message to try again."):
		return sdk.ProviderError{Message: sdk.S(strings.TrimSuffix(t, "\n\nPlease resend your message to try again.")), Code: sdk.S("network_error")}, true
	case strings.HasPrefix(t, "The provider refused this request.") && strings.HasSuffix(t, "resending this conversation is likely to be refused again."):
		return sdk.ProviderError{Message: sdk.S(sdk.Clip(t, 300)), Code: sdk.S("refusal")}, true
	}
	return sdk.ProviderError{}, false
}

// contentText joins the texts of an MCP content list (an image or
// resource named by what it is): the items for the model. Goose's own
// tools return their output twice, once for the model (annotations
// audience ["assistant"]) and once for the user's screen (audience
// ["user"], priority 0), and Goose sends the model only the items whose
// audience holds the assistant or is not said (its providers' format
// code): an item for the user alone is left out, unless no item is for
// the model.
func (n *normalizer) contentText(list abi.Value) string {
	forModel := false
	it := list.Iter()
	for it.Next() {
		if !userOnly(it.Value()) {
			forModel = true
			break
		}
	}
	// Built in n.buf, copied once: the texts are not copied on the way.
	b := n.buf[:0]
	it = list.Iter()
	for it.Next() {
		c := it.Value()
		if forModel && userOnly(c) {
			continue
		}
		if len(b) > 0 {
			b = append(b, '\n')
		}
		switch typ := c.Get("type"); sdk.View(typ) {
		case "text":
			b = appendString(b, c.Get("text"))
		case "image":
			b = append(appendString(append(b, "[image "...), c.Get("mimeType")), ']')
		case "resource":
			if t := c.Get("resource").Get("text"); t.Kind() == abi.KindString {
				b = sdk.AppendText(b, t)
			} else {
				b = append(appendString(append(b, "[resource "...), c.Get("resource").Get("uri")), ']')
			}
		default:
			b = append(appendString(append(b, '['), typ), ']')
		}
	}
	n.buf = b
	return string(b)
}

// appendString appends v.String() to b without copying it first.
func appendString(b []byte, v abi.Value) []byte {
	if v.Kind() == abi.KindString {
		return sdk.AppendText(b, v)
	}
	return append(b, v.String()...)
}

// userOnly reports whether an MCP content item is for the user alone:
// its annotations name an audience without the assistant.
func userOnly(c abi.Value) bool {
	aud := c.Get("annotations").Get("audience")
	if aud.Kind() != abi.KindArray || aud.Len() == 0 {
		return false
	}
	it := aud.Iter()
	for it.Next() {
		if it.Value().Is("assistant") {
			return false
		}
	}
	return true
}

// errText is a Goose error: a string (ToolError's text), else the JSON.
func errText(e abi.Value) string {
	if e.Kind() == abi.KindString && e.String() != "" {
		return e.String()
	}
	if e.Exists() && e.Kind() != abi.KindNull {
		return sdk.Text(e).String()
	}
	return "error"
}

// toolKind classifies Goose's tools (an extension's tool is named
// extension__tool; the developer extension's shell and text_editor).
func toolKind(name string, input abi.Value) (string, sdk.Str) {
	base := strings.ToLower(name)
	if i := strings.LastIndex(base, "__"); i >= 0 {
		base = base[i+2:]
	}
	switch base {
	case "shell", "bash":
		return "execute", sdk.StringOf(input.Get("command"))
	case "text_editor":
		if input.Get("command").Is("view") {
			return "read", sdk.Str{}
		}
		return "edit", sdk.Str{}
	case "read", "view", "list_resources", "read_resource":
		return "read", sdk.Str{}
	case "write", "edit", "str_replace":
		return "edit", sdk.Str{}
	case "glob", "grep", "rg", "tree", "search", "analyze":
		return "search", sdk.Str{}
	case "fetch", "web_search", "web_scrape":
		return "fetch", sdk.Str{}
	case "todo_write", "todo_read":
		return "think", sdk.Str{}
	}
	return "other", sdk.Str{}
}

// End implements sdk.Normalizer.
func (n *normalizer) End(out *sdk.Out) error {
	// A stream-json run cut off mid-message: what came of it is written.
	n.closeStream(out)
	n.flushEarly(out)
	return nil
}

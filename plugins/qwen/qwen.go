package qwen

import (
	"strconv"
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/plugins/gemini"
)

// Plugin is the Qwen Code normalizer.
var Plugin = sdk.Plugin{
	Manifest: abi.Manifest{
		Name:        "qwen",
		Version:     "0.1.0",
		Providers:   []string{"qwen"},
		Formats:     []string{fmtSession, fmtLegacy, fmtHeadless},
		Description: "Qwen Code chat records (~/.qwen/projects/*/chats/*.jsonl), the older whole-document chats, and qwen -p's stream-json and json output",
		// Qwen Code keeps chats until the user deletes them (no
		// retention); doc.go, "Store".
		Stores: []abi.Store{
			{Name: "Qwen Code chats", Roots: qwenRoots, Dir: "projects", Pattern: "*/chats/*.jsonl"},
			{Name: "Qwen Code chats (before JSONL)", Roots: qwenRoots, Dir: "tmp", Pattern: "*/chats/session-*.json"},
		},
	},
	New:        func(opts abi.BeginOptions) sdk.Normalizer { return &normalizer{opts: opts} },
	Reassemble: true, // the older chats are pretty-printed documents
	Keys:       keys,
}

// qwenRoots: Qwen Code's runtime directory is $QWEN_RUNTIME_DIR when set,
// else ~/.qwen (Storage.getRuntimeBaseDir).
var qwenRoots = []abi.Root{{Env: "QWEN_RUNTIME_DIR"}, {Path: "~/.qwen"}}

// Format names, as reported in OpMeta and the manifest. fmtLegacy is the
// Gemini plugin's name for the whole-document chat it reads.
const (
	fmtSession = "session"
	fmtLegacy  = "session-file"
)

// forkedHistory is the native name under which a record /branch copied
// from another session (forkedFrom) is declared ignored.
const forkedHistory = "(forked history)"

// normalizer is the per-stream state. Everything kept across lines is a Go
// string, a bool or a number: spans die with their line.
type normalizer struct {
	opts abi.BeginOptions

	// legacy reads an older whole-document chat: Gemini CLI's session
	// document, which Qwen Code wrote before its JSONL records.
	legacy sdk.Normalizer

	sawRecord bool
	sessionID string
	model     string

	// records are the hashes of the records read (their bytes, uuid
	// included): a record read again byte for byte is a replay (a file
	// copied after itself), every fragment of a message included; another
	// record of the uuid of the message held open is a fragment of it.
	records sdk.HashSet
	// fields are the members of the record being read, filed by their
	// number in keys (object).
	fields []abi.Value
	held   held // the assistant message held open for its fragments (message.go)
	// calls and resulted are kept by the call's scope and id (callKey):
	// a sidechain sub-agent's call may reuse the id of a call of the
	// session waiting for its result.
	calls    map[string]string // call key -> tool name (of its latest call)
	resulted map[string]bool   // call keys whose latest call has its result
	agents   []subAgent        // sub-agent calls' scopes, in call order
	sides    map[string]bool   // sidechain agent ids with an open scope

	hl headless // qwen -p's stream-json or json output (headless.go)
}

// Line implements sdk.Normalizer.
func (n *normalizer) Line(l *sdk.Line, out *sdk.Out) error {
	if n.legacy != nil {
		return n.legacy.Line(l, out)
	}
	v := l.JSON()
	if !v.Exists() {
		n.glued(l, out)
		return nil
	}
	if v.Kind() == abi.KindArray && !n.sawRecord && isHeadless(v.Index(0)) {
		// qwen -p --output-format json: the messages in one array.
		it := v.Iter()
		for it.Next() {
			if m := it.Value(); m.Kind() == abi.KindObject {
				n.headlessLine(m, l.No, out)
			}
		}
		return nil
	}
	if v.Kind() != abi.KindObject {
		out.Unmapped(sdk.S("non_object"))
		return nil
	}
	if !n.hl.on && !n.sawRecord && !isHeadless(v) && v.Get("messages").Kind() == abi.KindArray {
		// An older chat, one document rewritten at every turn: the
		// Gemini CLI's session file, read by the Gemini plugin.
		n.legacy = gemini.Plugin.New(n.opts)
		return n.legacy.Line(l, out)
	}
	n.object(v, l.No, l.Raw, out)
	return nil
}

// glued handles a line that is not one JSON value: records written one
// after another without their newline (`}{`: an append cut short, which
// Qwen Code's own reader recovers, jsonl-utils' recoverObjectsFromLine)
// are read each as a line of its own; what lies outside them is counted
// "non_json".
func (n *normalizer) glued(l *sdk.Line, out *sdk.Out) {
	raw := sdk.TrimSpace(l.Raw)
	if len(raw) == 0 {
		return
	}
	objs, whole := sdk.GluedObjects(raw)
	for _, o := range objs {
		doc, ok := sdk.Parse(o)
		if !ok {
			out.Unmapped(sdk.S("non_json"))
			continue
		}
		n.object(doc.Root(), l.No, o, out)
	}
	if !whole {
		out.Unmapped(sdk.S("non_json"))
	}
}

// object handles one JSON object of line no (raw, its bytes): a
// headless message, or a chat record.
func (n *normalizer) object(v abi.Value, no int, raw []byte, out *sdk.Out) {
	if n.hl.on || !n.sawRecord && isHeadless(v) {
		// qwen -p --output-format stream-json: Claude Code's shapes.
		n.headlessLine(v, no, out)
		return
	}
	if n.fields == nil {
		n.fields = make([]abi.Value, len(keys.Names()))
	}
	f := n.fields
	v.Lookup(keys, f)
	t := f[kType]
	if t.Kind() != abi.KindString {
		out.Unmapped(sdk.S("(no type)"))
		return
	}
	n.start(v, out)
	if f[kForkedFrom].Kind() == abi.KindObject {
		// A record /branch copied from the session it was forked from:
		// that session's turn, which its own run holds.
		out.Ignored(sdk.S(forkedHistory))
		return
	}
	fragment := false
	if id := f[kUUID]; id.Kind() == abi.KindString && !id.Is("") {
		h := sdk.Hash64(sdk.TrimSpace(raw))
		if n.records.Has(h) {
			// The same record again (a file copied after itself).
			out.Ignored(sdk.S("(replayed record)"))
			return
		}
		if t.Is("assistant") && n.held.key == sdk.View(id) {
			// Another fragment of the message held open: Qwen Code
			// joins the records that share a uuid (aggregateRecords).
			fragment = true
		}
		n.records.Add(h)
	}
	if !fragment && !(t.Is("system") && f[kSubtype].Is("ui_telemetry")) {
		// Any other record ends the message held open (a telemetry
		// record, beside the conversation, may come between fragments).
		n.release(out)
	}
	r := record{v: v, f: f, no: no, ts: sdk.StringOf(f[kTimestamp]), scope: n.scope(f, out)}
	switch sdk.Name(t) {
	case "user":
		n.user(r, out)
	case "assistant":
		n.assistant(r, out, fragment)
	case "tool_result":
		n.toolResult(r, out)
	case "system":
		n.system(r, out)
	default:
		out.Unmapped(sdk.S(sdk.TypeName(t)))
	}
}

// record is one chat record and what every handler needs of it.
type record struct {
	v     abi.Value
	f     []abi.Value // v's members by their number in keys (normalizer.fields)
	no    int
	ts    sdk.Str
	scope sdk.Str // the sidechain sub-agent that wrote it, unset for the session
}

// key is the message key of a record: its uuid, else its line.
func (r record) key() sdk.Str {
	if id := sdk.StringOf(r.f[kUUID]); !id.IsEmpty() {
		return id
	}
	return sdk.S("l" + strconv.Itoa(r.no))
}

// start reports, at the first record, the session id and the format: a
// chat has no terminal record, the host settles its status by the
// session rule of spec §6.7.
func (n *normalizer) start(v abi.Value, out *sdk.Out) {
	if n.sawRecord {
		return
	}
	n.sawRecord = true
	m := sdk.Meta{Format: sdk.S(fmtSession), NoTerminal: true}
	if id := v.Get("sessionId"); id.Kind() == abi.KindString && !id.Is("") {
		n.sessionID = id.String()
		m.SessionID = sdk.S(n.sessionID)
	}
	// Every record states the working directory (cwd); Qwen names no
	// repository root (its projects directory is named by a hash).
	m.Cwd = sdk.StringOf(v.Get("cwd"))
	out.Meta(m)
}

// scope is the scope of a record a sidechain sub-agent wrote
// (isSidechain with its agentId), opened at its first record; unset for
// the session's own records.
func (n *normalizer) scope(f []abi.Value, out *sdk.Out) sdk.Str {
	id := f[kAgentID]
	if !f[kIsSidechain].Truthy() || id.Kind() != abi.KindString || id.Is("") {
		return sdk.Str{}
	}
	if !n.sides[sdk.View(id)] {
		if n.sides == nil {
			n.sides = map[string]bool{}
		}
		n.sides[id.String()] = true
		name := sdk.StringOf(f[kAgentName])
		if name.IsEmpty() {
			name = sdk.Text(id)
		}
		out.ScopeOpen(sdk.Text(id), sdk.Str{}, name, sdk.Str{})
	}
	return sdk.Text(id)
}

// Qwen Code wraps a UserPromptSubmit hook's additionalContext in these
// tags, as a part of its own after the prompt's
// (hooks/user-prompt-submit-context.ts).
const (
	hookContextOpen  = "<qwen:user-prompt-submit-context>"
	hookContextClose = "</qwen:user-prompt-submit-context>"
)

// hookContext says whether a part's text is wholly a hook's tagged
// context (around whitespace), as Qwen Code reads it
// (isUserPromptSubmitContextPartText): the tag mixed with other text is
// the user's.
func hookContext(t string) bool {
	t = strings.TrimSpace(t)
	return len(t) >= len(hookContextOpen)+len(hookContextClose) && strings.HasPrefix(t, hookContextOpen) && strings.HasSuffix(t, hookContextClose)
}

// user handles a user record: the prompt (a mid-turn message the user
// typed too, and what the user said in a Realtime voice dialogue,
// subtype realtime_message), or, with another subtype (a notification, a
// cron prompt, an agent's launch prompt), context the CLI sent the model
// in the user's role. functionResponse parts are tool results.
func (n *normalizer) user(r record, out *sdk.Out) {
	origin := sdk.OriginPrompt
	if st := r.f[kSubtype]; st.Kind() == abi.KindString && !st.Is("mid_turn_user_message") && !st.Is("realtime_message") {
		origin = sdk.OriginInjected
	}
	opened, said := false, false
	key := r.key()
	parts := r.f[kMessage].Get("parts")
	several := parts.Len() > 1
	it := parts.Iter()
	for it.Next() {
		p := it.Value()
		if fr := p.Get("functionResponse"); fr.Kind() == abi.KindObject {
			said = n.functionResponse(fr, abi.Value{}, r, out) || said
			continue
		}
		txt := p.Get("text")
		if txt.Kind() != abi.KindString || txt.Is("") {
			// Inline data and file references: no text block holds
			// them; the raw capture keeps them.
			continue
		}
		if !opened {
			out.Open(key, sdk.Message{User: true, ID: sdk.StringOf(r.f[kUUID]), Scope: r.scope, Time: r.ts})
			opened = true
		}
		o := origin
		if o == sdk.OriginPrompt && (gemini.InjectedContext(txt.Raw()[1:]) || several && hookContext(sdk.View(txt))) {
			// @file contents the CLI added to the prompt, or a
			// UserPromptSubmit hook's additional context.
			o = sdk.OriginInjected
		}
		out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(txt), Origin: o})
	}
	if opened {
		out.Close(key, sdk.MessageEnd{})
	} else if !said {
		out.Ignored(sdk.S("user"))
	}
}

package pi

import (
	"strconv"
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// Plugin is the Pi coding agent normalizer.
var Plugin = sdk.Plugin{
	Manifest: abi.Manifest{
		Name:        "pi",
		Version:     "0.1.0",
		Providers:   []string{"pi"},
		Formats:     []string{fmtSession, fmtJSON},
		Description: "Pi coding agent (pi-mono; OMP, OpenClaw) session files and --mode json",
		// Pi, OMP and OpenClaw keep sessions until the user deletes them
		// (no retention); doc.go, "Store".
		Stores: []abi.Store{
			{Name: "Pi sessions", Roots: []abi.Root{{Env: "PI_CODING_AGENT_DIR"}, {Path: "~/.pi/agent"}}, Dir: "sessions", Pattern: "*/*.jsonl"},
			{Name: "OMP sessions", Roots: []abi.Root{{Path: "~/.omp/agent"}}, Dir: "sessions", Pattern: "*/*.jsonl"},
			{Name: "OpenClaw sessions", Roots: []abi.Root{{Path: "~/.openclaw"}}, Dir: "agents", Pattern: "*/sessions/*.jsonl"},
		},
	},
	New: func(opts abi.BeginOptions) sdk.Normalizer {
		n := &normalizer{}
		if opts.Format == fmtSession || opts.Format == fmtJSON {
			n.hint = opts.Format
		}
		return n
	},
	Keys: keys,
}

// Format names, as reported in OpMeta and the manifest.
const (
	fmtSession = "session"
	fmtJSON    = "json"
)

// normalizer is the per-stream state. Everything kept across lines is a Go
// string or a number: spans die with their line.
type normalizer struct {
	hint string // the format the host was told, if one of ours

	sawEntry  bool   // a session entry or header (a session file)
	sawEvent  bool   // an agent event of --mode json
	sessionID string // the first header's, the step's
	current   string // the last header's
	// started is the header's timestamp; parent the session it was
	// forked from; copied counts the entries dated before the header
	// (copied from that parent, declared ignored) until the first that
	// is not (-1 once reported).
	started, parent string
	copied          int

	tree tree

	// json mode: whether the last assistant message ended in an error,
	// and which, for agent_end.
	lastFailed bool
	lastErr    string

	// unrun are the calls of the last response that failed or was
	// aborted: reported cancelled when the next line is not their result.
	unrun []unrunCall

	// The members of a line's object, of an assistant message and of
	// its usage, each found in one pass over the object (fields.of)
	// rather than one per Get. (A tool result reads its message by Get:
	// its sub-agents' messages, read on the way, are assistant messages
	// too.)
	fRoot, fMsg, fUsage fields
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
	f := n.fRoot.of(v)
	t := f[kType]
	if t.Kind() != abi.KindString {
		out.Unmapped(sdk.S("(no type)"))
		return nil
	}
	ts := sdk.StringOf(f[kTimestamp])
	if len(n.unrun) > 0 && !f[kMessage].Get("role").Is("toolResult") {
		n.flushUnrun(out)
	}
	switch typ := sdk.Name(t); typ {
	case "session":
		n.header(v, out)
	case "title":
		// OMP's rewritable title slot before the header.
		n.sawEntry = true
		out.Ignored(sdk.S("title"))
	case "message", "model_change", "thinking_level_change", "compaction", "branch_summary",
		"custom", "custom_message", "label", "session_info":
		n.sawEntry = true
		n.entry(v, f, typ, ts, l.No, out)
	case "message_end":
		n.sawEvent = true
		n.message(f[kMessage], msgKey(l.No), sdk.Str{}, ts, out)
	case "agent_end":
		n.sawEvent = true
		// The run's end: it failed when its last response did.
		if n.lastFailed {
			out.Status(sdk.StatusError, sdk.S(n.lastErr), sdk.LevelTerminal)
		} else {
			out.Status(sdk.StatusOK, sdk.Str{}, sdk.LevelTerminal)
		}
	case "auto_retry_end":
		n.sawEvent = true
		if ok, known := f[kSuccess].Bool(); known && !ok {
			msg := sdk.StringOf(f[kFinalError])
			if msg.IsEmpty() {
				msg = sdk.S("automatic retries failed")
			}
			out.Error(sdk.ProviderError{Message: msg})
		} else {
			out.Ignored(sdk.S(typ))
		}
	case "auto_compaction_end":
		n.sawEvent = true
		n.autoCompaction(v, l.No, ts, out)
	case "agent_start", "turn_start", "turn_end", "message_start", "message_update",
		"tool_execution_start", "tool_execution_update", "tool_execution_end",
		"auto_compaction_start", "auto_retry_start":
		// Lifecycle markers, deltas and previews: message_end carries
		// every message whole (tool results included), and turn_end and
		// agent_end repeat them; a retry's cause is the errored message
		// before it.
		n.sawEvent = true
		out.Ignored(sdk.S(typ))
	default:
		// An entry type of a later version still has its place in the
		// tree: the entries after it name it as their parent.
		if id := f[kID]; id.Kind() == abi.KindString && f[kParentID].Exists() {
			n.tree.add(id, f[kParentID], false, out)
		}
		out.Unmapped(sdk.S(sdk.TypeName(t)))
	}
	return nil
}

// msgKey is the key of a message that has no entry id (--mode json).
// forkedHistory is the native name under which an entry a fork copied
// from its parent session is declared ignored.
const forkedHistory = "(forked history)"

func msgKey(no int) sdk.Str { return sdk.S("l" + strconv.Itoa(no)) }

// header reads the session header: the session id, the model of v1
// headers, the fork parent. A second header starts another session in
// the same stream (files concatenated): its tree is a new one.
func (n *normalizer) header(v abi.Value, out *sdk.Out) {
	n.sawEntry = true
	said := false
	id := sdk.View(v.Get("id"))
	switch {
	case n.sessionID == "" && id != "":
		n.sessionID, n.current = strings.Clone(id), strings.Clone(id)
		// The header's cwd is where the session runs; Pi names no
		// repository root.
		out.Meta(sdk.Meta{SessionID: sdk.S(n.sessionID), Cwd: sdk.StringOf(v.Get("cwd"))})
		said = true
	case n.sessionID != "" && id != n.current:
		// Another session's entries make a tree of their own (the same
		// header again is a file copied after itself: its entries are
		// replays).
		out.Warn("a second session header (" + clip(id) + ") follows session " + n.current + ": its entries are read into the same step")
		n.current = strings.Clone(id)
		n.tree.reset()
		said = true
	}
	n.started = strings.Clone(sdk.View(v.Get("timestamp")))
	// v1 headers name the model the session started with.
	if m := v.Get("modelId"); m.Kind() == abi.KindString && !m.Is("") {
		out.Meta(sdk.Meta{Model: sdk.Text(m)})
		said = true
	}
	p := v.Get("parentSession")
	if p.Kind() != abi.KindString {
		p = v.Get("branchedFrom")
	}
	if p.Kind() == abi.KindString && !p.Is("") {
		n.parent = p.String()
		out.Warn("forked from session " + clip(n.parent))
		said = true
	}
	if !said {
		out.Ignored(sdk.S("session"))
	}
}

// entry handles one session entry: its place in the tree, then what it
// holds.
func (n *normalizer) entry(v abi.Value, f *fields, typ string, ts sdk.Str, no int, out *sdk.Out) {
	copied := false
	if n.parent != "" && n.started != "" && ts.IsSet() && n.copied >= 0 {
		if sdk.View(f[kTimestamp]) < n.started {
			n.copied++
			copied = true
		} else {
			n.copiedEnd(out)
		}
	}
	id := sdk.StringOf(f[kID])
	key := id
	if !id.IsSet() {
		// A v1 entry: no tree, the file's order is the conversation.
		key = msgKey(no)
	} else if n.tree.add(f[kID], f[kParentID], typ == "message", out) {
		// An entry read before (a file copied after itself): the same
		// entry, not a new one.
		out.Ignored(sdk.S("(replayed entry)"))
		return
	}
	if copied {
		// The parent session's entry, copied as the context the fork
		// started from: its turn, calls and tokens are that session's,
		// which its own run holds. It stays in the tree (the fork's
		// first entries go on from it).
		out.Ignored(sdk.S(forkedHistory))
		return
	}
	switch typ {
	case "message":
		n.message(f[kMessage], key, id, ts, out)
	case "model_change":
		if m := f[kModelID]; m.Kind() == abi.KindString && !m.Is("") {
			// The model the next responses come from: the latest
			// is the step's.
			out.Meta(sdk.Meta{Model: sdk.Text(m), Override: true})
		} else {
			out.Ignored(sdk.S(typ))
		}
	case "compaction":
		n.compaction(key, id, ts, v.Get("summary"), v.Get("firstKeptEntryId"), v.Get("tokensBefore"), out)
		if i, ok := v.Get("firstKeptEntryIndex").Int(); ok && i >= 0 {
			// A v1 compaction names the first entry kept by its index
			// among the file's lines (the header is 0).
			out.Warn("compaction: the model keeps the conversation from line " + strconv.FormatInt(i+1, 10) + " of the session file on")
		}
	case "branch_summary":
		if s := v.Get("summary"); s.Kind() == abi.KindString && !s.Is("") {
			injected(key, id, ts, sdk.Text(s), out)
		} else {
			out.Ignored(sdk.S(typ))
		}
	case "custom_message":
		// An extension's message in the model's context: not the user's.
		if !contentMessage(key, id, ts, v.Get("content"), sdk.OriginInjected, out) {
			out.Ignored(sdk.S(typ))
		}
	default:
		// thinking_level_change, session_info (a display name), label
		// (a bookmark), custom (an extension's state, not in the
		// model's context).
		out.Ignored(sdk.S(typ))
	}
}

// compaction is the summary that replaced the conversation before
// firstKept in the model's context: injected context, and a warning that
// says what the model no longer sees. The turns it summarizes are the
// ones above it in the transcript; none is invented.
func (n *normalizer) compaction(key, id, ts sdk.Str, summary, firstKept, tokens abi.Value, out *sdk.Out) {
	if summary.Kind() == abi.KindString && !summary.Is("") {
		injected(key, id, ts, sdk.Text(summary), out)
	}
	msg := "compaction: the conversation"
	if firstKept.Kind() == abi.KindString && !firstKept.Is("") {
		msg += " before entry " + clip(sdk.View(firstKept))
	}
	if t, ok := tokens.Int(); ok {
		msg += " (" + strconv.FormatInt(t, 10) + " tokens of context)"
	}
	out.Warn(msg + " was replaced by a summary in the model's context; the transcript keeps it")
}

// autoCompaction is --mode json's report of a compaction.
func (n *normalizer) autoCompaction(v abi.Value, no int, ts sdk.Str, out *sdk.Out) {
	r := v.Get("result")
	if r.Kind() == abi.KindObject {
		n.compaction(msgKey(no), sdk.Str{}, ts, r.Get("summary"), r.Get("firstKeptEntryId"), r.Get("tokensBefore"), out)
		return
	}
	if e := v.Get("errorMessage"); e.Kind() == abi.KindString && !e.Is("") {
		out.Warn("compaction failed: " + clip(sdk.View(e)))
		return
	}
	out.Ignored(sdk.S("auto_compaction_end"))
}

// End implements sdk.Normalizer.
func (n *normalizer) End(out *sdk.Out) error {
	n.flushUnrun(out)
	n.copiedEnd(out)
	if !n.sawEntry && !n.sawEvent {
		return nil
	}
	// The content decides (agent events exist on stdout only), else the
	// format the host was told.
	f := n.hint
	switch {
	case n.sawEvent:
		f = fmtJSON
	case f == "":
		f = fmtSession
	}
	// A session file has no terminal event: the host settles it by the
	// session rule (spec §6.7); --mode json ends with agent_end.
	out.Meta(sdk.Meta{Format: sdk.S(f), NoTerminal: f == fmtSession})
	return nil
}

// copiedEnd reports the entries copied from the parent session, once
// the first entry of the session's own follows them (or at the end).
func (n *normalizer) copiedEnd(out *sdk.Out) {
	if n.copied > 0 {
		out.Warn(strconv.Itoa(n.copied) + " entries are dated before the session began: copied from the session it was forked from (" + clip(n.parent) + "), they are that session's turns, repeated here as the context this one started from, and are not counted here")
		n.copied = -1
	}
}

// clip bounds a value quoted in a warning.
func clip(s string) string { return sdk.Clip(s, 200) }

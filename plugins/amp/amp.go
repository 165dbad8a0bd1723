package amp

import (
	"strconv"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// Plugin is the Amp normalizer.
var Plugin = sdk.Plugin{
	Manifest: abi.Manifest{
		Name:        "amp",
		Version:     "0.1.0",
		Providers:   []string{"amp"},
		Formats:     []string{fmtThread},
		Description: "Amp thread documents (~/.local/share/amp/threads/T-*.json), rewritten whole at every turn",
		// Amp keeps threads until the user deletes them; doc.go, "Store".
		Stores: []abi.Store{
			{Name: "Amp threads", Roots: ampRoots, Dir: "threads", Pattern: "T-*.json"},
		},
	},
	New:        func(abi.BeginOptions) sdk.Normalizer { return &normalizer{} },
	Reassemble: true, // a thread may be pretty-printed
	Keys:       keys,
}

// ampRoots: Amp's data directory is $XDG_DATA_HOME/amp when set, else
// ~/.local/share/amp, on every OS (the CLI does not use the macOS or
// Windows application-data folders).
var ampRoots = []abi.Root{{Env: "XDG_DATA_HOME", Path: "amp"}, {Path: "~/.local/share/amp"}}

// fmtThread is the format name reported in OpMeta and the manifest.
const fmtThread = "thread"

// normalizer is the per-stream state. A thread is one document; a
// stream holding several (a file copied after itself) reports each
// message and result once.
type normalizer struct {
	sawThread bool
	threadID  string
	model     string

	messages map[string]uint64 // message key -> hash of the version reported
	calls    map[string]string // call id -> tool name (of its latest call)
	resulted map[string]bool   // call ids whose latest call has its result
	// told holds, by message key and call id (told's key), the calls
	// and results each message has had reported: a later version of the
	// message (the thread rewritten) adds only what it did not have, and
	// a call id another message reuses is told apart from it.
	told   map[string]bool
	agents []subAgent // Task calls' scopes, in call order
	// streaming holds the keys of the assistant messages reported while
	// Amp was still writing them (state streaming): their finished
	// version is reported again, whole. lastStreaming: the thread read
	// last ends on such a message (a turn not finished).
	streaming     map[string]bool
	lastStreaming bool
	// lastCancelled: the thread read last ends on an assistant message
	// the user cancelled (state cancelled).
	lastCancelled bool
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
	msgs := v.Get("messages")
	if msgs.Kind() != abi.KindArray {
		out.Unmapped(sdk.S("(no messages)"))
		return nil
	}
	n.thread(v, out)
	said := false
	idx := 0
	it := msgs.Iter()
	n.lastStreaming, n.lastCancelled = false, false
	for it.Next() {
		m := it.Value()
		said = n.message(m, idx, v, out) || said
		n.lastStreaming = streaming(m)
		n.lastCancelled = m.Get("role").Is("assistant") && m.Path("state", "type").Is("cancelled")
		idx++
	}
	if !said {
		// A thread with no message yet, or the same document again.
		out.Ignored(sdk.S("thread"))
	}
	return nil
}

// thread reports, at the first document, the thread id and the format.
// A thread has no terminal record: the host settles its status by the
// session rule of spec §6.7.
func (n *normalizer) thread(v abi.Value, out *sdk.Out) {
	id := v.Get("id")
	if n.sawThread {
		if id.Kind() == abi.KindString && n.threadID != "" && !id.Is(n.threadID) {
			out.Warn("amp stream holds a second thread, " + sdk.TypeName(id) + ": its messages are read as part of thread " + n.threadID)
		}
		return
	}
	n.sawThread = true
	m := sdk.Meta{Format: sdk.S(fmtThread), NoTerminal: true}
	if id.Kind() == abi.KindString && !id.Is("") {
		n.threadID = id.String()
		m.SessionID = sdk.Text(id)
	}
	// The workspace tree the thread ran in, when it names one (a thread
	// of several trees names no one directory).
	if trees := v.Path("env", "initial", "trees"); trees.Len() == 1 {
		if dir, ok := sdk.FilePath(trees.Index(0).Get("uri").String()); ok {
			m.Cwd = sdk.S(dir)
		}
	}
	out.Meta(m)
}

// msTime is an epoch-milliseconds number as RFC 3339 (unset when v is
// not a positive number).
func msTime(v abi.Value) sdk.Str {
	ms, ok := v.Int()
	if !ok {
		f, okf := v.Float()
		if !okf || f <= 0 || f > 1e15 {
			return sdk.Str{}
		}
		ms = int64(f)
	}
	if ms <= 0 || ms > 1e15 {
		return sdk.Str{}
	}
	return sdk.S(sdk.RFC3339Millis(ms))
}

// messageID is a message's messageId as text (unset when it has none):
// the id the archive matches the messages of a rewritten thread by.
func messageID(m abi.Value) sdk.Str {
	if id, ok := m.Get("messageId").Int(); ok {
		return sdk.S(strconv.FormatInt(id, 10))
	}
	return sdk.Str{}
}

// messageKey is a message's key: its messageId (a number Amp counts up
// per thread), else its index in the document.
func messageKey(m abi.Value, idx int) sdk.Str {
	if id, ok := m.Get("messageId").Int(); ok {
		return sdk.S("m" + strconv.FormatInt(id, 10))
	}
	return sdk.S("i" + strconv.Itoa(idx))
}

// End implements sdk.Normalizer: a Task call without a result leaves its
// scope incomplete.
func (n *normalizer) End(out *sdk.Out) error {
	if n.lastStreaming {
		// The thread was read while Amp streamed its last answer (twasm
		// sync archives threads Amp still writes): a later version,
		// the answer finished, settles it.
		out.Status(sdk.StatusIncomplete, sdk.S("the turn has not finished: the thread's last assistant message is still streaming (state streaming)"), sdk.LevelError)
	}
	if n.lastCancelled {
		// The user stopped the thread's last answer: the turn was cut,
		// as a Codex turn_aborted is (a warning too).
		out.Status(sdk.StatusIncomplete, sdk.S("the response was cancelled by the user before it completed"), sdk.LevelError)
	}
	for i := range n.agents {
		if a := &n.agents[i]; a.open {
			a.open = false
			out.ScopeClose(sdk.S(a.scope), sdk.StatusIncomplete, sdk.S("the thread ended before the sub-agent's result was recorded"))
		}
	}
	return nil
}

// streaming says whether m is an assistant message Amp is still writing
// (state {type: "streaming"}; complete, cancelled and error are ended).
func streaming(m abi.Value) bool {
	return m.Get("role").Is("assistant") && m.Path("state", "type").Is("streaming")
}

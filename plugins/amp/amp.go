package amp

import (
	"slices"
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
		Formats:     []string{fmtThread, fmtStream},
		Description: "Amp thread documents (~/.local/share/amp/threads/T-*.json), rewritten whole at every turn, and amp --execute --stream-json output",
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

	// byID and byIndex hold the hash of the version of each message
	// reported (sdk.Hash64 of its bytes), by its messageId, else by its
	// index (messageKey): a message read again unchanged, as most of a
	// thread rewritten at every turn is, costs a hash and a map read, no
	// string.
	byID     map[int64]uint64
	byIndex  map[int]uint64
	calls    map[string]string // call id -> tool name (of its latest call)
	resulted map[string]bool   // call ids whose latest call has its result
	// told holds, by message key and call id (told's key), the calls
	// and results each message has had reported: a later version of the
	// message (the thread rewritten) adds only what it did not have, and
	// a call id another message reuses is told apart from it.
	told   map[string]bool
	agents []subAgent // Task calls' scopes, in call order
	forks  []string   // parents of a fork with no fork point, warned of once
	// streaming holds the keys of the assistant messages reported while
	// Amp was still writing them (state streaming): their finished
	// version is reported again, whole. lastStreaming: the thread read
	// last ends on such a message (a turn not finished).
	streaming     map[string]bool
	lastStreaming bool
	// unsaid are the streaming messages whose calls are not reported
	// yet, in the order they were read: a call's input is not final
	// while Amp writes it, so its call is reported once the message
	// is finished, or, still streaming when the input ends, at the end
	// with the last input read.
	unsaid []unsaid
	// lastCancelled: the thread read last ends on an assistant message
	// the user cancelled (state cancelled).
	lastCancelled bool
	// sawStream: a stream-json line was read (its Meta reported);
	// scope: the sub-agent scope of the stream line being read (unset
	// for the thread's own), which its calls and results go to.
	sawStream bool
	scope     sdk.Str
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
		if t := v.Get("type"); t.Kind() == abi.KindString && !v.Get("v").Exists() {
			// A line of `amp --execute --stream-json`.
			n.streamLine(v, t, l.No, out)
			return nil
		}
		out.Unmapped(sdk.S("(no messages)"))
		return nil
	}
	n.thread(v, out)
	copied := n.forkPoint(v, out)
	said := false
	idx := 0
	it := msgs.Iter()
	n.lastStreaming, n.lastCancelled = false, false
	for it.Next() {
		m := it.Value()
		if idx > copied {
			said = n.message(m, idx, v, out) || said
		}
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

// forkPoint is the index of the last message a forked thread copied
// from its parent (Forks in doc.go): forkPointIndex, which Amp's
// createForkedThread sets with the parent's messages up to it; -1 for a
// thread that is not a fork. A thread a fork relationship names as this
// one's parent ({threadID, type: "fork", role: "child"}) without a
// forkPointIndex is warned of, once per parent: nothing says where its
// copy ends, so the copy counts in both runs.
func (n *normalizer) forkPoint(v abi.Value, out *sdk.Out) int {
	if i, ok := v.Get("forkPointIndex").Int(); ok && i >= 0 {
		return int(min(i, 1<<30))
	}
	it := v.Get("relationships").Iter()
	for it.Next() {
		r := it.Value()
		id := r.Get("threadID")
		if !r.Get("type").Is("fork") || !r.Get("role").Is("child") || id.Kind() != abi.KindString || slices.Contains(n.forks, id.String()) {
			continue
		}
		n.forks = append(n.forks, id.String())
		out.Warn("amp: this thread is a fork of " + sdk.Clip(id.String(), 80) + " but states no forkPointIndex: the messages it copied from it are read as its own, their usage counted in both runs")
	}
	return -1
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
// per thread; hasID), else its index in the document.
func messageKey(id int64, hasID bool, idx int) sdk.Str {
	if hasID {
		return sdk.S("m" + strconv.FormatInt(id, 10))
	}
	return sdk.S("i" + strconv.Itoa(idx))
}

// unsaid is a streaming message whose calls wait: its key, a copy of its
// bytes (the line's die with it) and its time.
type unsaid struct {
	key string
	raw []byte
	ts  string
}

// End implements sdk.Normalizer: the calls of a message still streaming
// are reported with the input last read; a Task call without a result
// leaves its scope incomplete.
func (n *normalizer) End(out *sdk.Out) error {
	for _, u := range n.unsaid {
		doc, ok := sdk.Parse(u.raw)
		if !ok {
			continue
		}
		ts := sdk.Str{}
		if u.ts != "" {
			ts = sdk.S(u.ts)
		}
		it := doc.Root().Get("content").Iter()
		for it.Next() {
			if b := it.Value(); b.Get("type").Is("tool_use") {
				n.call(b, u.key, ts, out)
			}
		}
	}
	n.unsaid = nil
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

package goose

import (
	"strconv"
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// fmtStream is the output of goose run --output-format stream-json.
const fmtStream = "stream-json"

// stream is what the normalizer keeps of a stream-json run between its
// lines: the message open (its key, id and role, the slot of its last
// block and that block's type, a text or thinking block that a delta
// with the same id grows) and the last provider error seen.
type stream struct {
	open     sdk.Str // the open message's key; unset when none is
	openID   string
	openRole string
	slot     int    // the open message's next slot
	last     string // the type of the block at slot-1: "text", "thinking" or ""
	origin   string // the open message's user texts' origin
	lastErr  string // the last provider error's text; "" when none came
	failed   bool
}

// fail reports provider error e and keeps its text: a stream-json run
// that reported one ends in error, whatever its complete event says.
func (n *normalizer) fail(out *sdk.Out, e sdk.ProviderError) {
	out.Error(e)
	n.st.failed = true
	n.st.lastErr = e.Message.String()
}

// streamLine handles one event of goose run --output-format stream-json
// (goose-cli's session/mod.rs, StreamEvent, serde-tagged on type in
// snake_case): message {message}, one message of the conversation as
// Goose's agent yields it (the same object a session stores); notification
// {extension_id, ...}, an MCP server's log or progress notice; error
// {error}, an error the agent loop reported; complete {total_tokens,
// input_tokens, output_tokens, and since about 1.44 cache_read_input_tokens
// and cache_write_input_tokens}, the run's end. ok is false for a line
// that is none of them.
func (n *normalizer) streamLine(v abi.Value, typ string, out *sdk.Out) bool {
	switch typ {
	case "message":
		m := v.Get("message")
		if m.Kind() != abi.KindObject || m.Get("role").Kind() != abi.KindString {
			return false
		}
		n.setStream(out)
		n.streamMessage(m, out)
	case "notification":
		// An MCP extension's log line or progress (a sub-agent's tool
		// calls among them, as text): Goose's progress display, not the
		// conversation.
		n.setStream(out)
		out.Ignored(sdk.S("notification"))
	case "error":
		n.setStream(out)
		n.closeStream(out)
		n.fail(out, sdk.ProviderError{Message: sdk.S(errText(v.Get("error")))})
	case "complete":
		n.setStream(out)
		n.closeStream(out)
		n.complete(v, out)
	default:
		return false
	}
	return true
}

// setStream reports the format once.
func (n *normalizer) setStream(out *sdk.Out) {
	if n.meta {
		return
	}
	n.meta = true
	n.isStream = true
	out.Meta(sdk.Meta{Format: sdk.S(fmtStream)})
}

// streamMessage handles a message event. Goose yields a streamed answer
// as it comes: one message a chunk, each with the response's id and the
// chunk's text alone (the CLI's own text output joins them:
// session/streaming.rs). A message with the id and role of the one open
// continues it: its text (or thinking) is appended to the open message's
// last block of that type, its other items are the next blocks. Any other
// message closes the open one and opens its own. A message without an id
// is whole.
func (n *normalizer) streamMessage(m abi.Value, out *sdk.Out) {
	id := ""
	if iv := m.Get("id"); iv.Kind() == abi.KindString {
		id = iv.String()
	}
	role := m.Get("role").String()
	created := seconds(m.Get("created"))
	st := &n.st
	if !st.open.IsSet() || id == "" || id != st.openID || role != st.openRole {
		n.closeStream(out)
		n.seq++
		k, origin, ok := n.open("s"+strconv.Itoa(n.seq), id, role, m.Get("metadata"), created, out)
		if !ok {
			return
		}
		st.open, st.openID, st.openRole, st.slot, st.last = k.Keep(), id, role, 0, ""
		st.origin = origin
	}
	content := m.Get("content")
	if content.Kind() != abi.KindArray {
		out.Unmapped(sdk.S("content_not_list"))
		return
	}
	user := role == "user"
	it := content.Iter()
	for it.Next() {
		c := it.Value()
		switch t := sdk.View(c.Get("type")); {
		case t == "text" && st.last == "text":
			out.Append(st.open, st.slot-1, sdk.BlockText, sdk.Text(c.Get("text")))
		case t == "thinking" && st.last == "thinking":
			out.Append(st.open, st.slot-1, sdk.BlockThinking, sdk.Text(c.Get("thinking")))
		default:
			n.item(st.open, st.slot, user, st.origin, c, created, out)
			st.slot++
			st.last = ""
			if t == "text" || t == "thinking" {
				st.last = t
			}
		}
	}
	if id == "" {
		n.closeStream(out)
	}
}

// closeStream closes the open message, if any.
func (n *normalizer) closeStream(out *sdk.Out) {
	if !n.st.open.IsSet() {
		return
	}
	out.Close(n.st.open, sdk.MessageEnd{})
	n.st.open = sdk.Str{}
}

// twiceWarning says what the stream's figures share with the store:
// goose run writes its session into sessions.db, and its stream names
// neither the session nor its id (--quiet leaves out the banner that
// names it), so nothing ties the recorded run to the run twasm sync
// archives from the database. Both count the session's tokens; the
// warning says so rather than let usage add them silently. A stream
// whose banner names the session states its id: the host counts the
// session once, in the database's run (views.Superseded).
const twiceWarning = "goose run's stream names no session (goose run --quiet prints no banner naming it): the same session is in Goose's sessions.db, and twasm sync archives it as a run of its own, whose figures hold these tokens too (twasm usage counts them in both runs; goose run without --quiet names the session, and twasm then counts it once; goose run --no-session keeps the session out of the database)"

// resumedWarning says that a resumed session's counters are not the
// run's own: Goose states the session's accumulated counters.
const resumedWarning = "goose run resumed a session: its counters are the session's, earlier runs included (the stream states no figures of this run alone)"

// complete handles the complete event: the run's end. Its token counts
// are the session's, as Goose stores them (its accumulated counters:
// input counts cached tokens; a run that resumed a session counts the
// earlier runs' too, which nothing in the stream says), set, not added.
// It states no status: a run that reported an error ends in error, any
// other ends ok.
func (n *normalizer) complete(v abi.Value, out *sdk.Out) {
	if u, ok := countersOf(v, streamCounters); ok {
		out.Usage(outputStated(u, out), sdk.ModeSet)
		if n.bannerSession == "" {
			out.Warn(twiceWarning)
		}
		if n.resumed {
			out.Warn(resumedWarning)
		}
	} else if t, ok := v.Get("total_tokens").Int(); ok {
		out.Warn("Goose stated only a total of " + strconv.FormatInt(t, 10) + " tokens for this run, no input or output: no usage is reported")
	}
	if n.st.failed {
		out.Status(sdk.StatusError, sdk.S(n.st.lastErr), sdk.LevelTerminal)
		return
	}
	out.Status(sdk.StatusOK, sdk.Str{}, sdk.LevelTerminal)
}

// banner reads a line of the banner goose run prints before its output
// unless --quiet (goose-cli's session/output.rs display_session_info):
// the line naming the session ("    session id: <id>") or the working
// directory ("    working directory: <dir>") under the 2025 header
// ("starting session | provider: ... model: ..."), or the line after
// the later header ("  ● new session · <provider> <model>"), "    <id> ·
// <dir>" (for "● ephemeral", a run without a session, the directory
// alone). Those are the run's session id and working directory (Meta);
// the headers are known (ignored: their provider and model are not
// read); ok is true for every banner line, false for any other (unmapped). The console crate colours it only on a terminal,
// or when forced: escape sequences are left out.
func (n *normalizer) banner(raw []byte, out *sdk.Out) (ok bool) {
	line := stripEscapes(raw)
	head := n.head
	n.head = headNone
	t := strings.TrimSpace(line)
	indented := strings.HasPrefix(line, "  ")
	switch {
	case strings.HasPrefix(t, "● "):
		switch {
		case strings.HasPrefix(t, "● ephemeral "):
			n.head = headEphemeral
		case strings.Contains(t, " · "):
			n.head = headSession
		}
		out.Ignored(sdk.S("banner"))
		return true
	case strings.HasPrefix(t, "resuming session |"):
		// The stream's counters will hold earlier runs' too.
		n.resumed = true
		out.Ignored(sdk.S("banner"))
		return true
	case strings.HasPrefix(t, "starting session |"), strings.HasPrefix(t, "running without session |"):
		out.Ignored(sdk.S("banner"))
		return true
	case !indented || t == "":
		return false
	case strings.HasPrefix(t, "session id: "):
		if id := strings.TrimSpace(t[len("session id: "):]); id != "" {
			n.bannerSession = id
			out.Meta(sdk.Meta{SessionID: sdk.S(id)})
			return true
		}
	case strings.HasPrefix(t, "working directory: "):
		if dir := strings.TrimSpace(t[len("working directory: "):]); dir != "" {
			out.Meta(sdk.Meta{Cwd: sdk.S(dir)})
			return true
		}
	case head == headEphemeral:
		out.Meta(sdk.Meta{Cwd: sdk.S(t)})
		return true
	case head == headSession:
		if id, dir, found := strings.Cut(t, " · "); found && id != "" && !strings.ContainsAny(id, " \t") && dir != "" {
			n.bannerSession = id
			out.Meta(sdk.Meta{SessionID: sdk.S(id), Cwd: sdk.S(dir)})
			return true
		}
	}
	return false
}

// stripEscapes is raw without its ANSI escape sequences (ESC [ ... and a
// final byte), as a string of its own.
func stripEscapes(raw []byte) string {
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		if raw[i] == 0x1b && i+1 < len(raw) && raw[i+1] == '[' {
			j := i + 2
			for j < len(raw) && (raw[j] < 0x40 || raw[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(raw[i])
	}
	return b.String()
}

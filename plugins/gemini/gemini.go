package gemini

import (
	"strconv"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// Plugin is the Gemini CLI normalizer.
var Plugin = sdk.Plugin{
	Manifest: abi.Manifest{
		Name:        "gemini",
		Version:     "0.1.0",
		Providers:   []string{"gemini"},
		Formats:     []string{fmtStream, fmtJSON, fmtSession},
		Description: "Gemini CLI --output-format stream-json and json, and on-disk session files",
		// A chat is one JSON document rewritten at every turn (older
		// builds) or JSON Lines (newer ones). A sub-agent's chat (0.37
		// and later) is a file of its own, in a directory named by the
		// session's full id (the session's file holds its first 8
		// characters), its run a child run of the session's, linked at
		// the call whose record names it by its agentId (0.39 and later;
		// doc.go, Sub-agents).
		Stores: []abi.Store{{Name: "Gemini CLI chats",
			Roots: []abi.Root{{Env: "GEMINI_CLI_HOME", Path: ".gemini"}, {Path: "~/.gemini"}}, Dir: "tmp", Pattern: "*/chats/**/*.{json,jsonl}",
			SubAgents:     "{stem}/*.{json,jsonl}",
			SubAgentsKey:  &abi.SessionKey{Member: "/sessionId", Prefix: 8},
			SubAgentCalls: &abi.RecordCalls{Calls: "/toolCalls", Agent: "agentId", ID: "id"}}},
	},
	New:        func(abi.BeginOptions) sdk.Normalizer { return newNormalizer() },
	Keys:       keys,
	Reassemble: true, // --output-format json is pretty-printed
}

// Format names, as reported in OpMeta and the manifest.
const (
	fmtStream  = "stream-json"
	fmtJSON    = "json"
	fmtSession = "session-file"
)

// deprecationPrefix starts the notice the CLI streamed as an assistant
// delta when -p was used (2025-12 builds). It is the CLI talking, not the
// model.
const deprecationPrefix = "The --prompt (-p) flag has been deprecated"

// normalizer is the per-stream state. Everything kept across lines is a Go
// string, a byte slice or a number: spans die with their line.
type normalizer struct {
	format string

	sessionSent bool
	sessionID   string // the JSONL header's, to tell a second session's header
	modelSent   bool
	modelAlias  bool // the model sent is an alias ("auto", "auto-gemini-3")

	// stream-json: the assistant message being built.
	cur       string // key of the open assistant message ("" when none)
	nextSlot  int    // next free slot of cur
	textSlot  int    // slot of the text block deltas append to, -1 when none
	text      []byte // text of cur, for the final answer (at most maxFinal)
	cut       bool   // text was cut at maxFinal
	answerCut bool   // answer was
	scratch   []byte
	answer    []byte // text of the last message that had text
	nKeys     int

	// session files: record ids written and the calls with a result
	// (by record and call id: resultKey), so that records appended again
	// (JSONL) or read again (a whole document) add only what is new.
	records  map[string]bool
	resulted map[string]bool
	// called holds the call ids of session files; sayings what each
	// user and gemini record said (a hash of its type and text) and
	// turns how many there were: a history rewrite ($set messages)
	// repeats none of them.
	called  map[string]bool
	sayings sdk.HashSet
	turns   int
	// idle: the session's last turn ended with an answer (a gemini
	// record with text and no calls) and no prompt or call followed it;
	// an error record then is the CLI's about something else than a
	// turn (a slash command's usage), not the session's error.
	idle bool
	// replay is the history the CLI is writing again as records of their
	// own (replay.go), while it does.
	replay replay

	// agents are the sub-agents' scopes, in the order they started: the
	// open ones, and the closed ones of session records (a stream's are
	// dropped at their close); scopes how many scopes each call id
	// opened (a map of the ids, not of the calls: it does not grow when
	// a stream's calls reuse an id).
	agents []subAgent
	scopes map[string]int

	// stream-json: the ids of shell calls (their result's display may
	// be all that says the command failed: streamShell).
	shells map[string]bool

	// heldResults are the stream's tool results of the last batch, kept
	// until the next event (releaseResults).
	heldResults []sdk.ToolResult

	lastErr   string // message of the last error event
	sawResult bool
	// unanswered: the stream's last request to the model (the prompt,
	// or the results of its calls) has no answer yet (no assistant
	// message or call after it); hookStop is the message of a call's
	// result whose error type is stop_execution (a hook stopped the
	// run after it), if the latest result was one.
	unanswered bool
	hookStop   string
	// stopped is the step's error when the CLI said it stopped the run
	// before its work was done (stopOf), which it then reports as a
	// success; "" otherwise.
	stopped string

	// df are the members of a line's object document reads (docKeys),
	// found in one pass over it rather than one per Get: most lines have
	// none of the keys that tell a session file or a patch, and each of
	// those Gets walked every member.
	df [len(docNames)]abi.Value
}

// docNames are the members of a line's object that document reads, in
// the order of the d* constants; all are in keys (TestLookupKeysDeclared).
var (
	docNames = [...]string{"type", "messages", "id", "severity", "response", "stats", "session_id", "error", "sessionId", "$set", "$rewindTo"}
	docKeys  = abi.NewKeySet(docNames[:]...)
)

const (
	dType = iota
	dMessages
	dID
	dSeverity
	dResponse
	dStats
	dSessionIDSnake // session_id
	dError
	dSessionID // sessionId
	dSet
	dRewindTo
)

func newNormalizer() *normalizer { return &normalizer{textSlot: -1} }

// Line implements sdk.Normalizer.
func (n *normalizer) Line(l *sdk.Line, out *sdk.Out) error {
	if !l.JSON().Exists() {
		n.textLine(l.Raw, out)
		return nil
	}
	n.document(l.JSON(), out)
	return nil
}

// End implements sdk.Normalizer.
func (n *normalizer) End(out *sdk.Out) error {
	n.releaseResults(false, out)
	n.closeMessage(out)
	switch n.format {
	case fmtStream:
		// Without a result event the host reports "incomplete"; the
		// answer streamed so far is still the best final text.
		if !n.sawResult {
			n.final(false, out)
		}
	case fmtSession:
		n.endReplay(out)
		n.endSession(out)
	}
	n.endAgents(out)
	return nil
}

// setFormat reports the format the first time it is known.
func (n *normalizer) setFormat(f string, out *sdk.Out) {
	if n.format != "" {
		return
	}
	n.format = f
	// A session file has no terminal record by design: the host settles
	// its status by the session rule of spec §6.7.
	out.Meta(sdk.Meta{Format: sdk.S(f), NoTerminal: f == fmtSession})
}

// document dispatches one JSON document by its shape.
func (n *normalizer) document(v abi.Value, out *sdk.Out) {
	if v.Kind() != abi.KindObject {
		out.Unmapped(sdk.S("non_object"))
		return
	}
	f := &n.df
	v.Lookup(docKeys, f[:])
	t := f[dType]
	switch {
	case f[dMessages].Kind() == abi.KindArray:
		n.sessionFile(v, out)
	case isRecordType(t) && f[dID].Exists() && !f[dSeverity].Exists():
		// A record of a JSONL session file (newer CLI builds): the same
		// message records as in the JSON file, one per line. Stream-json
		// events carry no id.
		n.setFormat(fmtSession, out)
		n.sessionMeta(v, false, out)
		if n.replayed(v, t, out) {
			return
		}
		n.sessionRecord(v, out)
	case t.Kind() == abi.KindString:
		n.streamEvent(v, t, out)
	case f[dResponse].Exists() || f[dStats].Exists() || f[dSessionIDSnake].Exists() || f[dError].Kind() == abi.KindObject:
		n.jsonOutput(v, out)
	case f[dSessionID].Exists():
		// The header record of a JSONL session file.
		n.setFormat(fmtSession, out)
		n.header(v, out)
	case f[dSet].Exists():
		// A JSONL session file's patch ({"$set":{"lastUpdated": ...}}):
		// bookkeeping, except for the history it may set (messages).
		set := f[dSet]
		n.setFormat(fmtSession, out)
		if !n.setMessages(set, out) {
			out.Ignored(sdk.S("$set"))
		}
		if set.Get("messages").Exists() {
			// The patch that closes a history written again: the
			// history the CLI sends the model from now on.
			n.endReplay(out)
		}
	case f[dRewindTo].Exists():
		// The user rewound the conversation (/rewind) to a message: the
		// CLI drops it and what followed from the history it sends the
		// model; the transcript keeps them, and says so.
		n.setFormat(fmtSession, out)
		n.endReplay(out)
		out.Warn("gemini session rewound to message " + sdk.TypeName(f[dRewindTo]) + ": that message and the ones after it were dropped from the conversation the model sees (they stay in this transcript)")
	default:
		if k := firstKey(v); len(k) > 1 && k[0] == '$' {
			// Another patch of a JSONL session file: one this plugin
			// does not know, counted by its name and never read as
			// conversation.
			out.Unmapped(sdk.S(clip([]byte(k))))
			return
		}
		out.Unmapped(sdk.S("(no type)"))
	}
}

// firstKey is the first key of an object, "" when it has none.
func firstKey(v abi.Value) string {
	it := v.Iter()
	if !it.Next() {
		return ""
	}
	return it.Key().String()
}

// textLine handles a line that is not JSON: the start of a pretty-printed
// document, the CLI's deprecation notice, or noise (stderr merged into
// stdout, a banner).
func (n *normalizer) textLine(raw []byte, out *sdk.Out) {
	t := sdk.TrimSpace(raw)
	switch {
	case len(t) == 0:
		return
	case sdk.HasPrefix(t, deprecationPrefix):
		out.Unmapped(sdk.S("deprecation_notice"))
	default:
		out.Unmapped(sdk.S("non_json"))
	}
}

// newKey returns a fresh message key.
func (n *normalizer) newKey(prefix string) string {
	n.nKeys++
	return prefix + strconv.Itoa(n.nKeys)
}

// session reports the session id once.
func (n *normalizer) session(v abi.Value, out *sdk.Out) {
	if n.sessionSent || v.Kind() != abi.KindString || sdk.Text(v).IsEmpty() {
		return
	}
	n.sessionSent = true
	out.Meta(sdk.Meta{SessionID: sdk.Text(v)})
}

// model reports the step's model. An alias ("auto", "auto-gemini-3")
// names a routing policy, not a model, so a concrete name reported later
// replaces it.
func (n *normalizer) model(v abi.Value, out *sdk.Out) {
	if v.Kind() != abi.KindString || sdk.Text(v).IsEmpty() {
		return
	}
	alias := isAlias(sdk.View(v)) // compared only
	switch {
	case !n.modelSent:
		out.Meta(sdk.Meta{Model: sdk.Text(v)})
	case n.modelAlias && !alias:
		out.Meta(sdk.Meta{Model: sdk.Text(v), Override: true})
	default:
		return
	}
	n.modelSent, n.modelAlias = true, alias
}

// isRecordType reports a session-file message type.
func isRecordType(t abi.Value) bool {
	return t.Is("user") || t.Is("gemini") || t.Is("info") || t.Is("error") || t.Is("warning")
}

func isAlias(m string) bool { return m == "auto" || len(m) >= 5 && m[:5] == "auto-" }

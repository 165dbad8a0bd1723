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
	},
	New: func(abi.BeginOptions) sdk.Normalizer { return newNormalizer() },
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

// maxAccBytes bounds the reassembly of pretty-printed JSON: past it the
// text could not have been one line the host would send either.
const maxAccBytes = abi.MaxLineBytes

// normalizer is the per-stream state. Everything kept across lines is a Go
// string, a byte slice or a number: spans die with their line.
type normalizer struct {
	format string

	sessionSent bool
	modelSent   bool
	modelAlias  bool // the model sent is an alias ("auto", "auto-gemini-3")

	// stream-json: the assistant message being built.
	cur      string // key of the open assistant message ("" when none)
	nextSlot int    // next free slot of cur
	textSlot int    // slot of the text block deltas append to, -1 when none
	text     []byte // text of cur, for the final answer
	scratch  []byte
	answer   []byte // text of the last message that had text
	nKeys    int

	// session files: record ids written and call ids with a result, so
	// that records appended again (JSONL) add only what is new.
	records  map[string]bool
	resulted map[string]bool

	lastErr   string // message of the last error event
	sawResult bool

	// pretty-printed JSON being reassembled; the buffers are reused.
	accOn    bool
	acc      []byte
	accToks  []abi.Token
	accDoc   abi.Doc
	accLines int
	accDepth int
	accStr   bool
	accEsc   bool
}

func newNormalizer() *normalizer { return &normalizer{textSlot: -1} }

// Line implements sdk.Normalizer.
func (n *normalizer) Line(l *sdk.Line, out *sdk.Out) error {
	if n.accOn {
		// An unindented JSON line cannot be the inside of a
		// pretty-printed document: what was accumulated was not one.
		if l.IsJSON() && !indented(l.Raw) {
			n.dropAcc(out)
		} else {
			n.accumulate(l.Raw, out)
			return nil
		}
	}
	if !l.IsJSON() {
		n.textLine(l.Raw, out)
		return nil
	}
	n.document(l.JSON(), out)
	return nil
}

// End implements sdk.Normalizer.
func (n *normalizer) End(out *sdk.Out) error {
	if n.accOn {
		if doc, ok := n.parseAcc(); ok {
			n.document(doc.Root(), out)
		} else {
			n.dropAcc(out)
		}
	}
	n.closeMessage(out)
	switch n.format {
	case fmtStream:
		// Without a result event the host reports "incomplete"; the
		// answer streamed so far is still the best final text.
		if !n.sawResult && len(n.answer) > 0 {
			out.Final(sdk.S(string(n.answer)), false)
		}
	case fmtSession:
		n.endSession(out)
	}
	return nil
}

// setFormat reports the format the first time it is known.
func (n *normalizer) setFormat(f string, out *sdk.Out) {
	if n.format != "" {
		return
	}
	n.format = f
	out.Meta(sdk.Meta{Format: sdk.S(f)})
}

// document dispatches one JSON document by its shape.
func (n *normalizer) document(v abi.Value, out *sdk.Out) {
	if v.Kind() != abi.KindObject {
		out.Unmapped(sdk.S("non_object"))
		return
	}
	t := v.Get("type")
	switch {
	case v.Get("messages").Kind() == abi.KindArray:
		n.sessionFile(v, out)
	case isRecordType(t) && v.Get("id").Exists() && !v.Get("severity").Exists():
		// A record of a JSONL session file (newer CLI builds): the same
		// message records as in the JSON file, one per line. Stream-json
		// events carry no id.
		n.setFormat(fmtSession, out)
		n.sessionMeta(v, out)
		n.sessionRecord(v, out)
	case t.Kind() == abi.KindString:
		n.streamEvent(v, t, out)
	case v.Get("response").Exists() || v.Get("stats").Exists() || v.Get("session_id").Exists() || v.Get("error").Kind() == abi.KindObject:
		n.jsonOutput(v, out)
	case v.Get("sessionId").Exists():
		// The header record of a JSONL session file.
		n.setFormat(fmtSession, out)
		n.sessionMeta(v, out)
	default:
		out.Unmapped(sdk.S("(no type)"))
	}
}

// textLine handles a line that is not JSON: the start of a pretty-printed
// document, the CLI's deprecation notice, or noise (stderr merged into
// stdout, a banner).
func (n *normalizer) textLine(raw []byte, out *sdk.Out) {
	t := trimSpace(raw)
	switch {
	case len(t) == 0:
		return
	case t[0] == '{' || t[0] == '[':
		n.accOn = true
		n.acc = append(n.acc[:0], raw...)
		n.acc = append(n.acc, '\n')
		n.accLines = 1
		n.accDepth, n.accStr, n.accEsc = 0, false, false
		n.scanDepth(raw)
		n.checkAcc(out)
	case hasPrefix(t, deprecationPrefix):
		out.Unmapped(sdk.S("deprecation_notice"))
	default:
		out.Unmapped(sdk.S("non_json"))
	}
}

func (n *normalizer) accumulate(raw []byte, out *sdk.Out) {
	if len(n.acc)+len(raw) > maxAccBytes {
		n.dropAcc(out)
		out.Unmapped(sdk.S("non_json"))
		return
	}
	n.acc = append(n.acc, raw...)
	n.acc = append(n.acc, '\n')
	n.accLines++
	n.scanDepth(raw)
	n.checkAcc(out)
}

// checkAcc parses the accumulated text once its brackets balance.
func (n *normalizer) checkAcc(out *sdk.Out) {
	if n.accDepth > 0 || n.accStr {
		return
	}
	if doc, ok := n.parseAcc(); ok {
		n.document(doc.Root(), out)
		return
	}
	n.dropAcc(out)
}

// parseAcc indexes the accumulated text (what sdk.Parse does, with the
// buffers kept for the next document) and ends the accumulation. The
// document is valid until the next accumulation starts; values made from
// it are resolved when they are emitted.
func (n *normalizer) parseAcc() (*abi.Doc, bool) {
	toks, ok := abi.BuildTape(n.accToks[:0], n.acc)
	n.accToks = toks
	if !ok {
		return nil, false
	}
	n.accOn, n.accLines = false, 0
	n.accDoc = abi.Doc{Line: n.acc, Toks: toks}
	return &n.accDoc, true
}

// dropAcc counts accumulated lines that did not make a document.
func (n *normalizer) dropAcc(out *sdk.Out) {
	for i := 0; i < n.accLines; i++ {
		out.Unmapped(sdk.S("non_json"))
	}
	n.acc, n.accLines, n.accOn = n.acc[:0], 0, false
}

// scanDepth tracks the bracket depth outside strings across lines.
func (n *normalizer) scanDepth(b []byte) {
	for _, c := range b {
		if n.accStr {
			switch {
			case n.accEsc:
				n.accEsc = false
			case c == '\\':
				n.accEsc = true
			case c == '"':
				n.accStr = false
			}
			continue
		}
		switch c {
		case '"':
			n.accStr = true
		case '{', '[':
			n.accDepth++
		case '}', ']':
			n.accDepth--
		}
	}
	if n.accDepth < 0 {
		n.accDepth = 0 // unbalanced: let checkAcc try and fail
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
	alias := isAlias(v.String())
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

func isAlias(m string) bool { return m == "auto" || hasPrefix([]byte(m), "auto-") }

func indented(b []byte) bool { return len(b) > 0 && (b[0] == ' ' || b[0] == '\t') }

func hasPrefix(b []byte, p string) bool { return len(b) >= len(p) && string(b[:len(p)]) == p }

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// short returns a native type name for the unmapped table, bounded so that
// a hostile line cannot make the table huge.
func short(v abi.Value) string {
	if v.Kind() != abi.KindString {
		return "?"
	}
	s := v.String()
	if len(s) > 64 {
		s = s[:64]
	}
	return s
}

// appendText appends the unescaped contents of string v to dst.
func appendText(dst []byte, v abi.Value) []byte {
	if v.Kind() != abi.KindString {
		return dst
	}
	raw := v.Raw()
	raw = raw[1 : len(raw)-1]
	if !v.Escaped() {
		return append(dst, raw...)
	}
	n := len(dst)
	if out, ok := abi.Unescape(dst, raw); ok {
		return out
	}
	// A malformed escape: keep the literal rather than half of it.
	return append(dst[:n], raw...)
}

// strOf is the text of v when it is a string (unset otherwise).
func strOf(v abi.Value) sdk.Str {
	if v.Kind() != abi.KindString {
		return sdk.Str{}
	}
	return sdk.Text(v)
}

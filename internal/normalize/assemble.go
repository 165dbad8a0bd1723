package normalize

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"sort"
	"strconv"
	"time"
	"unsafe"

	"github.com/twasm/twasm/internal/jsonstr"
	"github.com/twasm/twasm/internal/vocab"
	"github.com/twasm/twasm/internal/wire"
	"github.com/twasm/twasm/transcript"
)

// ErrBadOutput is wrapped when plugin output breaks the record encoding or
// points outside the call's input. The records before the bad one stand.
var ErrBadOutput = errors.New("bad plugin output")

// maxWarnings bounds the warnings kept in a result: a plugin that warns on
// every line must not grow the step result without bound.
const maxWarnings = 100

// maxErrors bounds the errors kept in a result, for the same reason; the
// number left out is stated in a warning.
const maxErrors = 1000

// assembler turns records into events (see the abi package documentation
// for the meaning of each record).
type assembler struct {
	sink Sink
	now  func() time.Time

	res      transcript.AgentResult
	level    int
	lastErr  string // best error text below the terminal level
	errLevel int    // level of lastErr
	metaSet  map[wire.Tag]bool
	finalSet bool
	warnN    int
	// errDropped counts provider errors beyond maxErrors.
	errDropped int

	line  int  // raw line the current records come from
	atEnd bool // the records come from the plugin's end call

	msgs  map[string]*message
	queue []item // by value: an item is not allocated on its own
	// batch gathers the consecutive events of one scope (batchScope)
	// that flush hands to the sink in one Emit.
	batch      []*transcript.Event
	batchScope string
	free       []*message             // written messages, for reuse (newMessage)
	tools      map[toolKey]*toolState // the latest call of each id, until its result
	// calls are the calls in call order, for the dangling list; the
	// answered ones are dropped from it now and then (answer).
	calls []*toolState
	// answered counts the calls in calls that have their result.
	answered int
	// ids is what is kept of every call id of the stream (idState), by
	// a hash of its scope and id (idOf): the one state of the assembler
	// that grows with the stream, one map entry of 40 bytes an id (no
	// string kept).
	ids map[idKey]idState
	// seeds are the seeds of the hashes of ids (idOf) and of message keys
	// (keyOf), the stream's own.
	seeds [2]maphash.Seed
	// prompts counts, per scope, the user prompt blocks reported (text
	// of origin prompt in a user message): a call made before the latest
	// one belongs to a turn that ended (see reused).
	prompts map[string]int

	scopes map[string]bool // open scopes

	// Final status inputs beyond OpStatus (spec 6.7, abi "Final status").
	errText string // text of the last error field (OpError, or OpStatus error below the terminal level)
	errSeen bool   // an error field was reported
	errLine int    // raw line of the last error field (endLine when reported at the end)
	// errPos is the last error field's place in the order the records
	// are written (see pos: the records written before it). A document
	// holding a whole conversation on one raw line (an Amp thread)
	// tells only by it whether its last answer came after the error.
	errPos     int
	noTerminal bool // the format has no terminal event: derive the status
	// A response the provider says was cut short (OpStatus incomplete
	// below the terminal level: aborted by the user): its text and raw
	// line, for the session rule.
	cutSeen  bool
	cutText  string
	cutLine  int
	exitCode *int // the agent process's exit code, when there was one
	// Raw lines of the last answer (assistant message, tool call or
	// result) and of the last user prompt, in the step's own scope.
	answerLine, promptLine int
	// The same in the order the records were written (pos counts the
	// events and messages flushed, every scope): a document holds a
	// whole conversation on one raw line, where only this order tells a
	// prompt after the last answer. lastMsgPos is the last assistant
	// message's, lastMsgCalls the calls it holds (tool_use blocks).
	pos, answerPos, promptPos, lastMsgPos int
	// saidPos is answerPos of the last answer that says or does
	// something: an assistant message with no block (the carrier of a
	// failed call's usage) is none, for the order of an error and the
	// answer after it.
	saidPos      int
	lastMsgCalls []string
	// lastMsgThinking says the last assistant message holds thinking
	// only: no answer (spec 6.4: reasoning, not what the model said).
	lastMsgThinking bool

	acct        accounting
	silentN     int   // lines nothing accounted for, set at finish
	silentFirst []int // the first few of them
}

// endLine stands for "at the end of the stream" when comparing raw lines:
// records reported at End come after every line.
const endLine = math.MaxInt

// coverLine is the line a count of lines ends at: the current one, or at
// the end of the stream 0 (the last lines not yet accounted for: a
// document a plugin could only drop at the end, say).
func (a *assembler) coverLine() int {
	if a.atEnd {
		return 0
	}
	return a.line
}

// accounting tracks which raw lines got a record (spec 6.8): a line with
// none that was not declared ignored or counted unmapped is silent (see
// [Stream.Silent]). Only lines still unaccounted for are kept, at most
// maxPending of them (a record names its own line, or a count of lines
// ending at it, so only recent lines can still be covered): memory stays
// bounded whatever the input's length.
type accounting struct {
	pending []int // lines sent to the plugin and not accounted for yet, ascending
	silent  int   // lines given up on: no record came for them
	first   []int // the first few of those, for the warning
}

// maxPending bounds the lines kept waiting for a record; an older line is
// then counted silent. A document reassembled over more lines than this
// without a record between would be miscounted.
const maxPending = 1 << 16

// fed notes a line sent to the plugin.
func (c *accounting) fed(line int) {
	if len(c.pending) == maxPending {
		c.giveUp(c.pending[0])
		c.pending = c.pending[1:]
	}
	c.pending = append(c.pending, line)
}

func (c *accounting) giveUp(line int) {
	c.silent++
	if len(c.first) < 10 {
		c.first = append(c.first, line)
	}
}

// cover marks n lines ending at line (n >= 1) as accounted for; at the
// end of the stream (line 0) the last n lines not yet accounted for.
func (c *accounting) cover(line, n int) {
	if len(c.pending) == 0 || n < 1 {
		return
	}
	if line <= 0 {
		c.pending = c.pending[:max(0, len(c.pending)-n)]
		return
	}
	lo := line - n + 1
	// The lines are usually the most recent ones: search from the end.
	hi := len(c.pending)
	for hi > 0 && c.pending[hi-1] > line {
		hi--
	}
	from := hi
	for from > 0 && c.pending[from-1] >= lo {
		from--
	}
	if from < hi {
		c.pending = append(c.pending[:from], c.pending[hi:]...)
	}
}

// coverAll accounts for every pending line from line on (lines lost to a
// plugin fault, which FailedLines counts).
func (c *accounting) coverAll(from int) {
	i := len(c.pending)
	for i > 0 && c.pending[i-1] >= from {
		i--
	}
	c.pending = c.pending[:i]
}

// finish gives up on every line still pending and returns how many lines
// nothing accounted for, with the first few of them.
func (c *accounting) finish() (int, []int) {
	for _, l := range c.pending {
		c.giveUp(l)
	}
	c.pending = nil
	return c.silent, c.first
}

type toolKey struct{ scope, id string }

// idState is what the assembler keeps of a call id. use is the key of
// the message whose tool_use or command block named it last (keyOf): it
// tells a call id reused in another message from the same call reported
// again (see toolCall). done says the id's latest call has its result and
// left tools (answer); msgKey is then the key of the message whose block
// named that call (0 if none did), all that is left of it to tell a call
// or result reported again from a new call reusing the id (reusedDone).
type idState struct {
	use, msgKey msgHash
	done        bool
}

// idKey is the 128-bit hash of a call's scope and id (idOf), by which
// ids keeps it: two ids of a stream share one with a chance of about
// n²/2¹²⁹ for n ids (below 10⁻²⁰ for a billion). Kept as strings (a
// map entry of them, the id's copy and the message key it kept alive), an
// answered call id cost the stream's live heap 194 bytes; hashed, 78
// (TestAnsweredCallIDsCompact).
type idKey [2]uint64

// msgHash is the 64-bit hash of a message key (keyOf), 0 for none: only
// the keys named for one call id are compared, so two differ by chance
// with odds of 2⁻⁶⁴.
type msgHash uint64

// idOf is the key of call k in ids.
func (a *assembler) idOf(k toolKey) idKey {
	var out idKey
	for i := range out {
		var h maphash.Hash
		h.SetSeed(a.seeds[i])
		h.WriteString(k.scope)
		h.WriteByte(0)
		h.WriteString(k.id)
		out[i] = h.Sum64()
	}
	return out
}

// keyOf is the hash of message key key (0 for "", never 0 otherwise).
func (a *assembler) keyOf(key string) msgHash {
	if key == "" {
		return 0
	}
	return msgHash(maphash.String(a.seeds[0], key) | 1)
}

type toolState struct {
	key                 toolKey
	name, kind, command string
	// msgKey is the key of the message whose block names the call
	// (keyOf; 0 until one does).
	msgKey msgHash
	// prompts is the scope's prompt count when the call was made.
	prompts  int
	resulted bool
	pos      int // the call's place in the written order (assembler.pos)
}

type itemKind int

const (
	itemEvent itemKind = iota
	itemMessage
	itemOpen
	itemClose
	// itemErrMark marks where a provider error came among the records
	// queued: flushed, it sets errPos (it writes nothing).
	itemErrMark
)

type item struct {
	kind  itemKind
	scope string
	ev    *transcript.Event
	msg   *message
	open  *Scope
	st    string
	err   string
	line  int        // the raw line it came from (a message: see message.lastLine)
	tool  *toolState // the call a tool.call event reports
}

type message struct {
	key, role, id, model, scope, stop string
	ts                                time.Time
	tsSet                             bool // ts is the provider's, not the clock's
	rawLine                           int
	blocks                            map[int]*block
	next                              int // next free slot for appends
	usage                             *transcript.Usage
	closed                            bool
	// lastLine is the raw line of the last record about the message;
	// behind counts the events queued after it while it is open.
	lastLine, behind int
	// closeLine is the raw line that closed it.
	closeLine int
	// atEnd: opened by the plugin's end call, after every raw line (for
	// the status, as endLine; its raw lines stay the last one read).
	atEnd bool
}

// A message holds back every event reported after it until it is closed,
// so that it is written before the tool calls it requested. A message the
// plugin forgets to close (a cut stream, an id that comes back) must not
// hold back the rest of the stream: memory would grow with the input and
// the transcript would stop growing while the agent runs. The host closes
// a message when idleLines raw lines have passed without a record about it,
// or when maxHeld events wait behind it. Both are counted from the
// plugin's records, in line order, so the result does not depend on how
// lines were batched.
const (
	idleLines = 64
	maxHeld   = 1024
)

type block struct {
	b        transcript.Block
	input    []byte // tool_input set as a whole (compact JSON)
	partial  []byte // appended tool_input text, parsed at close
	appended bool
}

func newAssembler(sink Sink, provider string, now func() time.Time) *assembler {
	if now == nil {
		now = time.Now
	}
	return &assembler{
		sink:    sink,
		now:     now,
		res:     transcript.AgentResult{Provider: provider},
		metaSet: map[wire.Tag]bool{},
		msgs:    map[string]*message{},
		tools:   map[toolKey]*toolState{},
		ids:     map[idKey]idState{},
		seeds:   [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()},
		prompts: map[string]int{},
		scopes:  map[string]bool{},
	}
}

func (a *assembler) warn(format string, args ...any) {
	a.warnN++
	if len(a.res.Warnings) < maxWarnings {
		a.res.Warnings = append(a.res.Warnings, fmt.Sprintf(format, args...))
	}
}

// fields resolves the fields of one record against the call's input.
type fields struct {
	rec   *wire.Record
	input []byte
	err   error
	// dups counts object members dropped from the JSON values read
	// because a later member had the same key.
	dups int
}

func (f *fields) get(t wire.Tag) (wire.Field, bool) { return f.rec.Field(t) }

// bytes returns a string field's bytes and whether it is JSON.
func (f *fields) bytes(t wire.Tag) ([]byte, bool, bool) {
	b, isJSON, ok, _ := f.value(t)
	return b, isJSON, ok
}

// value is bytes, and whether the bytes are a buffer of their own, made
// for this call, which nothing else refers to (not the record's, not the
// input's): str hands such a buffer over as the string without copying
// it. A span is unquoted or compacted into a buffer of its size at once
// (a string's unescaped form is never longer than its literal), not
// grown from nothing: large values (tool outputs, file contents) were
// copied once per doubling, then once more into the string.
func (f *fields) value(t wire.Tag) (b []byte, isJSON, ok, own bool) {
	fl, ok := f.get(t)
	if !ok {
		return nil, false, false, false
	}
	switch fl.Kind {
	case wire.VStr:
		return fl.Bytes, false, true, false
	case wire.VJSON:
		out, err := f.compact(fl.Bytes)
		if err != nil {
			// Not JSON after all: keep it as text rather than lose it.
			return fl.Bytes, false, true, false
		}
		return out, true, true, true
	case wire.VSpan:
		if fl.Off < 0 || fl.N < 0 || fl.Off > len(f.input) || fl.N > len(f.input)-fl.Off {
			f.fail(fmt.Errorf("%w: span [%d,+%d) outside the input of %d bytes", ErrBadOutput, fl.Off, fl.N, len(f.input)))
			return nil, false, false, false
		}
		raw := f.input[fl.Off : fl.Off+fl.N]
		switch fl.Mode {
		case wire.SpanString:
			out, err := jsonstr.AppendUnquotedJSON(make([]byte, 0, len(raw)), raw)
			if err != nil {
				return raw, false, true, false
			}
			return out, false, true, true
		case wire.SpanJSON:
			out, err := f.compact(raw)
			if err != nil {
				return raw, false, true, false
			}
			return out, true, true, true
		case wire.SpanJSONString:
			text, err := jsonstr.AppendUnquotedJSON(make([]byte, 0, len(raw)), raw)
			if err != nil {
				return raw, false, true, false
			}
			if first := firstNonSpace(text); first == '{' || first == '[' {
				if out, err := f.compact(text); err == nil {
					return out, true, true, true
				}
			}
			return text, false, true, true
		default:
			return append([]byte(nil), raw...), false, true, true
		}
	case wire.VInt:
		return strconv.AppendInt(nil, fl.Int, 10), false, true, true
	case wire.VFloat:
		return strconv.AppendFloat(nil, fl.Float, 'g', -1, 64), false, true, true
	case wire.VBool:
		return strconv.AppendBool(nil, fl.Bool), false, true, true
	}
	return nil, false, false, false
}

// compact re-encodes a provider's JSON value (jsonstr.AppendCompactInput)
// into a buffer of src's size (compact JSON is rarely longer) and counts
// the duplicate keys it dropped.
func (f *fields) compact(src []byte) ([]byte, error) {
	out, dups, err := jsonstr.AppendCompactInput(make([]byte, 0, len(src)), src)
	f.dups += dups
	return out, err
}

func firstNonSpace(b []byte) byte {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c
		}
	}
	return 0
}

func (f *fields) fail(err error) {
	if f.err == nil {
		f.err = err
	}
}

// str is a field as a string. A buffer value made for it becomes the
// string as it is: it is never written again.
func (f *fields) str(t wire.Tag) string {
	b, _, _, own := f.value(t)
	if own {
		return view(b)
	}
	return string(b)
}

// view is b read as a string, without a copy: b must not change while
// the string is in use.
func view(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// json returns a JSON field as compact JSON; text becomes a JSON string.
func (f *fields) json(t wire.Tag) []byte {
	b, isJSON, ok := f.bytes(t)
	if !ok {
		return nil
	}
	if isJSON {
		return b
	}
	// The text is read as a string where it is, for the call only (it
	// is not kept), and quoted into a buffer of about its size.
	return jsonstr.AppendQuoted(make([]byte, 0, len(b)+len(b)/16+2), view(b))
}

func (f *fields) int(t wire.Tag) (int64, bool) {
	fl, ok := f.get(t)
	if !ok {
		return 0, false
	}
	switch fl.Kind {
	case wire.VInt:
		return fl.Int, true
	case wire.VFloat:
		return int64(fl.Float), true
	}
	n, err := strconv.ParseInt(f.str(t), 10, 64)
	return n, err == nil
}

func (f *fields) bool(t wire.Tag) bool {
	fl, ok := f.get(t)
	return ok && fl.Kind == wire.VBool && fl.Bool
}

func (f *fields) usage() *transcript.Usage {
	u := &transcript.Usage{}
	get := func(t wire.Tag) *int64 {
		if n, ok := f.int(t); ok {
			return &n
		}
		return nil
	}
	u.InputTokens = get(wire.TInputTokens)
	u.CacheReadTokens = get(wire.TCacheReadTokens)
	u.CacheWriteTokens = get(wire.TCacheWriteTokens)
	u.OutputTokens = get(wire.TOutputTokens)
	u.ReasoningTokens = get(wire.TReasoningTokens)
	u.UncachedInputTokens = get(wire.TUncachedInputTokens)
	u.CacheWrite1hTokens = get(wire.TCacheWrite1hTokens)
	u.TotalTokens = get(wire.TTotalTokens)
	if u.IsZero() {
		// A tier without a figure counts no token: nothing to keep.
		return nil
	}
	u.ServiceTier = f.str(wire.TServiceTier)
	return u
}

func (a *assembler) timestamp(f *fields) time.Time {
	if t, ok := providerTime(f); ok {
		return t
	}
	return a.now()
}

// providerTime returns the record's Time field when it is an RFC 3339 time
// a transcript line can carry: its UTC year must be 0000..9999, which an
// offset can push a parsable time out of.
func providerTime(f *fields) (time.Time, bool) {
	s := f.str(wire.TTime)
	if s == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, false
	}
	if y := t.UTC().Year(); y < 0 || y > 9999 {
		return time.Time{}, false
	}
	return t, true
}

// records applies plugin output. input is the call's input (the batch),
// against which spans are resolved.
func (a *assembler) records(ctx context.Context, out, input []byte) error {
	dec := wire.NewDecoder(out)
	for {
		rec, err := dec.Next()
		if err != nil {
			return fmt.Errorf("%w: %v", ErrBadOutput, err)
		}
		if rec == nil {
			break
		}
		f := &fields{rec: rec, input: input}
		a.apply(f)
		if f.err != nil {
			return f.err
		}
		if f.dups > 0 {
			a.duplicateKeys(f.dups)
		}
	}
	return a.flush(ctx)
}

func (a *assembler) apply(f *fields) {
	switch f.rec.Op {
	case wire.OpLine:
		if n, ok := f.int(wire.TLine); ok {
			a.line = int(n)
			a.acct.cover(a.line, 1)
			a.expireIdle()
		}
	case wire.OpMeta:
		if f.bool(wire.TNoTerminal) {
			a.noTerminal = true
		}
		a.meta(f, wire.TSessionID, &a.res.SessionID)
		a.meta(f, wire.TModel, &a.res.Model)
		a.meta(f, wire.TProviderVersion, &a.res.ProviderVersion)
		a.meta(f, wire.TFormat, &a.res.Format)
		a.meta(f, wire.TCwd, &a.res.Cwd)
		a.meta(f, wire.TProject, &a.res.Project)
	case wire.OpMsgOpen:
		a.open(f)
	case wire.OpBlock:
		a.setBlock(f)
	case wire.OpAppend:
		a.appendBlock(f)
	case wire.OpMsgClose:
		a.close(f)
	case wire.OpToolCall:
		a.toolCall(f)
	case wire.OpToolResult:
		a.toolResult(f)
	case wire.OpUsage:
		u := f.usage()
		if u == nil {
			return
		}
		if a.res.Usage == nil {
			a.res.Usage = &transcript.Usage{}
		}
		if f.str(wire.TMode) == wire.ModeSet {
			a.res.Usage.Set(u)
		} else {
			a.res.Usage.Add(u)
		}
	case wire.OpCost:
		fl, ok := f.get(wire.TCost)
		if !ok || fl.Kind != wire.VFloat {
			return
		}
		if math.IsNaN(fl.Float) || math.IsInf(fl.Float, 0) {
			// Not representable in JSON: the result could not be written.
			a.warn("plugin reported a non-finite cost (%v); ignored", fl.Float)
			return
		}
		if a.res.CostUSD == nil || f.str(wire.TMode) == wire.ModeSet {
			a.res.CostUSD = new(fl.Float)
		} else {
			*a.res.CostUSD += fl.Float
		}
	case wire.OpStatus:
		a.status(f)
	case wire.OpFinal:
		if _, ok := f.get(wire.TText); !ok {
			// No text: nothing to report, and a later report must not
			// be hidden by this one.
			return
		}
		if !a.finalSet || f.bool(wire.TOverride) {
			a.res.FinalText = f.str(wire.TText)
			a.finalSet = true
		}
	case wire.OpUnmapped:
		native := f.str(wire.TNative)
		if native == "" {
			native = "(unknown)"
		}
		n, ok := f.int(wire.TCount)
		if !ok || n < 1 {
			n = 1
		}
		if a.res.Unmapped == nil {
			a.res.Unmapped = map[string]int{}
		}
		a.res.Unmapped[native] += int(n)
		a.acct.cover(a.coverLine(), int(min(n, math.MaxInt32)))
	case wire.OpIgnored:
		n, ok := f.int(wire.TCount)
		if !ok || n < 1 {
			n = 1
		}
		a.acct.cover(a.coverLine(), int(min(n, math.MaxInt32)))
	case wire.OpError:
		msg := f.str(wire.TText)
		if msg == "" {
			msg = "error"
		}
		a.providerError(msg, f.str(wire.TCode), f.str(wire.TScope))
	case wire.OpScopeOpen:
		id := f.str(wire.TScope)
		if id == "" || a.scopes[id] {
			return
		}
		a.scopes[id] = true
		a.queue = append(a.queue, item{kind: itemOpen, scope: id, line: a.line, open: &Scope{
			ID: id, ParentToolID: f.str(wire.TParentToolID), Name: f.str(wire.TName), Description: f.str(wire.TText),
		}})
	case wire.OpScopeClose:
		id := f.str(wire.TScope)
		if !a.scopes[id] {
			return
		}
		delete(a.scopes, id)
		st := f.str(wire.TStatus)
		if !vocab.Status(st) || st == "" {
			st = transcript.StatusOK
		}
		a.queue = append(a.queue, item{kind: itemClose, scope: id, line: a.line, st: st, err: f.str(wire.TError)})
	case wire.OpWarning:
		a.warn("%s", f.str(wire.TText))
	}
}

func (a *assembler) meta(f *fields, t wire.Tag, dst *string) {
	v := f.str(t)
	if v == "" {
		return
	}
	if !a.metaSet[t] || f.bool(wire.TOverride) {
		*dst = v
		a.metaSet[t] = true
	}
}

func (a *assembler) status(f *fields) {
	st := f.str(wire.TStatus)
	switch st {
	case transcript.StatusOK, transcript.StatusError, transcript.StatusIncomplete:
	default:
		a.warn("plugin reported unknown status %q", st)
		st = transcript.StatusError
	}
	lvl, _ := f.int(wire.TLevel)
	level := int(lvl)
	errText := f.str(wire.TError)
	// The best error text below the terminal level is the one of the
	// highest level; a later one of the same level replaces it.
	if level < wire.LevelTerminal && errText != "" && level >= a.errLevel {
		a.lastErr, a.errLevel = errText, level
	}
	// An error the provider reported is one of the step's errors and an
	// error field for the status, whatever level the plugin gave it (the
	// terminal event's own error included).
	if st == transcript.StatusError && level >= wire.LevelError {
		text := errText
		if text == "" && level < wire.LevelTerminal {
			text = "error"
		}
		if text != "" && (level < wire.LevelTerminal || !a.listed(text)) {
			a.providerError(text, "", "")
		}
	}
	if st == transcript.StatusIncomplete && level >= wire.LevelError && level < wire.LevelTerminal {
		a.cutSeen, a.cutText, a.cutLine = true, errText, a.line
		if a.atEnd || a.line == 0 {
			a.cutLine = endLine
		}
	}
	if level >= a.level {
		a.level = level
		if level >= wire.LevelTerminal {
			a.res.Status = st
			a.res.Error = errText
		}
	}
}

// listed reports whether an error with this text is already listed (the
// terminal event restating an error the stream reported is not listed
// twice).
func (a *assembler) listed(msg string) bool {
	for _, e := range a.res.Errors {
		if e.Message == msg {
			return true
		}
	}
	return false
}

// providerError records an error the provider reported: in the result's
// errors (once: the same text on the same line is one error) and as an
// error field for the status.
func (a *assembler) providerError(msg, code, scope string) {
	raw, line := a.line, a.line
	if a.atEnd {
		raw = 0
	}
	if raw == 0 {
		line = endLine
	}
	a.errSeen, a.errText, a.errLine = true, msg, line
	if len(a.queue) == 0 {
		a.errPos = a.pos
	} else {
		// Behind the records still queued; not through enqueue: the
		// mark is no record an open message waits behind.
		a.queue = append(a.queue, item{kind: itemErrMark, line: a.line})
	}
	if n := len(a.res.Errors); n > 0 {
		last := a.res.Errors[n-1]
		if last.Message == msg && last.RawLine == raw && last.Scope == scope && (code == "" || last.Code == code) {
			return
		}
	}
	if len(a.res.Errors) >= maxErrors {
		a.errDropped++
		return
	}
	a.res.Errors = append(a.res.Errors, transcript.ProviderError{Message: msg, Code: code, RawLine: raw, Scope: scope})
}

// ensureScope opens a scope a record names before any ScopeOpen, so that
// its events still land in a child run.
func (a *assembler) ensureScope(id string) {
	if id == "" || a.scopes[id] {
		return
	}
	a.scopes[id] = true
	a.queue = append(a.queue, item{kind: itemOpen, scope: id, line: a.line, open: &Scope{ID: id, ParentToolID: id}})
}

func (a *assembler) open(f *fields) {
	key := f.str(wire.TKey)
	if m := a.msgs[key]; m != nil && !m.closed {
		fill := func(dst *string, t wire.Tag) {
			if *dst == "" {
				*dst = f.str(t)
			}
		}
		fill(&m.id, wire.TID)
		fill(&m.model, wire.TModel)
		m.lastLine = a.line
		if !m.tsSet {
			if ts, ok := providerTime(f); ok {
				m.ts, m.tsSet = ts, true
			}
		}
		return
	}
	role := f.str(wire.TRole)
	if role != "user" {
		role = "assistant"
	}
	ts, tsSet := providerTime(f)
	if !tsSet {
		ts = a.now()
	}
	m := a.newMessage()
	*m = message{
		key: key, role: role, id: f.str(wire.TID), model: f.str(wire.TModel), scope: f.str(wire.TScope),
		ts: ts, tsSet: tsSet, rawLine: a.line, lastLine: a.line, blocks: m.blocks, atEnd: a.atEnd,
	}
	a.ensureScope(m.scope)
	a.msgs[key] = m
	a.enqueue(item{kind: itemMessage, scope: m.scope, msg: m})
}

// maxFree bounds the messages kept for reuse, and maxFreeBlocks the
// blocks of one.
const (
	maxFree       = 16
	maxFreeBlocks = 64
)

// newMessage returns a message to fill: one written earlier, with its
// emptied block map, or a new one.
func (a *assembler) newMessage() *message {
	if n := len(a.free); n > 0 {
		m := a.free[n-1]
		a.free = a.free[:n-1]
		return m
	}
	return &message{blocks: map[int]*block{}}
}

// recycle keeps m, written (or dropped) by flush and reachable from
// nowhere else (a closed message is out of msgs), for newMessage. Its
// blocks were copied into the event.
func (a *assembler) recycle(m *message) {
	if len(a.free) == maxFree || len(m.blocks) > maxFreeBlocks {
		return
	}
	blocks := m.blocks
	clear(blocks)
	*m = message{blocks: blocks}
	a.free = append(a.free, m)
}

// enqueue adds an item behind the open messages, closing one that holds
// back too much (see maxHeld).
func (a *assembler) enqueue(it item) {
	// Every open message is in the queue, ahead of this item.
	var over []string
	for key, m := range a.msgs {
		if m == it.msg {
			continue
		}
		if m.behind++; m.behind > maxHeld {
			over = append(over, key)
		}
	}
	sort.Strings(over) // deterministic warnings
	for _, key := range over {
		a.forceClose(a.msgs[key], fmt.Sprintf("%d events waited behind it", maxHeld))
	}
	it.line = a.line
	a.queue = append(a.queue, it)
}

// expireIdle closes the open messages no record has touched for idleLines
// raw lines.
func (a *assembler) expireIdle() {
	var stale []string
	for key, m := range a.msgs {
		if !m.closed && a.line-m.lastLine > idleLines {
			stale = append(stale, key)
		}
	}
	sort.Strings(stale) // deterministic warnings
	for _, key := range stale {
		a.forceClose(a.msgs[key], fmt.Sprintf("%d raw lines passed without news of it", idleLines))
	}
}

// forceClose closes a message the plugin left open; later records with its
// key start a new message.
func (a *assembler) forceClose(m *message, why string) {
	m.closed = true
	m.closeLine = a.line
	if a.msgs[m.key] == m {
		delete(a.msgs, m.key)
	}
	a.warn("message %q (raw line %d) was not closed by the plugin; closed because %s", m.key, m.rawLine, why)
}

// msg returns the open message key, opening one when the plugin forgot to.
func (a *assembler) msg(f *fields) *message {
	key := f.str(wire.TKey)
	if m := a.msgs[key]; m != nil && !m.closed {
		m.lastLine = a.line
		return m
	}
	a.open(f)
	return a.msgs[key]
}

func (a *assembler) slot(f *fields, m *message) int {
	n, ok := f.int(wire.TSlot)
	if !ok || n < 0 {
		s := m.next
		m.next++
		return s
	}
	if int(n) >= m.next {
		m.next = int(n) + 1
	}
	return int(n)
}

var blockTypes = map[string]transcript.BlockType{
	"text": transcript.BlockText, "thinking": transcript.BlockThinking, "tool_use": transcript.BlockToolUse,
	"tool_result": transcript.BlockToolResult, "command": transcript.BlockCommand, "stream": transcript.BlockStream,
}

func (a *assembler) setBlock(f *fields) {
	m := a.msg(f)
	s := a.slot(f, m)
	bt, ok := blockTypes[f.str(wire.TBlockType)]
	if !ok {
		a.warn("plugin reported unknown block type %q; kept as text", f.str(wire.TBlockType))
		bt = transcript.BlockText
	}
	b := &block{b: transcript.Block{
		Type: bt, Fidelity: transcript.FidelityAgentEmitted,
		Text: f.str(wire.TText), Thinking: f.str(wire.TThinking),
		ToolName: f.str(wire.TToolName), ToolID: f.str(wire.TToolID),
		ToolContent: f.str(wire.TToolContent), Command: f.str(wire.TCommand), Chunk: f.str(wire.TChunk),
		Redacted: f.bool(wire.TRedacted), IsError: f.bool(wire.TIsError),
	}}
	if o := transcript.Origin(f.str(wire.TOrigin)); o == transcript.OriginPrompt || o == transcript.OriginSystemPrompt || o == transcript.OriginInjected {
		b.b.Origin = o
	}
	if in := f.json(wire.TToolInput); in != nil {
		b.input = in
	}
	m.blocks[s] = b
	if bt == transcript.BlockText && b.b.Origin == transcript.OriginPrompt && m.role == "user" {
		a.prompts[m.scope]++
	}
	if id := b.b.ToolID; id != "" && (bt == transcript.BlockToolUse || bt == transcript.BlockCommand) {
		k := toolKey{m.scope, id}
		ik, mk := a.idOf(k), a.keyOf(m.key)
		e := a.ids[ik]
		e.use = mk
		a.ids[ik] = e
		if st := a.tools[k]; st != nil && st.msgKey == 0 && !a.settled(st) {
			// The call came before its block; a block after its result
			// (or its turn's end) may be another call's (reused), so it
			// names none.
			st.msgKey = mk
		}
	}
}

func (a *assembler) appendBlock(f *fields) {
	m := a.msg(f)
	n, ok := f.int(wire.TSlot)
	if !ok || n < 0 {
		n = int64(m.next - 1)
		if n < 0 {
			n = 0
		}
	}
	s := int(n)
	if s >= m.next {
		m.next = s + 1
	}
	field, _ := f.int(wire.TField)
	switch wire.Tag(field) {
	case wire.TText, wire.TThinking, wire.TToolInput, wire.TToolContent, wire.TCommand, wire.TChunk:
	default:
		// Checked before the slot is filled: no empty block is made up.
		a.warn("plugin appended to field %d, which cannot be appended to", field)
		return
	}
	val, _, _ := f.bytes(wire.TValue)
	b := m.blocks[s]
	if b == nil {
		bt := transcript.BlockText
		switch wire.Tag(field) {
		case wire.TThinking:
			bt = transcript.BlockThinking
		case wire.TToolInput:
			bt = transcript.BlockToolUse
		case wire.TToolContent:
			bt = transcript.BlockToolResult
		case wire.TCommand:
			bt = transcript.BlockCommand
		case wire.TChunk:
			bt = transcript.BlockStream
		}
		b = &block{b: transcript.Block{Type: bt, Fidelity: transcript.FidelityAgentEmitted}}
		m.blocks[s] = b
	}
	switch wire.Tag(field) {
	case wire.TText:
		b.b.Text += string(val)
	case wire.TThinking:
		b.b.Thinking += string(val)
	case wire.TToolInput:
		b.partial = append(b.partial, val...)
		b.appended = true
	case wire.TToolContent:
		b.b.ToolContent += string(val)
	case wire.TCommand:
		b.b.Command += string(val)
	case wire.TChunk:
		b.b.Chunk += string(val)
	}
}

func (a *assembler) close(f *fields) {
	key := f.str(wire.TKey)
	m := a.msgs[key]
	if m == nil || m.closed {
		return
	}
	if v := f.str(wire.TStopReason); v != "" {
		m.stop = v
	}
	if v := f.str(wire.TModel); v != "" && m.model == "" {
		m.model = v
	}
	if v := f.str(wire.TID); v != "" && m.id == "" {
		m.id = v
	}
	if u := f.usage(); u != nil {
		m.usage = u
	}
	m.closed = true
	m.closeLine = a.line
	delete(a.msgs, key)
}

func (a *assembler) toolCall(f *fields) {
	id := f.str(wire.TCallID)
	if id == "" {
		a.warn("plugin reported a tool call without a call id (%s)", f.str(wire.TName))
		return
	}
	scope := f.str(wire.TScope)
	k := toolKey{scope, id}
	revised := f.bool(wire.TRevised)
	ik := a.idOf(k)
	if st := a.tools[k]; st != nil {
		switch {
		case revised:
			// A new version of st (ABI 1.13), answered or not: the
			// same call, its input and name now these.
			st.name, st.kind, st.command = callName(f)
			st.msgKey = a.ids[ik].use
			a.callEvent(f, st, true)
			return
		case !a.reused(st):
			return
		}
	}
	e := a.ids[ik]
	if e.done {
		if revised {
			// A new version of the answered call: its latest block
			// is the call's own now, so that the call reported again
			// from there is not taken for a new one.
			e.msgKey = e.use
			a.ids[ik] = e
			st := &toolState{key: k, resulted: true}
			st.name, st.kind, st.command = callName(f)
			a.callEvent(f, st, true)
			return
		}
		if !reusedDone(e) {
			return
		}
		e.done, e.msgKey = false, 0
		a.ids[ik] = e
	}
	st := &toolState{key: k, msgKey: e.use, prompts: a.prompts[scope]}
	st.name, st.kind, st.command = callName(f)
	a.tools[k] = st
	a.calls = append(a.calls, st)
	a.callEvent(f, st, false)
}

// callName is the name, kind and command of the call f reports. Spec
// 6.12: a call has a name: the tool's kind when the plugin gives none (a
// call synthesized from its result, say), else "unknown".
func callName(f *fields) (name, kind, command string) {
	k := transcript.ToolKind(f.str(wire.TKind))
	if !vocab.ToolKind(string(k)) {
		k = transcript.ToolOther
	}
	name = f.str(wire.TName)
	if name == "" {
		name = "unknown"
		if f.str(wire.TKind) != "" {
			name = string(k)
		}
	}
	return name, string(k), f.str(wire.TCommand)
}

// callEvent queues the tool.call of st that f reports; revised marks it
// a new version of the call reported before (transcript.RevisedField).
// The call of a pending st takes its place in the written order from
// this version (tool); an answered call's version has none to take.
func (a *assembler) callEvent(f *fields, st *toolState, revised bool) {
	p := &transcript.ToolPayload{
		Name: st.name, CallID: st.key.id, Input: f.json(wire.TInput), Fidelity: transcript.FidelityAgentEmitted,
		Kind: transcript.ToolKind(st.kind), Command: st.command, RawLine: a.line,
	}
	if revised {
		p.Extra = revisedMark()
	}
	tool := st
	if st.resulted {
		tool = nil
	}
	a.ensureScope(st.key.scope)
	a.enqueue(item{kind: itemEvent, scope: st.key.scope, tool: tool, ev: &transcript.Event{Type: transcript.ToolCall, Timestamp: a.timestamp(f), Payload: p}})
}

// revisedMark is the Extra of a revised call or result.
func revisedMark() map[string]json.RawMessage {
	return map[string]json.RawMessage{transcript.RevisedField: json.RawMessage("true")}
}

// reused says whether a call or result reported for st's call id is a
// new call that reuses the id rather than st reported again. Providers
// reuse ids across turns (ids unique per response, not per session: a
// local server that names every call call_1), and plugins report a call
// again when its message is rewritten (a row updated in place, a part
// going from running to completed, a snapshot read again). It is a new
// call when st is settled (its result recorded, or its turn ended: a user
// prompt was reported after it, so it stays unanswered) and the id's
// latest tool_use or command block is in another message than st's: a
// rewritten message keeps its key, a new turn's message has its own.
// Anything else is st again, as before: a repeat before the result is an
// update, and a repeat with no block to tell it apart is not split.
func (a *assembler) reused(st *toolState) bool {
	if !a.settled(st) {
		return false
	}
	use := a.ids[a.idOf(st.key)].use
	return use != 0 && st.msgKey != 0 && use != st.msgKey
}

// reusedDone is reused for an answered call that left tools (e.done):
// settled, e.msgKey the key of the message that named it.
func reusedDone(e idState) bool {
	return e.use != 0 && e.msgKey != 0 && e.use != e.msgKey
}

// settled says st has its result, or its turn ended without one.
func (a *assembler) settled(st *toolState) bool {
	return st.resulted || a.prompts[st.key.scope] > st.prompts
}

func (a *assembler) toolResult(f *fields) {
	id := f.str(wire.TCallID)
	if id == "" {
		a.warn("plugin reported a tool result without a call id")
		return
	}
	scope := f.str(wire.TScope)
	k := toolKey{scope, id}
	revised := f.bool(wire.TRevised)
	if e := a.ids[a.idOf(k)]; e.done {
		switch {
		case revised:
			// A new version of the result of the id's latest call
			// (ABI 1.13): its outcome replaces the earlier one.
			a.resultEvent(f, &toolState{key: k, name: f.str(wire.TName), resulted: true}, true)
			return
		case !reusedDone(e):
			a.warn("second result for tool call %s ignored", id)
			return
		}
	}
	st := a.tools[k]
	if st == nil || !revised && a.reused(st) {
		// A revised result answers st, whatever its turn: it is
		// st's (a revised call would be a new version of it).
		a.toolCall(f)
		st = a.tools[k]
		a.warn("tool result %s had no tool call; a call named %q was synthesized from the result", id, st.name)
	}
	if st.resulted {
		a.warn("second result for tool call %s ignored", id)
		return
	}
	a.answer(st)
	a.resultEvent(f, st, false)
}

// resultEvent queues the tool.result f reports for call st; revised
// marks it a new version of the result reported before
// (transcript.RevisedField).
func (a *assembler) resultEvent(f *fields, st *toolState, revised bool) {
	p := &transcript.ToolPayload{
		Name: st.name, CallID: st.key.id, Output: f.str(wire.TOutput), Error: f.str(wire.TError),
		Fidelity: transcript.FidelityAgentEmitted, Kind: transcript.ToolKind(st.kind), Command: st.command,
		Status: f.str(wire.TStatus), RawLine: a.line,
	}
	if revised {
		p.Extra = revisedMark()
	}
	if p.Name == "" {
		p.Name = f.str(wire.TName)
	}
	// A result the plugin gave no output for has none (spec section 4);
	// an output it set, empty or not, is what the tool returned.
	_, p.HasOutput = f.get(wire.TOutput)
	if n, ok := f.int(wire.TExitCode); ok {
		p.ExitCode = new(int(n))
	}
	p.Status = a.toolStatus(p, f.bool(wire.TIsError))
	if p.Status == transcript.StatusDenied && p.Output == "" {
		// Refused before it ran: an empty output some providers state
		// (Codex's aggregated_output "" of a declined command) is not
		// one the tool returned.
		p.HasOutput = false
	}
	a.event(st.key.scope, transcript.ToolResult, a.timestamp(f), p)
}

// answer marks st's result recorded and moves the call from tools to its
// id's entry (ids, done): an answered call is settled for good, and
// reused needs of it only the key of the message that named it. The dangling list (calls) drops
// the answered calls once they are most of it, so that it holds the
// calls without a result and no more than as many answered ones.
func (a *assembler) answer(st *toolState) {
	st.resulted = true
	delete(a.tools, st.key)
	ik := a.idOf(st.key)
	e := a.ids[ik]
	e.done, e.msgKey = true, st.msgKey
	a.ids[ik] = e
	a.answered++
	if a.answered > 64 && a.answered > len(a.calls)/2 {
		a.calls = slices.DeleteFunc(a.calls, func(c *toolState) bool { return c.resulted })
		a.answered = 0
	}
}

// toolStatus puts a result's status in the closed set (spec section 4:
// ok, error, denied, cancelled), whatever word the plugin used: an older
// word is mapped (completed is ok, failed error, declined denied,
// interrupted cancelled); a result without one is error when it is marked
// an error, carries error text or a non-zero exit code, and stays without
// a status otherwise; an unknown word is read the same way, with a
// warning. Anything but ok gets error text when it has none.
func (a *assembler) toolStatus(p *transcript.ToolPayload, isError bool) string {
	st, known := vocab.ToolStatus(p.Status)
	if !known {
		if p.Status != "" {
			a.warn("tool result %s: status %q is not ok, error, denied or cancelled; read from its error and exit code", p.CallID, p.Status)
		}
		st = ""
		if isError || p.Error != "" || p.ExitCode != nil && *p.ExitCode != 0 {
			st = transcript.StatusError
		} else if p.Status != "" {
			st = transcript.StatusOK
		}
	}
	if st != "" && st != transcript.StatusOK && p.Error == "" {
		switch {
		case st == transcript.StatusError && p.ExitCode != nil && *p.ExitCode != 0:
			p.Error = "exit code " + strconv.Itoa(*p.ExitCode)
		case st == transcript.StatusDenied:
			p.Error = "denied"
		case st == transcript.StatusCancelled:
			p.Error = "cancelled"
		default:
			p.Error = "failed"
		}
	}
	return st
}

func (a *assembler) event(scope string, t transcript.EventType, ts time.Time, p transcript.Payload) {
	a.enqueue(item{kind: itemEvent, scope: scope, ev: &transcript.Event{Type: t, Timestamp: ts, Payload: p}})
}

// flush hands the ready head of the queue to the sink: up to the first
// message still open, in order, the consecutive events of one scope in
// one Emit (the records of one call are written together).
func (a *assembler) flush(ctx context.Context) error {
	if err := a.rawLines(ctx); err != nil {
		return err
	}
	n := 0
	for ; n < len(a.queue); n++ {
		it := &a.queue[n]
		if it.kind == itemMessage && !it.msg.closed {
			break
		}
		if it.kind == itemErrMark {
			a.errPos = a.pos
			continue
		}
		if it.kind == itemOpen || it.kind == itemClose || len(a.batch) > 0 && it.scope != a.batchScope {
			if err := a.emitBatch(ctx); err != nil {
				a.dropQueue(n)
				return err
			}
		}
		var err error
		switch it.kind {
		case itemMessage:
			if ev := a.messageEvent(it.msg); ev != nil {
				a.pos++
				if it.scope == "" {
					last := it.msg.lastLine
					if it.msg.atEnd {
						last = endLine
					}
					a.seen(ev, last)
				}
				a.batchScope = it.scope
				a.batch = append(a.batch, ev)
			}
			a.recycle(it.msg)
		case itemEvent:
			a.pos++
			if it.tool != nil {
				it.tool.pos = a.pos
			}
			if it.scope == "" {
				a.seen(it.ev, 0)
			}
			a.batchScope = it.scope
			a.batch = append(a.batch, it.ev)
		case itemOpen:
			err = a.sink.OpenScope(ctx, *it.open)
		case itemClose:
			err = a.sink.CloseScope(ctx, it.scope, it.st, it.err)
		}
		if err != nil {
			a.dropQueue(n + 1)
			return fmt.Errorf("sink: %w", err)
		}
	}
	err := a.emitBatch(ctx)
	a.dropQueue(n)
	return err
}

// rawLines tells a RawSink the last raw line that what flush is about to
// hand it comes from.
func (a *assembler) rawLines(ctx context.Context) error {
	rs, ok := a.sink.(RawSink)
	if !ok {
		return nil
	}
	upto := 0
	for i := range a.queue {
		it := &a.queue[i]
		line := it.line
		if it.kind == itemMessage {
			if !it.msg.closed {
				break
			}
			line = max(it.msg.rawLine, it.msg.lastLine, it.msg.closeLine)
		}
		upto = max(upto, line)
	}
	if upto == 0 {
		return nil
	}
	if err := rs.RawLines(ctx, upto); err != nil {
		return fmt.Errorf("sink: %w", err)
	}
	return nil
}

// emitBatch hands the events gathered by flush to the sink.
func (a *assembler) emitBatch(ctx context.Context) error {
	if len(a.batch) == 0 {
		return nil
	}
	err := a.sink.Emit(ctx, a.batchScope, a.batch)
	clear(a.batch)
	a.batch = a.batch[:0]
	if err != nil {
		return fmt.Errorf("sink: %w", err)
	}
	return nil
}

// dropQueue removes the first n items of the queue.
func (a *assembler) dropQueue(n int) {
	m := copy(a.queue, a.queue[n:])
	clear(a.queue[m:])
	a.queue = a.queue[:m]
}

// seen notes the raw line of an answer (assistant message, tool call or
// result) or of a user prompt in the step's own scope, for the status of
// a format without a terminal event. last is the message's last raw line.
func (a *assembler) seen(ev *transcript.Event, last int) {
	line := last
	switch p := ev.Payload.(type) {
	case *transcript.MessagePayload:
		line = max(line, p.RawLine)
		if line == 0 {
			line = endLine
		}
		if ev.Type == transcript.MessageAssistant {
			a.answerLine = max(a.answerLine, line)
			a.answerPos, a.lastMsgPos = a.pos, a.pos
			if len(p.Blocks) > 0 {
				a.saidPos = a.pos
			}
			a.lastMsgCalls = a.lastMsgCalls[:0]
			a.lastMsgThinking = len(p.Blocks) > 0
			for _, b := range p.Blocks {
				if b.ToolID != "" {
					a.lastMsgCalls = append(a.lastMsgCalls, b.ToolID)
				}
				if b.Type != transcript.BlockThinking {
					a.lastMsgThinking = false
				}
			}
			return
		}
		for _, b := range p.Blocks {
			if b.Origin == transcript.OriginPrompt {
				a.promptLine = max(a.promptLine, line)
				a.promptPos = a.pos
				return
			}
		}
	case *transcript.ToolPayload:
		line = p.RawLine
		if line == 0 {
			line = endLine
		}
		a.answerLine = max(a.answerLine, line)
		a.answerPos, a.saidPos = a.pos, a.pos
	}
}

// endsOnCall says whether the log ends on a call that got no result
// (spec 6.7): a dangling call that no assistant message came after,
// other than the one that holds it. A call left without a result
// earlier, when the agent went on (an interrupted task resumed), is in
// the dangling list but does not end the log.
func (a *assembler) endsOnCall() bool {
	for _, st := range a.calls {
		if st.resulted {
			continue
		}
		if st.pos > a.lastMsgPos || st.key.scope == "" && slices.Contains(a.lastMsgCalls, st.key.id) {
			return true
		}
	}
	return false
}

func (a *assembler) messageEvent(m *message) *transcript.Event {
	slots := make([]int, 0, len(m.blocks))
	for s := range m.blocks {
		slots = append(slots, s)
	}
	sort.Ints(slots)
	p := &transcript.MessagePayload{Role: m.role, Model: m.model, ID: m.id, StopReason: m.stop, Usage: m.usage, RawLine: m.rawLine}
	for _, s := range slots {
		b := m.blocks[s]
		if b.b.Type == transcript.BlockToolUse {
			b.b.ToolInput = a.toolInput(b)
		}
		p.Blocks = append(p.Blocks, b.b)
	}
	if len(p.Blocks) == 0 && p.Usage == nil {
		return nil
	}
	t := transcript.MessageAssistant
	if m.role == "user" {
		t = transcript.MessageUser
	}
	return &transcript.Event{Type: t, Timestamp: m.ts, Payload: p}
}

// toolInput settles a tool_use block's input: appended partial JSON is
// parsed now ("" is {}); text that does not parse is kept as a string.
func (a *assembler) toolInput(b *block) []byte {
	if !b.appended {
		if b.input == nil {
			return []byte("{}")
		}
		return b.input
	}
	if firstNonSpace(b.partial) == 0 {
		return []byte("{}")
	}
	out, dups, err := jsonstr.AppendCompactInput(nil, b.partial)
	if err != nil {
		a.warn("tool_use %s: streamed input is not JSON (%v); kept as a string", b.b.ToolID, err)
		return jsonstr.AppendQuoted(nil, string(b.partial))
	}
	if dups > 0 {
		a.duplicateKeys(dups)
	}
	return out
}

// duplicateKeys says that a provider's JSON value repeated object keys:
// the last member of each was kept, as JSON parsers do, and the earlier
// ones dropped, so that the transcript stays readable by strict parsers.
// The raw capture keeps them.
func (a *assembler) duplicateKeys(n int) {
	a.warn("%d object member(s) dropped from the provider's JSON: a later member repeated the key (the last is kept, as JSON parsers do; the raw capture has them all)", n)
}

// finish closes what is open and settles the result.
func (a *assembler) finish(ctx context.Context) (*transcript.AgentResult, error) {
	for _, it := range a.queue {
		if it.kind == itemMessage {
			it.msg.closed = true
		}
	}
	a.msgs = map[string]*message{}
	open := make([]string, 0, len(a.scopes))
	for id := range a.scopes {
		open = append(open, id)
	}
	sort.Strings(open)
	st := a.res.Status
	if a.level < wire.LevelTerminal {
		st = transcript.StatusIncomplete
	}
	for _, id := range open {
		a.queue = append(a.queue, item{kind: itemClose, scope: id, line: a.line, st: st})
	}
	a.scopes = map[string]bool{}
	err := a.flush(ctx)
	for _, st := range a.calls {
		if k := st.key; !st.resulted {
			id := k.id
			if k.scope != "" {
				id = k.scope + "/" + k.id
			}
			a.res.Dangling = append(a.res.Dangling, id)
		}
	}
	if a.level < wire.LevelTerminal {
		a.res.Status, a.res.Error = a.derivedStatus()
	}
	a.silentN, a.silentFirst = a.acct.finish()
	if a.errDropped > 0 {
		a.res.Warnings = append(a.res.Warnings, fmt.Sprintf("%d more provider errors not kept", a.errDropped))
	}
	if a.warnN > maxWarnings {
		a.res.Warnings = append(a.res.Warnings, fmt.Sprintf("%d more warnings not kept", a.warnN-maxWarnings))
	}
	r := a.res
	return &r, err
}

func (a *assembler) unmapped(native string) {
	if a.res.Unmapped == nil {
		a.res.Unmapped = map[string]int{}
	}
	a.res.Unmapped[native]++
}

// derivedStatus is the status of a stream without a terminal report
// (spec 6.7; abi, "Final status"): the session rule for a format without
// a terminal event, else error fields, then the exit code, else
// incomplete.
func (a *assembler) derivedStatus() (status, errText string) {
	exitErr := ""
	if a.exitCode != nil && *a.exitCode != 0 {
		exitErr = fmt.Sprintf("the agent exited with code %d", *a.exitCode)
	}
	if a.noTerminal {
		switch {
		// An error on the raw line of the last answer comes with it (a
		// session log's API error is a synthetic assistant message that
		// carries the error): the error is the last word.
		// On the same raw line, the order of the records decides: an
		// answer that says or does something, reported after the error
		// (a later message of a document), is the last word.
		case a.errSeen && (a.errLine > a.answerLine || a.errLine == a.answerLine && a.errPos >= a.saidPos):
			return transcript.StatusError, a.errText
		case a.promptPos > a.answerPos:
			return transcript.StatusIncomplete, "the log ends on a prompt that got no answer"
		case a.cutSeen && a.cutLine >= a.answerLine:
			// The last answer is a response the provider says was cut
			// short (the user aborted it), as a turn a terminal event
			// says was aborted is.
			if a.cutText == "" {
				return transcript.StatusIncomplete, "the log ends on a response that was cut short"
			}
			return transcript.StatusIncomplete, a.cutText
		case a.lastMsgThinking && a.lastMsgPos >= a.answerPos:
			// The model's last output is thinking, nothing after it: its
			// response was cut short before it said or did anything.
			return transcript.StatusIncomplete, "the log ends on the model's thinking, with no answer after it"
		case a.endsOnCall():
			return transcript.StatusIncomplete, "the log ends on a tool call without a result"
		case exitErr != "":
			return transcript.StatusError, exitErr
		}
		return transcript.StatusOK, ""
	}
	switch {
	case a.errSeen:
		return transcript.StatusError, a.errText
	case exitErr != "":
		return transcript.StatusError, exitErr
	}
	return transcript.StatusIncomplete, a.lastErr
}

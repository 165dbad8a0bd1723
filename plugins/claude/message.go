package claude

import (
	"strconv"
	"strings"
	"unsafe"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// message is an assistant message being built from one or more lines.
type message struct {
	key     string
	id      string
	scope   string
	isOpen  bool
	closed  bool
	usage   usage
	stop    string
	slots   []*slot
	next    int   // number of the next slot (slots may hold fewer)
	base    int   // first slot of the current key (continuations restart at 0)
	counted usage // the usage already added to the step (see close)
	// top is the usage the message states at the top level (its
	// request's last call, when usage.iterations lists several);
	// beyondCounted what the message's usage exceeds it by, as added to
	// the step's cycle (normalizer.beyond) so far.
	top, beyondCounted usage
	// multi: a line of the message listed several iterations. Until
	// one does, top is the message's usage itself, and neither top nor
	// what is beyond it is kept (close).
	multi bool
	// last is the number of the latest line about the message (see
	// closeIdle).
	last int
	idx  map[int]*slot // stream index -> slot; nil until a block is streamed
	// unknown names the streamed blocks of a type this plugin does not
	// know, by stream index ("block/<type>"): their deltas are counted
	// under it, never taken for text.
	unknown map[int]string
	// compact holds the summary of each streamed compaction block, by
	// stream index, until the block stops; compactions counts those
	// written, which a snapshot of the message repeats.
	compact     map[int][]byte
	compactions int
	// fellBack: a fallback block was reported (a snapshot repeats it).
	fellBack bool
	// model is the model the message names; foreign the usage of its
	// request's calls run on other models, until writeForeign writes
	// it (foreignDone).
	model       string
	foreign     []modelUsage
	foreignDone bool
	// finished counts the leading slots that are all stopped (finish
	// has run on them), so close does not walk them again.
	finished int
	// tools indexes the first slot of each (type, tool id), built once a
	// message has many slots (a message id that keeps coming back).
	tools map[toolKey]*slot
	// deltaOnly and snapOnly count the kept slots that are streamed but
	// not snapshotted, and the reverse: the only slots the searches for a
	// block's other half can match, so with none the search is skipped.
	deltaOnly, snapOnly int
	// spareText and spareThinking count the text and thinking blocks
	// written from a snapshot that no streamed block has claimed. Such a
	// slot is only ever looked for as the snapshot half of a streamed
	// block of its type, and one is as good as another, so it is counted
	// rather than kept: a message id that keeps coming back (a resumed
	// log, concatenated captures) would otherwise hold every text block
	// it ever had.
	spareText, spareThinking int
	// windowed counts the entries of n.closedIDs naming this message.
	windowed int
	// scratch is the slot snapSlot returns for a counted (spare) block.
	scratch slot
}

// keepClosed is how many closed messages keep their state. A message id
// that comes back later than that is a new message under the same key
// (the assembler has written the earlier one), so only its tool blocks
// already written are written again; holding every id of a long stream
// would grow the plugin's memory with the stream.
const keepClosed = 1024

// window is a ring of the latest ids.
type window struct {
	ids  []string
	next int
}

// push adds id and returns the id it pushes out, if any.
func (w *window) push(id string, size int) (old string, ok bool) {
	if len(w.ids) < size {
		w.ids = append(w.ids, id)
		return "", false
	}
	old, w.ids[w.next] = w.ids[w.next], id
	w.next = (w.next + 1) % size
	return old, true
}

// spare returns the count of unclaimed snapshot slots of a text or
// thinking type, nil for the tool types (their slots are kept, to be
// found by tool id).
func (m *message) spare(typ string) *int {
	switch typ {
	case sdk.BlockText:
		return &m.spareText
	case sdk.BlockThinking:
		return &m.spareThinking
	}
	return nil
}

// snapSlot numbers a new slot for a block written whole from a snapshot.
// A text or thinking slot is counted in spare, not kept.
func (m *message) snapSlot(typ, toolID string) *slot {
	if c := m.spare(typ); c != nil {
		*c++
		// Not kept: the caller only writes the block through it, so
		// one scratch slot per message serves (an allocation saved on
		// every text block).
		m.scratch = slot{n: m.next, typ: typ, snap: true}
		m.next++
		return &m.scratch
	}
	s := m.newSlot(typ, toolID)
	m.setSnap(s)
	return s
}

// setSnap marks s as written from a complete block.
func (m *message) setSnap(s *slot) {
	if s.snap {
		return
	}
	if s.streamed {
		m.deltaOnly--
	} else {
		m.snapOnly++
	}
	s.snap = true
}

// setStreamed marks s as built from stream deltas.
func (m *message) setStreamed(s *slot) {
	if s.streamed {
		return
	}
	if s.snap {
		m.snapOnly--
	} else {
		m.deltaOnly++
	}
	s.streamed = true
}

type toolKey struct{ typ, id string }

// manySlots is where firstTool switches from a scan to the index.
const manySlots = 16

// slot is one content block of a message.
type slot struct {
	n        int    // slot number within the message (absolute)
	typ      string // the sdk block type
	toolID   string
	toolName string
	streamed bool // built from stream deltas
	snap     bool // set from a complete block: later deltas are ignored
	stopped  bool
	hasText  bool
	hasSig   bool
	input    []byte // joined input_json_delta fragments
}

// usage keeps Anthropic's components, so that a later, partial report
// (message_delta often carries output_tokens only) replaces only what it
// states. in is the uncached input, as Anthropic states input_tokens;
// cacheWrite1h the one-hour part of cacheWrite
// (cache_creation.ephemeral_1h_input_tokens); tier the service tier the
// request was served at (service_tier: "standard", "priority", "batch"),
// "" where the usage states none.
type usage struct {
	in, cacheWrite, cacheRead, out, reasoning, cacheWrite1h sdk.Int
	tier                                                    string
}

// usageKeys are the members merge reads, in one pass.
var usageKeys = abi.NewKeySet("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
	"output_tokens", "output_tokens_details", "cache_creation", "service_tier")

func (u *usage) merge(v abi.Value) {
	if v.Kind() != abi.KindObject {
		return
	}
	set := func(dst *sdk.Int, x abi.Value) {
		if i := sdk.IntOf(x); isSet(i) {
			*dst = i
		}
	}
	var f [7]abi.Value
	v.Lookup(usageKeys, f[:])
	set(&u.in, f[0])
	set(&u.cacheWrite, f[1])
	set(&u.cacheRead, f[2])
	set(&u.out, f[3])
	set(&u.reasoning, f[4].Get("thinking_tokens"))
	set(&u.cacheWrite1h, f[5].Get("ephemeral_1h_input_tokens"))
	if t := sdk.TierOf(f[6]); t != "" {
		u.tier = t
	}
}

// mergeUsage merges a message's usage. A request that made several
// model calls (a server-side compaction before the answer: iterations
// [{type compaction}, {type message}]) states the last call's figures at
// the top and each call's in usage.iterations: the message's usage is
// then their sum, every token the request consumed (spec §4). A single
// iteration repeats the top-level figures. A call run on another model
// than the message's (an advisor_message: the advisor tool's
// sub-inference; the message entry of a hop a server-side fallback
// declined, on the requested model) is no part of this message's usage:
// it is kept in m.foreign, by model, to be written as a message of its
// own model (see writeForeign), so that each call is priced at its own
// model's rates. (A result line's iterations are its last message's,
// beside the run's totals: result does not read them.)
func (m *message) mergeUsage(v abi.Value) {
	u := &m.usage
	u.merge(v)
	if m.multi {
		m.top.merge(v)
	}
	its := v.Get("iterations")
	if its.Kind() != abi.KindArray || its.Len() < 2 {
		return
	}
	if !m.multi {
		// Every line so far was merged into both alike.
		m.multi, m.top = true, *u
	}
	var sum usage
	var foreign []modelUsage
	it := its.Iter()
	for it.Next() {
		x := it.Value()
		var one usage
		one.merge(x)
		one.reasoning = sdk.Int{}
		if model := x.Get("model").String(); model != "" && (x.Get("type").Is("advisor_message") || m.model != "" && model != m.model) {
			foreign = addModelUsage(foreign, model, one)
			continue
		}
		sum.add(one)
	}
	u.in, u.cacheWrite, u.cacheRead, u.out, u.cacheWrite1h = sum.in, sum.cacheWrite, sum.cacheRead, sum.out, sum.cacheWrite1h
	if !m.foreignDone {
		// The latest figures stated win, as for the message's own.
		m.foreign = foreign
	}
}

// modelUsage is the usage of a request's calls run on one model.
type modelUsage struct {
	model string
	u     usage
}

// addModelUsage adds u to the entry of model in list.
func addModelUsage(list []modelUsage, model string, u usage) []modelUsage {
	for i := range list {
		if list[i].model == model {
			list[i].u.add(u)
			return list
		}
	}
	return append(list, modelUsage{model: model, u: u})
}

// writeForeign writes, once, the usage of m's calls run on another
// model (mergeUsage) as an assistant message of that model with no
// blocks: the advisor's output, or the declined hop's, is no part of
// the transcript's answer, but its tokens count, at its model's rates.
// Top-scope figures are added to the step as the message's are.
func (n *normalizer) writeForeign(m *message, out *sdk.Out) {
	if m.foreignDone || len(m.foreign) == 0 {
		return
	}
	m.foreignDone = true
	for _, f := range m.foreign {
		key := sdk.S(n.newKey('i'))
		h := sdk.Message{Model: sdk.S(f.model)}
		if m.scope != "" {
			h.Scope = sdk.S(m.scope)
		}
		if f.u.tier == "" {
			// Served under the request's tier, which the
			// iterations do not repeat.
			f.u.tier = m.usage.tier
		}
		out.Open(key, h)
		out.Close(key, sdk.MessageEnd{Usage: f.u.sdk()})
		if m.scope == "" {
			n.pending.add(f.u)
			// Not in a result's usage either (the message's top-level
			// figures are its own model's).
			n.beyond.add(f.u.positive())
		}
	}
	m.foreign = nil
}

func isSet(i sdk.Int) bool { _, ok := i.Value(); return ok }

// zero reports whether u states no figure (a tier alone counts no
// token).
func (u usage) zero() bool {
	u.tier = ""
	return u.sdk() == sdk.Usage{}
}

// sdk converts to the transcript's figures: Anthropic states the
// uncached input apart (sdk.Split).
func (u usage) sdk() sdk.Usage {
	s := sdk.Split(u.in, u.cacheRead, u.cacheWrite)
	s.CacheWrite1h, s.Output, s.Reasoning, s.Tier = u.cacheWrite1h, u.out, u.reasoning, u.tier
	return s
}

// each returns u with every figure replaced by f of it and of o's
// figure of the same kind, the tier t. It copies figure by figure: taking
// the figures' addresses (a list of pointers to loop over) made TinyGo
// allocate the usages on the heap, twice a call of close.
func (u usage) each(o usage, t string, f func(x, y sdk.Int) sdk.Int) usage {
	return usage{
		in:           f(u.in, o.in),
		cacheWrite:   f(u.cacheWrite, o.cacheWrite),
		cacheRead:    f(u.cacheRead, o.cacheRead),
		out:          f(u.out, o.out),
		reasoning:    f(u.reasoning, o.reasoning),
		cacheWrite1h: f(u.cacheWrite1h, o.cacheWrite1h),
		tier:         t,
	}
}

// positive is u with only its figures above zero: what it adds to a
// usage that states none of the others.
func (u usage) positive() usage { return u.each(usage{}, u.tier, positiveFigure) }

func positiveFigure(x, _ sdk.Int) sdk.Int {
	if v, ok := x.Value(); ok && v > 0 {
		return x
	}
	return sdk.Int{}
}

// minus returns what u states beyond o, figure by figure: a figure u
// does not state stays unset. The tier is u's.
func (u usage) minus(o usage) usage { return u.each(o, u.tier, minusFigure) }

func minusFigure(x, y sdk.Int) sdk.Int {
	a, ok := x.Value()
	if !ok {
		return sdk.Int{}
	}
	b, _ := y.Value()
	return sdk.N(a - b)
}

// add adds o's figures to u's; the sum's tier is as sdk.Usage.Plus
// makes it.
func (u *usage) add(o usage) {
	*u = u.each(o, u.sdk().Plus(o.sdk()).Tier, sdk.Int.Plus)
}

// msgFor returns the message with provider id (creating it; id may
// alias the line, and is copied when kept), opening it
// and closing the scope's other open messages: a new message in a scope
// means the previous one is complete. m is n.byID[id], looked up by the
// caller (see idOf).
func (n *normalizer) msgFor(id string, m *message, scope string, out *sdk.Out) *message {
	if m == nil && id != "" {
		// Deltas that arrived without a message_start (a glitch, or a
		// stream cut at the start) belong to the next snapshot.
		if c := n.current(scope); c != nil && c.id == "" && !c.closed {
			m = c
			m.id = strings.Clone(id)
			n.byID[m.id] = m
		}
	}
	if m == nil {
		m = &message{scope: scope}
		if id != "" {
			n.nextID++
			// One allocation for the key and the id it ends with (id
			// may alias the line: see idOf).
			m.key = "m:" + id
			m.id = m.key[2:]
			n.byID[m.id] = m
		} else {
			m.key = n.newKey('a')
		}
	}
	for i := 0; i < len(n.open); i++ {
		o := n.open[i]
		if o != m && o.scope == scope {
			n.close(o, out)
			i--
		}
	}
	if m.closed {
		// More of a message that was closed already (it came back after
		// idleClose lines, or after its window): continue it under a new
		// key so nothing already written is rewritten. Its usage is kept:
		// a later figure is the whole message's, not the continuation's
		// (see close).
		n.nextID++
		m.key = continuationKey(id, n.nextID)
		m.closed = false
		m.base = m.next
	}
	if !m.isOpen {
		m.isOpen = true
		n.open = append(n.open, m)
	}
	m.last = n.line
	return m
}

// continuationKey is "m:" + id + "#" + next in one allocation (the
// concatenations and strconv.Itoa are four inside WebAssembly).
func continuationKey(id string, next int) string {
	var d [20]byte
	i := len(d)
	for v := next; ; v /= 10 {
		i--
		d[i] = byte('0' + v%10)
		if v < 10 {
			break
		}
	}
	b := make([]byte, 0, 3+len(id)+len(d)-i)
	b = append(b, 'm', ':')
	b = append(b, id...)
	b = append(b, '#')
	b = append(b, d[i:]...)
	// b is never written again: the string may share it.
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// idOf returns a message id value as a string ("" when it is not a
// string) and the message with that id (nil when none), in one map
// lookup and without allocating. With no message the id aliases the line
// (sdk.Name): msgFor copies it before keeping it.
func (n *normalizer) idOf(id abi.Value) (string, *message) {
	s := sdk.Name(id)
	if s == "" && id.Escaped() {
		s = id.String() // malformed escapes: kept verbatim, as String does
	}
	if s == "" {
		return "", nil
	}
	if m := n.byID[s]; m != nil {
		return m.id, m
	}
	return s, nil
}

// current returns the message being streamed in scope. The step's own
// scope, nearly every line's, is a field rather than a map entry:
// hashing a string is a loop over its bytes inside WebAssembly.
func (n *normalizer) current(scope string) *message {
	m := n.curTop
	if scope != "" {
		m = n.cur[scope]
	}
	if m != nil {
		m.last = n.line // a stream event about it
	}
	return m
}

// setCurrent sets (m nil: clears) the message being streamed in scope.
func (n *normalizer) setCurrent(scope string, m *message) {
	switch {
	case scope == "":
		n.curTop = m
	case m == nil:
		delete(n.cur, scope)
	default:
		n.cur[scope] = m
	}
}

// header opens (or updates) m with what a line says about it: the
// message's model and the line's timestamp.
func (n *normalizer) header(m *message, model abi.Value, ts abi.Value, out *sdk.Out) {
	h := sdk.Message{Model: sdk.Text(model), Time: sdk.StringOf(ts)}
	if m.id != "" {
		h.ID = sdk.S(m.id)
	}
	if m.scope != "" {
		h.Scope = sdk.S(m.scope)
	}
	out.Open(sdk.S(m.key), h)
	if s := model.String(); s != "" && m.model != s {
		m.model = s
	}
	if m.scope == "" {
		n.model(model, out)
	}
	if !n.sawMessages {
		n.sawMessages = true
	}
}

// close finishes m's blocks and writes it.
func (n *normalizer) close(m *message, out *sdk.Out) {
	for len(m.compact) > 0 {
		// A compaction block cut before its stop, lowest index first.
		idx := -1
		for i := range m.compact {
			if idx < 0 || i < idx {
				idx = i
			}
		}
		n.compaction(m, sdk.S(string(m.compact[idx])), out)
		m.compactions++
		delete(m.compact, idx)
	}
	for _, s := range m.slots[m.finished:] {
		n.finish(m, s, out)
	}
	m.finished = len(m.slots)
	e := sdk.MessageEnd{}
	if m.stop != "" {
		e.StopReason = sdk.S(m.stop)
	}
	if m.base == 0 {
		e.Usage = m.usage.sdk()
	}
	if m.scope == "" {
		// The last figure reported for the message wins (spec §6.6):
		// a continuation adds to the step what its later figures add to
		// the ones counted when the message was first written.
		n.pending.add(m.usage.minus(m.counted))
		// What its iterations state beyond its top-level figures,
		// which a result's usage leaves out.
		if m.multi {
			b := m.usage.minus(m.top)
			n.beyond.add(b.minus(m.beyondCounted).positive())
			m.beyondCounted = b
		}
	}
	m.counted = m.usage
	out.Close(sdk.S(m.key), e)
	n.writeForeign(m, out)
	m.closed, m.isOpen = true, false
	if m.id != "" {
		m.windowed++
		if old, ok := n.closedIDs.push(m.id, keepClosed); ok {
			if o := n.byID[old]; o != nil {
				if o.windowed--; o.windowed == 0 && o.closed {
					delete(n.byID, old)
				}
			}
		}
	}
	for i, o := range n.open {
		if o == m {
			n.open = append(n.open[:i], n.open[i+1:]...)
			break
		}
	}
	if n.current(m.scope) == m {
		n.setCurrent(m.scope, nil)
	}
}

// idleClose is how many lines may pass without one about an open
// message before the plugin closes it. Claude writes one message as
// several lines (one per content block, sharing message.id), and between
// them whatever happened meanwhile: a hook's progress, the result of a
// tool the message already asked for, a sub-agent's first messages. Only
// the message's next line, the next message in its scope, a prompt, a
// result or the end says it is complete, so until then it stays open
// (the host holds back the events reported after it, so its tool calls
// and results still follow it). A message that long passed without a
// line is complete: it is closed so that it does not hold back the rest
// of the stream (the host would close it itself after its own idle
// limit, 64 lines, with a warning). Real logs have at most a dozen
// lines between two lines of one message.
const idleClose = 48

// closeIdle closes, before line n.line is handled, the open messages
// that more than idleClose lines have passed since a line about them.
func (n *normalizer) closeIdle(out *sdk.Out) {
	for i := 0; i < len(n.open); i++ {
		if n.line-n.open[i].last-1 > idleClose {
			n.close(n.open[i], out)
			i--
		}
	}
}

// closeScopeMessages closes the open messages of a scope.
func (n *normalizer) closeScopeMessages(scope string, out *sdk.Out) {
	for i := 0; i < len(n.open); i++ {
		if n.open[i].scope == scope {
			n.close(n.open[i], out)
			i--
		}
	}
}

// newSlot appends a slot.
func (m *message) newSlot(typ, toolID string) *slot {
	s := &slot{n: m.next, typ: typ, toolID: toolID}
	m.next++
	m.slots = append(m.slots, s)
	if m.tools != nil && toolID != "" {
		k := toolKey{typ, toolID}
		if m.tools[k] == nil {
			m.tools[k] = s
		}
	}
	return s
}

// firstTool returns the first slot of type typ for tool id (not "").
func (m *message) firstTool(typ, id string) *slot {
	if len(m.slots) <= manySlots {
		for _, x := range m.slots {
			if x.typ == typ && x.toolID == id {
				return x
			}
		}
		return nil
	}
	if m.tools == nil {
		m.tools = make(map[toolKey]*slot, len(m.slots))
		for _, x := range m.slots {
			if k := (toolKey{x.typ, x.toolID}); x.toolID != "" && m.tools[k] == nil {
				m.tools[k] = x
			}
		}
	}
	return m.tools[toolKey{typ, id}]
}

// rel is the slot number within the current key.
func (m *message) rel(s *slot) int { return s.n - m.base }

// assistant handles an assistant line (stream-json or session log): one
// or more complete blocks of message.id.
func (n *normalizer) assistant(v abi.Value, out *sdk.Out) {
	n.assistantIn(v, n.scopeOf(v, out), out)
}

// assistantIn handles an assistant record v of scope.
func (n *normalizer) assistantIn(v abi.Value, scope string, out *sdk.Out) {
	msg := n.get(v, kMessage)
	ts := n.get(v, kTimestamp)
	// The message's members, read once: get on an object other than the
	// line's is a call.
	f := n.members(msg)
	content, usageV, stop := f[kContent], f[kUsage], f[kStopReason]
	id, known := n.idOf(f[kId])
	m := n.msgFor(id, known, scope, out)
	n.header(m, f[kModel], ts, out)
	it := content.Iter()
	for it.Next() {
		n.snapshot(m, it.Value(), ts, out)
	}
	if content.Kind() == abi.KindString && !sdk.Text(content).IsEmpty() {
		s := m.snapSlot(sdk.BlockText, "")
		out.Block(sdk.S(m.key), m.rel(s), sdk.Block{Type: sdk.BlockText, Text: sdk.Text(content)})
	}
	m.mergeUsage(usageV)
	if stop.Kind() == abi.KindString && !stop.Is(m.stop) {
		m.stop = stop.String()
	}
	if n.get(v, kAborted).Truthy() {
		// Cut short by an interrupt before the stream completed: no
		// stop_reason came and the text may end mid-word. Its stop
		// reason says so, and the turn did not complete.
		if m.stop == "" {
			m.stop = "aborted"
		}
		if scope == "" {
			n.aborted = true
		}
		out.Warn("claude: an answer was stopped mid-stream (aborted): its text may be cut short")
	}
	if e := n.get(v, kError); e.Kind() == abi.KindString || e.Kind() == abi.KindObject || n.get(v, kIsApiErrorMessage).Truthy() {
		// The CLI's message about the error (model "<synthetic>") is
		// written first: the error comes after it, not before an answer.
		n.close(m, out)
		n.lineError(v, e, content, scope, out)
	}
}

// lineError reports an assistant line's error: its top-level "error"
// (a code such as authentication_failed or rate_limit, or an object with
// a message) or isApiErrorMessage, with the CLI's explanation from the
// message text and the HTTP status (apiErrorStatus) as its code.
func (n *normalizer) lineError(v, e, content abi.Value, scope string, out *sdk.Out) {
	var code, text string
	switch e.Kind() {
	case abi.KindString:
		code = e.String()
	case abi.KindObject:
		text = e.Get("message").String()
		if s, ok := e.Get("status").Int(); ok {
			code = strconv.FormatInt(s, 10)
		}
	}
	if s, ok := n.get(v, kApiErrorStatus).Int(); ok {
		code = strconv.FormatInt(s, 10)
		if e.Kind() == abi.KindString {
			text = e.String() + " (" + code + ")"
		}
	}
	// The CLI puts the human explanation in the message text.
	if first := content.Index(0); first.Get("type").Is("text") {
		if t := first.Get("text").String(); t != "" && len(t) < 1024 {
			switch {
			case text == "" && code == "":
				text = t
			case text == "":
				text = code + ": " + t
			default:
				text += ": " + t
			}
		}
	}
	if text == "" {
		text = code
	}
	if text == "" {
		text = "API error"
	}
	n.errSeen, n.errText = true, text
	pe := sdk.ProviderError{Message: sdk.S(text), Scope: sdk.Opt(scope)}
	if code != "" {
		pe.Code = sdk.S(code)
	}
	out.Error(pe)
}

// snapshot sets one complete content block of m, replacing the slot its
// deltas built when there is one.
func (n *normalizer) snapshot(m *message, b, ts abi.Value, out *sdk.Out) {
	bt := b.Get("type")
	typ := blockType(bt)
	if bt.Is("compaction") {
		if m.compactions > 0 {
			m.compactions-- // written from its deltas
			n.ignore("block/compaction", out)
			return
		}
		n.compaction(m, sdk.Text(b.Get("content")), out)
		return
	}
	if bt.Is("fallback") {
		n.fallback(m, b, out)
		return
	}
	if bt.Is("container_upload") {
		// A file uploaded to the code execution container (its id):
		// no part of the answer.
		n.ignore("block/container_upload", out)
		return
	}
	if typ == "" {
		out.Unmapped(sdk.S("block/" + sdk.TypeName(bt)))
		return
	}
	var s *slot
	toolID := "" // aliases the line until copied below
	if typ == sdk.BlockToolUse || typ == sdk.BlockToolResult {
		toolID = toolIDView(b)
		if toolID != "" {
			s = m.firstTool(typ, toolID)
		}
	} else if m.deltaOnly > 0 {
		for _, x := range m.slots {
			if x.typ == typ && x.streamed && !x.snap {
				s = x
				break
			}
		}
	}
	if s != nil && s.snap {
		return // already written whole
	}
	if s != nil && s.n < m.base {
		return // written in an earlier part of a continued message
	}
	if s == nil {
		s = m.snapSlot(typ, strings.Clone(toolID))
	} else {
		m.setSnap(s)
	}
	n.writeBlock(m, s, b, ts, out)
}

// compaction writes the summary of a compaction block (server-side
// compaction: the API summarized the conversation before answering, and
// the model sees the summary in place of what came before it): context
// the model continues from, a message.user of injected context beside
// the response, never the model's text; and a warning that says so.
func (n *normalizer) compaction(m *message, summary sdk.Str, out *sdk.Out) {
	if !summary.IsEmpty() {
		key := sdk.S(n.newKey('c'))
		out.Open(key, sdk.Message{User: true, Scope: sdk.Opt(m.scope)})
		out.Block(key, 0, sdk.Block{Type: sdk.BlockText, Text: summary, Origin: sdk.OriginInjected})
		out.Close(key, sdk.MessageEnd{})
	}
	out.Warn("anthropic compaction: the conversation before this response was replaced by a summary in the model's context (recorded as injected context); the transcript keeps what it replaced")
}

// fallback handles a fallback block (Messages API model fallbacks): the
// model of an earlier hop declined the request (trigger refusal, with a
// policy category) and another model answered. It is no part of the
// answer; that the requested model refused is a warning of the step.
// The message's model is the one that answered.
func (n *normalizer) fallback(m *message, b abi.Value, out *sdk.Out) {
	n.ignore("block/fallback", out)
	if m.fellBack {
		return
	}
	m.fellBack = true
	msg := "anthropic fallback: " + sdk.Clip(b.Path("from", "model").String(), 80) + " declined"
	if tr := b.Get("trigger"); tr.Exists() {
		msg += " (" + sdk.Clip(tr.Get("type").String(), 40)
		if c := tr.Get("category").String(); c != "" {
			msg += ", " + sdk.Clip(c, 40)
		}
		msg += ")"
	}
	out.Warn(msg + "; " + sdk.Clip(b.Path("to", "model").String(), 80) + " answered")
}

// writeBlock writes complete block b into slot s and reports what it
// implies (tool calls, tool results, final text).
func (n *normalizer) writeBlock(m *message, s *slot, b, ts abi.Value, out *sdk.Out) {
	key := sdk.S(m.key)
	bt := b.Get("type")
	switch {
	case bt.Is("text"):
		out.Block(key, m.rel(s), sdk.Block{Type: sdk.BlockText, Text: sdk.Text(b.Get("text"))})
		if m.scope == "" && (n.format == fmtSessionLog || n.format == fmtMessages) && !sdk.Text(b.Get("text")).IsEmpty() {
			// No result record in these formats: the latest text is the
			// answer so far.
			out.Final(sdk.Text(b.Get("text")), true)
		}
	case bt.Is("thinking"):
		th := sdk.Text(b.Get("thinking"))
		red := th.IsEmpty() && !sdk.Text(b.Get("signature")).IsEmpty()
		if !th.IsSet() {
			th = sdk.S("")
		}
		out.Block(key, m.rel(s), sdk.Block{Type: sdk.BlockThinking, Thinking: th, Redacted: red})
	case bt.Is("redacted_thinking"):
		out.Block(key, m.rel(s), sdk.Block{Type: sdk.BlockThinking, Thinking: sdk.S(""), Redacted: true})
	case s.typ == sdk.BlockToolUse:
		name := b.Get("name")
		s.toolName = name.String()
		in := b.Get("input")
		input := sdk.JSON(in)
		if !input.IsSet() {
			input = emptyObject()
		}
		out.Block(key, m.rel(s), sdk.Block{Type: sdk.BlockToolUse, ToolName: sdk.Text(name), ToolID: sdk.S(s.toolID), ToolInput: input})
		n.toolCall(m, s, in, ts, out)
	case s.typ == sdk.BlockToolResult:
		content := b.Get("content")
		// Server tools report failure as a content object of type
		// "<tool>_result_error".
		ct := content.Get("type").Raw()
		isErr := b.Get("is_error").Truthy() || len(ct) > 7 && sdk.HasPrefix(ct[len(ct)-7:], `_error"`)
		// The code execution tools' result (code_execution_result,
		// bash_code_execution_result, encrypted_code_execution_result)
		// states the program's return_code: one that is not zero is a
		// command that failed, as a Bash result's exit code is.
		code, coded := content.Get("return_code").Int()
		failed := coded && code != 0
		out.Block(key, m.rel(s), sdk.Block{Type: sdk.BlockToolResult, ToolID: sdk.S(s.toolID), ToolContent: outputOf(content), IsError: isErr || failed})
		r := sdk.ToolResult{CallID: sdk.S(s.toolID), Output: outputOf(content), IsError: isErr || failed, Scope: sdk.Opt(m.scope), Time: sdk.StringOf(ts)}
		if coded {
			r.ExitCode = sdk.N(code)
		}
		c := n.calls[callKey(m.scope, s.toolID)]
		if c != nil {
			r.Name = sdk.S(c.name)
			c.resulted = true
		} else if t := sdk.View(bt); len(t) > len("_tool_result") {
			// A server tool's result whose call this capture does not
			// hold (a turn the server paused, pause_turn, and the next
			// request continued: the call is the previous response's):
			// its block type names the tool (web_search_tool_result is
			// web_search's), which the call the host makes up for it
			// takes.
			r.Name = sdk.S(t[:len(t)-len("_tool_result")])
		}
		r.Status = sdk.S(toolOK)
		switch {
		case isErr:
			r.Status = sdk.S(toolError)
			r.Error = errorText(r.Output, "the server tool reported an error")
			if ec := n.get(content, kErrorCode); ec.Kind() == abi.KindString && !ec.Is("") {
				// A server tool's error object ({type:
				// web_search_tool_result_error, error_code:
				// max_uses_exceeded}): its type and code, and the
				// message some state (error_message), as a person
				// reads them, not the object's JSON.
				e := sdk.TypeName(content.Get("type")) + ": " + sdk.Clip(ec.String(), 100)
				if m := n.get(content, kErrorMessage); m.Kind() == abi.KindString && !m.Is("") {
					e += ": " + sdk.Clip(m.String(), 500)
				}
				r.Error = sdk.S(e)
			}
		case failed:
			r.Status = sdk.S(toolError)
			r.Error = errorText(sdk.Text(content.Get("stderr")), "exit code "+strconv.FormatInt(code, 10))
		}
		out.ToolResult(r)
		n.done(c, false)
	}
}

// blockType maps an Anthropic content block type to the sdk's; "" when
// unknown.
func blockType(t abi.Value) string {
	switch sdk.Name(t) {
	case "text":
		return sdk.BlockText
	case "thinking", "redacted_thinking":
		return sdk.BlockThinking
	case "tool_use", "server_tool_use", "mcp_tool_use":
		return sdk.BlockToolUse
	}
	if t.Kind() == abi.KindString {
		raw := t.Raw()
		if len(raw) > len(`"_tool_result"`) && sdk.HasPrefix(raw[len(raw)-len(`_tool_result"`):], `_tool_result"`) {
			return sdk.BlockToolResult
		}
	}
	return ""
}

// toolIDOf is the tool call id of content block b.
func toolIDOf(b abi.Value) string { return strings.Clone(toolIDView(b)) }

// toolIDView is toolIDOf aliasing the line (sdk.View): valid during the
// line only.
func toolIDView(b abi.Value) string {
	if id := b.Get("id"); id.Kind() == abi.KindString {
		return sdk.View(id)
	}
	return sdk.View(b.Get("tool_use_id"))
}

// user handles a user line: tool results, prompts and injected context.
func (n *normalizer) user(v abi.Value, out *sdk.Out) {
	n.userIn(v, n.scopeOf(v, out), out)
}

// userIn handles a user record v of scope.
func (n *normalizer) userIn(v abi.Value, scope string, out *sdk.Out) {
	msg := n.get(v, kMessage)
	ts := n.get(v, kTimestamp)
	content := n.get(msg, kContent)
	origin := n.origin(v, content)
	if scope != "" && n.repeatsPrompt(scope, content) {
		return
	}
	if scope == "" && n.format == fmtSessionLog && origin == sdk.OriginInjected && interruptMarker(content) {
		// The user stopped the turn (Esc, or a rejected tool use): a
		// log whose last answer this follows is incomplete by the
		// session rule, as a Codex turn_aborted is; a later answer
		// makes it ok again.
		out.Status(sdk.StatusIncomplete, sdk.S("the user interrupted the response"), sdk.LevelError)
	}
	// key is the user message's, opened with its first text block; no
	// closure over it (a closure and what it captures are allocations
	// on every line inside WebAssembly).
	key := ""
	slot := 0
	switch content.Kind() {
	case abi.KindString:
		key = n.userText(key, slot, content, scope, ts, origin, out)
	case abi.KindArray:
		// tool_use_result describes the line's single tool result; with
		// several results it cannot be attributed, so it is not used.
		results := 0
		it := content.Iter()
		for it.Next() {
			if it.Value().Get("type").Is("tool_result") {
				results++
			}
		}
		tur := n.get(v, kToolUseResult)
		if !tur.Exists() {
			tur = n.get(v, kToolUseResultCamel)
		}
		if results != 1 {
			tur = abi.Value{}
		}
		// stream-json 2.1.216+: why each result's call never ran, by id.
		meta := v.Get("tool_result_meta")
		it = content.Iter()
		for it.Next() {
			b := it.Value()
			bt := b.Get("type")
			switch {
			case bt.Is("tool_result"):
				n.toolResult(b, tur, meta, scope, ts, out)
			case bt.Is("text"):
				key = n.userText(key, slot, b.Get("text"), scope, ts, origin, out)
				slot++
			default:
				out.Unmapped(sdk.S("block/" + sdk.TypeName(bt)))
			}
		}
	}
	if key != "" {
		out.Close(sdk.S(key), sdk.MessageEnd{})
	}
}

// attachment handles a session log's attachment record: something the
// CLI adds to the conversation on its own (doc.go, Attachments). The
// class decides: a queued_command is input queued while the agent
// worked, for which the CLI writes no user record (the queue-operation
// that enqueued it is bookkeeping): a prompt the user typed (commandMode
// "prompt") is the user's message.user; the CLI's own (commandMode
// "task-notification": a background task ended) is injected context of
// one. A hook that failed, blocked or stopped the agent is a warning; the
// text the CLI gave the model for an attachment (its rendered content,
// 2.1.28x), or a hook's context, is injected context; the listings,
// reminders and mode notices in attachmentIgnored are ignored; anything
// else is counted unmapped as "attachment/<type>".
func (n *normalizer) attachment(v abi.Value, out *sdk.Out) {
	a := n.get(v, kAttachment)
	at := a.Get("type")
	name := sdk.Name(at)
	if name == "queued_command" {
		p := a.Get("prompt")
		switch {
		case p.Kind() == abi.KindString && !p.Is(""):
			origin := sdk.OriginPrompt
			if m := a.Get("commandMode"); m.Exists() && !m.Is("prompt") || sdk.HasPrefix(p.Raw(), `"<task-notification>`) {
				origin = sdk.OriginInjected
			}
			n.injected(v, p, abi.Value{}, origin, out)
		case p.Kind() != abi.KindArray || !n.queuedBlocks(v, a, p, out):
			out.Unmapped(sdk.S("attachment/queued_command"))
		}
		return
	}
	warned := n.hookWarning(a, name, out) || n.attachmentNotice(a, name, out)
	if r := n.get(v, kRendered); r.Kind() == abi.KindArray && n.injected(v, abi.Value{}, r, sdk.OriginInjected, out) {
		// 2.1.28x keeps the text the model was given for the
		// attachment: [{"content": "<system-reminder>..."}].
		return
	}
	switch {
	case warned:
		return
	case name == "hook_additional_context":
		// A hook's additionalContext (SessionStart, UserPromptSubmit,
		// PreToolUse, PostToolUse): text the model is given, as a list.
		c := a.Get("content")
		if c.Kind() == abi.KindArray {
			if n.injected(v, abi.Value{}, c, sdk.OriginInjected, out) {
				return
			}
		} else if c.Kind() == abi.KindString && !c.Is("") {
			n.injected(v, c, abi.Value{}, sdk.OriginInjected, out)
			return
		}
		n.ignore("attachment/hook_additional_context", out)
		return
	case name == "hook_success":
		// A SessionStart or UserPromptSubmit hook's stdout is added to
		// the model's context (Claude Code's hooks reference); any other
		// hook's is shown to the user only. Stdout that is a JSON object
		// is the hook's answer, which the CLI reads: what of it reaches
		// the model comes as hook_additional_context.
		c := a.Get("content")
		if ev := a.Get("hookEvent"); (ev.Is("SessionStart") || ev.Is("UserPromptSubmit")) && c.Kind() == abi.KindString && !c.Is("") && !sdk.HasPrefix(c.Raw(), `"{`) {
			n.injected(v, c, abi.Value{}, sdk.OriginInjected, out)
			return
		}
		n.ignore("attachment/hook_success", out)
		return
	}
	if known, wrote := n.attachmentContext(v, a, name, out); wrote {
		return
	} else if known {
		// A list the CLI sends nothing for when empty (no skills
		// invoked, no memories, an empty file).
		out.Ignored(sdk.S("attachment/" + name))
		return
	}
	if ig := attachmentIgnored(name); ig != "" {
		n.ignore(ig, out)
		return
	}
	out.Unmapped(sdk.S("attachment/" + sdk.TypeName(at)))
}

// attachmentContext writes, as one message.user of injected context in
// v's scope, the text an attachment of type name keeps that the CLI gives
// the model (doc.go, Attachments): a memory file's contents
// (nested_memory, relevant_memories), the skills invoked before a
// compaction (invoked_skills), the lines of a file changed outside the
// agent, by the user or a linter (edited_text_file), the lines the user
// selected in the IDE, a file and a directory listing read for the
// model, a plan file's contents, an MCP resource's text, a teammate's
// messages, a critical reminder, and an asynchronous hook's system
// message and additional context. Each text is written as the record
// keeps it, one block each; the CLI's wrapper around it (a header naming
// the file, a system-reminder tag) is not, being the CLI's rendering.
// It reports whether name is such a type and whether it wrote a message
// (not when the texts are empty or absent).
func (n *normalizer) attachmentContext(v, a abi.Value, name string, out *sdk.Out) (known, wrote bool) {
	var s, s2, list abi.Value
	field := "content"
	switch name {
	case "nested_memory":
		// content: {path, type, content} (a string in some builds).
		if s = a.Get("content"); s.Kind() == abi.KindObject {
			s = s.Get("content")
		}
	case "relevant_memories":
		list = a.Get("memories")
	case "invoked_skills":
		list = a.Get("skills")
	case "edited_text_file":
		s = a.Get("snippet")
	case "selected_lines_in_ide", "critical_system_reminder", "directory":
		s = a.Get("content")
	case "plan_file_reference":
		s = a.Get("planContent")
	case "file":
		// A file the user named (@path), read for the model: content is
		// the Read tool's output, {type, file: {filePath, content}};
		// an image or a PDF keeps no text.
		s = a.Get("content").Get("file").Get("content")
	case "mcp_resource":
		list, field = a.Get("content").Get("contents"), "text"
	case "teammate_mailbox":
		list, field = a.Get("messages"), "text"
	case "instructions":
		// The instruction files loaded for the model (the user's and
		// the project's CLAUDE.md, rules, the auto-memory MEMORY.md):
		// files [{path, type, content}], only those new or changed
		// after the first; one naming only files removed has none.
		list = a.Get("files")
	case "async_hook_response":
		r := a.Get("response")
		s, s2 = r.Get("systemMessage"), r.Get("hookSpecificOutput").Get("additionalContext")
	default:
		return false, false
	}
	w := textWriter{n: n, v: v, out: out}
	w.add(s)
	w.add(s2)
	it := list.Iter()
	for it.Next() {
		w.add(it.Value().Get(field))
	}
	return true, w.close()
}

// textWriter writes strings as the blocks of one message.user of
// injected context, opened at the first non-empty one.
type textWriter struct {
	n     *normalizer
	v     abi.Value
	out   *sdk.Out
	key   string
	scope string
	slot  int
}

// add writes t when it is a non-empty string.
func (w *textWriter) add(t abi.Value) {
	if t.Kind() != abi.KindString || t.Is("") {
		return
	}
	if w.key == "" {
		w.scope = w.n.scopeOf(w.v, w.out)
	}
	w.key = w.n.userText(w.key, w.slot, t, w.scope, w.n.get(w.v, kTimestamp), sdk.OriginInjected, w.out)
	w.slot++
}

// close closes the message, if one was opened, and reports whether it
// was.
func (w *textWriter) close() bool {
	if w.key == "" {
		return false
	}
	w.out.Close(sdk.S(w.key), sdk.MessageEnd{})
	return true
}

// attachmentNotice reports, as a warning of the step, an attachment that
// tells the user something about the run rather than giving the model
// text: a hook's system message (hook_system_message: shown to the user
// as "<hook> says: ...", never sent to the model) and the turn limit
// reached (max_turns_reached: the agent stopped because it ran maxTurns
// turns, which a session log records nowhere else), and a turn the
// repetition breaker ended (repetition_breaker: the same call made
// again and again with the same outcome). It reports whether a was one.
func (n *normalizer) attachmentNotice(a abi.Value, name string, out *sdk.Out) bool {
	switch name {
	case "hook_system_message":
		hook := a.Get("hookName").String()
		if hook == "" {
			hook = a.Get("hookEvent").String()
		}
		out.Warn("claude: hook " + sdk.Clip(hook, 64) + " says: " + sdk.Clip(a.Get("content").String(), 500))
	case "max_turns_reached":
		msg := "claude: the agent stopped: maximum number of turns reached"
		if m, ok := a.Get("maxTurns").Int(); ok {
			msg += " (" + strconv.FormatInt(m, 10) + ")"
		}
		out.Warn(msg)
	case "repetition_breaker":
		// The turn was ended because the model made the same call
		// (toolName) streak times in a row with the same outcome,
		// past the CLI's correction; cause says why.
		msg := "claude: the repetition breaker ended the turn"
		if tool := a.Get("toolName").String(); tool != "" {
			msg += ": " + sdk.Clip(tool, 64)
			if s, ok := a.Get("streak").Int(); ok {
				msg += " called " + strconv.FormatInt(s, 10) + " times in a row"
			}
			if o := a.Get("outcome").String(); o != "" {
				msg += " with the same " + sdk.Clip(o, 32)
			}
		}
		if c := a.Get("cause").String(); c != "" {
			msg += " (" + sdk.Clip(c, 300) + ")"
		}
		out.Warn(msg)
	default:
		return false
	}
	return true
}

// queuedBlocks writes a queued_command whose prompt is a list of content
// blocks (what a message typed while the agent worked becomes when it
// holds an image: [{"type":"text",...}, {"type":"image",...}]) as one
// message.user, its text blocks in order, of the origin its commandMode
// (and a task notification's text) gives, as a string prompt's; a block
// of another type (the image) is counted unmapped by its type, as in a
// user record. It reports whether it wrote a message.
func (n *normalizer) queuedBlocks(v, a, list abi.Value, out *sdk.Out) bool {
	origin := sdk.OriginPrompt
	if m := a.Get("commandMode"); m.Exists() && !m.Is("prompt") {
		origin = sdk.OriginInjected
	}
	it := list.Iter()
	for it.Next() {
		if t := it.Value().Get("text"); it.Value().Get("type").Is("text") && t.Kind() == abi.KindString {
			if sdk.HasPrefix(t.Raw(), `"<task-notification>`) {
				origin = sdk.OriginInjected
			}
			break
		}
	}
	return n.userTexts(v, abi.Value{}, list, true, origin, out)
}

// hookWarning reports a hook outcome attachment that says a hook failed,
// blocked or stopped the agent as a warning of the step, with the hook's
// name and what it said; it reports whether a was one. These are not
// errors of the provider (the run goes on, or ends as the hook chose),
// and a tool call a PreToolUse hook blocked is already denied by its
// result ("PreToolUse:<tool> hook error: ...", deniedText).
func (n *normalizer) hookWarning(a abi.Value, name string, out *sdk.Out) bool {
	var what, text string
	switch name {
	case "hook_blocking_error":
		// Exit code 2: the hook blocked what it guards (a tool call
		// before it runs, the end of a turn, a prompt) and its stderr
		// went to the model.
		what = "blocked (exit 2)"
		b := a.Get("blockingError")
		if b.Kind() == abi.KindObject {
			b = b.Get("blockingError")
		}
		text = b.String()
	case "hook_non_blocking_error":
		// Any other non-zero exit: shown to the user, the agent goes on.
		what = "failed"
		if c, ok := a.Get("exitCode").Int(); ok {
			what = "failed (exit " + strconv.FormatInt(c, 10) + ")"
		}
		text = a.Get("stderr").String()
	case "hook_error_during_execution":
		what, text = "could not run", a.Get("content").String()
	case "hook_cancelled":
		what = "was cancelled"
	case "hook_stopped_continuation":
		// continue: false: the hook stopped the agent.
		what, text = "stopped the agent", a.Get("message").String()
	default:
		return false
	}
	hook := a.Get("hookName").String()
	if hook == "" {
		hook = a.Get("hookEvent").String()
	}
	msg := "claude: hook " + sdk.Clip(hook, 64) + " " + what
	if text != "" {
		msg += ": " + sdk.Clip(text, 500)
	}
	out.Warn(msg)
	return true
}

// injected writes an attachment's text as a message.user of its scope:
// the string s, or each non-empty string of list (as is, or the content
// of an object item: the rendered form), one block each, with origin.
// It reports whether it wrote a message.
func (n *normalizer) injected(v, s, list abi.Value, origin string, out *sdk.Out) bool {
	return n.userTexts(v, s, list, false, origin, out)
}

// userTexts writes the string s, then each non-empty string of list, as
// one message.user of v's scope, one block each, with origin: list's
// items as they are, or an object item's content (the rendered form);
// with blocks, list is content blocks, each text block's text, any other
// block counted unmapped by its type. It reports whether it wrote a
// message.
func (n *normalizer) userTexts(v, s, list abi.Value, blocks bool, origin string, out *sdk.Out) bool {
	scope := n.scopeOf(v, out)
	ts := n.get(v, kTimestamp)
	key := ""
	if s.Exists() {
		key = n.userText(key, 0, s, scope, ts, origin, out)
	}
	slot := 0
	it := list.Iter()
	for it.Next() {
		x := it.Value()
		switch {
		case blocks && !x.Get("type").Is("text"):
			out.Unmapped(sdk.S("block/" + sdk.TypeName(x.Get("type"))))
			continue
		case blocks:
			x = x.Get("text")
		case x.Kind() == abi.KindObject:
			x = x.Get("content")
		}
		if x.Kind() != abi.KindString || x.Is("") {
			continue
		}
		key = n.userText(key, slot, x, scope, ts, origin, out)
		slot++
	}
	if key == "" {
		return false
	}
	out.Close(sdk.S(key), sdk.MessageEnd{})
	return true
}

// attachmentIgnored is the native type of an attachment the plugin
// ignores ("attachment/skill_listing"), "" for any other (see
// ignoredSystems for why a table).
func attachmentIgnored(name string) string {
	return listed(attachmentsIgnored[:], len("attachment/"), name)
}

// attachmentsIgnored lists the attachments, seen in real session logs,
// that carry no text the model was given in a form the log keeps, and no
// outcome: what the model may use (tool, skill, agent and MCP listings,
// allowed commands), the CLI's reminders and notices of a state it
// tracks itself (the todo and task lists the Todo and Task tools already
// recorded, the token budget, the date, plan and auto mode, a /goal's
// status, the user's companion), and the IDE's state and files the CLI
// read for the model (a file the user opened, diagnostics, a file's
// contents); written when the log keeps their rendered text.
var attachmentsIgnored = [...]string{
	"attachment/deferred_tools_delta", "attachment/skill_listing", "attachment/agent_listing_delta",
	"attachment/mcp_instructions_delta", "attachment/command_permissions", "attachment/task_reminder",
	"attachment/todo_reminder", "attachment/total_tokens_reminder", "attachment/date_change", "attachment/date",
	"attachment/auto_mode", "attachment/plan_mode", "attachment/plan_mode_exit", "attachment/goal_status",
	"attachment/companion_intro", "attachment/opened_file_in_ide", "attachment/diagnostics",
	"attachment/environment", "attachment/model",
	// What the model may use, and the CLI's notices built from state
	// (Claude Code's normalizeAttachmentForAPI renders them from their
	// fields): skills found for the task, a skill directory loaded, an
	// agent the user @-mentioned (the prompt holds the mention), the
	// output style, plan and auto mode entered again or left, a
	// background task's state after a compaction (its end has records of
	// its own), token, budget and output-token counters, reminders
	// (compaction, effort, workflow, plan verification), the files
	// and PDF named after a compaction, a memory directory changed, a
	// team's identity, a Read result's truncation banner.
	"attachment/skill_discovery", "attachment/dynamic_skill", "attachment/agent_mention", "attachment/output_style",
	"attachment/plan_mode_reentry", "attachment/auto_mode_exit", "attachment/task_status", "attachment/token_usage",
	"attachment/budget_usd", "attachment/output_token_usage", "attachment/compaction_reminder",
	"attachment/ultrathink_effort", "attachment/ultra_effort_enter", "attachment/ultra_effort_exit",
	"attachment/workflow_reminder", "attachment/workflow_keyword_request", "attachment/verify_plan_reminder",
	"attachment/compact_file_reference", "attachment/pdf_reference", "attachment/memory_update",
	"attachment/team_context", "attachment/read_truncation_notice",
	// A note that the user sees no more of a Bash result than a few
	// lines (sent after a long one, its sentence the CLI's), the mark
	// that a batching reminder was sent, and the UI's line for
	// teammates that shut down gracefully (N in-process teammates'
	// completed task_status, sent the model nothing).
	"attachment/bash_output_audience_note", "attachment/batching_reminder_sent",
	"attachment/teammate_shutdown_batch",
	// Sent to the model as nothing: a file read already, an edited
	// image, the SDK's structured output (the result carries it), a
	// hook's permission decision (the call's result says what it
	// decided), a hook that ran and said nothing the model sees.
	"attachment/already_read_file", "attachment/edited_image_file", "attachment/structured_output",
	"attachment/hook_permission_decision", "attachment/context_efficiency", "attachment/current_session_memory",
	"attachment/pen_mode_enter", "attachment/pen_mode_exit",
	// Bookkeeping of 2.1.28x without rendered text (a snapshot of the
	// prompt, the session's context, a remote session's change), and
	// types older builds wrote that the CLI now reads as nothing.
	"attachment/prompt_snapshot", "attachment/session_context", "attachment/remote_session_change",
	"attachment/autocheckpointing", "attachment/background_task_status", "attachment/todo",
	"attachment/task_progress", "attachment/ultramemory",
}

// userText writes text t as block slot of the user message key, opening
// the message first when key is "" (the line's first text); it returns
// the key.
func (n *normalizer) userText(key string, slot int, t abi.Value, scope string, ts abi.Value, origin string, out *sdk.Out) string {
	if key == "" {
		n.closeScopeMessages(scope, out)
		key = n.newKey('u')
		out.Open(sdk.S(key), sdk.Message{User: true, Scope: sdk.Opt(scope), Time: sdk.StringOf(ts)})
	}
	out.Block(sdk.S(key), slot, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(t), Origin: origin})
	if n.format == fmtSessionLog && sdk.HasPrefix(t.Raw(), `"<task-notification>`) {
		n.taskNotice(sdk.Text(t).String(), out)
	}
	return key
}

// taskNotice reads the notice a session log's user record (or a queued
// command) gives the model when a background task ended
// (<task-notification> with <task-id>, <status>, <summary>): a task
// that did not complete (an agent or a shell killed, stopped or failed)
// is a warning of the step. The log holds no other record of it: the
// task's own file, a sub-agent's, ends with its log whatever happened,
// and stream-json's system/task_notification, which ends the sub-agent's
// scope with its status, is not in a session log.
func (n *normalizer) taskNotice(text string, out *sdk.Out) {
	status := tagText(text, "status")
	if status == "" || status == "completed" {
		return
	}
	w := "claude: background task"
	if id := tagText(text, "task-id"); id != "" {
		w += " " + id
	}
	w += " ended " + status
	if sum := tagText(text, "summary"); sum != "" {
		w += ": " + sdk.Clip(sum, 300)
	}
	out.Warn(w)
}

// tagText is the text between the first <tag> and the </tag> after it
// in s, "" when s has none.
func tagText(s, tag string) string {
	i := strings.Index(s, "<"+tag+">")
	if i < 0 {
		return ""
	}
	s = s[i+len(tag)+2:]
	j := strings.Index(s, "</"+tag+">")
	if j < 0 {
		return ""
	}
	return strings.TrimSpace(s[:j])
}

// newKey returns a new synthetic message key, prefix ':' and a number
// ("u:7"), as one allocation (strconv.Itoa and a concatenation are two).
func (n *normalizer) newKey(prefix byte) string {
	n.nextID++
	var b [24]byte
	i := len(b)
	for v := n.nextID; ; v /= 10 {
		i--
		b[i] = byte('0' + v%10)
		if v < 10 {
			break
		}
	}
	i -= 2
	b[i], b[i+1] = prefix, ':'
	return string(b[i:])
}

// origin tells the user's prompt from context the CLI injected.
func (n *normalizer) origin(v, content abi.Value) string {
	if n.get(v, kIsMeta).Truthy() || n.get(v, kIsSynthetic).Truthy() || n.get(v, kIsCompactSummary).Truthy() {
		return sdk.OriginInjected
	}
	t := content
	if content.Kind() == abi.KindArray && content.Len() == 1 {
		t = content.Index(0).Get("text")
	}
	if t.Kind() == abi.KindString {
		raw := t.Raw()
		if sdk.HasPrefix(raw, `"<command-name>`) || sdk.HasPrefix(raw, `"<local-command-`) || sdk.HasPrefix(raw, `"<command-message>`) ||
			sdk.HasPrefix(raw, `"[Request interrupted by user`) || sdk.HasPrefix(raw, `"<task-notification>`) {
			// The CLI's echo of a local command, its marker of an
			// interruption, its notice that a background task (an agent,
			// a shell) ended: not words the user typed.
			return sdk.OriginInjected
		}
	}
	return sdk.OriginPrompt
}

// interruptMarker reports whether a user record's content is Claude
// Code's marker of an interruption ("[Request interrupted by user]",
// "... for tool use]"): a string, or one text block.
func interruptMarker(content abi.Value) bool {
	t := content
	if content.Kind() == abi.KindArray && content.Len() == 1 {
		t = content.Index(0).Get("text")
	}
	return t.Kind() == abi.KindString && sdk.HasPrefix(t.Raw(), `"[Request interrupted by user`)
}

// apiMessage handles an Anthropic Messages response object.
func (n *normalizer) apiMessage(v abi.Value, out *sdk.Out) {
	id, known := n.idOf(n.get(v, kId))
	m := n.msgFor(id, known, "", out)
	n.header(m, n.get(v, kModel), abi.Value{}, out)
	it := n.get(v, kContent).Iter()
	for it.Next() {
		n.snapshot(m, it.Value(), abi.Value{}, out)
	}
	m.mergeUsage(n.get(v, kUsage))
	if sr := n.get(v, kStopReason); sr.Kind() == abi.KindString && !sr.Is(m.stop) {
		m.stop = sr.String()
	}
	n.refusal = refusalDetails(v.Get("stop_details"))
	if n.get(v, kRole).Is("assistant") {
		n.close(m, out)
		if n.format == fmtMessages || n.format == fmtBatch {
			n.apiStatus(m.stop, out)
		}
	}
}

// refusalDetails renders a response's stop_details (type refusal: the
// policy category and a human-readable explanation) as the tail of the
// refusal's error text, "" when it says neither.
func refusalDetails(d abi.Value) string {
	if !d.Get("type").Is("refusal") {
		return ""
	}
	s := ""
	if c := d.Get("category").String(); c != "" {
		s = ", category " + sdk.Clip(c, 40)
	}
	if e := d.Get("explanation").String(); e != "" {
		s += ": " + sdk.Clip(e, 500)
	}
	return s
}

// apiStatus reports the terminal status of an Anthropic API response
// that ended with stop reason stop: an answer cut at the token or
// context limit is incomplete (as OpenAI's length and incomplete are), a
// refusal by the provider's classifier is an error (as OpenAI's
// content_filter), a turn the server paused (pause_turn: a long server
// tool loop; compaction: pause_after_compaction stopped after the
// summary) is incomplete, since the client is to send it back for the
// model to go on; anything else is ok.
func (n *normalizer) apiStatus(stop string, out *sdk.Out) {
	switch stop {
	case "max_tokens", "model_context_window_exceeded":
		out.Status(sdk.StatusIncomplete, sdk.S("output cut at the limit (stop_reason "+stop+")"), sdk.LevelTerminal)
	case "pause_turn", "compaction":
		out.Status(sdk.StatusIncomplete, sdk.S("turn paused by the server, to be continued by a new request (stop_reason "+stop+")"), sdk.LevelTerminal)
	case "refusal":
		out.Status(sdk.StatusError, sdk.S("refusal: the provider stopped the output (stop_reason refusal)"+n.refusal), sdk.LevelTerminal)
	default:
		out.Status(sdk.StatusOK, sdk.Str{}, sdk.LevelTerminal)
	}
}

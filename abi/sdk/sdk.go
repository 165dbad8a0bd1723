package sdk

import (
	"unsafe"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/wire"
)

// sdkVersion names this SDK in manifests.
const sdkVersion = "twasm-go-sdk/1.0"

// Plugin is what a plugin registers: its manifest and a constructor of
// per-stream normalizers.
type Plugin struct {
	Manifest abi.Manifest
	// New returns a fresh normalizer for one stream.
	New func(opts abi.BeginOptions) Normalizer
	// Keys, optional, are the object keys the normalizer reads (at most
	// 255 distinct names). They go into the manifest, the host
	// marks them in every line's tape, and Value.Get and Value.Lookup
	// then match them by number instead of by their bytes: with Lookup on
	// this very set, a member costs one array store. Keys not listed
	// still work, at the usual cost.
	Keys *abi.KeySet
	// Reassemble, optional, has the SDK reassemble JSON documents printed
	// over several lines (a pretty-printed response): a line that is not
	// JSON and whose first non-blank byte is '{' or '[' starts one, and
	// the lines that follow are added until its brackets balance outside
	// strings, or until an unindented JSON line, which cannot be the
	// inside of one, arrives. A document that parses reaches Line as one
	// line (its Raw the document's text, its No the closing line's, or 0
	// at the end of the stream), its lines declared ignored
	// ("json_document"); the lines of one that does not are counted
	// unmapped ("non_json"). The document, and every span made from it,
	// is valid until the next one starts: call [Str.Keep] to hold a value
	// longer.
	Reassemble bool
}

// Normalizer turns one stream of raw provider output into records.
type Normalizer interface {
	// Line handles one raw line (without its LF). An error is reported to
	// the host as a rejected line: records emitted before it stand and
	// the stream goes on.
	Line(l *Line, out *Out) error
	// End is called once at the end of the stream: flush what is pending.
	End(out *Out) error
}

// Line is one raw line of the stream.
type Line struct {
	// No is the 1-based line number in the raw stream.
	No int
	// Raw is the line without its LF. It aliases the host's input and is
	// valid only during the Line call.
	Raw []byte
	doc *abi.Doc
}

// JSON returns the root value when the line is one JSON object or array
// (missing otherwise).
func (l *Line) JSON() abi.Value { return l.doc.Root() }

// Parse indexes a JSON document the plugin assembled itself (a
// pretty-printed object spread over lines, say). Strings made from it are
// literals. ok is false when buf is not one JSON object or array.
func Parse(buf []byte) (doc *abi.Doc, ok bool) {
	toks, ok := wire.BuildTape(nil, buf)
	if !ok {
		return nil, false
	}
	return &abi.Doc{Line: buf, Toks: toks}, true
}

// ParseText is Parse of the text v holds (the bytes of v.String(): a
// string's value, any other value's JSON), copied once.
func ParseText(v abi.Value) (doc *abi.Doc, ok bool) {
	return Parse(v.AppendText(make([]byte, 0, len(v.Raw()))))
}

// Str is a string field value: unset, a literal, or a span of the current
// input. The zero Str is unset: the field is not written.
type Str struct {
	lit  string
	doc  *abi.Doc // span: the document it points into
	from int32    // span: offsets into doc.Line (lines are < 2 GiB)
	to   int32
	gen  uint32 // span: doc.Gen when it was made
	mode wire.SpanMode
	set  bool
}

// span is the Str of bytes [from, to) of v's document.
func span(d *abi.Doc, from, to int, mode wire.SpanMode) Str {
	return Str{doc: d, from: int32(from), to: int32(to), gen: d.Gen, mode: mode, set: true}
}

// S returns a literal Str (set, even when s is empty).
func S(s string) Str { return Str{lit: s, set: true} }

// Opt returns a literal Str for an optional field: unset when s is empty
// (the field is not written), else [S](s).
func Opt(s string) Str { return Str{lit: s, set: s != ""} }

// Text returns the text of v: the contents of a string (unescaped by the
// host), or the JSON text of any other value. Missing or null gives an
// unset Str.
func Text(v abi.Value) Str {
	switch v.Kind() {
	case abi.KindInvalid, abi.KindNull:
		return Str{}
	case abi.KindString:
		from, to := v.Span()
		mode := wire.SpanBytes
		if v.Escaped() {
			mode = wire.SpanString
		}
		return span(v.Doc(), from+1, to-1, mode)
	default:
		from, to := v.Span()
		return span(v.Doc(), from, to, wire.SpanBytes)
	}
}

// JSON returns v as a JSON value. A string that holds JSON (tool arguments
// sent as a string) becomes that JSON; a string that does not stays a
// string. Missing gives an unset Str.
func JSON(v abi.Value) Str {
	switch v.Kind() {
	case abi.KindInvalid:
		return Str{}
	case abi.KindString:
		from, to := v.Span()
		return span(v.Doc(), from+1, to-1, wire.SpanJSONString)
	default:
		from, to := v.Span()
		return span(v.Doc(), from, to, wire.SpanJSON)
	}
}

// RawJSON returns a literal JSON value the plugin built (a tool's input
// assembled from text); the host checks that it is JSON.
func RawJSON(s string) Str { return Str{lit: s, mode: wire.SpanJSON, set: true} }

// IsSet reports whether s holds a value (possibly empty).
func (s Str) IsSet() bool { return s.set }

// IsEmpty reports whether s is unset or the empty string.
func (s Str) IsEmpty() bool {
	return !s.set || s.doc == nil && s.lit == "" || s.doc != nil && s.to <= s.from
}

// String returns the value as a Go string (allocating; spans in string
// mode are unescaped).
func (s Str) String() string {
	if s.doc == nil {
		return s.lit
	}
	raw := s.raw()
	if s.mode == wire.SpanString || s.mode == wire.SpanJSONString {
		// Unescaping never lengthens: one allocation, which the string
		// then owns.
		if b, ok := wire.Unescape(make([]byte, 0, len(raw)), raw); ok {
			return unsafe.String(unsafe.SliceData(b), len(b))
		}
	}
	return string(raw)
}

// Keep returns s as a literal that stays valid after the current call.
func (s Str) Keep() Str {
	if s.doc == nil {
		return s
	}
	switch s.mode {
	case wire.SpanJSON:
		return Str{lit: string(s.raw()), mode: wire.SpanJSON, set: true}
	case wire.SpanJSONString:
		text := s.String()
		if _, isJSON := wire.BuildTape(nil, []byte(text)); isJSON {
			return Str{lit: text, mode: wire.SpanJSON, set: true}
		}
		return Str{lit: text, set: true}
	}
	return Str{lit: s.String(), set: true}
}

func (s Str) raw() []byte {
	if s.doc.Line == nil || s.doc.Gen != s.gen {
		panic("twasm sdk: a span of an earlier line was used after its Line call returned; call Keep() to hold a value across lines")
	}
	return s.doc.Line[s.from:s.to]
}

// Int is an optional integer field. The zero Int is unset.
type Int struct {
	v   int64
	set bool
}

// N returns a set Int.
func N(v int64) Int { return Int{v: v, set: true} }

// IntOf returns v as an Int: set when v is a number (or a string holding
// one).
func IntOf(v abi.Value) Int {
	n, ok := v.Int()
	return Int{v: n, set: ok}
}

// Value returns the value and whether it is set.
func (i Int) Value() (int64, bool) { return i.v, i.set }

// Plus returns the sum of the set figures, set when any is.
func (i Int) Plus(o Int) Int {
	if !o.set {
		return i
	}
	if !i.set {
		return o
	}
	return N(i.v + o.v)
}

// Usage is a token count; unset figures are left out, never taken as 0.
// The zero Usage states no figure (compare with Usage{}).
//
// Fill what the provider states. A provider that counts every input token
// (OpenAI, Codex, Gemini, Copilot) fills Input and the cached parts; one
// that states the uncached input apart (Anthropic, Pi, OpenCode, Cline)
// builds its figures with Split. Uncached left unset is derived when the
// usage is reported: Input less CacheRead and CacheWrite (a provider with
// no cache write, OpenAI's, states none).
type Usage struct {
	Input      Int // every input token, cached or not
	CacheRead  Int // the part of Input read from a prompt cache
	CacheWrite Int // the part of Input written to a prompt cache
	Output     Int // every output token, reasoning included
	Reasoning  Int // the reasoning part of Output
	// Uncached is the part of Input neither read from nor written to a
	// cache (ABI 1.5): what the providers' consoles call "input".
	Uncached Int
	// CacheWrite1h is the part of CacheWrite written at a one-hour
	// lifetime (ABI 1.5; Anthropic's cache_creation.ephemeral_1h_input_tokens).
	CacheWrite1h Int
	// Total is the total the provider states, as stated (ABI 1.5).
	Total Int
	// Tier is the service tier the provider states it served the
	// request at, as it names it (ABI 1.9: OpenAI's service_tier,
	// Anthropic's usage.service_tier): which rates bill the tokens.
	// Leave it "" where the provider states none; never write a default.
	// A literal, not a span: a plugin keeps a message's usage across
	// lines (TierOf reads one).
	Tier string
}

// TierMixed is the tier of a sum of usages that do not all state the
// same tier (Plus): the host's transcript.ServiceTierMixed.
const TierMixed = "mixed"

// TierOf is the service tier v states (a JSON string), "" when it
// states none (missing, null, empty). The tiers the providers name are
// returned as constants; any other is copied.
func TierOf(v abi.Value) string {
	if v.Kind() != abi.KindString {
		return ""
	}
	for _, t := range knownTiers {
		if v.Is(t) {
			return t
		}
	}
	return v.String()
}

// knownTiers are the service tiers OpenAI and Anthropic name in their
// responses.
var knownTiers = [...]string{"default", "standard", "auto", "flex", "priority", "scale", "batch"}

// Split is the usage of a provider that states the uncached input apart
// from the cache read and write: Input is their sum (set when any is),
// Uncached the uncached figure as stated.
func Split(uncached, cacheRead, cacheWrite Int) Usage {
	return Usage{Input: uncached.Plus(cacheRead).Plus(cacheWrite), Uncached: uncached, CacheRead: cacheRead, CacheWrite: cacheWrite}
}

// isZero reports whether no figure is set (an unset Int is always the
// zero Int). The tier is not a figure: a usage of a tier alone counts no
// token, and is not reported.
func (u Usage) isZero() bool {
	u.Tier = ""
	return u == Usage{}
}

// uncached is Uncached, else derived from Input (see Usage).
func (u Usage) uncached() Int {
	if u.Uncached.set || !u.Input.set {
		return u.Uncached
	}
	n := u.Input.v - u.CacheRead.v - u.CacheWrite.v
	if n < 0 {
		// Parts larger than the whole: the provider's figures do not
		// say what was uncached.
		return Int{}
	}
	return N(n)
}

// OutputUnstated returns u with its output left out when its stated total
// counts tokens beyond its input and output, and how many (0, u as it is,
// when the total adds up or one of the three is not stated). Such a
// provider states the answer's tokens alone and counts the rest (a
// model's thoughts, which it states nowhere apart) in the total only:
// every output token, reasoning included, is then not stated, and the
// answer's part is not passed off as the whole.
func (u Usage) OutputUnstated() (Usage, int64) {
	total, okT := u.Total.Value()
	in, okI := u.Input.Value()
	o, okO := u.Output.Value()
	if !okT || !okI || !okO || total <= in+o {
		return u, 0
	}
	u.Output = Int{}
	return u, total - in - o
}

// Plus returns the figure-by-figure sum of u and o; a figure is set when
// either states it (a stated 0 stays a stated 0). The sum's tier is the
// one both state (or the one of a side that states nothing at all),
// else TierMixed, as the host sums a step's usage (a side with no
// figure adds nothing, its tier neither).
func (u Usage) Plus(o Usage) Usage {
	tier := u.Tier
	switch {
	case o.isZero():
	case u.isZero() && u.Tier == "":
		tier = o.Tier
	case u.Tier != o.Tier:
		tier = TierMixed
	}
	return Usage{
		Tier:         tier,
		Input:        u.Input.Plus(o.Input),
		CacheRead:    u.CacheRead.Plus(o.CacheRead),
		CacheWrite:   u.CacheWrite.Plus(o.CacheWrite),
		Output:       u.Output.Plus(o.Output),
		Reasoning:    u.Reasoning.Plus(o.Reasoning),
		Uncached:     u.Uncached.Plus(o.Uncached),
		CacheWrite1h: u.CacheWrite1h.Plus(o.CacheWrite1h),
		Total:        u.Total.Plus(o.Total),
	}
}

// Block types, origins and statuses, as strings so that the SDK does not pull
// the transcript package into plugins.
const (
	BlockText       = "text"
	BlockThinking   = "thinking"
	BlockToolUse    = "tool_use"
	BlockToolResult = "tool_result"
	BlockCommand    = "command"
	BlockStream     = "stream"

	OriginPrompt       = "prompt"
	OriginSystemPrompt = "system_prompt"
	OriginInjected     = "injected_context"

	StatusOK         = "ok"
	StatusError      = "error"
	StatusIncomplete = "incomplete"
)

// Modes of Out.Usage and Out.Cost.
const (
	ModeAdd = wire.ModeAdd // add to the step total (per-turn figures)
	ModeSet = wire.ModeSet // replace the step total (cumulative counters)
)

// Levels of Out.Status, highest wins (spec section 6.7).
const (
	LevelError    = wire.LevelError    // an error field or a non-fatal error line
	LevelTerminal = wire.LevelTerminal // the provider's terminal event
)

// quote appends s as a JSON string (for the manifest; no encoding/json).
func quote(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

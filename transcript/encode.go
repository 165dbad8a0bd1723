package transcript

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"

	"github.com/twasm/twasm/internal/jsonstr"
	"github.com/twasm/twasm/internal/vocab"
)

// ErrInvalidEvent is wrapped by every error that rejects an event a writer
// tried to emit: a value outside the vocabularies, a payload that does not
// fit the type, a malformed run id or path, or invalid embedded JSON.
var ErrInvalidEvent = errors.New("invalid event")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidEvent, fmt.Sprintf(format, args...))
}

// validate checks e against the vocabularies and the envelope rules without
// encoding it.
func (e *Event) validate() error {
	_, err := AppendEvent(nil, e)
	return err
}

// AppendEvent appends e as one JSON line (no trailing LF) to dst;
// AppendEvent(nil, e) encodes it on its own. It fails
// with an error wrapping [ErrInvalidEvent] when e is not a valid event;
// dst is then returned unchanged.
func AppendEvent(dst []byte, e *Event) ([]byte, error) {
	orig := len(dst)
	out, err := appendEvent(dst, e)
	if err != nil {
		return dst[:orig], err
	}
	return out, nil
}

func appendEvent(b []byte, e *Event) ([]byte, error) {
	if !e.Type.valid() {
		return b, invalid("event type %q is not in the vocabulary", e.Type)
	}
	if e.RunID == "" {
		return b, invalid("%s: empty run_id", e.Type)
	}
	if !vocab.Path(e.Path) {
		return b, invalid("%s: malformed path %q", e.Type, e.Path)
	}
	if e.Iteration < 0 {
		return b, invalid("%s: negative iteration", e.Type)
	}
	b = append(b, `{"seq":`...)
	b = strconv.AppendUint(b, e.Seq, 10)
	b = append(b, `,"run_id":`...)
	b = jsonstr.AppendQuoted(b, e.RunID)
	if e.ParentRunID != "" {
		b = append(b, `,"parent_run_id":`...)
		b = jsonstr.AppendQuoted(b, e.ParentRunID)
	}
	if e.ChildRunID != "" {
		b = append(b, `,"child_run_id":`...)
		b = jsonstr.AppendQuoted(b, e.ChildRunID)
	}
	b = append(b, `,"type":`...)
	b = appendWord(b, string(e.Type))
	b = append(b, `,"path":`...)
	b = jsonstr.AppendQuoted(b, e.Path)
	b = append(b, `,"iteration":`...)
	b = strconv.AppendInt(b, int64(e.Iteration), 10)
	b = append(b, `,"timestamp":"`...)
	var sec int64 // the zero Time is written as the Unix epoch
	var nsec int
	if ts := e.Timestamp; !ts.IsZero() {
		sec, nsec = ts.Unix(), ts.Nanosecond()
	}
	// RFC 3339 has four-digit years only; outside them the line would not
	// read back.
	if sec < minTimestamp || sec >= maxTimestamp {
		return b, invalid("%s: timestamp year %d is outside 0000..9999", e.Type, e.Timestamp.UTC().Year())
	}
	b = appendTimestamp(b, sec, nsec)
	b = append(b, `","payload":`...)
	var err error
	switch e.Type.payloadKind() {
	case payloadStep:
		p, ok := e.Payload.(*StepPayload)
		if !ok || p == nil {
			return b, invalid("%s needs a *StepPayload, got %T", e.Type, e.Payload)
		}
		b, err = appendStep(b, e.Type, p)
	case payloadMessage:
		p, ok := e.Payload.(*MessagePayload)
		if !ok || p == nil {
			return b, invalid("%s needs a *MessagePayload, got %T", e.Type, e.Payload)
		}
		b, err = appendMessage(b, e.Type, p)
	case payloadTool:
		p, ok := e.Payload.(*ToolPayload)
		if !ok || p == nil {
			return b, invalid("%s needs a *ToolPayload, got %T", e.Type, e.Payload)
		}
		b, err = appendTool(b, e.Type, p)
	}
	if err != nil {
		return b, err
	}
	b, err = appendExtra(b, e.Extra)
	if err != nil {
		return b, err
	}
	return append(b, '}'), nil
}

// The Unix times of 0000-01-01T00:00:00Z and 10000-01-01T00:00:00Z: a
// timestamp is in [minTimestamp, maxTimestamp). minTimestamp is a whole
// number of days before the epoch (719528).
const (
	minTimestamp = -62167219200
	maxTimestamp = 253402300800
)

// appendTimestamp appends the UTC time sec (Unix seconds in
// [minTimestamp, maxTimestamp)) and nsec (nanoseconds, 0..999999999) as
// vocab.TimeLayout does, truncated to the millisecond as
// time.Time.AppendFormat does. It works from the seconds alone, with the
// civil-from-days algorithm of Howard Hinnant's "chrono-Compatible
// Low-Level Date Algorithms", rather than time.Time's Date, Clock and
// layout interpreter, which cost more than the rest of a small event's
// encoding.
func appendTimestamp(b []byte, sec int64, nsec int) []byte {
	// 32-bit unsigned arithmetic throughout: every quantity fits, and
	// divisions by constants become cheap multiplications.
	s := uint64(sec - minTimestamp)
	day, rem := uint32(s/86400), uint32(s%86400)
	// Days since -0400-03-01: 400 years (146097 days) before 0000-03-01,
	// which is day 60 of year 0 (a leap year), so the count is never
	// negative. A year counted from March ends with the leap day.
	z := day + 146097 - 60
	era := z / 146097
	doe := z - era*146097                                  // day of the era, 0..146096
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // year of the era, 0..399
	doy := doe - (365*yoe + yoe/4 - yoe/100)               // day of the March-based year, 0..365
	mp := (5*doy + 2) / 153                                // month from March, 0..11
	dd := doy - (153*mp+2)/5 + 1
	year, month := yoe+era*400-400, mp+3 // era >= 1
	if mp >= 10 {
		year, month = year+1, mp-9
	}
	ms := uint32(nsec) / 1e6
	b = append(b, digits2[year/100*2], digits2[year/100*2+1], digits2[year%100*2], digits2[year%100*2+1], '-')
	b = append(b, digits2[month*2], digits2[month*2+1], '-', digits2[dd*2], digits2[dd*2+1], 'T')
	hour, minute, second := rem/3600, rem/60%60, rem%60
	b = append(b, digits2[hour*2], digits2[hour*2+1], ':', digits2[minute*2], digits2[minute*2+1], ':',
		digits2[second*2], digits2[second*2+1], '.')
	return append(b, byte('0'+ms/100), digits2[ms%100*2], digits2[ms%100*2+1], 'Z')
}

// digits2 holds the two decimal digits of 0..99 at [2n, 2n+2).
const digits2 = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

func appendStep(b []byte, t EventType, p *StepPayload) ([]byte, error) {
	if p.Kind != "" && !p.Kind.Valid() {
		return b, invalid("%s: step kind %q is not valid", t, p.Kind)
	}
	if p.Kind == "" && (t == StepStarted || t == StepCompleted) {
		return b, invalid("%s: empty step kind", t)
	}
	if !vocab.Status(p.Status) {
		return b, invalid("%s: status %q is not in the vocabulary", t, p.Status)
	}
	b = append(b, `{"name":`...)
	b = jsonstr.AppendQuoted(b, p.Name)
	b = append(b, `,"kind":`...)
	b = jsonstr.AppendQuoted(b, string(p.Kind))
	b = appendStr(b, "status", p.Status)
	b = appendStr(b, "error", p.Error)
	var err error
	if len(p.Result) > 0 {
		b = append(b, `,"result":`...)
		if b, err = appendRaw(b, p.Result, t, "result"); err != nil {
			return b, err
		}
	}
	b = appendStr(b, "schema", p.Schema)
	if p.Producer != nil {
		b = append(b, `,"producer":{"name":`...)
		b = jsonstr.AppendQuoted(b, p.Producer.Name)
		b = appendStr(b, "version", p.Producer.Version)
		b = append(b, '}')
	}
	if p.Attempt != 0 {
		b = append(b, `,"attempt":`...)
		b = strconv.AppendInt(b, int64(p.Attempt), 10)
	}
	if b, err = appendExtra(b, p.Extra); err != nil {
		return b, err
	}
	return append(b, '}'), nil
}

func appendMessage(b []byte, t EventType, p *MessagePayload) ([]byte, error) {
	b = append(b, `{"role":`...)
	b = jsonstr.AppendQuoted(b, p.Role)
	b = append(b, `,"blocks":[`...)
	var err error
	for i := range p.Blocks {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = appendBlock(b, t, i, &p.Blocks[i]); err != nil {
			return b, err
		}
	}
	b = append(b, ']')
	b = appendStr(b, "model", p.Model)
	b = appendStr(b, "id", p.ID)
	b = appendStr(b, "stop_reason", p.StopReason)
	if !p.Usage.IsZero() {
		b = append(b, `,"usage":`...)
		b = appendUsage(b, p.Usage)
	}
	if p.RawLine > 0 {
		b = append(b, `,"raw_line":`...)
		b = strconv.AppendInt(b, int64(p.RawLine), 10)
	}
	if b, err = appendExtra(b, p.Extra); err != nil {
		return b, err
	}
	return append(b, '}'), nil
}

func appendBlock(b []byte, t EventType, i int, k *Block) ([]byte, error) {
	if !k.Type.valid() {
		return b, invalid("%s: block %d: type %q is not in the vocabulary", t, i, k.Type)
	}
	if !k.Fidelity.valid() {
		return b, invalid("%s: block %d: fidelity %q is not in the vocabulary", t, i, k.Fidelity)
	}
	if !k.Origin.valid() {
		return b, invalid("%s: block %d: origin %q is not in the vocabulary", t, i, k.Origin)
	}
	b = append(b, `{"type":`...)
	b = appendWord(b, string(k.Type))
	b = append(b, `,"fidelity":`...)
	b = appendWord(b, string(k.Fidelity))
	always := func(b []byte, name, v string, required bool) []byte {
		if required {
			return appendMember(b, name, v)
		}
		return appendStr(b, name, v)
	}
	b = always(b, "text", k.Text, k.Type == BlockText)
	b = always(b, "thinking", k.Thinking, k.Type == BlockThinking)
	if k.Redacted {
		b = append(b, `,"redacted":true`...)
	}
	b = always(b, "tool_name", k.ToolName, k.Type == BlockToolUse)
	b = always(b, "tool_id", k.ToolID, k.Type == BlockToolUse || k.Type == BlockToolResult)
	var err error
	if len(k.ToolInput) > 0 {
		b = append(b, `,"tool_input":`...)
		if b, err = appendRaw(b, k.ToolInput, t, "tool_input"); err != nil {
			return b, err
		}
	} else if k.Type == BlockToolUse {
		b = append(b, `,"tool_input":{}`...)
	}
	b = always(b, "tool_content", k.ToolContent, k.Type == BlockToolResult)
	if k.IsError {
		b = append(b, `,"is_error":true`...)
	}
	b = always(b, "command", k.Command, k.Type == BlockCommand)
	b = always(b, "chunk", k.Chunk, k.Type == BlockStream)
	b = appendStr(b, "origin", string(k.Origin))
	if b, err = appendExtra(b, k.Extra); err != nil {
		return b, err
	}
	return append(b, '}'), nil
}

func appendTool(b []byte, t EventType, p *ToolPayload) ([]byte, error) {
	if !p.Fidelity.valid() {
		return b, invalid("%s: fidelity %q is not in the vocabulary", t, p.Fidelity)
	}
	if !p.Kind.valid() {
		return b, invalid("%s: tool kind %q is not in the vocabulary", t, p.Kind)
	}
	if p.CallID == "" {
		return b, invalid("%s: empty call_id", t)
	}
	if !validToolStatus(p.Status) {
		return b, invalid("%s: status %q is not ok, error, denied or cancelled", t, p.Status)
	}
	b = append(b, `{"name":`...)
	b = jsonstr.AppendQuoted(b, p.Name)
	b = append(b, `,"call_id":`...)
	b = jsonstr.AppendQuoted(b, p.CallID)
	var err error
	if len(p.Input) > 0 {
		b = append(b, `,"input":`...)
		if b, err = appendRaw(b, p.Input, t, "input"); err != nil {
			return b, err
		}
	} else if t == ToolCall {
		b = append(b, `,"input":{}`...)
	}
	if p.Output != "" || p.HasOutput {
		b = append(b, `,"output":`...)
		b = jsonstr.AppendQuoted(b, p.Output)
	}
	b = appendStr(b, "error", p.Error)
	b = append(b, `,"fidelity":`...)
	b = appendWord(b, string(p.Fidelity))
	b = appendStr(b, "kind", string(p.Kind))
	b = appendStr(b, "command", p.Command)
	if p.ExitCode != nil {
		b = append(b, `,"exit_code":`...)
		b = strconv.AppendInt(b, int64(*p.ExitCode), 10)
	}
	b = appendStr(b, "status", p.Status)
	if p.RawLine > 0 {
		b = append(b, `,"raw_line":`...)
		b = strconv.AppendInt(b, int64(p.RawLine), 10)
	}
	if b, err = appendExtra(b, p.Extra); err != nil {
		return b, err
	}
	return append(b, '}'), nil
}

// appendUsage appends u as a JSON object with only the figures that are
// set, and its service tier when it states one.
func appendUsage(b []byte, u *Usage) []byte {
	b = append(b, '{')
	first := true
	put := func(name string, v *int64) {
		if v == nil {
			return
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, '"', ':')
		b = strconv.AppendInt(b, *v, 10)
	}
	if u != nil {
		for i, f := range u.figures() {
			put(usageNames[i], *f)
		}
		if u.ServiceTier != "" {
			if first {
				// A tier alone: the object has no member before it.
				b = append(b, `"service_tier":`...)
				b = jsonstr.AppendQuoted(b, u.ServiceTier)
			} else {
				b = appendMember(b, "service_tier", u.ServiceTier)
			}
		}
	}
	return append(b, '}')
}

// appendWord appends a word of a closed vocabulary that the caller has
// checked (an event or block type, a fidelity) as a JSON string: every
// such word is plain ASCII, which needs no escaping.
func appendWord(b []byte, w string) []byte {
	b = append(b, '"')
	b = append(b, w...)
	return append(b, '"')
}

// appendStr appends the member name: v unless v is empty. It is small
// enough to be inlined, so the many empty optional fields cost no call.
func appendStr(b []byte, name, v string) []byte {
	if v == "" {
		return b
	}
	return appendMember(b, name, v)
}

// appendMember appends the member name: v. It is not inlined, which
// keeps appendStr small enough to be.
//
//go:noinline
func appendMember(b []byte, name, v string) []byte {
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return jsonstr.AppendQuoted(b, v)
}

func appendRaw(b, raw []byte, t EventType, field string) ([]byte, error) {
	out, err := jsonstr.AppendCompactJSON(b, raw)
	if err != nil {
		return b, invalid("%s: field %s: %v", t, field, err)
	}
	return out, nil
}

// appendExtra appends the members of extra, sorted by name. Small enough
// to be inlined, it costs no call when there are none, as usual.
func appendExtra(b []byte, extra map[string]json.RawMessage) ([]byte, error) {
	if len(extra) == 0 {
		return b, nil
	}
	return appendExtraSorted(b, extra)
}

func appendExtraSorted(b []byte, extra map[string]json.RawMessage) ([]byte, error) {
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var err error
	for _, k := range keys {
		b = append(b, ',')
		b = jsonstr.AppendQuoted(b, k)
		b = append(b, ':')
		if b, err = jsonstr.AppendCompactJSON(b, extra[k]); err != nil {
			return b, invalid("extra field %q: %v", k, err)
		}
	}
	return b, nil
}

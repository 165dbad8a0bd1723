package wire

import (
	"encoding/binary"
	"errors"
	"math"
	"unsafe"
)

// Op is the kind of a record a plugin reports. The host turns records into
// transcript events (see the package documentation for the semantics of
// each op).
type Op uint8

// The record ops.
const (
	OpLine       Op = 1  // Line: later records come from this raw line (its 1-based number)
	OpMeta       Op = 2  // SessionID, Model, ProviderVersion, Format, Override
	OpMsgOpen    Op = 3  // Key, Role, ID, Model, Scope, Time
	OpBlock      Op = 4  // Key, Slot, BlockType, block fields
	OpAppend     Op = 5  // Key, Slot, Field, Value
	OpMsgClose   Op = 6  // Key, StopReason, Model, ID, usage
	OpToolCall   Op = 7  // CallID, Name, Input, Kind, Command, Scope, Time
	OpToolResult Op = 8  // CallID, Name, Output, Error, IsError, ExitCode, Status, Scope, Time
	OpUsage      Op = 9  // usage, Mode, Scope
	OpCost       Op = 10 // Cost, Mode
	OpStatus     Op = 11 // Status, Error, Level
	OpFinal      Op = 12 // Text, Override
	OpUnmapped   Op = 13 // Native, Count
	OpScopeOpen  Op = 14 // Scope, ParentToolID, Name, Text (description)
	OpScopeClose Op = 15 // Scope, Status, Error
	OpWarning    Op = 16 // Text
	OpCommand    Op = 17 // Key?, CallID, Command, Scope: a command block in its own message
	OpError      Op = 18 // Text (message), Code, Scope: an error the provider reported (ABI 1.3)
	OpIgnored    Op = 19 // Native, Count: lines of a known type deliberately ignored (ABI 1.3)
	opLimit      Op = 20
	OpMaxDefined    = opLimit - 1
)

// Tag names a field inside a record.
type Tag uint8

// The field tags.
const (
	TKey Tag = iota + 1
	TRole
	TID
	TModel
	TScope
	TTime
	TSlot
	TBlockType
	TText
	TThinking
	TToolName
	TToolID
	TToolInput
	TToolContent
	TIsError
	TCommand
	TChunk
	TRedacted
	TOrigin
	TField
	TValue
	TStopReason
	TInputTokens
	TCacheReadTokens
	TCacheWriteTokens
	TOutputTokens
	TReasoningTokens
	TCallID
	TName
	TInput
	TKind
	TOutput
	TError
	TExitCode
	TStatus
	TMode
	TCost
	TLevel
	TOverride
	TNative
	TCount
	TParentToolID
	TSessionID
	TProviderVersion
	TFormat
	TLine
	TCode       // OpError: the provider's error code (ABI 1.3)
	TNoTerminal // OpMeta: the format has no terminal event (ABI 1.3)
	// Usage figures added in ABI 1.5: the uncached input, the one-hour
	// part of the cache write, the total the provider states.
	TUncachedInputTokens
	TCacheWrite1hTokens
	TTotalTokens
	// OpMeta fields added in ABI 1.6: the agent's working directory and
	// the repository root holding it, where the provider's data states
	// them.
	TCwd
	TProject
	// TServiceTier is a usage field added in ABI 1.9: the service tier
	// the provider states it served (and bills) the request at.
	TServiceTier
	// TRevised is a tool call and tool result field added in ABI 1.13
	// (VBool, true): the call or result is a new version of the one of
	// its call id reported before, changed in place (an element of a
	// document rewritten, read again under a new message key).
	TRevised
	tagLimit
)

// VKind is the encoding of a field value.
type VKind uint8

// The value kinds.
const (
	VStr   VKind = 1 // uvarint n, n bytes: a literal byte string
	VSpan  VKind = 2 // uvarint off, uvarint n, u8 mode: bytes [off, off+n) of the call's input
	VInt   VKind = 3 // zig-zag varint
	VBool  VKind = 4 // u8 0|1
	VFloat VKind = 5 // 8 bytes, IEEE 754 bits little-endian
	VJSON  VKind = 6 // uvarint n, n bytes: a literal JSON value
)

// SpanMode says how the host reads a span.
type SpanMode uint8

// The span modes.
const (
	SpanBytes  SpanMode = 0 // the bytes as they are
	SpanString SpanMode = 1 // the contents of a JSON string literal: unescape
	SpanJSON   SpanMode = 2 // a JSON value: validate and compact
	// SpanJSONString is the contents of a JSON string literal that itself
	// holds JSON (tool arguments sent as a string): unescape, then parse
	// as SpanJSON; when it is not JSON the host keeps it as a string.
	SpanJSONString SpanMode = 3
)

// ErrBadRecord reports output that does not follow the record encoding.
var ErrBadRecord = errors.New("malformed record")

// Encoder appends records to a byte slice. The zero Encoder is ready.
type Encoder struct {
	Buf   []byte
	start int
	op    Op
	done  int // length of Buf at the end of the last complete record
}

// Reset empties the buffer, keeping its capacity.
func (e *Encoder) Reset() { e.Buf, e.op, e.done = e.Buf[:0], 0, 0 }

// Abort drops a record begun but not ended (after a panic), so that the
// output stays decodable and the records before it stand.
func (e *Encoder) Abort() {
	e.Buf = e.Buf[:e.done]
	e.op = 0
}

// Begin starts a record. Records must not nest.
func (e *Encoder) Begin(op Op) {
	e.Buf = append(e.Buf, byte(op), 0, 0, 0, 0)
	e.start = len(e.Buf)
	e.op = op
}

// End finishes the record started by Begin: the body length is a fixed
// u32 so that Begin need not know it.
func (e *Encoder) End() {
	binary.LittleEndian.PutUint32(e.Buf[e.start-4:], uint32(len(e.Buf)-e.start))
	e.op = 0
	e.done = len(e.Buf)
}

// Fields with varints are written into room made once for the field's
// fixed part rather than by one append a byte: in WebAssembly every append
// is a capacity check and a jump, and a varint took one a byte.

// maxFixed is the most a field writes besides its literal bytes: tag,
// kind, two uvarints and a mode byte.
const maxFixed = 2 + 2*binary.MaxVarintLen64 + 1

// room returns Buf with capacity for n more bytes.
func (e *Encoder) room(n int) []byte {
	if cap(e.Buf)-len(e.Buf) < n {
		e.grow(n)
	}
	return e.Buf
}

func (e *Encoder) grow(n int) {
	e.Buf = append(e.Buf[:cap(e.Buf)], make([]byte, n)...)[:len(e.Buf)]
}

// putUvarint writes x at b[i:] and returns the index after it.
func putUvarint(b []byte, i int, x uint64) int {
	for x >= 0x80 {
		b[i] = byte(x) | 0x80
		x >>= 7
		i++
	}
	b[i] = byte(x)
	return i + 1
}

// lit writes a field of kind k whose value is the literal s.
func (e *Encoder) lit(t Tag, k VKind, s string) {
	b := e.room(maxFixed + len(s))
	i := len(b)
	b = b[:i+maxFixed]
	b[i], b[i+1] = byte(t), byte(k)
	i = putUvarint(b, i+2, uint64(len(s)))
	e.Buf = append(b[:i], s...)
}

// Str adds a literal string field.
func (e *Encoder) Str(t Tag, s string) { e.lit(t, VStr, s) }

// Bytes adds a literal string field from bytes.
func (e *Encoder) Bytes(t Tag, b []byte) { e.lit(t, VStr, bytesString(b)) }

// JSON adds a literal JSON value field.
func (e *Encoder) JSON(t Tag, b []byte) { e.lit(t, VJSON, bytesString(b)) }

// bytesString views b as a string without copying, for lit, which only
// copies from it.
func bytesString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// Span adds a field whose value is bytes [off, off+n) of the input of the
// current call (the batch buffer), read according to mode.
func (e *Encoder) Span(t Tag, off, n int, mode SpanMode) {
	b := e.room(maxFixed)
	i := len(b)
	b = b[:i+maxFixed]
	b[i], b[i+1] = byte(t), byte(VSpan)
	i = putUvarint(b, i+2, uint64(off))
	i = putUvarint(b, i, uint64(n))
	b[i] = byte(mode)
	e.Buf = b[:i+1]
}

// Int adds an integer field.
func (e *Encoder) Int(t Tag, v int64) {
	b := e.room(maxFixed)
	i := len(b)
	b = b[:i+maxFixed]
	b[i], b[i+1] = byte(t), byte(VInt)
	x := uint64(v) << 1 // zig-zag, as binary.AppendVarint
	if v < 0 {
		x = ^x
	}
	e.Buf = b[:putUvarint(b, i+2, x)]
}

// Bool adds a boolean field.
func (e *Encoder) Bool(t Tag, v bool) {
	b := byte(0)
	if v {
		b = 1
	}
	e.Buf = append(e.Buf, byte(t), byte(VBool), b)
}

// Float adds a float field.
func (e *Encoder) Float(t Tag, v float64) {
	e.Buf = append(e.Buf, byte(t), byte(VFloat))
	e.Buf = binary.LittleEndian.AppendUint64(e.Buf, math.Float64bits(v))
}

// Field is one decoded field. Which members are meaningful depends on Kind.
type Field struct {
	Tag   Tag
	Kind  VKind
	Bytes []byte // VStr, VJSON: aliases the record buffer
	Off   int    // VSpan
	N     int    // VSpan
	Mode  SpanMode
	Int   int64
	Bool  bool
	Float float64
}

// Record is one decoded record.
type Record struct {
	Op     Op
	Fields []Field
}

// Field returns the first field with tag t.
func (r *Record) Field(t Tag) (Field, bool) {
	for _, f := range r.Fields {
		if f.Tag == t {
			return f, true
		}
	}
	return Field{}, false
}

// Decoder reads records from plugin output. It validates every length, so
// hostile output yields ErrBadRecord, never a panic or an out-of-bounds
// read. Ops and tags unknown to this version (a plugin of a newer minor
// version) are decoded, not rejected: callers ignore what they do not
// know. An unknown value kind is malformed, as its size is unknown.
type Decoder struct {
	buf []byte
	off int
	rec Record
}

// NewDecoder returns a decoder over buf.
func NewDecoder(buf []byte) *Decoder { return &Decoder{buf: buf} }

// Next decodes the next record. It returns (nil, nil) at the end. The
// record and its fields are valid until the following call.
func (d *Decoder) Next() (*Record, error) {
	if d.off >= len(d.buf) {
		return nil, nil
	}
	if len(d.buf)-d.off < 5 {
		return nil, ErrBadRecord
	}
	op := Op(d.buf[d.off])
	n := int(binary.LittleEndian.Uint32(d.buf[d.off+1:]))
	d.off += 5
	// Ops and tags beyond the ones this version defines come from a
	// plugin built for a newer minor version: their length is known, so
	// they are decoded and left to the caller to ignore.
	if op == 0 || n < 0 || n > len(d.buf)-d.off {
		return nil, ErrBadRecord
	}
	body := d.buf[d.off : d.off+n]
	d.off += n
	d.rec.Op = op
	d.rec.Fields = d.rec.Fields[:0]
	for i := 0; i < len(body); {
		if len(body)-i < 2 {
			return nil, ErrBadRecord
		}
		f := Field{Tag: Tag(body[i]), Kind: VKind(body[i+1])}
		i += 2
		if f.Tag == 0 {
			return nil, ErrBadRecord
		}
		switch f.Kind {
		case VStr, VJSON:
			l, k := binary.Uvarint(body[i:])
			if k <= 0 || l > uint64(len(body)-i-k) {
				return nil, ErrBadRecord
			}
			i += k
			f.Bytes = body[i : i+int(l)]
			i += int(l)
		case VSpan:
			var vals [2]uint64
			for j := range vals {
				v, k := binary.Uvarint(body[i:])
				if k <= 0 || v > math.MaxInt32 {
					return nil, ErrBadRecord
				}
				vals[j] = v
				i += k
			}
			if i >= len(body) {
				return nil, ErrBadRecord
			}
			f.Off, f.N, f.Mode = int(vals[0]), int(vals[1]), SpanMode(body[i])
			i++
			if f.Mode > SpanJSONString {
				return nil, ErrBadRecord
			}
		case VInt:
			v, k := binary.Varint(body[i:])
			if k <= 0 {
				return nil, ErrBadRecord
			}
			f.Int = v
			i += k
		case VBool:
			if i >= len(body) || body[i] > 1 {
				return nil, ErrBadRecord
			}
			f.Bool = body[i] == 1
			i++
		case VFloat:
			if len(body)-i < 8 {
				return nil, ErrBadRecord
			}
			f.Float = math.Float64frombits(binary.LittleEndian.Uint64(body[i:]))
			i += 8
		default:
			return nil, ErrBadRecord
		}
		d.rec.Fields = append(d.rec.Fields, f)
	}
	return &d.rec, nil
}

// Modes of the usage and cost records (TMode).
const (
	ModeAdd = "add" // add to the step total (per-turn figures)
	ModeSet = "set" // replace the step total (cumulative counters)
)

// Levels of the status record (TLevel), highest wins (spec section 6.7).
const (
	LevelExitCode = 1 // the host's, inferred from a process exit code
	LevelError    = 2 // an error field or a non-fatal error line
	LevelTerminal = 3 // the provider's terminal event
)

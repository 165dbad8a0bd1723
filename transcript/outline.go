package transcript

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/twasm/twasm/internal/jsonstr"
)

// DecodeOutline decodes one transcript line as [DecodeEvent] does, for a
// pass that reads a whole run for its structure (an execution tree, the
// tool calls that have a result) and not its content. It returns a nil
// event exactly when DecodeEvent does, with the same error, and the same
// warnings with an event. The event it returns holds:
//
//   - the envelope (seq, run and child run ids, type, path, iteration,
//     timestamp); its Extra only for the event types below that are
//     DecodeEvent's whole;
//   - of a message's payload, each block's Type and Fidelity only;
//   - of a tool event's payload, CallID, Fidelity and its [RevisedField]
//     mark only;
//   - any other event (run.*, step.*, an unknown type) as DecodeEvent
//     decodes it, whole.
//
// A message or tool line is read in one pass that checks everything
// DecodeEvent checks and copies only those fields; a line it is not sure
// of (an escaped key, a repeated field, an unknown block type, a number
// that is not a plain integer where one is wanted, anything malformed)
// is decoded by DecodeEvent, whose event is then cut to the same fields,
// so the errors and warnings are DecodeEvent's own.
func DecodeOutline(line []byte) (*Event, error) {
	if ev, ok := decodeOutline(line); ok {
		return ev, nil
	}
	ev, err := DecodeEvent(line)
	if ev == nil {
		return nil, err
	}
	return outlineOf(ev), err
}

// outlineOf cuts a message's or tool event's ev to the fields
// DecodeOutline keeps; other events are kept whole.
func outlineOf(ev *Event) *Event {
	switch p := ev.Payload.(type) {
	case *MessagePayload:
		o := *ev
		o.Extra = nil
		q := &MessagePayload{}
		for _, b := range p.Blocks {
			q.Blocks = append(q.Blocks, Block{Type: b.Type, Fidelity: b.Fidelity})
		}
		o.Payload = q
		return &o
	case *ToolPayload:
		o := *ev
		o.Extra = nil
		q := &ToolPayload{CallID: p.CallID, Fidelity: p.Fidelity}
		if p.Revised() {
			q.Extra = map[string]json.RawMessage{RevisedField: json.RawMessage("true")}
		}
		o.Payload = q
		return &o
	}
	return ev
}

// outlineMaxDepth bounds the nesting the one-pass reading follows; a
// deeper line is left to DecodeEvent (whose own bound is larger).
const outlineMaxDepth = 64

// decodeOutline is DecodeOutline's one pass: ok is false when the line
// is not a message or tool event this pass is sure DecodeEvent decodes
// with no error or warning.
func decodeOutline(line []byte) (*Event, bool) {
	s := outlineScan{b: line}
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return nil, false
	}
	e := &Event{}
	var ts string
	payloadAt := -1
	ok := s.fields(1, func(key []byte, depth int) (int, bool) {
		switch string(key) {
		case "seq":
			return 1, s.uintField(&e.Seq)
		case "run_id":
			return 2, s.strField(&e.RunID)
		case "parent_run_id":
			return 3, s.strField(&e.ParentRunID)
		case "child_run_id":
			return 4, s.strField(&e.ChildRunID)
		case "type":
			raw, escaped, ok := s.strRaw()
			if !ok || escaped {
				return 5, false
			}
			for _, t := range []EventType{MessageUser, MessageAssistant, ToolCall, ToolResult} {
				if string(raw) == string(t) {
					e.Type = t
					return 5, true
				}
			}
			return 5, false // another kind of event, or no type: DecodeEvent
		case "path":
			return 6, s.strField(&e.Path)
		case "iteration":
			return 7, s.intField(&e.Iteration)
		case "timestamp":
			return 8, s.strField(&ts)
		case "payload":
			if e.Type != "" {
				// The type came first (as twasm writes a line): read
				// the payload in place.
				return 9, s.payload(e, depth)
			}
			payloadAt = s.i
			return 9, s.value(depth)
		}
		return 0, s.value(depth)
	})
	if !ok || e.Type == "" {
		return nil, false
	}
	s.ws()
	if s.i != len(s.b) {
		return nil, false
	}
	switch {
	case payloadAt >= 0:
		p := outlineScan{b: line, i: payloadAt}
		if !p.payload(e, 1) {
			return nil, false
		}
	case e.Payload == nil:
		e.Payload = emptyPayload(e.Type)
	}
	if ts != "" {
		t, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil {
			return nil, false
		}
		e.Timestamp = t
	}
	return e, true
}

// emptyPayload is the payload DecodeEvent gives an event of type t
// with no payload.
func emptyPayload(t EventType) Payload {
	if t.payloadKind() == payloadTool {
		return &ToolPayload{}
	}
	return &MessagePayload{}
}

// outlineScan reads JSON at b[i:], checking it as encoding/json does
// (RFC 8259: a reading that passes here passes json.Unmarshal); each
// method leaves i after what it read and reports false on anything
// encoding/json could refuse.
type outlineScan struct {
	b []byte
	i int
}

func (s *outlineScan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value reads any JSON value.
func (s *outlineScan) value(depth int) bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		_, ok := s.str()
		return ok
	case c == '{':
		return s.object(depth+1, func(_ []byte, d int) bool { return s.value(d) })
	case c == '[':
		return s.array(depth+1, func(d int) bool { return s.value(d) })
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	case c == '-' || c >= '0' && c <= '9':
		_, ok := s.number()
		return ok
	}
	return false
}

func (s *outlineScan) lit(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

// str reads a string; escaped reports a backslash in it.
func (s *outlineScan) str() (escaped, ok bool) {
	i := s.i + 1
	for i < len(s.b) {
		c := s.b[i]
		switch {
		case c == '"':
			s.i = i + 1
			return escaped, true
		case c == '\\':
			escaped = true
			if i+1 >= len(s.b) {
				return false, false
			}
			switch s.b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(s.b) {
					return false, false
				}
				for _, h := range s.b[i+2 : i+6] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return false, false
					}
				}
				i += 6
			default:
				return false, false
			}
		case c < 0x20:
			return false, false
		default:
			i++
		}
	}
	return false, false
}

// number reads a number; plain reports an integer with no fraction or
// exponent.
func (s *outlineScan) number() (plain, ok bool) {
	i := s.i
	if s.b[i] == '-' {
		i++
	}
	digits := func() bool {
		j := i
		for i < len(s.b) && s.b[i] >= '0' && s.b[i] <= '9' {
			i++
		}
		return i > j
	}
	switch {
	case i < len(s.b) && s.b[i] == '0':
		i++
	case i < len(s.b) && s.b[i] >= '1' && s.b[i] <= '9':
		digits()
	default:
		return false, false
	}
	plain = true
	if i < len(s.b) && s.b[i] == '.' {
		i++
		if !digits() {
			return false, false
		}
		plain = false
	}
	if i < len(s.b) && (s.b[i] == 'e' || s.b[i] == 'E') {
		i++
		if i < len(s.b) && (s.b[i] == '+' || s.b[i] == '-') {
			i++
		}
		if !digits() {
			return false, false
		}
		plain = false
	}
	s.i = i
	return plain, true
}

// object reads an object, calling member with each key (its raw bytes)
// and s at the member's value, which member must read. An escaped key is
// refused: it could name a field once unescaped.
func (s *outlineScan) object(depth int, member func(key []byte, depth int) bool) bool {
	more, ok := s.open('}', depth)
	for ok && more {
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return false
		}
		k := s.i
		if escaped, read := s.str(); !read || escaped {
			return false
		}
		key := s.b[k+1 : s.i-1]
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		s.ws()
		if !member(key, depth) {
			return false
		}
		more, ok = s.next('}')
	}
	return ok
}

// array reads an array, calling elem with s at each element.
func (s *outlineScan) array(depth int, elem func(depth int) bool) bool {
	more, ok := s.open(']', depth)
	for ok && more {
		if !elem(depth) {
			return false
		}
		more, ok = s.next(']')
	}
	return ok
}

// open reads the opening of an object or array (at s.i) at depth, and
// its closer when it is empty: more says members or elements follow.
func (s *outlineScan) open(closer byte, depth int) (more, ok bool) {
	if depth > outlineMaxDepth {
		return false, false
	}
	s.i++
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == closer {
		s.i++
		return false, true
	}
	return true, true
}

// next reads what follows a member or an element: a comma (more
// follow) or the closer.
func (s *outlineScan) next(closer byte) (more, ok bool) {
	s.ws()
	if s.i >= len(s.b) {
		return false, false
	}
	switch s.b[s.i] {
	case ',':
		s.i++
		s.ws()
		return true, true
	case closer:
		s.i++
		return false, true
	}
	return false, false
}

// null reads a null if there is one.
func (s *outlineScan) null() bool {
	return s.i < len(s.b) && s.b[s.i] == 'n' && s.lit("null")
}

// strRaw reads a string member's raw contents (without the quotes);
// null is an empty one.
func (s *outlineScan) strRaw() (raw []byte, escaped, ok bool) {
	if s.null() {
		return nil, false, true
	}
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false, false
	}
	start := s.i
	escaped, ok = s.str()
	if !ok {
		return nil, false, false
	}
	return s.b[start+1 : s.i-1], escaped, true
}

// strField reads a string member as DecodeEvent's decoder.str does: null
// leaves dst alone, a string is unquoted into dst (nil dst: only
// checked), anything else is refused.
func (s *outlineScan) strField(dst *string) bool {
	raw, escaped, ok := s.strRaw()
	switch {
	case !ok || dst == nil || raw == nil:
		return ok
	case !escaped:
		*dst = string(raw)
		return true
	}
	v, err := jsonstr.AppendUnquoted(nil, raw)
	*dst = string(v)
	return err == nil
}

// integer reads null or a plain integer into n, as json.Unmarshal reads
// one into an integer of bits bits (signed unless unsigned).
func (s *outlineScan) integer(bits int, unsigned bool) (n int64, u uint64, ok bool) {
	if s.null() {
		return 0, 0, true
	}
	if s.i >= len(s.b) || !(s.b[s.i] == '-' || s.b[s.i] >= '0' && s.b[s.i] <= '9') {
		return 0, 0, false
	}
	start := s.i
	plain, ok := s.number()
	if !ok || !plain {
		return 0, 0, false
	}
	text := string(s.b[start:s.i])
	if unsigned {
		u, err := strconv.ParseUint(text, 10, bits)
		return 0, u, err == nil
	}
	n, err := strconv.ParseInt(text, 10, bits)
	return n, 0, err == nil
}

func (s *outlineScan) uintField(dst *uint64) bool {
	_, u, ok := s.integer(64, true)
	*dst = u
	return ok
}

// intField reads null or an int into dst (nil: only checked).
func (s *outlineScan) intField(dst *int) bool {
	n, _, ok := s.integer(strconv.IntSize, false)
	if dst != nil {
		*dst = int(n)
	}
	return ok
}

// boolField reads null, true or false.
func (s *outlineScan) boolField() bool {
	return s.null() || s.lit("true") || s.lit("false")
}

// payload reads the payload of a message or tool event e as
// DecodeEvent's object does (null is an empty payload); depth is the
// line's.
func (s *outlineScan) payload(e *Event, depth int) bool {
	if e.Type.payloadKind() == payloadTool {
		p := &ToolPayload{}
		e.Payload = p
		if s.null() {
			return true
		}
		return s.at('{') && s.fields(depth+1, func(key []byte, d int) (int, bool) {
			switch string(key) {
			case "call_id":
				return 1, s.strField(&p.CallID)
			case "fidelity":
				f, ok := s.word()
				p.Fidelity = Fidelity(f)
				return 2, ok
			case "name":
				return 3, s.strField(nil)
			case "output":
				return 4, s.strField(nil)
			case "error":
				return 5, s.strField(nil)
			case "kind":
				return 6, s.strField(nil)
			case "command":
				return 7, s.strField(nil)
			case "status":
				return 8, s.strField(nil)
			case "input":
				return 9, s.value(d)
			case "exit_code":
				return 10, s.intField(nil)
			case "raw_line":
				return 11, s.intField(nil)
			case RevisedField:
				if s.lit("true") {
					p.Extra = map[string]json.RawMessage{RevisedField: json.RawMessage("true")}
					return 12, true
				}
				return 12, s.value(d)
			}
			return 0, s.value(d)
		})
	}
	p := &MessagePayload{}
	e.Payload = p
	if s.null() {
		return true
	}
	return s.at('{') && s.fields(depth+1, func(key []byte, d int) (int, bool) {
		switch string(key) {
		case "role":
			return 1, s.strField(nil)
		case "model":
			return 2, s.strField(nil)
		case "id":
			return 3, s.strField(nil)
		case "stop_reason":
			return 4, s.strField(nil)
		case "raw_line":
			return 5, s.intField(nil)
		case "usage":
			return 6, s.usage(d)
		case "blocks":
			if s.null() {
				return 7, true
			}
			return 7, s.at('[') && s.array(d+1, func(d int) bool {
				b, ok := s.block(d)
				p.Blocks = append(p.Blocks, b)
				return ok
			})
		}
		return 0, s.value(d)
	})
}

// at reports whether the next byte is c.
func (s *outlineScan) at(c byte) bool { return s.i < len(s.b) && s.b[s.i] == c }

// fields reads an object whose members field reads: field names each
// member it knows by a number from 1 (0: a member it only checked as
// JSON) and says whether it read it. A known member that repeats is
// refused: DecodeEvent keeps the last one, and this pass does not
// guess.
func (s *outlineScan) fields(depth int, field func(key []byte, depth int) (int, bool)) bool {
	var seen uint32
	return s.object(depth, func(key []byte, d int) bool {
		n, ok := field(key, d)
		if !ok || n > 0 && seen&(1<<n) != 0 {
			return false
		}
		seen |= 1 << n
		return true
	})
}

// block reads one block of a message as DecodeEvent's decodeBlock does,
// at the depth of its array; a block of an unknown type (a warning) is
// refused, and so is null (a block of no type).
func (s *outlineScan) block(depth int) (Block, bool) {
	var b Block
	if !s.at('{') {
		return b, false
	}
	ok := s.fields(depth+1, func(key []byte, d int) (int, bool) {
		switch string(key) {
		case "type":
			t, ok := s.word()
			b.Type = BlockType(t)
			return 1, ok
		case "fidelity":
			f, ok := s.word()
			b.Fidelity = Fidelity(f)
			return 2, ok
		case "text":
			return 3, s.strField(nil)
		case "thinking":
			return 4, s.strField(nil)
		case "tool_name":
			return 5, s.strField(nil)
		case "tool_id":
			return 6, s.strField(nil)
		case "tool_content":
			return 7, s.strField(nil)
		case "command":
			return 8, s.strField(nil)
		case "chunk":
			return 9, s.strField(nil)
		case "origin":
			return 10, s.strField(nil)
		case "redacted":
			return 11, s.boolField()
		case "is_error":
			return 12, s.boolField()
		case "tool_input":
			return 13, s.value(d)
		}
		return 0, s.value(d)
	})
	return b, ok && b.Type.valid()
}

// usage reads a message's usage: null, or an object whose every member
// is null or a plain integer that fits an int64, which json.Unmarshal
// reads into a Usage whichever members name its fields.
func (s *outlineScan) usage(depth int) bool {
	if s.null() {
		return true
	}
	return s.at('{') && s.object(depth+1, func(_ []byte, _ int) bool {
		_, _, ok := s.integer(64, false)
		return ok
	})
}

// word reads a string member that is usually a word of the vocabulary
// (a block type, a fidelity), returning the vocabulary's own string for
// one, so that reading it allocates nothing.
func (s *outlineScan) word() (string, bool) {
	raw, escaped, ok := s.strRaw()
	if !ok || !escaped && raw == nil {
		return "", ok
	}
	if !escaped {
		for _, w := range outlineWords {
			if string(raw) == w {
				return w, true
			}
		}
		return string(raw), true
	}
	v, err := jsonstr.AppendUnquoted(nil, raw)
	return string(v), err == nil
}

// outlineWords are the words word keeps without a copy.
var outlineWords = []string{
	string(BlockText), string(BlockThinking), string(BlockToolUse), string(BlockToolResult), string(BlockCommand), string(BlockStream),
	string(FidelityAgentEmitted), string(FidelityRouter),
}

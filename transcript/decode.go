package transcript

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/twasm/twasm/internal/jsonstr"
)

// ErrMalformed is wrapped by the error for a line that is not a transcript
// event.
var ErrMalformed = errors.New("malformed transcript line")

// UnknownTypeError is a warning: an event's type, or the type of one of
// its message's blocks, is outside the vocabulary. The event is still
// returned, with the type string intact; an unknown event type's payload
// is a [*RawPayload].
type UnknownTypeError struct {
	Type string
	// Block is the position of the block in its message, or -1 when the
	// event's own type is unknown.
	Block int
}

// Error says which type is unknown, and for a block, which block.
func (e *UnknownTypeError) Error() string {
	if e.Block < 0 {
		return fmt.Sprintf("unknown event type %q", e.Type)
	}
	return fmt.Sprintf("unknown block type %q (block %d)", e.Type, e.Block)
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// DecodeEvent decodes one transcript line.
//
// On success it returns the event and a nil error. When the line is
// well-formed but names an event or block type outside the vocabulary, it
// returns the event (type strings intact, an unknown payload as
// *RawPayload) and warnings: an error that is, or joins, [*UnknownTypeError]s.
// When the line is not a transcript event it returns a nil event and an
// error wrapping [ErrMalformed]: the event is nil exactly when the line
// could not be decoded. Unknown fields are kept in the Extra maps.
func DecodeEvent(line []byte) (*Event, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, malformed("%v", err)
	}
	if m == nil {
		return nil, malformed("not a JSON object")
	}
	d := decoder{m: m}
	e := &Event{}
	d.uint64("seq", &e.Seq)
	d.str("run_id", &e.RunID)
	d.str("parent_run_id", &e.ParentRunID)
	d.str("child_run_id", &e.ChildRunID)
	var typ string
	d.str("type", &typ)
	e.Type = EventType(typ)
	d.str("path", &e.Path)
	d.int("iteration", &e.Iteration)
	var ts string
	d.str("timestamp", &ts)
	payload, hasPayload := m["payload"]
	delete(m, "payload")
	if d.err != nil {
		return nil, d.err
	}
	if typ == "" {
		return nil, malformed("missing type")
	}
	if ts != "" {
		t, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil {
			return nil, malformed("timestamp %q: %v", ts, err)
		}
		e.Timestamp = t
	}
	e.Extra = d.rest()
	var warn []error
	switch e.Type.payloadKind() {
	case payloadStep:
		p, err := decodeStep(payload)
		if err != nil {
			return nil, err
		}
		e.Payload = p
	case payloadMessage:
		p, w, err := decodeMessage(payload)
		if err != nil {
			return nil, err
		}
		e.Payload = p
		warn = w
	case payloadTool:
		p, err := decodeTool(payload)
		if err != nil {
			return nil, err
		}
		e.Payload = p
	default:
		if hasPayload {
			e.Payload = &RawPayload{JSON: payload}
		} else {
			e.Payload = &RawPayload{}
		}
		warn = append(warn, &UnknownTypeError{Type: typ, Block: -1})
	}
	return e, errors.Join(warn...)
}

// decoder takes known fields out of an object and leaves the rest.
type decoder struct {
	m   map[string]json.RawMessage
	err error
}

func (d *decoder) take(key string) (json.RawMessage, bool) {
	v, ok := d.m[key]
	if ok {
		delete(d.m, key)
	}
	if ok && string(v) == "null" {
		return nil, false
	}
	return v, ok
}

func (d *decoder) fail(key string, err error) {
	if d.err == nil {
		d.err = malformed("field %s: %v", key, err)
	}
}

// str reads a string member into dst; it reports whether the member is
// there and a string.
func (d *decoder) str(key string, dst *string) bool {
	v, ok := d.take(key)
	if !ok {
		return false
	}
	if len(v) == 0 || v[0] != '"' {
		d.fail(key, errors.New("not a string"))
		return false
	}
	s, err := jsonstr.Unquote(v)
	if err != nil {
		d.fail(key, err)
		return false
	}
	*dst = s
	return true
}

func (d *decoder) any(key string, dst any) {
	v, ok := d.take(key)
	if !ok {
		return
	}
	if err := json.Unmarshal(v, dst); err != nil {
		d.fail(key, err)
	}
}

func (d *decoder) uint64(key string, dst *uint64) { d.any(key, dst) }
func (d *decoder) int(key string, dst *int)       { d.any(key, dst) }
func (d *decoder) bool(key string, dst *bool)     { d.any(key, dst) }

func (d *decoder) optInt(key string, dst **int) {
	var n int
	if _, ok := d.m[key]; !ok {
		return
	}
	if string(d.m[key]) == "null" {
		delete(d.m, key)
		return
	}
	d.any(key, &n)
	*dst = &n
}

func (d *decoder) raw(key string, dst *json.RawMessage) {
	if v, ok := d.take(key); ok {
		*dst = v
	}
}

func (d *decoder) rest() map[string]json.RawMessage {
	if len(d.m) == 0 {
		return nil
	}
	return d.m
}

func object(raw json.RawMessage, what string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if len(raw) == 0 {
		return map[string]json.RawMessage{}, nil
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, malformed("%s: %v", what, err)
	}
	if m == nil {
		m = map[string]json.RawMessage{}
	}
	return m, nil
}

func decodeStep(raw json.RawMessage) (*StepPayload, error) {
	m, err := object(raw, "payload")
	if err != nil {
		return nil, err
	}
	d := decoder{m: m}
	p := &StepPayload{}
	d.str("name", &p.Name)
	var kind string
	d.str("kind", &kind)
	p.Kind = StepKind(kind)
	d.str("status", &p.Status)
	d.str("error", &p.Error)
	d.raw("result", &p.Result)
	d.str("schema", &p.Schema)
	d.any("producer", &p.Producer)
	d.int("attempt", &p.Attempt)
	if d.err != nil {
		return nil, d.err
	}
	p.Extra = d.rest()
	return p, nil
}

func decodeUsage(d *decoder) *Usage {
	var u *Usage
	d.any("usage", &u)
	return u
}

func decodeMessage(raw json.RawMessage) (*MessagePayload, []error, error) {
	m, err := object(raw, "payload")
	if err != nil {
		return nil, nil, err
	}
	d := decoder{m: m}
	p := &MessagePayload{}
	d.str("role", &p.Role)
	d.str("model", &p.Model)
	d.str("id", &p.ID)
	d.str("stop_reason", &p.StopReason)
	p.Usage = decodeUsage(&d)
	d.int("raw_line", &p.RawLine)
	var blocks []json.RawMessage
	d.any("blocks", &blocks)
	if d.err != nil {
		return nil, nil, d.err
	}
	p.Extra = d.rest()
	var warn []error
	for i, rb := range blocks {
		b, err := decodeBlock(rb)
		if err != nil {
			return nil, nil, fmt.Errorf("block %d: %w", i, err)
		}
		if !b.Type.valid() {
			warn = append(warn, &UnknownTypeError{Type: string(b.Type), Block: i})
		}
		p.Blocks = append(p.Blocks, b)
	}
	return p, warn, nil
}

func decodeBlock(raw json.RawMessage) (Block, error) {
	m, err := object(raw, "block")
	if err != nil {
		return Block{}, err
	}
	d := decoder{m: m}
	var b Block
	var typ, fid, origin string
	d.str("type", &typ)
	d.str("fidelity", &fid)
	d.str("text", &b.Text)
	d.str("thinking", &b.Thinking)
	d.bool("redacted", &b.Redacted)
	d.str("tool_name", &b.ToolName)
	d.str("tool_id", &b.ToolID)
	d.raw("tool_input", &b.ToolInput)
	d.str("tool_content", &b.ToolContent)
	d.bool("is_error", &b.IsError)
	d.str("command", &b.Command)
	d.str("chunk", &b.Chunk)
	d.str("origin", &origin)
	if d.err != nil {
		return Block{}, d.err
	}
	b.Type, b.Fidelity, b.Origin = BlockType(typ), Fidelity(fid), Origin(origin)
	b.Extra = d.rest()
	return b, nil
}

func decodeTool(raw json.RawMessage) (*ToolPayload, error) {
	m, err := object(raw, "payload")
	if err != nil {
		return nil, err
	}
	d := decoder{m: m}
	p := &ToolPayload{}
	var fid, kind string
	d.str("name", &p.Name)
	d.str("call_id", &p.CallID)
	d.raw("input", &p.Input)
	p.HasOutput = d.str("output", &p.Output)
	d.str("error", &p.Error)
	d.str("fidelity", &fid)
	d.str("kind", &kind)
	d.str("command", &p.Command)
	d.optInt("exit_code", &p.ExitCode)
	d.str("status", &p.Status)
	d.int("raw_line", &p.RawLine)
	if d.err != nil {
		return nil, d.err
	}
	p.Fidelity, p.Kind = Fidelity(fid), ToolKind(kind)
	p.Extra = d.rest()
	return p, nil
}

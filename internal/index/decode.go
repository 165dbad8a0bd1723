package index

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/twasm/twasm/internal/wire"
	"github.com/twasm/twasm/transcript"
)

// line is what the index reads of a transcript line: the envelope and
// the payload fields that become documents or run figures, decoded as
// one json.Unmarshal decodes them (which validates the whole line:
// decodeLine, and lineDecoder, which reads most lines faster). Reading the full
// transcript.Event (transcript.DecodeEvent) decodes the line in several
// passes and keeps every field: it was most of the indexing time.
// TestSearchAgreesWithScan checks that both readings give the same
// documents. They differ only on lines twasm does not write: keys are
// matched case-insensitively here (encoding/json), and a field the index
// does not read is not type-checked.
type line struct {
	Seq         uint64      `json:"seq"`
	ParentRunID string      `json:"parent_run_id"`
	ChildRunID  string      `json:"child_run_id"`
	Type        string      `json:"type"`
	Path        string      `json:"path"`
	Iteration   int         `json:"iteration"`
	Timestamp   string      `json:"timestamp"`
	Payload     linePayload `json:"payload"`
}

// linePayload holds the fields of the three payload kinds the index
// reads; a field name two kinds share has the same type in both.
type linePayload struct {
	Name    string          `json:"name"`
	Status  string          `json:"status"`
	Error   string          `json:"error"`
	Result  json.RawMessage `json:"result"`
	Role    string          `json:"role"`
	Model   string          `json:"model"`
	Blocks  []lineBlock     `json:"blocks"`
	Input   json.RawMessage `json:"input"`
	Output  string          `json:"output"`
	Command string          `json:"command"`
	Kind    string          `json:"kind"`
	CallID  string          `json:"call_id"`
	// Revised is a tool event's transcript.RevisedField: a new version
	// of an earlier call or result (revised).
	Revised json.RawMessage `json:"revised"`
	// Source is run.started's "source": the run archives an agent
	// session (package archive).
	Source json.RawMessage `json:"source"`
	// Supersedes (a step.call_workflow.started's) and SupersededBy (a
	// run.completed's) name a run superseded by another
	// (lifecycle.SupersedesField, lifecycle.SupersededByField).
	Supersedes   string `json:"supersedes"`
	SupersededBy string `json:"superseded_by"`
	// SupersedesRuns (a run.started's) are the ended runs the run holds
	// again (lifecycle.SupersedesRunsField), as read: a list of run ids.
	SupersedesRuns json.RawMessage `json:"supersedes_runs"`
	// RenormalizedFrom is a run.started's views.RenormalizedFromField:
	// the run a rebuild by twasm renormalize was made from, as read (a
	// string names it; anything else names none, as the views read it).
	RenormalizedFrom json.RawMessage `json:"renormalized_from"`
	// res is Result as an agent step's result once read (result), by
	// the tape (lineDecoder.result) or by encoding/json; resRead says
	// how it went (resOK, resNone; 0: not read yet).
	res     lineResult
	resRead uint8
}

// How linePayload.Result was read into linePayload.res.
const (
	resOK   = 1 // read whole, as json.Unmarshal reads it
	resNone = 2 // none, or json.Unmarshal fails on it
)

// result is what the index reads of the payload's result (an agent
// step's: its provider, model, project, outcome), false when it has
// none or json.Unmarshal into a lineResult fails on it. It is read once
// per line: lineDecoder reads it from the line's tape, and what it
// leaves is read here by encoding/json, which validated the whole
// result first and was 5% of an index build (the writer reads a step's
// result twice, for its run's row and for its error's document).
func (p *linePayload) result() (lineResult, bool) {
	if p.resRead == 0 {
		p.resRead = resNone
		if len(p.Result) > 0 && json.Unmarshal(p.Result, &p.res) == nil {
			p.resRead = resOK
		} else {
			p.res = lineResult{}
		}
	}
	return p.res, p.resRead == resOK
}

type lineBlock struct {
	Type     transcript.BlockType `json:"type"`
	Text     string               `json:"text"`
	Thinking string               `json:"thinking"`
	Command  string               `json:"command"`
	Chunk    string               `json:"chunk"`
	Origin   string               `json:"origin"`
}

// lineResult is what the index reads of an agent step's result.
type lineResult struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
	Error    string `json:"error"`
	Status   string `json:"status"`
	Project  string `json:"project"`
	Cwd      string `json:"cwd"`
	// SessionID is the agent's session (views.SessionKey).
	SessionID string `json:"session_id"`
}

var errNoType = errors.New("missing type")

// decodeLine reads one transcript line into l (reset first) and its
// time (zero when absent). A line that is not a JSON object, has no
// type, a field of the wrong type or a timestamp that is not RFC 3339
// is an error: it is skipped, as transcript.DecodeEvent rejects it.
func decodeLine(b []byte, l *line) (time.Time, error) {
	resetLine(l)
	if err := json.Unmarshal(b, l); err != nil {
		return time.Time{}, err
	}
	return lineTime(l)
}

func isNull(raw json.RawMessage) bool { return string(raw) == "null" }

// revised says whether a tool event is marked revised (a new version of
// an earlier call or result of its call id: transcript.Pairer).
func (p *linePayload) revised() bool { return string(p.Revised) == "true" }

// lineDecoder reads transcript lines as decodeLine does, most of them a
// few times faster: building the index spent a quarter of its CPU in
// encoding/json. It checks a line's syntax with wire.BuildTape (the JSON
// tape the plugins read, strict as encoding/json's scanner) and reads
// the members the index reads from the tape; a line it does not read
// exactly as json.Unmarshal would (a key that is escaped, not ASCII or
// not lower case, a member named twice, a value of another type, a
// number out of range, nesting deeper than encoding/json takes, a line
// whose tape could take more than 4 MiB) is decoded by decodeLine,
// which decides. A string with escapes is unescaped by wire.Unescape,
// and one that is not then valid UTF-8 (an invalid byte, a lone
// surrogate: encoding/json puts U+FFFD in their place) is decoded by
// encoding/json too. TestLineDecoderAgrees and
// FuzzLineDecoder check that both give the same line.
//
// The raw members (input, result, source) of the line it reads are
// slices of b: they are valid until b changes. So are the texts a
// document is made of (a block's text, thinking, command and chunk, a
// tool call's command, a tool result's output: text), which share b's
// memory, or the decoder's arena when they had escapes, until the next
// line is decoded: the writer binds them to SQLite (which copies them)
// or copies what it keeps (a run's title) before it reads the next
// line. Copying every text out of its line was 3% of an index build.
// The other strings are copies.
type lineDecoder struct {
	toks []wire.Token
	// arena holds the line's texts that had escapes, unescaped (text),
	// and a string being unescaped for a copy (str) until it is made.
	arena []byte
	// slow counts the lines left to decodeLine (tests).
	slow int
}

// The tape of a line costs 16 bytes a token, up to 8 times the line's
// size (`[1,1,1,...]`), where encoding/json keeps no more than the
// line: a line longer than tapeCheckBytes has its tokens bounded first
// (tapeBound) and is left to encoding/json when they could be more
// than maxTapeTokens, and a tape longer than keepTapeTokens is not kept
// for the next line. So the decoder holds at most 4 MiB of tape while
// it reads a line, 1 MiB between lines.
const (
	tapeCheckBytes = 64 << 10
	maxTapeTokens  = 1 << 18
	keepTapeTokens = 1 << 16
)

// keepArenaBytes bounds the arena (lineDecoder.text) kept for the next
// line.
const keepArenaBytes = 1 << 20

// maxDepth is how deep encoding/json lets containers nest (its
// scanner's maxNestingDepth): a line nested deeper is left to it.
const maxDepth = 10000

// decode reads one transcript line into l (reset first) and its time,
// as decodeLine.
func (d *lineDecoder) decode(b []byte, l *line) (time.Time, error) {
	resetLine(l)
	if cap(d.arena) > keepArenaBytes {
		d.arena = nil // the texts of the line before may still hold it
	}
	d.arena = d.arena[:0]
	if !d.read(b, l) {
		d.slow++
		return decodeLine(b, l)
	}
	return lineTime(l)
}

// resetLine zeroes l, keeping its blocks' memory, zeroed too:
// encoding/json decodes an array element into the slice's memory as it
// is (SetLen within the capacity), so a block would keep the fields its
// line leaves out (an origin, written only when set) from the block at
// its place in an earlier line.
func resetLine(l *line) {
	blocks := l.Payload.Blocks[:cap(l.Payload.Blocks)]
	clear(blocks)
	*l = line{}
	l.Payload.Blocks = blocks[:0]
}

// lineTime finishes a decoded line: a type is required, a null input or
// result is none, and the timestamp is parsed.
func lineTime(l *line) (time.Time, error) {
	if l.Type == "" {
		return time.Time{}, errNoType
	}
	if isNull(l.Payload.Input) {
		l.Payload.Input = nil
	}
	if isNull(l.Payload.Result) {
		l.Payload.Result = nil
	}
	if l.Timestamp == "" {
		return time.Time{}, nil
	}
	return time.Parse(time.RFC3339Nano, l.Timestamp)
}

// read decodes b into l from its tape; false leaves the line to
// encoding/json (l may then be partly set).
func (d *lineDecoder) read(b []byte, l *line) bool {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	if i == len(b) || b[i] != '{' {
		return false // BuildTape would pass over an SSE "data:"
	}
	if len(b) > tapeCheckBytes && tapeBound(b) > maxTapeTokens {
		return false
	}
	toks, ok := wire.BuildTape(d.toks[:0], b)
	if ok {
		d.toks = toks
		defer func() {
			if cap(d.toks) > keepTapeTokens {
				d.toks = nil
			}
		}()
	}
	if !ok || len(toks) > maxDepth && deeper(toks, maxDepth) {
		return false
	}
	var seen uint32
	return d.object(b, 0, func(key []byte, v int) bool {
		switch string(key) {
		case "seq":
			return once(&seen, 0) && d.uint64(b, v, &l.Seq)
		case "parent_run_id":
			return once(&seen, 1) && d.str(b, v, &l.ParentRunID)
		case "child_run_id":
			return once(&seen, 2) && d.str(b, v, &l.ChildRunID)
		case "type":
			return once(&seen, 3) && d.str(b, v, &l.Type)
		case "path":
			return once(&seen, 4) && d.str(b, v, &l.Path)
		case "iteration":
			return once(&seen, 5) && d.int(b, v, &l.Iteration)
		case "timestamp":
			return once(&seen, 6) && d.str(b, v, &l.Timestamp)
		case "payload":
			return once(&seen, 7) && d.payload(b, v, &l.Payload)
		}
		return otherKey(key)
	})
}

// tapeBound bounds the tokens of the tape of the JSON value b: each but
// the first follows a comma, a colon or an opening bracket (those inside
// strings are counted too).
func tapeBound(b []byte) int {
	return 1 + bytes.Count(b, []byte{','}) + bytes.Count(b, []byte{':'}) + bytes.Count(b, []byte{'['}) + bytes.Count(b, []byte{'{'})
}

// deeper reports whether the containers of a tape nest deeper than n.
func deeper(toks []wire.Token, n int) bool {
	var ends []uint32 // where each open container ends (its Next)
	for i, t := range toks {
		for len(ends) > 0 && uint32(i) >= ends[len(ends)-1] {
			ends = ends[:len(ends)-1]
		}
		if t.Kind == wire.KindObject || t.Kind == wire.KindArray {
			if ends = append(ends, t.Next); len(ends) > n {
				return true
			}
		}
	}
	return false
}

func (d *lineDecoder) payload(b []byte, v int, p *linePayload) bool {
	switch d.toks[v].Kind {
	case wire.KindNull:
		return true
	case wire.KindObject:
	default:
		return false
	}
	var seen uint32
	return d.object(b, v, func(key []byte, v int) bool {
		switch string(key) {
		case "name":
			return once(&seen, 0) && d.str(b, v, &p.Name)
		case "status":
			return once(&seen, 1) && d.str(b, v, &p.Status)
		case "error":
			return once(&seen, 2) && d.str(b, v, &p.Error)
		case "result":
			if !once(&seen, 3) || !d.raw(b, v, &p.Result) {
				return false
			}
			d.result(b, v, p)
			return true
		case "role":
			return once(&seen, 4) && d.str(b, v, &p.Role)
		case "model":
			return once(&seen, 5) && d.str(b, v, &p.Model)
		case "blocks":
			return once(&seen, 6) && d.blocks(b, v, &p.Blocks)
		case "input":
			return once(&seen, 7) && d.raw(b, v, &p.Input)
		case "output":
			return once(&seen, 8) && d.text(b, v, &p.Output)
		case "command":
			return once(&seen, 9) && d.text(b, v, &p.Command)
		case "kind":
			return once(&seen, 10) && d.str(b, v, &p.Kind)
		case "call_id":
			return once(&seen, 11) && d.str(b, v, &p.CallID)
		case "source":
			return once(&seen, 12) && d.raw(b, v, &p.Source)
		case "supersedes":
			return once(&seen, 13) && d.str(b, v, &p.Supersedes)
		case "superseded_by":
			return once(&seen, 14) && d.str(b, v, &p.SupersededBy)
		case "supersedes_runs":
			return once(&seen, 15) && d.raw(b, v, &p.SupersedesRuns)
		case transcript.RevisedField:
			return once(&seen, 16) && d.raw(b, v, &p.Revised)
		case "renormalized_from":
			return once(&seen, 17) && d.raw(b, v, &p.RenormalizedFrom)
		}
		return otherKey(key)
	})
}

// result reads the result whose token is at v into p.res (resOK) when
// it reads it as json.Unmarshal would: an object whose keys are
// unescaped lower-case ASCII, those of lineResult's fields each once,
// their values strings or null. Anything else it leaves to
// linePayload.result, which asks encoding/json.
func (d *lineDecoder) result(b []byte, v int, p *linePayload) {
	if d.toks[v].Kind != wire.KindObject {
		return
	}
	var r lineResult
	var seen uint32
	ok := d.object(b, v, func(key []byte, v int) bool {
		switch string(key) {
		case "provider":
			return once(&seen, 0) && d.str(b, v, &r.Provider)
		case "model":
			return once(&seen, 1) && d.str(b, v, &r.Model)
		case "error":
			return once(&seen, 2) && d.str(b, v, &r.Error)
		case "status":
			return once(&seen, 3) && d.str(b, v, &r.Status)
		case "project":
			return once(&seen, 4) && d.str(b, v, &r.Project)
		case "cwd":
			return once(&seen, 5) && d.str(b, v, &r.Cwd)
		case "session_id":
			return once(&seen, 6) && d.str(b, v, &r.SessionID)
		}
		return otherKey(key)
	})
	if ok {
		p.res, p.resRead = r, resOK
	}
}

// blocks reads an array of blocks as encoding/json does: null is none,
// [] an empty list, a null element a zero block.
func (d *lineDecoder) blocks(b []byte, v int, out *[]lineBlock) bool {
	t := d.toks[v]
	switch t.Kind {
	case wire.KindNull:
		*out = nil
		return true
	case wire.KindArray:
	default:
		return false
	}
	list := (*out)[:0]
	if list == nil {
		list = []lineBlock{}
	}
	for e := v + 1; e < int(t.Next); e = int(d.toks[e].Next) {
		list = append(list, lineBlock{})
		switch d.toks[e].Kind {
		case wire.KindNull:
			continue
		case wire.KindObject:
		default:
			return false
		}
		k := &list[len(list)-1]
		var seen uint32
		ok := d.object(b, e, func(key []byte, v int) bool {
			switch string(key) {
			case "type":
				return once(&seen, 0) && d.str(b, v, (*string)(&k.Type))
			case "text":
				return once(&seen, 1) && d.text(b, v, &k.Text)
			case "thinking":
				return once(&seen, 2) && d.text(b, v, &k.Thinking)
			case "command":
				return once(&seen, 3) && d.text(b, v, &k.Command)
			case "chunk":
				return once(&seen, 4) && d.text(b, v, &k.Chunk)
			case "origin":
				return once(&seen, 5) && d.str(b, v, &k.Origin)
			}
			return otherKey(key)
		})
		if !ok {
			return false
		}
	}
	*out = list
	return true
}

// object calls member with each key of the object whose token is at
// and the index of its value's token; false from member (or an escaped
// key) stops it and returns false.
func (d *lineDecoder) object(b []byte, at int, member func(key []byte, v int) bool) bool {
	for k := at + 1; k < int(d.toks[at].Next); k = int(d.toks[k+1].Next) {
		kt := d.toks[k]
		if kt.Flags&wire.FlagEscaped != 0 || !member(b[kt.Start+1:kt.End-1], k+1) {
			return false
		}
	}
	return true
}

// otherKey says whether a key the decoder does not read is one that
// encoding/json would not read either: it matches a field's name
// case-insensitively (Unicode's simple folding: "ſ" is an s), so a key
// with an upper-case letter or a byte that is not ASCII is left to it.
func otherKey(key []byte) bool {
	for _, c := range key {
		if c >= 0x80 || c >= 'A' && c <= 'Z' {
			return false
		}
	}
	return true
}

// once notes member n of an object read, false when it was already
// (encoding/json decodes a member named twice into the field again:
// left to it).
func once(seen *uint32, n uint) bool {
	if *seen&(1<<n) != 0 {
		return false
	}
	*seen |= 1 << n
	return true
}

// scalar returns the token of the value at v when it is of kind; null
// says the value is null (which leaves a field as it is, as
// encoding/json does).
func (d *lineDecoder) scalar(v int, kind uint8) (t wire.Token, null, ok bool) {
	t = d.toks[v]
	return t, t.Kind == wire.KindNull, t.Kind == kind
}

// str reads a string (or null), a copy of its own.
func (d *lineDecoder) str(b []byte, v int, s *string) bool { return d.string(b, v, s, false) }

// text reads a string (or null) as str does, without copying it: the
// string shares b's memory, or, when it had escapes, the arena's, where
// it is unescaped (see lineDecoder: valid until the next line).
func (d *lineDecoder) text(b []byte, v int, s *string) bool { return d.string(b, v, s, true) }

// string is str, and text when shared.
func (d *lineDecoder) string(b []byte, v int, s *string, shared bool) bool {
	t, null, ok := d.scalar(v, wire.KindString)
	if null || !ok {
		return null
	}
	raw := b[t.Start+1 : t.End-1]
	start := len(d.arena)
	if t.Flags&wire.FlagEscaped != 0 {
		// Appended after the line's other texts: an arena grown into new
		// memory leaves those where they were.
		if d.arena, ok = unescape(d.arena, raw); !ok {
			return false
		}
		raw = d.arena[start:]
	}
	switch {
	case !utf8.Valid(raw):
		ok = json.Unmarshal(b[t.Start:t.End], s) == nil
	case shared:
		*s = unsafe.String(unsafe.SliceData(raw), len(raw))
	default:
		*s = string(raw)
	}
	if !shared {
		d.arena = d.arena[:start] // a copy gives the bytes back
	}
	return ok
}

// unescape appends the JSON string body s, its escapes decoded, to dst,
// as wire.Unescape does, copying the bytes between escapes at once
// where wire.Unescape appends them one by one (3% of an index build,
// on texts and outputs whose every line break is an escape; wire's is
// the plugins' too, and changing it builds all of them again). False
// for a malformed escape.
func unescape(dst, s []byte) ([]byte, bool) {
	for {
		i := bytes.IndexByte(s, '\\')
		if i < 0 {
			return append(dst, s...), true
		}
		dst = append(dst, s[:i]...)
		b, n, next, ok := wire.UnescapeOne(s, i)
		if !ok {
			return dst, false
		}
		dst = append(dst, b[:n]...)
		s = s[next:]
	}
}

// raw reads any value as json.RawMessage does (null is "null"), without
// copying it.
func (d *lineDecoder) raw(b []byte, v int, m *json.RawMessage) bool {
	t := d.toks[v]
	*m = b[t.Start:t.End:t.End]
	return true
}

// uint64 reads an unsigned integer (or null).
func (d *lineDecoder) uint64(b []byte, v int, n *uint64) bool {
	t, null, ok := d.scalar(v, wire.KindNumber)
	if null || !ok {
		return null
	}
	x, err := strconv.ParseUint(string(b[t.Start:t.End]), 10, 64)
	*n = x
	return err == nil
}

// int reads an integer (or null).
func (d *lineDecoder) int(b []byte, v int, n *int) bool {
	t, null, ok := d.scalar(v, wire.KindNumber)
	if null || !ok {
		return null
	}
	x, err := strconv.ParseInt(string(b[t.Start:t.End]), 10, strconv.IntSize)
	*n = int(x)
	return err == nil
}

package archive

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/twasm/twasm/internal/regfile"
)

// A sync reads the first line of every file of a store whose files name
// the session they are a sub-agent of (abi.SubAgentOf) that it will
// archive: Codex's session_meta, about 20 KiB of base instructions in
// each. Decoding it whole, and the member on the pointer's way again,
// cost a first sync of 400 rollouts a tenth more user CPU; linePointer
// walks the line's bytes once to the value the pointer names, skipping
// the others without decoding them (an import looks at every file
// beside each session given to it).

// linePointer is the JSON value a JSON Pointer names in the first line
// of the file at path, when that line (within limit bytes) holds one
// JSON object: v nil when the object holds no such value (a member on
// the way missing, or not an object). done is false when the line does
// not hold a whole object to walk (a JSON document written over many
// lines, a line longer than limit, bytes that are no JSON on the way):
// the caller reads the file's first JSON value as a whole
// (firstValue, pointerAt). Only what lies on the way is checked: the
// rest of the line is skipped, not validated. Of a member written twice
// the last is taken, as JavaScript's JSON.parse takes it (the reader of
// the agents written in it), and serde_json's Value and encoding/json
// (firstObject) do; so every object on the way is walked to its end.
// The walk is tried on the file's first linePrefix bytes first: a line
// that ends there is read no further.
func linePointer(path string, limit int, ptr string) (v []byte, done bool) {
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	head, err := readHeadBytes(path, int64(min(limit, linePrefix)))
	if err != nil {
		return nil, false
	}
	if i := bytes.IndexByte(head, '\n'); i >= 0 {
		return walkPointer(head[:i], ptr)
	}
	if v, done := walkPointer(head, ptr); done {
		return v, true // decided by the bytes before the cut
	}
	line, err := firstLine(path, limit)
	if err != nil {
		return nil, false
	}
	return walkPointer(line, ptr)
}

// linePrefix is how much of a file linePointer reads first.
const linePrefix = 8 << 10

// walkPointer walks b, JSON text, to the value ptr names (linePointer,
// pointerAt; of a member written twice, the last): done false when b
// ends, or is no object's members, before the walk is decided.
func walkPointer(b []byte, ptr string) (v []byte, done bool) {
	unescape := strings.NewReplacer("~1", "/", "~0", "~")
	s := jsonScan{b: b}
	for depth, tok := range strings.Split(ptr[1:], "/") {
		s.ws()
		if !s.more() {
			return nil, false
		}
		if s.b[s.i] == '[' {
			// An array's element, by its index (abi.StoreParent.Prompt:
			// the first message of Roo Code's ui_messages.json, "/0/text").
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || tok != strconv.Itoa(i) {
				return nil, depth > 0 // as an object's: a member on the way not there
			}
			s.i++
			if found, ok := s.element(i); !ok || !found {
				return nil, ok
			}
			continue
		}
		if s.b[s.i] != '{' {
			return nil, depth > 0 // a member on the way is not an object: none
		}
		s.i++
		if found, ok := s.member(unescape.Replace(tok)); !ok || !found {
			return nil, ok
		}
	}
	s.ws()
	start := s.i
	if !s.skip() {
		return nil, false
	}
	if s.i == len(s.b) && start < s.i && strings.IndexByte("\"}]", s.b[s.i-1]) < 0 {
		return nil, false // a number or word cut at the end: not decided
	}
	return s.b[start:s.i], true
}

// maxLineBuffer is the buffer firstLine reads a file through.
const maxLineBuffer = 64 << 10

// firstLine reads the file at path up to its first line end (without
// it), at most limit bytes: an error when the file cannot be read or
// holds no line end within limit.
func firstLine(path string, limit int) ([]byte, error) {
	f, err := regfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, min(limit, maxLineBuffer))
	var line []byte
	for {
		part, err := r.ReadSlice('\n')
		if len(line)+len(part) > limit {
			return nil, errors.New("first line too long")
		}
		switch {
		case err == nil:
			if line == nil {
				return part[:len(part)-1], nil
			}
			return append(line, part[:len(part)-1]...), nil
		case errors.Is(err, bufio.ErrBufferFull):
			line = append(line, part...)
		default:
			return nil, err
		}
	}
}

// jsonScan walks JSON text without decoding it.
type jsonScan struct {
	b []byte
	i int
}

func (s *jsonScan) more() bool { return s.i < len(s.b) }

// ws skips white space.
func (s *jsonScan) ws() {
	for s.more() && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\r' || s.b[s.i] == '\n') {
		s.i++
	}
}

// str skips the string at s.i (its opening quote) and returns it as
// written, quotes included.
func (s *jsonScan) str() ([]byte, bool) {
	for j := s.i + 1; j < len(s.b); j++ {
		switch s.b[j] {
		case '\\':
			j++
		case '"':
			q := s.b[s.i : j+1]
			s.i = j + 1
			return q, true
		}
	}
	return nil, false
}

// skip skips one value; false when the text ends first or is no JSON
// value there.
func (s *jsonScan) skip() bool {
	s.ws()
	if !s.more() {
		return false
	}
	switch s.b[s.i] {
	case '"':
		_, ok := s.str()
		return ok
	case '{', '[':
		depth := 0
		for s.more() {
			switch s.b[s.i] {
			case '"':
				if _, ok := s.str(); !ok {
					return false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					s.i++
					return true
				}
			}
			s.i++
		}
		return false
	case '}', ']', ',', ':':
		return false
	}
	start := s.i // a number, true, false or null
	for s.more() && strings.IndexByte(",}] \t\r\n", s.b[s.i]) < 0 {
		s.i++
	}
	return s.i > start
}

// element moves s, just inside an array, to its element i: found false
// when the array ends before it; ok false when the text ends first or is
// not an array's elements.
func (s *jsonScan) element(i int) (found, ok bool) {
	for n := 0; ; n++ {
		s.ws()
		if !s.more() {
			return false, false
		}
		if s.b[s.i] == ']' {
			return false, n == 0
		}
		if n == i {
			return true, true
		}
		if !s.skip() {
			return false, false
		}
		if more, ok := s.next(']'); !more {
			return false, ok
		}
	}
}

// next moves s, just after a value of an array (end ']') or an object
// (end '}'), past the comma before the next one: more true; at end, s
// left on it: more false, ok true; ok false when the text ends first or
// holds anything else.
func (s *jsonScan) next(end byte) (more, ok bool) {
	s.ws()
	if !s.more() {
		return false, false
	}
	switch s.b[s.i] {
	case ',':
		s.i++
		return true, true
	case end:
		return false, true
	}
	return false, false
}

// member moves s, just inside an object, to the value of its member
// name, the last when the object has several of that name (as
// JSON.parse): found false when the object ends without it; ok false
// when the text ends first or is not an object's members. The object is
// walked to its end.
func (s *jsonScan) member(name string) (found, ok bool) {
	at := -1 // the last value of name
	for {
		s.ws()
		if !s.more() {
			return false, false
		}
		if s.b[s.i] == '}' {
			if at < 0 {
				return false, true
			}
			s.i = at
			return true, true
		}
		if s.b[s.i] != '"' {
			return false, false
		}
		q, ok := s.str()
		if !ok {
			return false, false
		}
		key := string(q[1 : len(q)-1])
		if bytes.IndexByte(q, '\\') >= 0 && json.Unmarshal(q, &key) != nil {
			return false, false
		}
		s.ws()
		if !s.more() || s.b[s.i] != ':' {
			return false, false
		}
		s.i++
		if key == name {
			s.ws()
			at = s.i
		}
		if !s.skip() {
			return false, false
		}
		// Past a comma, or on the '}' the next pass ends at.
		if _, ok := s.next('}'); !ok {
			return false, false
		}
	}
}

// pointerAt is the JSON value a JSON Pointer (RFC 6901, "/a/b", "~1"
// and "~0" standing for "/" and "~") names in doc, one whole JSON value
// (firstValue): nil when a member on the way is missing or not an
// object. It walks as linePointer does: one reading of a first line.
func pointerAt(doc []byte, ptr string) []byte {
	if !strings.HasPrefix(ptr, "/") || doc == nil {
		return nil
	}
	v, _ := walkPointer(doc, ptr)
	return v
}

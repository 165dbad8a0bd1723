package benchtest

import (
	"bytes"
	"io"
	"regexp"
	"strconv"
)

// Copies makes distinct copies of a corpus of JSON lines (real fixtures):
// the same records fed again in one stream are a replay, which the
// plugins that know their records' ids skip, and whose state (a call of
// that id, a message of that id) they find again, so that a benchmark or
// a memory check on replays measures work and state a real session of as
// many distinct records would not have: the nth copy (from 0) is the
// corpus with "~<nth>" after every id's value (idMember), the first as it
// is, so that an id, and every reference to it, is the same within a
// copy and another in each.
type Copies struct {
	one  []byte
	ends []int // offsets in one where a non-empty id's value ends
}

// idMember is a JSON member naming a record, a message, a call or a
// request by a string: "id", "uuid", or a name ending in _id, Id, _uuid
// or Uuid (parentUuid, tool_use_id, request_id, ...). The session's own
// id (session_id, sessionId) is not one: the copies are one stream, a
// session's as the inputs are.
var idMember = regexp.MustCompile(`"(id|uuid|[A-Za-z_]*(?:_id|Id|_uuid|Uuid))"\s*:\s*"([^"\\]+)"`)

// NewCopies makes copies of one, which it keeps.
func NewCopies(one []byte) *Copies {
	c := &Copies{one: one}
	for _, m := range idMember.FindAllSubmatchIndex(one, -1) {
		switch string(one[m[2]:m[3]]) {
		case "session_id", "sessionId":
			continue
		}
		c.ends = append(c.ends, m[5])
	}
	return c
}

// Len is the corpus's length: about a copy's.
func (c *Copies) Len() int { return len(c.one) }

// Write writes the nth copy to w.
func (c *Copies) Write(w io.Writer, nth int) (int, error) {
	if nth == 0 || len(c.ends) == 0 {
		return w.Write(c.one)
	}
	suffix := []byte("~" + strconv.Itoa(nth))
	n, at := 0, 0
	for _, e := range c.ends {
		k, err := w.Write(c.one[at:e])
		n += k
		if err != nil {
			return n, err
		}
		k, err = w.Write(suffix)
		n += k
		if err != nil {
			return n, err
		}
		at = e
	}
	k, err := w.Write(c.one[at:])
	return n + k, err
}

// Append appends the nth copy to dst.
func (c *Copies) Append(dst []byte, nth int) []byte {
	b := bytes.NewBuffer(dst)
	_, _ = c.Write(b, nth) // a bytes.Buffer's Write never fails
	return b.Bytes()
}

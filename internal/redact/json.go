package redact

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/twasm/twasm/internal/jsonstr"
)

// A piece is part of a view, the text the rules see: text[start:end].
// A piece with id >= 0 may be rewritten (a string's decoded value, a
// delta of a stream); one with id < 0 is kept as it is (JSON syntax, a
// delta already written).
type piece struct {
	start, end int
	id         int
}

// cut masks hits in the editable pieces of view: the part of a secret in
// an editable piece is removed, and its first editable piece gets the
// mark "[REDACTED:<kind>]" where the secret began (or where the piece
// begins, when the secret began earlier). It returns the new text of
// each piece it changed, by id, and calls count once for each hit it
// masked. A hit that touches no editable piece is left (and not counted).
func cut(view []byte, pieces []piece, hits []hit, count func(kind string)) map[int][]byte {
	type edit struct {
		from, to int // piece-local
		mark     string
	}
	var edits map[int][]edit
	for _, h := range hits {
		marked := false
		for _, p := range pieces {
			if p.id < 0 || p.end <= h.start || p.start >= h.end {
				continue
			}
			s, e := max(h.start, p.start), min(h.end, p.end)
			if s == e && marked {
				continue
			}
			ed := edit{from: s - p.start, to: e - p.start}
			if !marked {
				ed.mark = "[REDACTED:" + h.kind + "]"
				marked = true
				count(h.kind)
			}
			if edits == nil {
				edits = map[int][]edit{}
			}
			edits[p.id] = append(edits[p.id], ed)
		}
	}
	if edits == nil {
		return nil
	}
	out := make(map[int][]byte, len(edits))
	for _, p := range pieces {
		eds, ok := edits[p.id]
		if !ok || p.id < 0 {
			continue
		}
		src := view[p.start:p.end]
		var b []byte
		at := 0
		for _, ed := range eds {
			b = append(b, src[at:ed.from]...)
			b = append(b, ed.mark...)
			at = ed.to
		}
		out[p.id] = append(b, src[at:]...)
	}
	return out
}

// maxDepth bounds how deep JSON held in a JSON string (a tool's
// arguments) is opened.
const maxDepth = 4

// maskText masks text: as JSON when it is JSON (or a server-sent event's
// data: line of JSON), so that secrets are found in what its strings mean,
// not in how they are escaped, else as it is. It returns text itself when
// nothing was masked.
func (r *Redactor) maskText(text []byte, depth int) []byte {
	if at := jsonStart(text); at >= 0 && depth < maxDepth {
		if out, ok := r.maskJSONText(text, at, depth); ok {
			return out
		}
	}
	hits := find(text)
	if len(hits) == 0 {
		return text
	}
	ch := cut(text, []piece{{0, len(text), 0}}, hits, r.count)
	if ch == nil {
		return text
	}
	return ch[0]
}

// jsonStart returns where JSON begins in a line that is JSON, or a
// server-sent event's data field holding JSON, or -1.
func jsonStart(b []byte) int {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	if rest, ok := bytes.CutPrefix(b[i:], []byte("data:")); ok {
		i += len(b[i:]) - len(rest)
		for i < len(b) && b[i] == ' ' {
			i++
		}
	}
	if i < len(b) && (b[i] == '{' || b[i] == '[') {
		return i
	}
	return -1
}

// A token is a JSON string literal at [qs, qe) of the text scanned.
type token struct {
	qs, qe int
	key    bool   // an object's key
	path   string // a value's path (scanJSON with paths)
}

// scanJSON finds the string literals of the JSON text b[at:] (and after
// it: a line may end in a line break). It does not validate the JSON;
// it returns false when a string is not terminated. With paths, each
// value's path is set (object keys and array indexes, "/"-joined).
func scanJSON(b []byte, at int, paths bool) ([]token, bool) {
	type frame struct {
		obj       bool
		expectKey bool
		key       string
		idx       int
	}
	var stack []frame
	var toks []token
	for i := at; i < len(b); i++ {
		switch b[i] {
		case '{':
			stack = append(stack, frame{obj: true, expectKey: true})
		case '[':
			stack = append(stack, frame{})
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case ',':
			if n := len(stack); n > 0 {
				if stack[n-1].obj {
					stack[n-1].expectKey = true
				} else {
					stack[n-1].idx++
				}
			}
		case ':':
			if n := len(stack); n > 0 {
				stack[n-1].expectKey = false
			}
		case '"':
			end := jsonstr.StringEnd(b, i)
			if end < 0 {
				return nil, false
			}
			t := token{qs: i, qe: end}
			n := len(stack)
			if n > 0 && stack[n-1].obj && stack[n-1].expectKey {
				t.key = true
				if paths {
					k, _ := jsonstr.Unquote(b[i:end])
					stack[n-1].key = k
				}
			} else if paths {
				var sb strings.Builder
				for _, f := range stack {
					sb.WriteByte('/')
					if f.obj {
						sb.WriteString(f.key)
					} else {
						sb.WriteString(strconv.Itoa(f.idx))
					}
				}
				t.path = sb.String()
			}
			toks = append(toks, t)
			i = end - 1
		}
	}
	return toks, true
}

// maskJSONText masks the strings of the JSON text b[at:]: each string
// is decoded (and masked as JSON itself when it holds JSON), and the
// rules see the text with every string decoded between its quotes, so an
// assignment such as "password": "..." keeps its context and an escaped
// secret is found. Only strings that change are encoded again; every
// other byte is kept. It returns false when b is not JSON it can read.
func (r *Redactor) maskJSONText(b []byte, at, depth int) ([]byte, bool) {
	toks, ok := scanJSON(b, at, false)
	if !ok {
		return nil, false
	}
	view := make([]byte, 0, len(b))
	pieces := make([]piece, 0, 2*len(toks)+1)
	decoded := make([][]byte, len(toks))
	prev := 0
	var nested map[int]bool
	for i, t := range toks {
		d, err := jsonstr.AppendUnquoted(nil, b[t.qs:t.qe])
		if err != nil {
			return nil, false
		}
		if jsonStart(d) == 0 {
			if m := r.maskText(d, depth+1); !bytes.Equal(m, d) {
				d = m
				if nested == nil {
					nested = map[int]bool{}
				}
				nested[i] = true
			}
		}
		decoded[i] = d
		pieces = append(pieces, piece{len(view), len(view) + t.qs + 1 - prev, -1})
		view = append(view, b[prev:t.qs+1]...)
		pieces = append(pieces, piece{len(view), len(view) + len(d), i})
		view = append(view, d...)
		prev = t.qe - 1
	}
	pieces = append(pieces, piece{len(view), len(view) + len(b) - prev, -1})
	view = append(view, b[prev:]...)
	ch := cut(view, pieces, find(view), r.count)
	if ch == nil && nested == nil {
		return b, true
	}
	var out []byte
	prev = 0
	for i, t := range toks {
		d, changed := ch[i]
		if !changed && !nested[i] {
			continue
		}
		if !changed {
			d = decoded[i]
		}
		out = append(out, b[prev:t.qs]...)
		out = jsonstr.AppendQuoted(out, string(d))
		prev = t.qe
	}
	return append(out, b[prev:]...), true
}

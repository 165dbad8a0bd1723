package sdk

import (
	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/wire"
)

// docBuffer reassembles one JSON document that a provider printed over
// several lines (a pretty-printed response, say), for a plugin that asks
// for it (Plugin.Reassemble): the host hands such a document over line by
// line, none of them JSON by itself. The driver starts a document with
// the line that opens it (add on a non-JSON line whose first non-blank
// byte is '{' or '['), and feeds the lines that follow while continues
// says they belong to it.
//
// The brackets are counted outside strings across lines; once they
// balance the text is indexed as [Parse] does. The buffers are reused
// from one document to the next, so a document, and every span made from
// it, is valid only until the next one starts. The zero docBuffer is
// ready to use.
type docBuffer struct {
	buf   []byte
	toks  []wire.Token
	doc   *abi.Doc // the last document handed out
	lines int      // lines in buf
	last  int      // lines of the last document handed out
	depth int      // bracket depth outside strings
	inStr bool     // inside a string at the end of buf
	esc   bool     // after a backslash inside a string
	on    bool     // a document is being reassembled
}

// active reports whether a document is being reassembled.
func (b *docBuffer) active() bool { return b.on }

// continues reports whether l can be the next line of the document being
// reassembled: any line but a JSON line that is not indented, which cannot
// be the inside of a pretty-printed document. It is false when no
// document is active.
func (b *docBuffer) continues(l *Line) bool {
	return b.on && !(l.JSON().Exists() && !indented(l.Raw))
}

// add appends the line raw (without its LF) to the document being
// reassembled, starting one when none is active. While brackets are still
// open it returns nil and 0. Once they balance it returns the document,
// or, when the text is not one JSON document, nil and the number of lines
// dropped (this one included). A line that would make the text longer
// than a line the host sends ([wire.MaxLineBytes]) drops the document with
// that line. A returned document or a drop ends the reassembly.
func (b *docBuffer) add(raw []byte) (doc *abi.Doc, dropped int) {
	if !b.on {
		b.start()
	} else if len(b.buf)+len(raw) > wire.MaxLineBytes {
		return nil, b.drop() + 1
	}
	b.buf = append(b.buf, raw...)
	b.buf = append(b.buf, '\n')
	b.lines++
	b.scan(raw)
	if b.depth > 0 || b.inStr {
		return nil, 0
	}
	if doc, ok := b.parse(); ok {
		return doc, 0
	}
	return nil, b.drop()
}

// end ends the reassembly at the end of the stream: the document when the
// text is one even though the brackets do not balance yet, otherwise nil
// and the number of lines dropped. Nothing (nil, 0) when no document is
// active.
func (b *docBuffer) end() (doc *abi.Doc, dropped int) {
	if !b.on {
		return nil, 0
	}
	if doc, ok := b.parse(); ok {
		return doc, 0
	}
	return nil, b.drop()
}

// docLines is the number of lines of the last document handed out: a
// driver declares them ignored (the lines before the closing one produce
// no record of their own), so that every raw line is accounted for (spec
// 6.8).
func (b *docBuffer) docLines() int { return b.last }

// drop abandons the document being reassembled and returns how many lines
// it held.
func (b *docBuffer) drop() int {
	n := b.lines
	b.buf, b.lines, b.on = b.buf[:0], 0, false
	return n
}

func (b *docBuffer) start() {
	if b.doc != nil {
		// Spans of the previous document must not read the reused
		// buffer: emitting one now panics as a span of an old line does.
		b.doc.Line, b.doc.Toks = nil, nil
		b.doc = nil
	}
	b.buf, b.lines = b.buf[:0], 0
	b.depth, b.inStr, b.esc = 0, false, false
	b.on = true
}

// parse indexes the text; on success the reassembly ends.
func (b *docBuffer) parse() (*abi.Doc, bool) {
	toks, ok := wire.BuildTape(b.toks[:0], b.buf)
	b.toks = toks
	if !ok {
		return nil, false
	}
	b.on, b.last, b.lines = false, b.lines, 0
	b.doc = &abi.Doc{Line: b.buf, Toks: toks}
	return b.doc, true
}

// scan tracks the bracket depth outside strings.
func (b *docBuffer) scan(raw []byte) {
	for _, c := range raw {
		if b.inStr {
			switch {
			case b.esc:
				b.esc = false
			case c == '\\':
				b.esc = true
			case c == '"':
				b.inStr = false
			}
			continue
		}
		switch c {
		case '"':
			b.inStr = true
		case '{', '[':
			b.depth++
		case '}', ']':
			b.depth--
		}
	}
	if b.depth < 0 {
		b.depth = 0 // unbalanced: let the parse try and fail
	}
}

func indented(b []byte) bool { return len(b) > 0 && (b[0] == ' ' || b[0] == '\t') }

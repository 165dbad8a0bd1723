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
//
// It also keeps the numbers of the lines it was given, as runs of
// consecutive numbers ([docBuffer.lineRuns]): the host never sends a blank
// line, so a document's lines need not be consecutive, and the driver
// accounts for them run by run, each against its own last line (spec 6.8).
type docBuffer struct {
	buf   []byte
	toks  []wire.Token
	doc   *abi.Doc  // the last document handed out
	runs  []lineRun // lines of the document being reassembled, or of the last one handed out or dropped
	depth int       // bracket depth outside strings
	inStr bool      // inside a string at the end of buf
	esc   bool      // after a backslash inside a string
	on    bool      // a document is being reassembled
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

// lineRun is a run of consecutive raw line numbers, first to last.
type lineRun struct{ first, last int }

// add appends line no, raw (without its LF), to the document being
// reassembled, starting one when none is active. While brackets are still
// open it returns nil and false. Once they balance it returns the
// document, or, when the text is not one JSON document, nil and true: its
// lines (this one included) are dropped. A line that would make the text
// longer than a line the host sends ([wire.MaxLineBytes]) drops the
// document with that line. A returned document or a drop ends the
// reassembly; [docBuffer.lineRuns] then holds its lines.
func (b *docBuffer) add(no int, raw []byte) (doc *abi.Doc, dropped bool) {
	if !b.on {
		b.start()
	} else if len(b.buf)+len(raw) > wire.MaxLineBytes {
		b.note(no)
		return nil, b.drop()
	}
	b.buf = append(b.buf, raw...)
	b.buf = append(b.buf, '\n')
	b.note(no)
	b.scan(raw)
	if b.depth > 0 || b.inStr {
		return nil, false
	}
	if doc, ok := b.parse(); ok {
		return doc, false
	}
	return nil, b.drop()
}

// note records line no as one of the document's.
func (b *docBuffer) note(no int) {
	if n := len(b.runs); n > 0 && b.runs[n-1].last+1 == no {
		b.runs[n-1].last = no
		return
	}
	b.runs = append(b.runs, lineRun{no, no})
}

// end ends the reassembly at the end of the stream: the document when the
// text is one even though the brackets do not balance yet, otherwise nil
// and whether lines were dropped. Nothing (nil, false) when no document
// is active.
func (b *docBuffer) end() (doc *abi.Doc, dropped bool) {
	if !b.on {
		return nil, false
	}
	if doc, ok := b.parse(); ok {
		return doc, false
	}
	return nil, b.drop()
}

// lineRuns are the lines of the last document handed out or dropped, in
// runs of consecutive numbers, until the next one starts: a driver
// declares them ignored (the lines before the closing one produce no
// record of their own) or counts them unmapped, so that every raw line
// is accounted for (spec 6.8).
func (b *docBuffer) lineRuns() []lineRun { return b.runs }

// drop abandons the document being reassembled and reports whether one
// was ([docBuffer.lineRuns] holds its lines); with none it forgets the
// lines of the last one.
func (b *docBuffer) drop() bool {
	if !b.on {
		b.runs = b.runs[:0]
		return false
	}
	b.buf, b.on = b.buf[:0], false
	return true
}

func (b *docBuffer) start() {
	if b.doc != nil {
		// Spans of the previous document must not read the reused
		// buffer: emitting one now panics as a span of an old line does.
		b.doc.Line, b.doc.Toks = nil, nil
		b.doc = nil
	}
	b.buf, b.runs = b.buf[:0], b.runs[:0]
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
	b.on = false
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

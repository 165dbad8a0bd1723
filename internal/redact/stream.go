package redact

import (
	"bytes"

	"github.com/twasm/twasm/internal/jsonstr"
)

// Limits of a Stream: how many lines (and bytes) it holds back at most
// (whatever may still join), and how much text before a delta it looks
// at for a secret that the delta ends.
const (
	streamMaxLines = 4096
	streamMaxBytes = 16 << 20
	streamWindow   = 512
	// streamGap is how many lines a field may go without a new string
	// and still be taken as streaming: the deltas of one field follow
	// one another (an SSE event is three lines), so a string nothing
	// joined for that many lines is joined by nothing later.
	streamGap = 32
)

// A Stream masks a raw capture: each line as [Redactor.MaskBytes] does,
// and the secrets that streaming split across lines: a key in two deltas
// ("sk-pro" then "j-Tq7..."), which no line holds whole, or a token whose
// "Bearer " came in the delta before it.
//
// It joins the strings of the lines by their JSON path (the text deltas
// of a stream follow one another at the same path), looks for a secret
// across each join, and holds lines back until it is written: a secret
// found across lines is cut out of every delta that holds part of it
// and marked in the first; then the line is masked as MaskBytes masks it.
// It counts nothing: what it masks is in the lines the plugin reads
// (MaskBytes) and in the events, which are counted.
//
// It holds back only what a later delta may still join: a line goes out
// (with the lines before it, in order) once each of its strings lies
// more than streamWindow bytes before the end of its path's text (no
// later secret can start in it: joins looks that far back) and in no
// private key block still open, or its path got no string for streamGap
// lines (the field is not streaming). So the raw capture lags by the last
// streamWindow bytes of each streamed field and the lines after them,
// never more than streamMaxLines lines (or streamMaxBytes), and Flush
// (the end of a step) or Release (when what the lines hold is written
// elsewhere: a transcript event made of them) sends them sooner. A
// secret that streaming split over more than that, or across a line
// released early, is not found whole in the raw capture (the transcript,
// which holds the joined text, is masked whatever the split).
//
// A Stream is used by one goroutine at a time.
type Stream struct {
	r       *Redactor
	lines   int // lines pushed
	held    []*heldLine
	bytes   int
	streams map[string]*strm
}

type heldLine struct {
	b     []byte
	frags []*frag
}

// A frag is one string of a held line, at text[a:b] of its stream.
type frag struct {
	tok  token
	s    *strm
	a, b int
}

// strm is the joined text of the strings at one path; offsets are
// absolute (base is the offset of text[0]).
type strm struct {
	text []byte
	base int
	hits []streamHit
	open int // the frags of held lines
	last int // the line that added the last string
	// pem is where the last private key header began, while no END line
	// followed it (else -1).
	pem int
}

// notePEM follows the private key blocks of the text from a on.
func (st *strm) notePEM(a int) {
	from := max(st.base, a-16) - st.base
	t := st.text[from:]
	if i := bytes.LastIndex(t, []byte("-----BEGIN ")); i >= 0 {
		st.pem = st.base + from + i
	}
	if st.pem >= 0 && bytes.Contains(st.text[max(st.pem-st.base, from):], []byte("-----END ")) {
		st.pem = -1
	}
}

type streamHit struct {
	hit
	marked bool
}

// NewStream returns a Stream.
func NewStream() *Stream { return &Stream{r: New(), streams: map[string]*strm{}} }

// Push takes the next line (as the provider wrote it) and returns the
// masked lines ready to be written, oldest first (none, while it holds
// them back).
func (s *Stream) Push(line []byte) [][]byte {
	s.lines++
	hl := &heldLine{b: line}
	if at := jsonStart(line); at >= 0 {
		if toks, ok := scanJSON(line, at, true); ok {
			for _, t := range toks {
				if t.key {
					continue
				}
				d, err := jsonstr.AppendUnquoted(nil, line[t.qs:t.qe])
				if err != nil || len(d) == 0 {
					continue
				}
				st := s.streams[t.path]
				if st == nil {
					st = &strm{pem: -1}
					s.streams[t.path] = st
				}
				a := st.base + len(st.text)
				st.text = append(st.text, d...)
				f := &frag{tok: t, s: st, a: a, b: a + len(d)}
				hl.frags = append(hl.frags, f)
				st.open++
				st.last = s.lines
				st.joins(a)
			}
		}
	}
	s.held = append(s.held, hl)
	s.bytes += len(line)
	var out [][]byte
	for len(s.held) > 0 && (s.settled(s.held[0]) || len(s.held) > streamMaxLines || s.bytes > streamMaxBytes && len(s.held) > 1) {
		out = append(out, s.release())
	}
	return out
}

// settled reports whether no later delta can join a held line: each of
// its strings ends more than streamWindow bytes before the end of its
// path's text (joins looks back no further) and after the header of any
// private key block still open there, or its path got no string for
// streamGap lines.
func (s *Stream) settled(hl *heldLine) bool {
	for _, f := range hl.frags {
		st := f.s
		if s.lines-st.last < streamGap && (f.b > st.base+len(st.text)-streamWindow || st.pem >= 0 && st.pem < f.b) {
			return false
		}
	}
	return true
}

// Held is how many lines the Stream holds back.
func (s *Stream) Held() int { return len(s.held) }

// Release returns the oldest n lines held (all of them when it holds
// fewer), masked with what is known now: their content is needed before
// a later delta could tell whether it ends a secret they start.
func (s *Stream) Release(n int) [][]byte {
	var out [][]byte
	for ; n > 0 && len(s.held) > 0; n-- {
		out = append(out, s.release())
	}
	return out
}

// Flush returns every line still held.
func (s *Stream) Flush() [][]byte { return s.Release(len(s.held)) }

// joins looks for secrets whose match ends in the delta just added,
// which starts at absolute offset a, with the text before it in view:
// one split by the join, one the delta holds whole, or one whose context
// (Bearer, the name it is assigned to) came before it. One that ends
// before a was looked for already. The view goes back streamWindow
// bytes, or to the header of a private key not yet ended.
func (st *strm) joins(a int) {
	st.notePEM(a)
	ws := max(st.base, a-streamWindow)
	if st.pem >= st.base && st.pem < ws {
		ws = st.pem
	}
	for _, h := range find(st.text[ws-st.base:]) {
		h.start += ws
		h.end += ws
		h.mend += ws
		if h.mend <= a {
			continue
		}
		merged := false
		for i := range st.hits {
			x := &st.hits[i]
			if x.start < h.end && h.start < x.end {
				x.start, x.end, x.mend = min(x.start, h.start), max(x.end, h.end), max(x.mend, h.mend)
				merged = true
				break
			}
		}
		if !merged {
			st.hits = append(st.hits, streamHit{hit: h})
		}
	}
}

// release writes out the oldest held line with its parts of secrets cut.
func (s *Stream) release() []byte {
	hl := s.held[0]
	s.held[0] = nil
	s.held = s.held[1:]
	s.bytes -= len(hl.b)
	out := hl.b
	var b []byte
	prev := 0
	for _, f := range hl.frags {
		st := f.s
		d := st.text[f.a-st.base : f.b-st.base]
		var nd []byte
		changed := false
		at := 0
		for i := range st.hits {
			h := &st.hits[i]
			if h.end <= f.a || h.start >= f.b {
				continue
			}
			from, to := max(h.start, f.a)-f.a, min(h.end, f.b)-f.a
			nd = append(nd, d[at:from]...)
			if !h.marked {
				h.marked = true
				nd = append(nd, "[REDACTED:"+h.kind+"]"...)
				s.r.count(h.kind)
			}
			at = to
			changed = true
		}
		st.open--
		if changed {
			nd = append(nd, d[at:]...)
			b = append(b, hl.b[prev:f.tok.qs]...)
			b = jsonstr.AppendQuoted(b, string(nd))
			prev = f.tok.qe
		}
		st.trim(f.b)
	}
	if b != nil {
		out = append(b, hl.b[prev:]...)
	}
	return s.r.MaskBytes(out)
}

// trim drops the text of a stream that no held delta and no later join
// needs: what lies before both upto (the end of the delta just
// released) and the window before the stream's end.
func (st *strm) trim(upto int) {
	keep := st.base + len(st.text) - streamWindow
	if st.open > 0 {
		keep = min(keep, upto)
	}
	if st.pem >= 0 {
		keep = min(keep, st.pem)
	}
	if keep-st.base < 64<<10 {
		return
	}
	st.text = append(st.text[:0], st.text[keep-st.base:]...)
	st.base = keep
	hs := st.hits[:0]
	for _, h := range st.hits {
		if h.end > keep {
			hs = append(hs, h)
		}
	}
	st.hits = hs
}

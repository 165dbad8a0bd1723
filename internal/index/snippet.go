package index

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/twasm/twasm/internal/regfile"
)

// The index keeps no copy of the text it searches (fts is contentless):
// a hit's text is read again from its transcript line, and its snippet
// cut there, with the matches marked by the same token rules FTS5 uses.

// tokens calls fn for each token of s as FTS5's unicode61 tokenizer with
// remove_diacritics 2 sees it (runs of letters, numbers and private-use
// characters), with its byte span in s and its folded form (lower case,
// Latin diacritics removed; valid until the next call).
func tokens(s string, fn func(start, end int, folded []byte)) {
	var buf []byte
	start := -1
	for i, r := range s {
		switch {
		case r < utf8.RuneSelf:
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			} else if !('a' <= r && r <= 'z' || '0' <= r && r <= '9') {
				if start >= 0 {
					fn(start, i, buf)
					start, buf = -1, buf[:0]
				}
				continue
			}
		case unicode.Is(unicode.Mn, r):
			continue // a diacritic on its own: removed
		case unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r):
			r = unicode.ToLower(r)
			if 0xC0 <= r && r < 0x250 || 0x1E00 <= r && r < 0x1F00 {
				if d := []rune(norm.NFD.String(string(r))); len(d) > 0 {
					r = d[0]
				}
			}
		default:
			if start >= 0 {
				fn(start, i, buf)
				start, buf = -1, buf[:0]
			}
			continue
		}
		if start < 0 {
			start = i
		}
		buf = utf8.AppendRune(buf, r)
	}
	if start >= 0 {
		fn(start, len(s), buf)
	}
}

// markTerm is a query word or phrase as folded tokens; prefix: the last
// token matches the tokens it starts.
type markTerm struct {
	toks   []string
	prefix bool
}

// markTerms are the terms of a query whose matches a snippet marks: each
// word and phrase as MatchExpr takes them, or, for a raw FTS5
// expression, each word but the operators (a word before * a prefix).
func markTerms(text string, raw bool) []markTerm {
	var out []markTerm
	if raw {
		tokens(text, func(start, end int, folded []byte) {
			switch text[start:end] {
			case "AND", "OR", "NOT", "NEAR":
				return
			}
			out = append(out, markTerm{toks: []string{string(folded)}, prefix: end < len(text) && text[end] == '*'})
		})
		return out
	}
	for _, t := range queryTerms(text) {
		var toks []string
		tokens(t.text, func(_, _ int, folded []byte) { toks = append(toks, string(folded)) })
		if len(toks) > 0 {
			out = append(out, markTerm{toks: toks, prefix: !t.phrase})
		}
	}
	return out
}

// snippetTokens is how many tokens a snippet shows, as FTS5's snippet()
// was asked for.
const snippetTokens = 24

// snippet cuts from text the window of snippetTokens tokens that holds
// the most distinct terms (the first such), marking each match with open
// and close and an ellipsis where text goes on. Without terms it is the
// first 160 bytes of text (a listing by filters alone).
func snippet(text string, terms []markTerm, open, close string) string {
	if len(terms) == 0 {
		if len(text) <= 160 {
			return text
		}
		end := 160
		for end > 0 && !utf8.RuneStart(text[end]) {
			end--
		}
		return text[:end]
	}
	// Tokens are read until the best window is known: one that holds
	// every term, or the end of the text (a long output is not folded
	// whole for a match in its first lines).
	type tok struct{ start, end, f0, f1 int } // f0, f1: the folded form in arena
	var toks []tok
	var arena []byte
	folded := func(i int) []byte { return arena[toks[i].f0:toks[i].f1] }
	// spanEnd[i]: the last token of the longest match starting at i
	// (-1: none); termAt[i]: the term whose match starts there (-1:
	// none); both decided once the terms' tokens are read. Each match is
	// marked on its own, as FTS5 marks each phrase it matched ("go
	// test" gives «go» «test»), overlapping ones as one.
	var spanEnd []int
	var termAt []int
	maxLen := 1
	for _, t := range terms {
		maxLen = max(maxLen, len(t.toks))
	}
	first, best := 0, -1
	bestWindow := func(i int) { // a match starts at i: the window around it
		start := max(0, i-snippetTokens/4)
		seen := map[int]bool{}
		for k := start; k < min(len(termAt), start+snippetTokens); k++ {
			if termAt[k] >= 0 {
				seen[termAt[k]] = true
			}
		}
		if len(seen) > best {
			best, first = len(seen), start
		}
	}
	matchAt := func(i int) { // every term's tokens from i are read
		termAt[i] = -1
		for ti, t := range terms {
			n := len(t.toks)
			if i+n > len(toks) {
				continue
			}
			ok := true
			for k, want := range t.toks {
				got := folded(i + k)
				if string(got) != want && !(t.prefix && k == n-1 && strings.HasPrefix(string(got), want)) {
					ok = false
					break
				}
			}
			if ok {
				if termAt[i] < 0 {
					termAt[i] = ti
				}
				spanEnd[i] = max(spanEnd[i], i+n-1)
			}
		}
	}
	// Matches wait in pending until the window around each is decided
	// (every token of it matched against the terms), then are scored.
	var pending []int
	decided := 0 // termAt is final below this
	score := func(final bool) {
		for len(pending) > 0 {
			c := pending[0]
			if !final && max(0, c-snippetTokens/4)+snippetTokens > decided {
				return
			}
			bestWindow(c)
			pending = pending[1:]
		}
	}
	decide := func(i int) {
		matchAt(i)
		decided = i + 1
		if termAt[i] >= 0 {
			pending = append(pending, i)
		}
	}
	done := false
	tokens(text, func(start, end int, f []byte) {
		if done {
			return
		}
		toks = append(toks, tok{start, end, len(arena), len(arena) + len(f)})
		arena = append(arena, f...)
		spanEnd = append(spanEnd, -1)
		termAt = append(termAt, -1)
		if i := len(toks) - maxLen; i >= 0 {
			decide(i)
			score(false)
			done = best == len(terms) && decided >= first+snippetTokens
		}
	})
	if !done {
		for i := max(0, len(toks)-maxLen+1); i < len(toks); i++ {
			decide(i)
		}
		score(true)
	}
	if best < 0 || !done && len(toks) <= snippetTokens {
		first = 0 // no match found, or the whole text fits
	} else if !done {
		first = min(first, len(toks)-snippetTokens) // a window full of tokens
	}
	last := min(len(toks), first+snippetTokens) - 1
	if last < first {
		return ""
	}
	var b strings.Builder
	if first > 0 {
		b.WriteString("…")
	}
	from := toks[first].start
	if first == 0 {
		from = 0
	}
	to := len(text)
	if done || last < len(toks)-1 { // stopped reading, or more tokens
		to = toks[last].end
	}
	pos := from
	for i := first; i <= last; i++ {
		if spanEnd[i] < 0 {
			continue
		}
		j := min(spanEnd[i], last)
		for k := i + 1; k <= j; k++ { // overlapping matches: one mark
			j = max(j, min(spanEnd[k], last))
		}
		b.WriteString(text[pos:toks[i].start])
		b.WriteString(open)
		b.WriteString(text[toks[i].start:toks[j].end])
		b.WriteString(close)
		pos = toks[j].end
		i = j
	}
	b.WriteString(text[pos:to])
	if strings.TrimSpace(text[to:]) != "" {
		b.WriteString("…")
	}
	return b.String()
}

// lines reads documents back from the transcripts, keeping each file
// open for the hits after.
type lines struct {
	dir   string
	files map[string]*os.File
	br    *bufio.Reader
	line  line
}

func newLines(root string) *lines {
	return &lines{dir: filepath.Join(root, "transcripts"), files: map[string]*os.File{}}
}

func (l *lines) close() {
	for _, f := range l.files {
		f.Close()
	}
}

// errMoved says a document is no longer where the index saw it (its
// transcript was rewritten since): the hit is left out.
var errMoved = errors.New("the document is no longer where the index saw it")

// doc returns the document at part of the line at off in run's
// transcript, checking that the line still holds seq.
func (l *lines) doc(run string, off int64, part int, seq uint64) (doc, error) {
	f := l.files[run]
	if f == nil {
		var err error
		if f, err = regfile.Open(filepath.Join(l.dir, run+".jsonl")); err != nil {
			return doc{}, err
		}
		l.files[run] = f
	}
	r := io.NewSectionReader(f, off, maxLine+1)
	if l.br == nil {
		l.br = bufio.NewReaderSize(r, 64<<10)
	} else {
		l.br.Reset(r)
	}
	b, err := l.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		long := append([]byte(nil), b...)
		for errors.Is(err, bufio.ErrBufferFull) {
			b, err = l.br.ReadSlice('\n')
			long = append(long, b...)
		}
		b = long
	}
	if err != nil {
		return doc{}, errMoved
	}
	if _, err := decodeLine(bytes.TrimRight(b, "\r\n"), &l.line); err != nil || l.line.Seq != seq {
		return doc{}, errMoved
	}
	docs := docsOf(&l.line)
	if part < 0 || part >= len(docs) {
		return doc{}, errMoved
	}
	return docs[part], nil
}

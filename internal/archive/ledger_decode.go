package archive

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/twasm/twasm/transcript"
)

// decodeEntry reads a ledger line into e (zero) as json.Unmarshal would,
// a few times faster: every sync opens the ledger, and decoding it with
// encoding/json was a quarter of a sync with nothing new. It reads the
// members json.Marshal writes of an Entry, each once, in any order; ok is false
// for anything else (a member it does not know, one named twice, a
// number or a string it leaves to encoding/json, a line that is not
// JSON), and the caller decodes the line with json.Unmarshal instead,
// which decides. So a line it reads is decoded as json.Unmarshal decodes
// it (FuzzDecodeEntry checks that both agree).
func decodeEntry(line []byte, e *Entry) (ok bool) { return decodeLine(line, e, false) }

// decodeRecord is decodeEntry setting only the members of e a run's
// record is made from (entries.set: run id, path, head, size, mtime,
// parts, its state and copies) and the numbers, times and the seldom
// held facts and files, and checking the others as decodeEntry reads
// them without keeping them (no string or totals made): ok is
// decodeEntry's. Loading the ledger makes every run's record and
// keeps no entry (each is read again from its line when asked for), so
// a sync with nothing new decodes no member it does not compare.
func decodeRecord(line []byte, e *Entry) (ok bool) { return decodeLine(line, e, true) }

// decodeLine is decodeEntry, or decodeRecord when record is set.
func decodeLine(line []byte, e *Entry, record bool) (ok bool) {
	r := jsonReader{b: line}
	// c is r checking, for a record, the members a record is not made
	// from.
	c := func() *jsonReader {
		r.check = record
		return &r
	}
	var seen uint32
	ok = r.object(func(key []byte) (ok bool) {
		r.check = false
		switch string(key) {
		case "run_id":
			ok = once(&seen, 0) && r.str(&e.RunID)
		case "provider":
			ok = once(&seen, 1) && c().str(&e.Provider)
		case "head":
			ok = once(&seen, 2) && r.str(&e.Head)
		case "path":
			ok = once(&seen, 3) && r.str(&e.Path)
		case "size":
			ok = once(&seen, 4) && r.int64(&e.Size)
		case "mtime_ns":
			ok = once(&seen, 5) && r.int64(&e.ModTime)
		case "offset":
			ok = once(&seen, 6) && r.int64(&e.Offset)
		case "sha256":
			ok = once(&seen, 7) && c().str(&e.SHA256)
		case "parts":
			ok = once(&seen, 8) && r.int(&e.Parts)
		case "raw":
			ok = once(&seen, 9) && c().str(&e.Raw)
		case "redact":
			ok = once(&seen, 10) && r.bool(&e.Redact)
		case "closed":
			ok = once(&seen, 11) && r.bool(&e.Closed)
		case "pending":
			ok = once(&seen, 12) && r.bool(&e.Pending)
		case "resume":
			ok = once(&seen, 13) && r.unmarshal(&e.Resume)
		case "first":
			ok = once(&seen, 14) && r.time(&e.First)
		case "last":
			ok = once(&seen, 15) && r.time(&e.Last)
		case "status":
			ok = once(&seen, 16) && c().str(&e.Status)
		case "totals":
			ok = once(&seen, 17) && c().totals(&e.Totals)
		case "facts":
			ok = once(&seen, 18) && r.unmarshal(&e.Facts)
		case "files":
			ok = once(&seen, 19) && r.unmarshal(&e.Files)
		case "parent_run_id":
			ok = once(&seen, 20) && c().str(&e.Parent)
		case "also":
			ok = once(&seen, 21) && r.unmarshal(&e.Also)
		case "superseded_by":
			ok = once(&seen, 22) && r.str(&e.SupersededBy)
		case "seal":
			ok = once(&seen, 23) && r.bool(&e.Seal)
		case "loose_at":
			ok = once(&seen, 24) && r.int(&e.LooseAt)
		}
		return ok
	})
	r.check = false
	r.ws()
	return ok && r.i == len(r.b)
}

// once notes member n of an object read, false when it was already:
// json.Unmarshal merges a member named twice into the first, which is
// left to it.
func once(seen *uint32, n uint) bool {
	if *seen&(1<<n) != 0 {
		return false
	}
	*seen |= 1 << n
	return true
}

// totals reads a Totals object (or null) as json.Unmarshal would
// (checking it: keeping nothing).
func (r *jsonReader) totals(t **Totals) bool {
	if r.null() {
		if !r.check {
			*t = nil
		}
		return true
	}
	if r.check {
		var x Totals
		return r.totalsInto(&x)
	}
	x := &Totals{}
	*t = x
	return r.totalsInto(x)
}

// totalsInto reads a Totals object into x.
func (r *jsonReader) totalsInto(x *Totals) bool {
	var seen uint32
	return r.object(func(key []byte) (ok bool) {
		switch string(key) {
		case "usage":
			ok = once(&seen, 0) && r.usage(&x.Usage)
		case "cost_usd":
			ok = once(&seen, 1) && r.floatPtr(&x.CostUSD)
		case "unmapped":
			// Into a map of its own: x, not passed on, is not
			// allocated to check a line.
			var m map[string]int
			if ok = once(&seen, 2) && r.unmarshal(&m); ok && !r.check {
				x.Unmapped = m
			}
		case "lines":
			ok = once(&seen, 3) && r.int(&x.Lines)
		case "failed_lines":
			ok = once(&seen, 4) && r.int(&x.FailedLines)
		case "warnings":
			ok = once(&seen, 5) && r.strings(&x.Warnings)
		}
		return ok
	})
}

// usage reads a transcript.Usage object (or null) as json.Unmarshal
// would (checking it: keeping nothing).
func (r *jsonReader) usage(u **transcript.Usage) bool {
	if r.null() {
		if !r.check {
			*u = nil
		}
		return true
	}
	var x *transcript.Usage
	if !r.check {
		x = &transcript.Usage{}
		*u = x
	}
	var seen uint32
	var figures *[8]int64 // the counters, allocated together
	return r.object(func(key []byte) bool {
		n, ok := usageMembers[string(key)]
		if !ok || !once(&seen, n) {
			return false
		}
		switch {
		case r.check && n == usageTier:
			return r.str(nil)
		case n == usageTier:
			return r.str(&x.ServiceTier)
		case r.check:
			var v int64
			return r.int64(&v)
		}
		p := usageFigure(x, n)
		if r.null() {
			*p = nil
			return true
		}
		if figures == nil {
			figures = new([8]int64)
		}
		if !r.int64(&figures[n]) {
			return false
		}
		*p = &figures[n]
		return true
	})
}

// usageMembers are the members of a transcript.Usage object: its
// counters (0-7, usageFigure) and the service tier.
var usageMembers = map[string]uint{
	"input_tokens": 0, "uncached_input_tokens": 1, "cache_read_tokens": 2, "cache_write_tokens": 3,
	"cache_write_1h_tokens": 4, "output_tokens": 5, "reasoning_tokens": 6, "total_tokens": 7,
	"service_tier": usageTier,
}

const usageTier = 8

// usageFigure is counter n of x (usageMembers).
func usageFigure(x *transcript.Usage, n uint) **int64 {
	return [...]**int64{&x.InputTokens, &x.UncachedInputTokens, &x.CacheReadTokens, &x.CacheWriteTokens,
		&x.CacheWrite1hTokens, &x.OutputTokens, &x.ReasoningTokens, &x.TotalTokens}[n]
}

// jsonReader reads JSON values from b at i, strictly: a value it cannot
// read as encoding/json would sets nothing it returns ok for.
type jsonReader struct {
	b []byte
	i int
	// check: the values read are checked as they would be read, and
	// kept only where they make no string, slice or pointer (numbers,
	// booleans, times).
	check bool
}

func (r *jsonReader) ws() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// peek is the next byte after white space (0 at the end).
func (r *jsonReader) peek() byte {
	r.ws()
	if r.i < len(r.b) {
		return r.b[r.i]
	}
	return 0
}

// lit reads the literal s (true, false, null).
func (r *jsonReader) lit(s string) bool {
	r.ws()
	if len(r.b)-r.i < len(s) || string(r.b[r.i:r.i+len(s)]) != s {
		return false
	}
	r.i += len(s)
	return true
}

// null reads a null when the next value is one.
func (r *jsonReader) null() bool { return r.peek() == 'n' && r.lit("null") }

// object reads an object, calling member with each key, the reader at
// its value, which member reads; member returns false to give up (a
// member it does not read), and object then returns false.
func (r *jsonReader) object(member func(key []byte) bool) bool {
	if r.peek() != '{' {
		return false
	}
	r.i++
	for first := true; ; first = false {
		key, done, ok := r.nextKey(first)
		if !ok || !done && !member(key) {
			return false
		}
		if done {
			return true
		}
	}
}

// nextKey reads up to the next member's value of an object being read
// (first: right after its '{') and returns its key, or done at the
// object's end; ok is false on a syntax error.
func (r *jsonReader) nextKey(first bool) (key []byte, done, ok bool) {
	switch c := r.peek(); {
	case c == '}':
		r.i++
		return nil, true, true
	case !first && c != ',':
		return nil, false, false
	case !first:
		r.i++
	}
	tok, plain, ok := r.strToken()
	if !ok {
		return nil, false, false
	}
	if key = tok[1 : len(tok)-1]; !plain {
		var s string
		if json.Unmarshal(tok, &s) != nil {
			return nil, false, false
		}
		key = []byte(s)
	}
	if r.peek() != ':' {
		return nil, false, false
	}
	r.i++
	return key, false, true
}

// strToken returns the next string token, quotes included, and whether
// it holds only printable ASCII without escapes (its bytes are then the
// string).
func (r *jsonReader) strToken() (tok []byte, plain, ok bool) {
	if r.peek() != '"' {
		return nil, false, false
	}
	start := r.i
	plain = true
	for j := start + 1; j < len(r.b); j++ {
		switch c := r.b[j]; {
		case c == '"':
			r.i = j + 1
			return r.b[start:r.i], plain, true
		case c == '\\':
			plain = false
			j++ // the escaped byte (checked by json.Unmarshal)
		case c < 0x20 || c >= 0x80:
			plain = false
		}
	}
	return nil, false, false
}

// str reads a string (or null, which leaves s as it is, as
// json.Unmarshal does); one with escapes or other than printable ASCII
// is decoded by encoding/json. Checking, s is not set (it may be nil).
func (r *jsonReader) str(s *string) bool {
	if r.null() {
		return true
	}
	tok, plain, ok := r.strToken()
	switch {
	case !ok:
		return false
	case plain && r.check:
		return true
	case plain:
		*s = string(tok[1 : len(tok)-1])
		return true
	}
	// Into a string of its own: s, not passed on, does not escape.
	var v string
	if json.Unmarshal(tok, &v) != nil {
		return false
	}
	if !r.check {
		*s = v
	}
	return true
}

// strings reads an array of strings (or null).
func (r *jsonReader) strings(out *[]string) bool {
	if r.null() {
		if !r.check {
			*out = nil
		}
		return true
	}
	if r.peek() != '[' {
		return false
	}
	r.i++
	var list []string
	if !r.check {
		list = []string{}
	}
	if r.peek() == ']' {
		r.i++
		if !r.check {
			*out = list
		}
		return true
	}
	for {
		var s string
		if r.peek() != '"' || !r.str(&s) {
			return false
		}
		if !r.check {
			list = append(list, s)
		}
		switch r.peek() {
		case ',':
			r.i++
		case ']':
			r.i++
			if !r.check {
				*out = list
			}
			return true
		default:
			return false
		}
	}
}

// number returns the next number token, checked against JSON's grammar;
// integer says it has no fraction or exponent.
func (r *jsonReader) number() (tok []byte, integer, ok bool) {
	r.ws()
	start, j := r.i, r.i
	digits := func() int {
		n := 0
		for j < len(r.b) && r.b[j] >= '0' && r.b[j] <= '9' {
			j++
			n++
		}
		return n
	}
	if j < len(r.b) && r.b[j] == '-' {
		j++
	}
	switch {
	case j < len(r.b) && r.b[j] == '0':
		j++
	case digits() == 0:
		return nil, false, false
	}
	integer = true
	if j < len(r.b) && r.b[j] == '.' {
		j++
		if digits() == 0 {
			return nil, false, false
		}
		integer = false
	}
	if j < len(r.b) && (r.b[j] == 'e' || r.b[j] == 'E') {
		j++
		if j < len(r.b) && (r.b[j] == '+' || r.b[j] == '-') {
			j++
		}
		if digits() == 0 {
			return nil, false, false
		}
		integer = false
	}
	r.i = j
	return r.b[start:j], integer, true
}

// int64 reads an integer that fits (or null, leaving v as it is).
func (r *jsonReader) int64(v *int64) bool {
	if r.null() {
		return true
	}
	tok, integer, ok := r.number()
	if !ok || !integer {
		return false
	}
	n, err := strconv.ParseInt(string(tok), 10, 64)
	if err != nil {
		return false
	}
	*v = n
	return true
}

// int reads an int (or null).
func (r *jsonReader) int(v *int) bool {
	if r.null() {
		return true
	}
	tok, integer, ok := r.number()
	if !ok || !integer {
		return false
	}
	n, err := strconv.ParseInt(string(tok), 10, strconv.IntSize)
	if err != nil {
		return false
	}
	*v = int(n)
	return true
}

// floatPtr reads a number into a new float64 (or null: nil).
func (r *jsonReader) floatPtr(v **float64) bool {
	if r.null() {
		if !r.check {
			*v = nil
		}
		return true
	}
	tok, _, ok := r.number()
	if !ok {
		return false
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		return false
	}
	if !r.check {
		p := new(float64)
		*p = f
		*v = p
	}
	return true
}

// bool reads true or false (or null, leaving v as it is).
func (r *jsonReader) bool(v *bool) bool {
	switch r.peek() {
	case 't':
		*v = true
		return r.lit("true")
	case 'f':
		*v = false
		return r.lit("false")
	case 'n':
		return r.lit("null")
	}
	return false
}

// time reads a time as time.Time's UnmarshalJSON does (json.Unmarshal
// calls it with the token).
func (r *jsonReader) time(t *time.Time) bool {
	if r.null() {
		return true
	}
	tok, _, ok := r.strToken()
	return ok && t.UnmarshalJSON(tok) == nil
}

// unmarshal reads the next value with json.Unmarshal (the members a
// ledger line seldom holds).
func (r *jsonReader) unmarshal(v any) bool {
	start := r.i
	if !r.skip(0) {
		return false
	}
	return json.Unmarshal(r.b[start:r.i], v) == nil
}

// maxDepth bounds the nesting skip follows.
const maxDepth = 64

// skip passes over the next value, checking its syntax.
func (r *jsonReader) skip(depth int) bool {
	if depth > maxDepth {
		return false
	}
	switch c := r.peek(); {
	case c == '{':
		return r.object(func([]byte) bool { return r.skip(depth + 1) })
	case c == '[':
		r.i++
		if r.peek() == ']' {
			r.i++
			return true
		}
		for {
			if !r.skip(depth + 1) {
				return false
			}
			switch r.peek() {
			case ',':
				r.i++
			case ']':
				r.i++
				return true
			default:
				return false
			}
		}
	case c == '"':
		_, _, ok := r.strToken()
		return ok
	case c == 't':
		return r.lit("true")
	case c == 'f':
		return r.lit("false")
	case c == 'n':
		return r.lit("null")
	case c == '-' || c >= '0' && c <= '9':
		_, _, ok := r.number()
		return ok
	}
	return false
}

// linePath reads the path member of a ledger line whose members are
// each named once (a line decodeEntry reads, or one json.Marshal wrote)
// as decodeEntry reads it, passing over the members before it without
// decoding them and stopping there (json.Marshal writes it fourth): a
// sync asks for the path of every run twice (the runs under a store
// gone, the open runs whose file was not found). ok is false when it
// finds none it reads: the caller reads the whole entry instead.
func linePath(line []byte) (path string, ok bool) {
	r := jsonReader{b: line}
	found := false
	r.object(func(key []byte) bool {
		if string(key) == "path" {
			found, ok = true, r.str(&path)
			return false
		}
		return r.skip(0)
	})
	return path, found && ok
}

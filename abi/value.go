package abi

import (
	"math"
	"unsafe"

	"github.com/twasm/twasm/internal/wire"
)

// Doc is a line and its tape. The zero Doc is "not JSON".
//
// A Doc aliases the line and tape it was made from: it is valid only as
// long as they are (in a plugin, for the duration of one Line call). The
// SDK makes Docs (each line's, sdk.Parse); a plugin reads one through
// Root.
type Doc struct {
	Line []byte
	Toks []wire.Token
	// Keys is the key set the tape's keyed tokens (flagKeyed) are
	// numbered in: the plugin's declared keys. The SDK sets it; with nil,
	// keyed tokens are matched by their bytes.
	Keys *KeySet
	// Gen tells apart the documents a Doc held over time: the SDK reuses
	// its Docs from call to call and stamps each with the call, so that a
	// value kept from an earlier call is recognized as stale.
	Gen uint32
}

// Root returns the top-level value, or a missing Value when the line is not
// JSON.
func (d *Doc) Root() Value {
	if d == nil || len(d.Toks) == 0 {
		return Value{}
	}
	return Value{d: d, i: 0}
}

// Value is a position in a Doc. The zero Value is "missing": every accessor
// on it returns the zero result, so lookups chain without checks:
// doc.Root().Get("message").Get("usage").Get("input_tokens").Int().
type Value struct {
	d *Doc
	i int
}

// Exists reports whether v is present (not missing).
func (v Value) Exists() bool { return v.d != nil }

// Kind returns the JSON kind, KindInvalid when missing.
func (v Value) Kind() Kind {
	if v.d == nil {
		return KindInvalid
	}
	return Kind(v.d.Toks[v.i].Kind)
}

func (v Value) tok() wire.Token { return v.d.Toks[v.i] }

// Doc returns the document v belongs to.
func (v Value) Doc() *Doc { return v.d }

// Span returns the byte range of v in its line (quotes included for a
// string).
func (v Value) Span() (start, end int) {
	if v.d == nil {
		return 0, 0
	}
	t := v.tok()
	return int(t.Start), int(t.End)
}

// Raw returns the JSON text of v, aliasing the line.
func (v Value) Raw() []byte {
	if v.d == nil {
		return nil
	}
	t := v.tok()
	return v.d.Line[t.Start:t.End]
}

// Escaped reports whether v is a string whose literal has escapes.
func (v Value) Escaped() bool { return v.d != nil && v.tok().Flags&flagEscaped != 0 }

// Get returns the member named key of an object (the first one when keys
// repeat: stopping early keeps lookups cheap), or a missing Value.
func (v Value) Get(key string) Value {
	d := v.d
	if d == nil {
		return Value{}
	}
	toks := d.Toks
	i := v.i
	if uint(i) >= uint(len(toks)) || toks[i].Kind != wire.KindObject {
		return Value{}
	}
	end := int(toks[i].Next)
	if end > len(toks) {
		end = len(toks)
	}
	h := keyHash(key)
	// A keyed token carries 1 + the number of its key in the declared
	// keys (Doc.Keys): key's tokens carry want, found here once, so that
	// each keyed member is skipped on one compare of integers the loop
	// holds (no load of the set's tables per member, each a bounds check
	// inside WebAssembly). want is 0 when key is not declared: no keyed
	// token in range is key then.
	want, nk := 0, 0
	if dict := d.Keys; dict != nil {
		want, nk = dict.number(h, key), len(dict.w.Names)
	}
	for k := i + 1; k+1 < end; {
		kt := &toks[k]
		// Keyed and hashed keys (the common cases) are skipped on one
		// compare; bytes are compared only on a match or an escaped key.
		switch kt.Flags & (flagHashed | flagKeyed) {
		case flagHashed | flagKeyed, flagHashed:
			if kt.Hash == h && int(kt.End-kt.Start) == len(key)+2 && view(d.Line[kt.Start+1:kt.End-1]) == key {
				return Value{d: d, i: k + 1}
			}
		case flagKeyed:
			if n := int(kt.Hash); uint(n-1) < uint(nk) {
				if n == want {
					return Value{d: d, i: k + 1}
				}
			} else if keyEquals(d.Line[kt.Start:kt.End], kt.Flags, key) {
				return Value{d: d, i: k + 1}
			}
		default:
			if keyEquals(d.Line[kt.Start:kt.End], kt.Flags, key) {
				return Value{d: d, i: k + 1}
			}
		}
		k = int(toks[k+1].Next)
	}
	return Value{}
}

// sameString is a == b that skips the byte compare when both are the same
// string in memory (a key name and the literal a plugin looks it up by).
func sameString(a, b string) bool {
	return len(a) == len(b) && (unsafe.StringData(a) == unsafe.StringData(b) || a == b)
}

// Path is Get applied in turn.
func (v Value) Path(keys ...string) Value {
	for _, k := range keys {
		v = v.Get(k)
	}
	return v
}

func keyEquals(lit []byte, flags uint8, key string) bool {
	if len(lit) < 2 {
		return false
	}
	if flags&flagEscaped == 0 {
		return len(lit) == len(key)+2 && view(lit[1:len(lit)-1]) == key
	}
	return unescapedEquals(lit[1:len(lit)-1], key)
}

// view returns b as a string without copying it: for comparisons and map
// lookups only, never to keep (the string changes with b). TinyGo copies
// on every string(b), even in a comparison, where Go does not; inside a
// plugin that is an allocation per compare.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// Len returns the number of elements of an array or members of an object.
func (v Value) Len() int {
	k := v.Kind()
	if k != KindArray && k != KindObject {
		return 0
	}
	n := 0
	it := v.Iter()
	for it.Next() {
		n++
	}
	return n
}

// Index returns element n of an array, or a missing Value.
func (v Value) Index(n int) Value {
	it := v.Iter()
	for i := 0; it.Next(); i++ {
		if i == n {
			return it.Value()
		}
	}
	return Value{}
}

// Iter iterates over the elements of an array or the members of an object.
func (v Value) Iter() Iter {
	k := v.Kind()
	if k != KindArray && k != KindObject {
		return Iter{}
	}
	return Iter{d: v.d, next: v.i + 1, end: int(v.d.Toks[v.i].Next), obj: k == KindObject}
}

// Iter walks a container. Use:
//
//	it := v.Iter()
//	for it.Next() {
//		it.Key(); it.Value()
//	}
//
// rather than for it := v.Iter(); it.Next(); {...}: a variable declared in
// a for statement is a new one on every iteration (Go 1.22), and TinyGo
// allocates each one on the heap when its address is taken, as Next's
// pointer receiver does.
type Iter struct {
	d         *Doc
	next, end int
	obj       bool
	key, val  int
}

// Next advances to the next element and reports whether there is one.
func (it *Iter) Next() bool {
	if it.d == nil || it.next >= it.end {
		return false
	}
	if it.obj {
		if it.next+1 >= it.end {
			return false
		}
		it.key = it.next
		it.val = it.next + 1
	} else {
		it.key = -1
		it.val = it.next
	}
	it.next = int(it.d.Toks[it.val].Next)
	return true
}

// Key returns the current member's key (missing inside an array).
func (it *Iter) Key() Value {
	if it.key < 0 {
		return Value{}
	}
	return Value{d: it.d, i: it.key}
}

// Value returns the current element.
func (it *Iter) Value() Value { return Value{d: it.d, i: it.val} }

// Is reports whether v is a string equal to s, without allocating when the
// literal has no escapes.
func (v Value) Is(s string) bool {
	if v.d == nil {
		return false
	}
	t := &v.d.Toks[v.i]
	if t.Kind != wire.KindString {
		return false
	}
	if t.Flags&flagEscaped == 0 {
		// Inlined length check: most mismatches stop here without a call.
		return int(t.End-t.Start) == len(s)+2 && view(v.d.Line[t.Start+1:t.End-1]) == s
	}
	return keyEquals(v.d.Line[t.Start:t.End], t.Flags, s)
}

// String returns the value of a string (unescaped; invalid escapes are
// kept verbatim), the JSON text of any other value, or "" when missing.
// It allocates; plugins should prefer emitting spans (see the SDK).
func (v Value) String() string {
	switch v.Kind() {
	case KindInvalid:
		return ""
	case KindString:
		raw := v.Raw()
		raw = raw[1 : len(raw)-1]
		if v.tok().Flags&flagEscaped == 0 {
			return string(raw)
		}
		// Unescaping never lengthens: one allocation, which the string
		// then owns (no second copy).
		if s, ok := unescape(make([]byte, 0, len(raw)), raw); ok {
			return unsafe.String(unsafe.SliceData(s), len(s))
		}
		return string(raw)
	default:
		return string(v.Raw())
	}
}

// AppendText appends to dst the bytes String returns, without String's
// copy: a plugin parsing the JSON a string holds copies it once, not twice
// (the string, then its bytes).
func (v Value) AppendText(dst []byte) []byte {
	switch v.Kind() {
	case KindInvalid:
		return dst
	case KindString:
		raw := v.Raw()
		raw = raw[1 : len(raw)-1]
		if v.tok().Flags&flagEscaped != 0 {
			if s, ok := unescape(dst, raw); ok {
				return s
			}
		}
		return append(dst, raw...)
	default:
		return append(dst, v.Raw()...)
	}
}

// Int returns v as an integer: a JSON number, or a string holding one.
func (v Value) Int() (int64, bool) {
	switch v.Kind() {
	case KindNumber:
		raw := v.Raw()
		if n, ok := smallInt(raw); ok {
			return n, true
		}
		if n, ok := wire.ParseInt(raw); ok {
			return n, true
		}
		// Converting an out-of-range float to int64 is
		// platform-dependent in Go (it wraps natively, saturates in
		// WebAssembly): check the range first.
		if f, ok := wire.ParseFloat(raw); ok && f >= -0x1p63 && f < 0x1p63 && f == math.Trunc(f) {
			return int64(f), true
		}
	case KindString:
		raw := v.Raw()
		raw = raw[1 : len(raw)-1]
		if v.tok().Flags&flagEscaped != 0 {
			s := v.String()
			raw = unsafe.Slice(unsafe.StringData(s), len(s))
		} else if n, ok := smallInt(raw); ok {
			return n, true
		}
		return wire.ParseInt(raw)
	}
	return 0, false
}

// smallInt parses an optional minus and 1 to 18 decimal digits (no
// overflow possible), the common token count or exit code, inline: no
// call inside WebAssembly.
func smallInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// Float returns v as a float64 when it is a number.
func (v Value) Float() (float64, bool) {
	if v.Kind() != KindNumber {
		return 0, false
	}
	return wire.ParseFloat(v.Raw())
}

// Bool returns v's value when it is true or false.
func (v Value) Bool() (value, ok bool) {
	switch v.Kind() {
	case KindTrue:
		return true, true
	case KindFalse:
		return false, true
	}
	return false, false
}

// Truthy reports whether v is true.
func (v Value) Truthy() bool { return v.Kind() == KindTrue }

// KeySet is a fixed list of object keys prepared for Lookup: their hashes
// are computed once, and a table by hash finds the key a member may be in
// one step, so one pass over an object answers every key of the set.
type KeySet struct {
	w wire.KeySet // the tables the host matches declared keys with
}

// NewKeySet prepares names (at most 255) for Lookup.
func NewKeySet(names ...string) *KeySet { return &KeySet{w: *wire.NewKeySet(names...)} }

// number returns 1 + the index of key (whose hash is h) in the set, the
// number the host marks key's tokens with (the first such index, as the
// host finds it, when a name repeats), or 0 when key is not in the set.
func (ks *KeySet) number(h uint16, key string) int {
	w := &ks.w
	for j := int(w.Head[uint8(h)]) - 1; j >= 0; j = int(w.Next[j]) - 1 {
		if w.Hash[j] == h && sameString(w.Names[j], key) {
			return j + 1
		}
	}
	return 0
}

// Names returns the names of the set, in order. The slice must not be
// modified.
func (ks *KeySet) Names() []string { return ks.w.Names }

// Lookup sets out[i] to v.Get(ks.Names()[i]) for every name of the set
// (out must have as many elements), in one pass over the object instead of one
// per name. Members that are not objects leave out all missing.
func (v Value) Lookup(ks *KeySet, out []Value) {
	out = out[:len(ks.w.Names)]
	clear(out)
	d := v.d
	if d == nil {
		return
	}
	toks := d.Toks
	i := v.i
	if uint(i) >= uint(len(toks)) || toks[i].Kind != wire.KindObject {
		return
	}
	end := int(toks[i].Next)
	if end > len(toks) {
		end = len(toks)
	}
	dict := d.Keys
	for k := i + 1; k+1 < end; {
		kt := &toks[k]
		switch f := kt.Flags & (flagHashed | flagKeyed); {
		case f == flagKeyed && ks == dict:
			// The host found this key in the plugin's declared keys,
			// which ks is: no hash, no compare.
			if j := int(kt.Hash) - 1; uint(j) < uint(len(out)) && out[j].d == nil {
				out[j] = Value{d: d, i: k + 1}
			}
		case f == flagHashed|flagKeyed && ks == dict:
			// Not a declared key, so not in ks.
		case f == flagKeyed && dict != nil && uint(int(kt.Hash)-1) < uint(len(dict.w.Names)):
			// A declared key, looked up in another set by its name.
			name := dict.w.Names[kt.Hash-1]
			h := dict.w.Hash[kt.Hash-1]
			for j := int(ks.w.Head[uint8(h)]) - 1; j >= 0; j = int(ks.w.Next[j]) - 1 {
				if ks.w.Hash[j] == h && out[j].d == nil && sameString(ks.w.Names[j], name) {
					out[j] = Value{d: d, i: k + 1}
					break
				}
			}
		case f&flagHashed != 0:
			h := kt.Hash
			for j := int(ks.w.Head[uint8(h)]) - 1; j >= 0; j = int(ks.w.Next[j]) - 1 {
				if ks.w.Hash[j] == h && out[j].d == nil {
					name := ks.w.Names[j]
					if int(kt.End-kt.Start) == len(name)+2 && view(d.Line[kt.Start+1:kt.End-1]) == name {
						out[j] = Value{d: d, i: k + 1}
						break
					}
				}
			}
		default:
			lit := d.Line[kt.Start:kt.End]
			for j, name := range ks.w.Names {
				if out[j].d == nil && keyEquals(lit, kt.Flags, name) {
					out[j] = Value{d: d, i: k + 1}
					break
				}
			}
		}
		k = int(toks[k+1].Next)
	}
}

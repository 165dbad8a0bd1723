package wire

import "unsafe"

// The JSON kinds of tape tokens (Token.Kind); abi.Kind has the same
// values.
const (
	KindInvalid = iota
	KindObject
	KindArray
	KindString
	KindNumber
	KindTrue
	KindFalse
	KindNull
)

// FlagEscaped is set on a string token whose literal contains a backslash:
// its contents must be unescaped before use.
const FlagEscaped uint8 = 1

// FlagHashed is set on an object key whose Hash is KeyHash of its text
// (ABI 1.1; a 1.0 host leaves it unset and Get compares bytes).
const FlagHashed uint8 = 2

// FlagKeyed is set on an object key that the host compared with the keys
// the plugin declared in its manifest (ABI 1.2, Manifest.Keys; only for a
// plugin that declares keys). With FlagHashed too, the key is none of them
// and Hash is KeyHash of its text; without it, the key is declared key
// number Hash (1-based, in the manifest's order) and Hash is that number,
// not a hash. Escaped keys are never keyed (nor hashed).
const FlagKeyed uint8 = 4

// KeyHash is the 16-bit hash of an object key carried in its token. It
// looks at the length and three bytes only: it is a pre-filter that lets
// Get skip most keys with one compare (a match is confirmed on the
// bytes), and computing it must cost less than the compare it saves,
// inside WebAssembly too, on every Get.
func KeyHash(key string) uint16 {
	n := len(key)
	if n == 0 {
		return 0
	}
	return uint16(n)<<11 ^ uint16(key[0])<<6 ^ uint16(key[n>>1])<<3 ^ uint16(key[n-1])
}

func keyHashBytes(key []byte) uint16 {
	n := len(key)
	if n == 0 {
		return 0
	}
	return uint16(n)<<11 ^ uint16(key[0])<<6 ^ uint16(key[n>>1])<<3 ^ uint16(key[n-1])
}

// Token is one JSON value (or object key) of a line, in document order.
// Start and End are byte offsets into the line: for a string they include
// the quotes. Next is the index of the token that follows this value and
// everything inside it, so a reader skips a subtree in O(1).
type Token struct {
	Kind  uint8 // KindObject, ...
	Flags uint8
	// Hash is KeyHash of an object key's text, set (with FlagHashed) on
	// keys without escapes, so that Value.Get skips a non-matching key
	// with one integer compare instead of a byte compare.
	Hash  uint16
	Start uint32
	End   uint32
	Next  uint32
}

// BuildTape appends the tape of the JSON value in line to dst. Leading
// white space and an SSE "data:" prefix are skipped, so server-sent-event
// lines index like plain JSON lines. It returns dst unchanged and false
// when the line is not exactly one well-formed JSON value (trailing white
// space allowed).
//
// Nesting is not limited: the builder keeps its open containers in the
// tape itself, not on the call stack, so a line nested 100,000 levels deep
// is indexed like any other (at 16 bytes a token, bounded by the line's
// length), inside a plugin too.
func BuildTape(dst []Token, line []byte) ([]Token, bool) {
	return BuildTapeKeys(dst, line, nil)
}

// BuildTapeKeys is BuildTape that also marks the object keys found in keys
// (the keys a plugin declared, see FlagKeyed), so that the plugin's Get and
// Lookup match them by number instead of comparing bytes. A nil keys
// builds the tape BuildTape builds.
func BuildTapeKeys(dst []Token, line []byte, keys *KeySet) ([]Token, bool) {
	i := skipWS(line, 0)
	// Not bytes.HasPrefix: bytes.Equal is string(a) == string(b), two
	// copies per call inside a TinyGo plugin.
	if len(line)-i >= len("data:") && view(line[i:i+len("data:")]) == "data:" {
		i = skipWS(line, i+5)
	}
	if i >= len(line) || line[i] != '{' && line[i] != '[' {
		// Scalars are valid JSON but never a provider record; treating
		// them as non-JSON keeps plugins simple.
		return dst, false
	}
	b := tapeBuilder{src: line, toks: dst, base: len(dst), keys: keys}
	end, ok := b.build(i)
	if !ok || skipWS(line, end) != len(line) {
		return dst[:b.base], false
	}
	return b.toks, true
}

type tapeBuilder struct {
	src  []byte
	toks []Token
	base int
	keys *KeySet
}

func skipWS(s []byte, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n') {
		i++
	}
	return i
}

// build indexes the value at s[i] and returns the offset after it. The
// open containers are a stack linked through their tokens: until close
// sets it, an open container's Next holds the token index + 1 of the
// container around it (0: none), and top is the innermost one (-1: none).
// Each loop pass reads one value, then closes every container that ends
// after it. (The links take no memory of their own: a slice for the
// stack was an allocation per line inside a TinyGo plugin.)
func (b *tapeBuilder) build(i int) (int, bool) {
	s := b.src
	top := -1
	var ok bool
	for {
		// A value starts at s[i].
		if i >= len(s) {
			return i, false
		}
		switch c := s[i]; {
		case c == '{' || c == '[':
			kind, closer := uint8(KindObject), byte('}')
			if c == '[' {
				kind, closer = KindArray, ']'
			}
			b.toks = append(b.toks, Token{Kind: kind, Start: uint32(i), Next: uint32(top + 1)})
			top = len(b.toks) - 1
			i = skipWS(s, i+1)
			if i < len(s) && s[i] == closer {
				i++
				top = b.close(top, i)
				break
			}
			if kind == KindObject {
				if i, ok = b.key(i); !ok {
					return i, false
				}
			}
			continue
		case c == '"':
			if i, ok = b.str(i); !ok {
				return i, false
			}
		case c == 't':
			if i, ok = b.lit(i, "true", KindTrue); !ok {
				return i, false
			}
		case c == 'f':
			if i, ok = b.lit(i, "false", KindFalse); !ok {
				return i, false
			}
		case c == 'n':
			if i, ok = b.lit(i, "null", KindNull); !ok {
				return i, false
			}
		case c == '-' || c >= '0' && c <= '9':
			j, ok := number(s, i)
			if !ok {
				return i, false
			}
			b.toks = append(b.toks, Token{Kind: KindNumber, Start: uint32(i), End: uint32(j), Next: uint32(len(b.toks) + 1 - b.base)})
			i = j
		default:
			return i, false
		}
		// A value ended at i: a comma starts the next member of the
		// innermost container, a closer ends it.
		for {
			if top < 0 {
				return i, true
			}
			i = skipWS(s, i)
			if i >= len(s) {
				return i, false
			}
			object := b.toks[top].Kind == KindObject
			if s[i] == ',' {
				i = skipWS(s, i+1)
				if object {
					if i, ok = b.key(i); !ok {
						return i, false
					}
				}
				break
			}
			if object && s[i] != '}' || !object && s[i] != ']' {
				return i, false
			}
			i++
			top = b.close(top, i)
		}
	}
}

// close ends the open container whose token is at, at offset end, and
// returns the container around it (-1: none).
func (b *tapeBuilder) close(at, end int) int {
	outer := int(b.toks[at].Next) - 1
	b.toks[at].End = uint32(end)
	b.toks[at].Next = uint32(len(b.toks) - b.base)
	return outer
}

// key indexes the object key at s[i] and its colon, and returns the offset
// of the value after them.
func (b *tapeBuilder) key(i int) (int, bool) {
	s := b.src
	if i >= len(s) || s[i] != '"' {
		return i, false
	}
	keyAt := len(b.toks)
	i, ok := b.str(i)
	if !ok {
		return i, false
	}
	if kt := &b.toks[keyAt]; kt.Flags&FlagEscaped == 0 {
		text := s[kt.Start+1 : kt.End-1]
		kt.Hash = keyHashBytes(text)
		kt.Flags |= FlagHashed
		if b.keys != nil {
			kt.Flags |= FlagKeyed
			if j := b.keys.find(kt.Hash, text); j >= 0 {
				kt.Flags &^= FlagHashed
				kt.Hash = uint16(j + 1)
			}
		}
	}
	i = skipWS(s, i)
	if i >= len(s) || s[i] != ':' {
		return i, false
	}
	return skipWS(s, i+1), true
}

func (b *tapeBuilder) lit(i int, word string, k uint8) (int, bool) {
	if len(b.src)-i < len(word) || view(b.src[i:i+len(word)]) != word {
		return i, false
	}
	b.toks = append(b.toks, Token{Kind: k, Start: uint32(i), End: uint32(i + len(word)), Next: uint32(len(b.toks) + 1 - b.base)})
	return i + len(word), true
}

// digits returns the offset after the decimal digits at s[j:]. (A
// function, not a closure in number: inside a TinyGo plugin a closure's
// captures were an allocation per number.)
func digits(s []byte, j int) int {
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	return j
}

// number scans a JSON number (RFC 8259 grammar: no leading zeros, digits
// on both sides of the point, an optional exponent) and returns the
// offset after it. Magnitude is not checked: 1e400 is valid JSON.
func number(s []byte, i int) (int, bool) {
	if s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = digits(s, i+1)
	default:
		return i, false
	}
	if i < len(s) && s[i] == '.' {
		j := digits(s, i+1)
		if j == i+1 {
			return i, false
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digits(s, i)
		if j == i {
			return i, false
		}
		i = j
	}
	return i, true
}

// plain marks the bytes a string literal holds as they are: everything but
// the quote, the backslash and control characters.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func (b *tapeBuilder) str(i int) (int, bool) {
	s := b.src
	var flags uint8
	j := i + 1
	for {
		for j < len(s) && plain[s[j]] {
			j++
		}
		if j >= len(s) {
			return i, false
		}
		switch s[j] {
		case '"':
			b.toks = append(b.toks, Token{Kind: KindString, Flags: flags, Start: uint32(i), End: uint32(j + 1), Next: uint32(len(b.toks) + 1 - b.base)})
			return j + 1, true
		case '\\':
			flags = FlagEscaped
			if j+1 >= len(s) {
				return i, false
			}
			switch s[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if _, ok := Hex4(s, j+2); !ok {
					return i, false
				}
				j += 6
			default:
				return i, false
			}
		default:
			// A raw control character: not allowed in a JSON string.
			return i, false
		}
	}
}

// view returns b as a string without copying it, for comparisons only
// (TinyGo copies on every string(b), even in a comparison).
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// TokenSize is the size of a token in a batch: four little-endian uint32
// (kind | flags<<8 | hash<<16, start, end, next).
const TokenSize = 16

// MaxKeys bounds abi.Manifest.Keys (and a KeySet).
const MaxKeys = 255

// KeySet is a fixed list of object keys prepared for matching: their
// hashes computed once, and a table by the hash's low byte that finds the
// key a member may be in one step. The host marks a plugin's declared
// keys in its tapes with one (BuildTapeKeys); abi.KeySet, what a plugin
// looks members up with, holds the same tables.
type KeySet struct {
	Names []string
	Hash  []uint16
	Head  [256]uint8 // 1 + first index of a name whose hash has this low byte; 0: none
	Next  []uint8    // 1 + next index with the same low byte; 0: end
}

// NewKeySet prepares names (at most MaxKeys).
func NewKeySet(names ...string) *KeySet {
	if len(names) > MaxKeys {
		panic("wire: NewKeySet: more than 255 names")
	}
	ks := &KeySet{Names: names, Hash: make([]uint16, len(names)), Next: make([]uint8, len(names))}
	for j := len(names) - 1; j >= 0; j-- {
		h := KeyHash(names[j])
		ks.Hash[j] = h
		ks.Next[j] = ks.Head[uint8(h)]
		ks.Head[uint8(h)] = uint8(j + 1)
	}
	return ks
}

// find returns the index of the name whose text is key (with hash h), or
// -1.
func (ks *KeySet) find(h uint16, key []byte) int {
	for j := int(ks.Head[uint8(h)]) - 1; j >= 0; j = int(ks.Next[j]) - 1 {
		if ks.Hash[j] == h && ks.Names[j] == view(key) {
			return j
		}
	}
	return -1
}

package abi

import (
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func doc(t testing.TB, s string) *Doc {
	t.Helper()
	toks, ok := buildTape(nil, []byte(s))
	require.True(t, ok, s)
	return &Doc{Line: []byte(s), Toks: toks}
}

func TestValueNavigation(t *testing.T) {
	d := doc(t, `{"type":"assistant","a":{"b":{"c":[10,"x",{"k":"v"}]}},"dup":1,"dup":2,"esc\"key":"e","n":null,"t":true,"f":false,"e":[],"o":{}}`)
	r := d.Root()
	assert.True(t, r.Exists())
	assert.Equal(t, KindObject, r.Kind())
	assert.Equal(t, 10, r.Len())

	assert.True(t, r.Get("type").Is("assistant"))
	assert.False(t, r.Get("type").Is("assistan"))
	assert.False(t, r.Get("type").Is("assistantx"))
	assert.Equal(t, "assistant", r.Get("type").String())

	n, ok := r.Get("dup").Int()
	assert.True(t, ok)
	assert.Equal(t, int64(1), n, "Get returns the first member")

	c := r.Path("a", "b", "c")
	assert.Equal(t, KindArray, c.Kind())
	assert.Equal(t, 3, c.Len())
	n, ok = c.Index(0).Int()
	assert.True(t, ok)
	assert.Equal(t, int64(10), n)
	assert.Equal(t, "x", c.Index(1).String())
	assert.Equal(t, "v", c.Index(2).Get("k").String())
	assert.False(t, c.Index(3).Exists())
	assert.False(t, c.Index(-1).Exists())
	assert.Equal(t, `{"k":"v"}`, c.Index(2).String(), "String of a non-string is its JSON text")
	from, to := c.Index(1).Span()
	assert.Equal(t, `"x"`, string(d.Line[from:to]))

	assert.Equal(t, "e", r.Get(`esc"key`).String(), "escaped key")
	assert.True(t, r.Get("n").Kind() == KindNull)
	assert.False(t, r.Get("t").Kind() == KindNull)
	b, ok := r.Get("t").Bool()
	assert.True(t, b && ok)
	b, ok = r.Get("f").Bool()
	assert.True(t, !b && ok)
	_, ok = r.Get("n").Bool()
	assert.False(t, ok)
	assert.True(t, r.Get("t").Truthy())
	assert.False(t, r.Get("f").Truthy())
	assert.Equal(t, 0, r.Get("e").Len())
	assert.Equal(t, 0, r.Get("o").Len())
	assert.False(t, r.Get("e").Index(0).Exists())
	assert.Equal(t, 0, r.Get("type").Len(), "Len of a scalar")
	assert.False(t, r.Get("a").Get("missing").Exists())
	assert.False(t, r.Get("type").Get("x").Exists(), "Get on a string")
	assert.False(t, c.Get("x").Exists(), "Get on an array")
	assert.Same(t, d, r.Doc())

	// Iteration over an object yields keys and values in order.
	var keys []string
	for it := r.Iter(); it.Next(); {
		keys = append(keys, it.Key().String())
		assert.True(t, it.Value().Exists())
	}
	assert.Equal(t, []string{"type", "a", "dup", "dup", `esc"key`, "n", "t", "f", "e", "o"}, keys)
	// Over an array: no keys.
	var kinds []Kind
	for it := c.Iter(); it.Next(); {
		assert.False(t, it.Key().Exists())
		kinds = append(kinds, it.Value().Kind())
	}
	assert.Equal(t, []Kind{KindNumber, KindString, KindObject}, kinds)
	it := r.Get("type").Iter()
	assert.False(t, it.Next(), "Iter of a scalar is empty")
}

func TestValueMissingChain(t *testing.T) {
	var v Value
	assert.False(t, v.Exists())
	assert.Equal(t, KindInvalid, v.Kind())
	assert.False(t, v.Get("a").Path("b", "c").Index(2).Exists())
	assert.Equal(t, "", v.String())
	assert.Nil(t, v.Raw())
	assert.Nil(t, v.Doc())
	from, to := v.Span()
	assert.Equal(t, 0, from+to)
	_, ok := v.Int()
	assert.False(t, ok)
	_, ok = v.Float()
	assert.False(t, ok)
	_, ok = v.Bool()
	assert.False(t, ok)
	assert.False(t, v.Kind() == KindNull)
	assert.False(t, v.Is(""))
	assert.False(t, v.Escaped())
	assert.Equal(t, 0, v.Len())
	it := v.Iter()
	assert.False(t, it.Next())

	var nd *Doc
	assert.False(t, nd.Root().Exists())
	assert.False(t, (&Doc{Line: []byte("banner")}).Root().Exists())
}

func TestValueIsAndStringWithEscapes(t *testing.T) {
	d := doc(t, `["plain","tab\there","q\"x","\u00e9t\u00e9","bad\\x"]`)
	r := d.Root()
	assert.False(t, r.Index(0).Escaped())
	assert.True(t, r.Index(1).Escaped())
	assert.True(t, r.Index(1).Is("tab\there"))
	assert.False(t, r.Index(1).Is(`tab\there`))
	assert.True(t, r.Index(2).Is(`q"x`))
	assert.True(t, r.Index(3).Is("été"))
	assert.Equal(t, "été", r.Index(3).String())
	assert.Equal(t, `bad\x`, r.Index(4).String())
	assert.False(t, r.Index(0).Is("plai"))
	assert.False(t, r.Is("x"), "Is on an array")

	// A forged string token whose escapes are invalid reads verbatim.
	line := []byte(`"a\qb"`)
	forged := &Doc{Line: line, Toks: []token{{Kind: uint8(KindString), Flags: flagEscaped, Start: 0, End: uint32(len(line)), Next: 1}}}
	assert.Equal(t, `a\qb`, forged.Root().String())
	assert.False(t, forged.Root().Is(`a\qb`))
}

func TestValueNumbers(t *testing.T) {
	d := doc(t, `[42,-7,3.0,3.5,1e3,"12","x","1.5",9223372036854775807,9223372036854775808,1e19,-9223372036854775808,1e400,-0,true]`)
	r := d.Root()
	cases := []struct {
		i    int
		n    int64
		ok   bool
		f    float64
		fok  bool
		name string
	}{
		{0, 42, true, 42, true, "int"},
		{1, -7, true, -7, true, "negative"},
		{2, 3, true, 3, true, "integral float"},
		{3, 0, false, 3.5, true, "fraction"},
		{4, 1000, true, 1000, true, "exponent"},
		{5, 12, true, 0, false, "string holding an int"},
		{6, 0, false, 0, false, "string"},
		{7, 0, false, 0, false, "string holding a float"},
		{8, math.MaxInt64, true, 9223372036854775807, true, "max int64"},
		{9, 0, false, 9223372036854775808, true, "max int64 + 1"},
		{10, 0, false, 1e19, true, "beyond int64"},
		{11, math.MinInt64, true, -9223372036854775808, true, "min int64"},
		{12, 0, false, 0, false, "overflow"},
		{13, 0, true, 0, true, "minus zero"},
		{14, 0, false, 0, false, "bool"},
	}
	for _, c := range cases {
		v := r.Index(c.i)
		n, ok := v.Int()
		assert.Equal(t, c.ok, ok, c.name)
		assert.Equal(t, c.n, n, c.name)
		f, fok := v.Float()
		assert.Equal(t, c.fok, fok, c.name)
		if c.fok {
			assert.Equal(t, c.f, f, c.name)
		}
	}
	// A float at the edge of int64 must not convert by wrapping or
	// saturating (platform-dependent in Go).
	for _, s := range []string{`[9223372036854775807.0]`, `[1e300]`, `[-1e300]`} {
		_, ok := doc(t, s).Root().Index(0).Int()
		assert.False(t, ok, s)
	}
	n, ok := doc(t, `[-9223372036854775808.0]`).Root().Index(0).Int()
	assert.True(t, ok)
	assert.Equal(t, int64(math.MinInt64), n)
}

func TestLookupMatchesGet(t *testing.T) {
	// Many names, so that some share a table entry; an escaped key, a
	// repeated key (the first wins, as for Get), nested objects.
	names := []string{"type", "message", "id", "a", "b", "c", "sessionId", "session_id", "x\"y", "dup",
		"model", "usage", "content", "missing", "k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9"}
	ks := NewKeySet(names...)
	for _, s := range []string{
		`{}`,
		`[1,2]`,
		`{"type":"assistant","message":{"id":"m1","model":"x"},"a":1,"b":[1,{"c":2}],"c":null}`,
		`{"dup":1,"dup":2,"t\u0079pe":"esc","x\"y":true,"sessionId":"s","session_id":"t"}`,
		`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"usage":{},"content":[]}`,
	} {
		d := doc(t, s)
		got := make([]Value, len(ks.w.Names))
		d.Root().Lookup(ks, got)
		for i, name := range names {
			assert.Equal(t, d.Root().Get(name), got[i], "%s: %s", s, name)
		}
		inner := make([]Value, len(ks.w.Names))
		d.Root().Get("message").Lookup(ks, inner)
		for i, name := range names {
			assert.Equal(t, d.Root().Get("message").Get(name), inner[i], "%s: message.%s", s, name)
		}
	}
	var missing Value
	got := make([]Value, len(ks.w.Names))
	missing.Lookup(ks, got)
	for _, v := range got {
		assert.False(t, v.Exists())
	}
}

// sameMembers checks that keyed navigates d like plain: the same member,
// by token index, for every name on every object of the tape, by Get and
// by Lookup with both sets.
func sameMembers(t testing.TB, plain, keyed *Doc, names []string, sets ...*KeySet) {
	t.Helper()
	for i, tok := range plain.Toks {
		if Kind(tok.Kind) != KindObject {
			continue
		}
		p, k := Value{d: plain, i: i}, Value{d: keyed, i: i}
		for _, name := range names {
			if g, w := k.Get(name), p.Get(name); g.i != w.i || g.Exists() != w.Exists() {
				t.Fatalf("%s: token %d: Get(%q) = %d, want %d", plain.Line, i, name, g.i, w.i)
			}
		}
		for _, ks := range sets {
			got := make([]Value, len(ks.w.Names))
			k.Lookup(ks, got)
			for j, v := range got {
				if w := p.Get(ks.w.Names[j]); v.i != w.i || v.Exists() != w.Exists() {
					t.Fatalf("%s: token %d: Lookup %q = %d, want %d", plain.Line, i, ks.w.Names[j], v.i, w.i)
				}
			}
		}
	}
}

// checkKeyed checks the key tokens of a tape built with dict against the
// plain tape of the same line.
func checkKeyed(t testing.TB, plain, keyed []token, line []byte, dict *KeySet) {
	t.Helper()
	if len(plain) != len(keyed) {
		t.Fatalf("%s: %d keyed tokens, %d plain", line, len(keyed), len(plain))
	}
	for i, p := range plain {
		k := keyed[i]
		if p.Flags&flagHashed == 0 {
			if k != p {
				t.Fatalf("%s: token %d: %+v, want %+v", line, i, k, p)
			}
			continue
		}
		text := string(line[p.Start+1 : p.End-1])
		j := slices.Index(dict.Names(), text)
		want := token{Kind: p.Kind, Flags: p.Flags | flagKeyed, Hash: p.Hash, Start: p.Start, End: p.End, Next: p.Next}
		if j >= 0 {
			want.Flags &^= flagHashed
			want.Hash = uint16(j + 1)
		}
		if k != want {
			t.Fatalf("%s: key %q: %+v, want %+v", line, text, k, want)
		}
	}
}

func TestKeyedTapes(t *testing.T) {
	dict := NewKeySet("type", "message", "id", "usage", "content", "x\"y", "absent")
	other := NewKeySet("id", "model", "type", "k1", "model2", "dup")
	names := append(slices.Clone(dict.Names()), other.Names()...)
	names = append(names, "a", "b", "c", "k0", "sessionId")
	for _, s := range []string{
		`{}`,
		`[1,2,{"type":"x"}]`,
		`{"type":"assistant","message":{"id":"m1","model":"x","type":"message"},"a":1,"b":[1,{"c":2}],"c":null}`,
		`{"dup":1,"dup":2,"t\u0079pe":"esc","type":"plain","x\"y":true,"sessionId":"s"}`,
		`{"k0":0,"k1":1,"usage":{"id":2},"content":[{"type":"text"}],"id":3,"id":4}`,
	} {
		line := []byte(s)
		plain, ok := buildTape(nil, line)
		require.True(t, ok, s)
		keyed, ok := buildTapeKeys(nil, line, dict)
		require.True(t, ok, s)
		checkKeyed(t, plain, keyed, line, dict)
		pd := &Doc{Line: line, Toks: plain}
		// With the set the host used, and without it (keyed tokens are
		// then compared by their bytes).
		sameMembers(t, pd, &Doc{Line: line, Toks: keyed, Keys: dict}, names, dict, other)
		sameMembers(t, pd, &Doc{Line: line, Toks: keyed}, names, dict, other)
		// A plain tape in a doc that names a set (a 1.1 host).
		sameMembers(t, pd, &Doc{Line: line, Toks: plain, Keys: dict}, names, dict, other)
	}
}

func TestIntFastPathMatchesStrconv(t *testing.T) {
	// A string holding a number reads as the number, escaped or not.
	for _, s := range []string{`"0"`, `"-12"`, `"+12"`, `"007"`, `"123456789012345678901"`, `"9223372036854775807"`, `"1.5"`, `""`, `"-"`, `"\u0031\u0032"`} {
		d := doc(t, "["+s+"]")
		v := d.Root().Index(0)
		got, ok := v.Int()
		want, err := strconv.ParseInt(v.String(), 10, 64)
		assert.Equal(t, err == nil, ok, s)
		if ok {
			assert.Equal(t, want, got, s)
		}
	}
	for _, s := range []string{"0", "-0", "7", "-42", "123456789012345678", "-999999999999999999",
		"1234567890123456789", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
		"1.5", "2.0", "1e3", "-1E2", "0.0"} {
		d := doc(t, "["+s+"]")
		got, ok := d.Root().Index(0).Int()
		want, err := strconv.ParseInt(s, 10, 64)
		if err == nil {
			assert.True(t, ok, s)
			assert.Equal(t, want, got, s)
			continue
		}
		f, ferr := strconv.ParseFloat(s, 64)
		wantOK := ferr == nil && f >= -0x1p63 && f < 0x1p63 && f == math.Trunc(f)
		assert.Equal(t, wantOK, ok, s)
		if wantOK {
			assert.Equal(t, int64(f), got, s)
		}
	}
}

// TestLookupsDoNotAllocate keeps the compares that every plugin makes on
// every line free of allocations (a TinyGo guest spends its time
// allocating; these would be one per compare there, where Go's compiler
// hides the copy of a string(b) compare). Go's testing.AllocsPerRun is
// the closest native measure.
func TestLookupsDoNotAllocate(t *testing.T) {
	d := doc(t, `{"type":"assistant","n":"12","e":"caf\u00e9","arr":[1,true,null],"x":{"y":2.5}}`)
	root := d.Root()
	ks := NewKeySet("type", "n", "e", "x")
	var out [4]Value
	allocs := testing.AllocsPerRun(100, func() {
		_ = root.Get("type").Is("assistant")
		_ = root.Get("e").Is("café")
		_, _ = root.Get("n").Int()
		_, _ = root.Get("x").Get("y").Float()
		_ = root.Get("arr").Index(2).Kind() == KindNull
		root.Lookup(ks, out[:])
	})
	assert.Zero(t, allocs)
}

// TestAppendTextIsString: AppendText appends exactly the bytes String
// returns, for every kind of value (strings with escapes, a lone
// surrogate, containers as their JSON, a missing value as nothing),
// after what dst held, and copies a string with no escapes once (the
// caller's buffer: no allocation when it has room).
func TestAppendTextIsString(t *testing.T) {
	d := doc(t, `{"plain":"abc","esc":"a\"b\\c\nd\u00e9\ud83d\ude00","lone":"\ud800x","num":-1.5e3,"obj":{"k":[1,"v"]},"arr":[],"null":null,"t":true}`)
	for _, key := range []string{"plain", "esc", "lone", "num", "obj", "arr", "null", "t", "missing"} {
		v := d.Root().Get(key)
		got := v.AppendText([]byte("prefix:"))
		assert.Equal(t, "prefix:"+v.String(), string(got), key)
	}
	buf := make([]byte, 0, 64)
	v := d.Root().Get("plain")
	assert.Zero(t, testing.AllocsPerRun(100, func() { buf = v.AppendText(buf[:0]) }))
}

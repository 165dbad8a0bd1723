package abi

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

// walk visits every value reachable from v through every accessor, so
// that an out-of-bounds index anywhere panics.
func walk(v Value, depth int) int {
	n := 1
	_ = v.Kind()
	_ = v.Raw()
	_ = v.String()
	_, _ = v.Int()
	_, _ = v.Float()
	_, _ = v.Bool()
	_ = v.Is("x")
	_ = v.Kind() == KindNull
	_ = v.Escaped()
	_ = v.Get("type")
	_ = v.Path("a", "b")
	_ = v.Index(1)
	_ = v.Len()
	if depth > 64 {
		return n
	}
	for it := v.Iter(); it.Next(); {
		_ = it.Key().String()
		_ = it.Key().Is("type")
		n += walk(it.Value(), depth+1)
	}
	return n
}

func FuzzBuildTape(f *testing.F) {
	for _, s := range []string{`{"a":[1,"b\"c",{"d":null}]}`, `data: {"x":1}`, `[01]`, `["\u12"]`, `{"a":1}x`, `[1e400]`, "[\"\x01\"]", `[[[[]]]]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		toks, ok := buildTape(nil, line)
		if !ok {
			if len(toks) != 0 {
				t.Fatalf("not ok but %d tokens", len(toks))
			}
			trimmed := bytes.TrimLeft(line, " \t\r\n")
			if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') && json.Valid(line) {
				t.Fatalf("BuildTape rejected %q, encoding/json accepts it", line)
			}
			return
		}
		start := int(toks[0].Start)
		if !json.Valid(line[start:]) {
			t.Fatalf("BuildTape accepted %q, encoding/json does not", line)
		}
		if !checkTape(toks, len(line)) {
			t.Fatalf("tape of %q fails checkTape", line)
		}
		d := &Doc{Line: line, Toks: toks}
		if n := walk(d.Root(), 0); n > len(toks) {
			t.Fatalf("visited %d values of a %d-token tape", n, len(toks))
		}
		for i := range toks {
			walk(Value{d: d, i: i}, 64)
		}
		// The same line keyed with a set: the same tape but for the key
		// tokens, and the same members by every accessor.
		keyed, ok := buildTapeKeys(nil, line, fuzzKeys)
		if !ok {
			t.Fatalf("BuildTapeKeys rejected %q, BuildTape accepts it", line)
		}
		checkKeyed(t, toks, keyed, line, fuzzKeys)
		names := slices.Clone(fuzzKeys.Names())
		for _, tok := range toks {
			if tok.Flags&flagHashed != 0 {
				names = append(names, string(line[tok.Start+1:tok.End-1]))
			}
		}
		sameMembers(t, d, &Doc{Line: line, Toks: keyed, Keys: fuzzKeys}, names, fuzzKeys, fuzzOther)
	})
}

var (
	fuzzKeys  = NewKeySet("a", "b", "type", "x", "d", "message", "ab", "ba")
	fuzzOther = NewKeySet("type", "c", "d", "aa", "message", "q")
)

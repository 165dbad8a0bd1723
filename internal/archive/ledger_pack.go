package archive

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/twasm/twasm/transcript"
)

// A ledger holds in memory the entries that no line of its file holds
// as they are (a ledger rebuilt from the transcripts, a pending entry
// settled on load, a run id that is not valid: entries) packed,
// one byte slice each (packEntry), not as Entry values: an Entry with its
// strings, its totals and the maps that found it took about 1.1 KiB a
// run, packed about 500 bytes (a sync's entry packing into 330). The
// others are read from the file when asked for. A packed entry is a
// fixed header (flags, size, mtime, offset, parts, and the head and
// sha256 as 32 bytes each when they are the lowercase hex of a sha256,
// as every entry a sync writes has) followed by the other members, each as a
// uvarint length and its bytes, in a fixed order; the members a ledger
// seldom holds (resume, facts, files, also) are their JSON, as in the
// ledger's file. The file keeps its JSON lines: the packing is only how
// this process holds them, and unpackEntry gives back the Entry that
// was packed (TestPackEntry, FuzzUnpackEntry).

// The header's flags.
const (
	pkClosed = 1 << iota
	pkPending
	pkSeal
	pkRedact
	pkHexHead  // the head is the header's 32 bytes (lowercase hex when unpacked)
	pkHexSHA   // the sha256 likewise
	pkRawOfRun // the raw member is what follows "raw/<run id>/"
	pkFirst    // First is set
	pkLast     // Last is set
	pkTotals   // Totals is set (the totals member)
	pkSuperseded
)

// The header's layout.
const (
	pkFlagsAt  = 0
	pkSizeAt   = 2
	pkMtimeAt  = pkSizeAt + 8
	pkOffsetAt = pkMtimeAt + 8
	pkPartsAt  = pkOffsetAt + 8
	pkHeadAt   = pkPartsAt + 8
	pkSHAAt    = pkHeadAt + 32
	pkHeader   = pkSHAAt + 32
)

// The members after the header, in this order.
const (
	pmRunID = iota
	pmProvider
	pmHead // when not pkHexHead
	pmPath
	pmSHA // when not pkHexSHA
	pmRaw
	pmStatus
	pmParent
	pmSupersededBy
	pmFirst
	pmLast
	pmTotals
	pmResume
	pmFacts
	pmFiles
	pmAlso
	pmLooseAt // a varint, empty when 0
	pmCount
)

// errPacked is a packed entry that does not unpack (only a bug, or the
// fuzzer, makes one).
var errPacked = errors.New("ledger: malformed packed entry")

// packed is one entry as a ledger holds it.
type packed []byte

func (p packed) flags() uint16 { return binary.LittleEndian.Uint16(p[pkFlagsAt:]) }
func (p packed) size() int64   { return int64(binary.LittleEndian.Uint64(p[pkSizeAt:])) }
func (p packed) mtime() int64  { return int64(binary.LittleEndian.Uint64(p[pkMtimeAt:])) }
func (p packed) offset() int64 { return int64(binary.LittleEndian.Uint64(p[pkOffsetAt:])) }
func (p packed) parts() int    { return int(int64(binary.LittleEndian.Uint64(p[pkPartsAt:]))) }
func (p packed) closed() bool  { return p.flags()&pkClosed != 0 }

// member returns member k's bytes (nil when the entry is malformed).
func (p packed) member(k int) []byte {
	b := p[pkHeader:]
	for i := 0; ; i++ {
		n, w := binary.Uvarint(b)
		if w <= 0 || n > uint64(len(b)-w) {
			return nil
		}
		if i == k {
			return b[w : w+int(n)]
		}
		b = b[w+int(n):]
	}
}

// runID, path and head are the members a ledger's lookups compare; the
// strings they return are new.
func (p packed) runID() string { return string(p.member(pmRunID)) }
func (p packed) path() string  { return string(p.member(pmPath)) }
func (p packed) head() string {
	if p.flags()&pkHexHead != 0 {
		return hex.EncodeToString(p[pkHeadAt : pkHeadAt+32])
	}
	return string(p.member(pmHead))
}

// isLowerHex32 reports whether s is the lowercase hex of 32 bytes.
func isLowerHex32(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// packEntry appends e packed to dst. Only a member that does not marshal
// (none of Entry's) makes it fail.
func packEntry(dst []byte, e *Entry) ([]byte, error) {
	var flags uint16
	set := func(ok bool, f uint16) {
		if ok {
			flags |= f
		}
	}
	set(e.Closed, pkClosed)
	set(e.Pending, pkPending)
	set(e.Seal, pkSeal)
	set(e.Redact, pkRedact)
	set(isLowerHex32(e.Head), pkHexHead)
	set(isLowerHex32(e.SHA256), pkHexSHA)
	rawPrefix := "raw/" + e.RunID + "/"
	set(len(e.Raw) > len(rawPrefix) && e.Raw[:len(rawPrefix)] == rawPrefix, pkRawOfRun)
	set(!e.First.IsZero(), pkFirst)
	set(!e.Last.IsZero(), pkLast)
	set(e.Totals != nil, pkTotals)
	set(e.SupersededBy != "", pkSuperseded)
	start := len(dst)
	dst = append(dst, make([]byte, pkHeader)...)
	h := dst[start:]
	binary.LittleEndian.PutUint16(h[pkFlagsAt:], flags)
	binary.LittleEndian.PutUint64(h[pkSizeAt:], uint64(e.Size))
	binary.LittleEndian.PutUint64(h[pkMtimeAt:], uint64(e.ModTime))
	binary.LittleEndian.PutUint64(h[pkOffsetAt:], uint64(e.Offset))
	binary.LittleEndian.PutUint64(h[pkPartsAt:], uint64(int64(e.Parts)))
	if flags&pkHexHead != 0 {
		hex.Decode(h[pkHeadAt:pkHeadAt+32], []byte(e.Head))
	}
	if flags&pkHexSHA != 0 {
		hex.Decode(h[pkSHAAt:pkSHAAt+32], []byte(e.SHA256))
	}
	// h is not written to again: dst grows from here.
	str := func(s string) { dst = binary.AppendUvarint(dst, uint64(len(s))); dst = append(dst, s...) }
	bin := func(b []byte) { dst = binary.AppendUvarint(dst, uint64(len(b))); dst = append(dst, b...) }
	str(e.RunID)
	str(e.Provider)
	if flags&pkHexHead != 0 {
		str("")
	} else {
		str(e.Head)
	}
	str(e.Path)
	if flags&pkHexSHA != 0 {
		str("")
	} else {
		str(e.SHA256)
	}
	if flags&pkRawOfRun != 0 {
		str(e.Raw[len(rawPrefix):])
	} else {
		str(e.Raw)
	}
	str(e.Status)
	str(e.Parent)
	str(e.SupersededBy)
	for _, t := range []*time.Time{&e.First, &e.Last} {
		if t.IsZero() {
			str("")
			continue
		}
		b, err := t.MarshalBinary()
		if err != nil {
			return nil, err
		}
		bin(b)
	}
	bin(packTotals(nil, e.Totals))
	for _, v := range []any{e.Resume, e.Facts, e.Files, e.Also} {
		if v == any((*Resume)(nil)) || isEmptySlice(v) {
			str("")
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		bin(b)
	}
	if e.LooseAt != 0 {
		bin(binary.AppendVarint(nil, int64(e.LooseAt)))
	} else {
		str("")
	}
	return dst, nil
}

// isEmptySlice reports whether v is one of Entry's slices and empty
// (left out of a ledger line, as omitempty does).
func isEmptySlice(v any) bool {
	switch s := v.(type) {
	case []FactsAt:
		return len(s) == 0
	case []FileState:
		return len(s) == 0
	case []Seen:
		return len(s) == 0
	}
	return false
}

// unpackEntry sets e (zero) to the entry p holds.
func unpackEntry(p packed, e *Entry) error {
	if len(p) < pkHeader {
		return errPacked
	}
	var m [pmCount][]byte
	b := p[pkHeader:]
	for i := range m {
		n, w := binary.Uvarint(b)
		if w <= 0 || n > uint64(len(b)-w) {
			return errPacked
		}
		m[i], b = b[w:w+int(n)], b[w+int(n):]
	}
	if len(b) != 0 {
		return errPacked
	}
	flags := p.flags()
	e.Closed, e.Pending, e.Seal, e.Redact = flags&pkClosed != 0, flags&pkPending != 0, flags&pkSeal != 0, flags&pkRedact != 0
	e.Size, e.ModTime, e.Offset, e.Parts = p.size(), p.mtime(), p.offset(), p.parts()
	e.RunID, e.Provider, e.Path = string(m[pmRunID]), string(m[pmProvider]), string(m[pmPath])
	if flags&pkHexHead != 0 {
		e.Head = hex.EncodeToString(p[pkHeadAt : pkHeadAt+32])
	} else {
		e.Head = string(m[pmHead])
	}
	if flags&pkHexSHA != 0 {
		e.SHA256 = hex.EncodeToString(p[pkSHAAt : pkSHAAt+32])
	} else {
		e.SHA256 = string(m[pmSHA])
	}
	if flags&pkRawOfRun != 0 {
		e.Raw = "raw/" + e.RunID + "/" + string(m[pmRaw])
	} else {
		e.Raw = string(m[pmRaw])
	}
	e.Status, e.Parent, e.SupersededBy = string(m[pmStatus]), string(m[pmParent]), string(m[pmSupersededBy])
	if b := m[pmLooseAt]; len(b) != 0 {
		v, w := binary.Varint(b)
		if w != len(b) || v == 0 || int64(int(v)) != v {
			return errPacked
		}
		e.LooseAt = int(v)
	}
	if (e.SupersededBy != "") != (flags&pkSuperseded != 0) {
		return errPacked
	}
	for _, f := range []struct {
		flag uint16
		b    []byte
		t    *time.Time
	}{{pkFirst, m[pmFirst], &e.First}, {pkLast, m[pmLast], &e.Last}} {
		if flags&f.flag == 0 {
			if len(f.b) != 0 {
				return errPacked
			}
			continue
		}
		if err := f.t.UnmarshalBinary(f.b); err != nil || f.t.IsZero() {
			return errPacked
		}
	}
	if flags&pkTotals != 0 {
		t, err := unpackTotals(m[pmTotals])
		if err != nil {
			return err
		}
		e.Totals = t
	} else if len(m[pmTotals]) != 0 {
		return errPacked
	}
	for i, v := range []any{&e.Resume, &e.Facts, &e.Files, &e.Also} {
		if b := m[pmResume+i]; len(b) > 0 && json.Unmarshal(b, v) != nil {
			return errPacked
		}
	}
	return nil
}

// packTotals appends t packed (nothing for nil): a byte saying which
// members are set and one which usage counters, each counter as a
// varint, the cost's float64 bits, the line counts, the service tier,
// the unmapped counts (a count, then each name and count, by name) and
// the warnings (a count, then each). TestPackTotalsFields fails when transcript.Usage or
// Totals gain a member this does not pack.
func packTotals(dst []byte, t *Totals) []byte {
	if t == nil {
		return dst
	}
	var set byte
	var figs [8]*int64
	if u := t.Usage; u != nil {
		figs = [8]*int64{u.InputTokens, u.UncachedInputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.CacheWrite1hTokens, u.OutputTokens, u.ReasoningTokens, u.TotalTokens}
		for i, f := range figs {
			if f != nil {
				set |= 1 << i
			}
		}
	}
	var kinds byte // 1 usage, 2 cost, 4 unmapped, 8 warnings
	if t.Usage != nil {
		kinds |= 1
	}
	if t.CostUSD != nil {
		kinds |= 2
	}
	if t.Unmapped != nil {
		kinds |= 4
	}
	if t.Warnings != nil {
		kinds |= 8
	}
	dst = append(dst, kinds, set)
	for _, f := range figs {
		if f != nil {
			dst = binary.AppendVarint(dst, *f)
		}
	}
	if t.CostUSD != nil {
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(*t.CostUSD))
	}
	dst = binary.AppendVarint(dst, int64(t.Lines))
	dst = binary.AppendVarint(dst, int64(t.FailedLines))
	tier := ""
	if t.Usage != nil {
		tier = t.Usage.ServiceTier
	}
	dst = binary.AppendUvarint(dst, uint64(len(tier)))
	dst = append(dst, tier...)
	str := func(s string) []byte { return append(binary.AppendUvarint(dst, uint64(len(s))), s...) }
	dst = binary.AppendUvarint(dst, uint64(len(t.Unmapped)))
	for _, k := range slices.Sorted(maps.Keys(t.Unmapped)) {
		dst = str(k)
		dst = binary.AppendVarint(dst, int64(t.Unmapped[k]))
	}
	dst = binary.AppendUvarint(dst, uint64(len(t.Warnings)))
	for _, w := range t.Warnings {
		dst = str(w)
	}
	return dst
}

// unpackTotals reads what packTotals wrote.
func unpackTotals(b []byte) (*Totals, error) {
	if len(b) < 2 {
		return nil, errPacked
	}
	kinds, set := b[0], b[1]
	b = b[2:]
	if kinds > 15 || kinds&1 == 0 && set != 0 {
		return nil, errPacked
	}
	t := &Totals{}
	varint := func() int64 {
		v, w := binary.Varint(b)
		if w <= 0 {
			b = nil
			return 0
		}
		b = b[w:]
		return v
	}
	ok := true
	if kinds&1 != 0 {
		u := &transcript.Usage{}
		var figs [8]int64
		ps := [8]**int64{&u.InputTokens, &u.UncachedInputTokens, &u.CacheReadTokens, &u.CacheWriteTokens, &u.CacheWrite1hTokens, &u.OutputTokens, &u.ReasoningTokens, &u.TotalTokens}
		for i := range ps {
			if set&(1<<i) != 0 {
				if b == nil {
					return nil, errPacked
				}
				figs[i] = varint()
				*ps[i] = &figs[i]
			}
		}
		t.Usage = u
	}
	if kinds&2 != 0 {
		if len(b) < 8 {
			return nil, errPacked
		}
		c := math.Float64frombits(binary.LittleEndian.Uint64(b))
		t.CostUSD, b = &c, b[8:]
	}
	for _, p := range []*int{&t.Lines, &t.FailedLines} {
		if b == nil {
			return nil, errPacked
		}
		v := varint()
		if v < math.MinInt || v > math.MaxInt {
			ok = false
		}
		*p = int(v)
	}
	str := func() (string, bool) {
		n, w := binary.Uvarint(b)
		if b == nil || w <= 0 || n > uint64(len(b)-w) {
			return "", false
		}
		s := string(b[w : w+int(n)])
		b = b[w+int(n):]
		return s, true
	}
	count := func() (int, bool) {
		n, w := binary.Uvarint(b)
		if b == nil || w <= 0 || n > uint64(len(b)) { // each takes a byte at least
			return 0, false
		}
		b = b[w:]
		return int(n), true
	}
	tier, ok1 := str()
	if !ok || !ok1 {
		return nil, errPacked
	}
	if tier != "" {
		if t.Usage == nil {
			return nil, errPacked
		}
		t.Usage.ServiceTier = tier
	}
	n, ok := count()
	if !ok || kinds&4 == 0 && n > 0 {
		return nil, errPacked
	}
	if kinds&4 != 0 {
		t.Unmapped = make(map[string]int, n)
		for range n {
			k, ok := str()
			if !ok || b == nil {
				return nil, errPacked
			}
			v := varint()
			if _, dup := t.Unmapped[k]; dup || b == nil || v < math.MinInt || v > math.MaxInt {
				return nil, errPacked
			}
			t.Unmapped[k] = int(v)
		}
	}
	if n, ok = count(); !ok || kinds&8 == 0 && n > 0 {
		return nil, errPacked
	}
	if kinds&8 != 0 {
		t.Warnings = make([]string, 0, n)
		for range n {
			w, ok := str()
			if !ok {
				return nil, errPacked
			}
			t.Warnings = append(t.Warnings, w)
		}
	}
	if len(b) != 0 {
		return nil, errPacked
	}
	return t, nil
}

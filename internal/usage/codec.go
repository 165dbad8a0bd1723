package usage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/twasm/twasm/internal/prices"
	"github.com/twasm/twasm/transcript"
)

// The ledger's encoding in the index (MarshalBinary, UnmarshalBinary):
// decoding every run's ledger is most of what a report from a warm index
// costs, and JSON cost four times what the report does with them. It is
// a version byte, then every field in declaration order: a string as
// its length (uvarint) and bytes, an integer as a zig-zag varint, a
// list as its length then its items, a *time.Time as a presence byte
// then time.MarshalBinary's bytes (the instant and its zone offset, as
// JSON keeps them), a *transcript.Usage as a varint whose bit 0 says it
// is there and bits 1 to 8 which of its figures are, then those figures.
// Another version, bytes left over or a length past the end are an
// error: the caller makes the ledger from its transcript again.
const codecVersion = 5

// errCodec is a ledger encoding this twasm cannot read.
var errCodec = errors.New("usage: ledger encoding damaged")

// MarshalBinary encodes l (the index's form of a ledger).
func (l *Ledger) MarshalBinary() ([]byte, error) {
	e := encoder{b: make([]byte, 0, 256)}
	e.b = append(e.b, codecVersion)
	e.str(l.LoadErr)
	e.str(l.RunID)
	e.str(l.ParentRunID)
	e.str(l.Name)
	if l.Started == nil {
		e.b = append(e.b, 0)
	} else {
		t, err := l.Started.MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("usage: ledger %s: %w", l.RunID, err)
		}
		e.b = append(e.b, 1)
		e.bytes(t)
	}
	e.str(l.Project)
	e.str(l.RenormalizedFrom)
	e.strs(l.SupersedesRuns)
	e.strs(l.Children)
	e.strs(l.Covered)
	e.strs(l.Supersedes)
	e.str(l.SupersededBy)
	flags := byte(0)
	if l.Archived {
		flags |= 1
	}
	if l.Unkeyed {
		flags |= 2
	}
	e.b = append(e.b, flags)
	e.strs(l.Sessions)
	e.str(l.Prices)
	e.int(int64(len(l.Rows)))
	for i := range l.Rows {
		r := &l.Rows[i]
		e.int(r.At)
		e.str(r.Provider)
		e.str(r.Model)
		e.usage(r.Usage)
		for _, n := range []int64{int64(r.Requests), r.PricedPico, r.StatedMicro, int64(r.Priced), int64(r.Stated), int64(r.Unpriced), int64(r.TierUnknown), int64(r.Batch),
			int64(r.Flex), int64(r.Priority), int64(r.UnpricedTier)} {
			e.int(n)
		}
		e.strs(r.UnpricedWhy)
	}
	e.int(int64(len(l.Steps)))
	for i := range l.Steps {
		s := &l.Steps[i]
		e.b = binary.AppendUvarint(e.b, s.Seq)
		e.str(s.Path)
		e.int(int64(s.Iteration))
		e.int(s.Cost.MicroUSD)
		e.str(s.Cost.USD)
		e.str(s.Cost.Source)
		e.str(s.Cost.Prices)
		e.strs(s.Cost.UnpricedModels)
		e.int(int64(s.Cost.TierUnknown))
		e.int(int64(s.Cost.Batch))
		e.int(int64(s.Cost.Flex))
		e.int(int64(s.Cost.Priority))
	}
	return e.b, nil
}

// UnmarshalBinary decodes what MarshalBinary made into l.
func (l *Ledger) UnmarshalBinary(b []byte) error {
	if len(b) == 0 || b[0] != codecVersion {
		return errCodec
	}
	d := decoder{b: b[1:]}
	*l = Ledger{LoadErr: d.str(), RunID: d.str(), ParentRunID: d.str(), Name: d.str()}
	switch d.byte() {
	case 0:
	case 1:
		var t time.Time
		if err := t.UnmarshalBinary(d.bytes()); err != nil {
			return errCodec
		}
		l.Started = &t
	default:
		return errCodec
	}
	l.Project, l.RenormalizedFrom, l.SupersedesRuns = d.str(), d.str(), d.strs()
	l.Children, l.Covered, l.Supersedes = d.strs(), d.strs(), d.strs()
	l.SupersededBy = d.str()
	flags := d.byte()
	l.Archived, l.Unkeyed, l.Sessions = flags&1 != 0, flags&2 != 0, d.strs()
	l.Prices = d.str()
	if n := d.count(); n > 0 {
		l.Rows = make([]Row, n)
		for i := range l.Rows {
			r := &l.Rows[i]
			r.At, r.Provider, r.Model, r.Usage = d.int(), d.str(), d.str(), d.usage()
			r.Requests, r.PricedPico, r.StatedMicro = d.intN(), d.int(), d.int()
			r.Priced, r.Stated, r.Unpriced, r.TierUnknown, r.Batch = d.intN(), d.intN(), d.intN(), d.intN(), d.intN()
			r.Flex, r.Priority, r.UnpricedTier, r.UnpricedWhy = d.intN(), d.intN(), d.intN(), d.strs()
		}
	}
	if n := d.count(); n > 0 {
		l.Steps = make([]StepCost, n)
		for i := range l.Steps {
			s := &l.Steps[i]
			s.Seq, s.Path, s.Iteration = d.uint(), d.str(), d.intN()
			s.Cost = prices.Cost{MicroUSD: d.int(), USD: d.str(), Source: d.str(), Prices: d.str(), UnpricedModels: d.strs(), TierUnknown: d.intN(), Batch: d.intN(),
				Flex: d.intN(), Priority: d.intN()}
		}
	}
	if d.err || len(d.b) != 0 {
		return errCodec
	}
	return nil
}

// figures are a Usage's counters in the encoding's order.
func figures(u *transcript.Usage) [8]**int64 {
	return [8]**int64{&u.InputTokens, &u.UncachedInputTokens, &u.CacheReadTokens, &u.CacheWriteTokens,
		&u.CacheWrite1hTokens, &u.OutputTokens, &u.ReasoningTokens, &u.TotalTokens}
}

type encoder struct{ b []byte }

func (e *encoder) int(n int64) { e.b = binary.AppendVarint(e.b, n) }

func (e *encoder) bytes(s []byte) {
	e.b = binary.AppendUvarint(e.b, uint64(len(s)))
	e.b = append(e.b, s...)
}

func (e *encoder) str(s string) {
	e.b = binary.AppendUvarint(e.b, uint64(len(s)))
	e.b = append(e.b, s...)
}

func (e *encoder) strs(l []string) {
	e.int(int64(len(l)))
	for _, s := range l {
		e.str(s)
	}
}

func (e *encoder) usage(u *transcript.Usage) {
	if u == nil {
		e.int(0)
		return
	}
	var mask int64 = 1
	f := figures(u)
	for i, p := range f {
		if *p != nil {
			mask |= 2 << i
		}
	}
	e.int(mask)
	for _, p := range f {
		if *p != nil {
			e.int(**p)
		}
	}
}

// decoder reads what encoder wrote; err is set, and every later read
// gives zero values, once the input runs out or does not parse.
type decoder struct {
	b   []byte
	err bool
}

func (d *decoder) fail() { d.err, d.b = true, nil }

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uint() uint64 {
	n, k := binary.Uvarint(d.b)
	if k <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[k:]
	return n
}

func (d *decoder) int() int64 {
	n, k := binary.Varint(d.b)
	if k <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[k:]
	return n
}

// intN is an int field: one out of int's range is damage.
func (d *decoder) intN() int {
	n := d.int()
	if n < math.MinInt || n > math.MaxInt {
		d.fail()
		return 0
	}
	return int(n)
}

// count is a list's length: one longer than the bytes left (every item
// takes a byte at least) is damage, so a forged length allocates nothing.
func (d *decoder) count() int {
	n := d.int()
	if n < 0 || n > int64(len(d.b)) {
		d.fail()
		return 0
	}
	return int(n)
}

func (d *decoder) bytes() []byte {
	n := d.uint()
	if n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	s := d.b[:n]
	d.b = d.b[n:]
	return s
}

func (d *decoder) str() string { return string(d.bytes()) }

func (d *decoder) strs() []string {
	n := d.count()
	if n == 0 {
		return nil
	}
	l := make([]string, n)
	for i := range l {
		l[i] = d.str()
	}
	return l
}

func (d *decoder) usage() *transcript.Usage {
	mask := d.int()
	if mask == 0 || d.err {
		return nil
	}
	if mask&1 == 0 || mask>>9 != 0 {
		d.fail()
		return nil
	}
	u := &transcript.Usage{}
	var vals [8]int64 // one allocation for the figures
	p := &vals
	for i, f := range figures(u) {
		if mask&(2<<i) != 0 {
			p[i] = d.int()
			*f = &p[i]
		}
	}
	return u
}

package archive

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
)

// entries are a ledger's entries in memory: one packed entry per slot
// (packEntry), found by run id, by path, by head and by the paths of its
// copies (Entry.Also) through chains of slots by a hash of the key, so
// that no string is held twice and no Entry is held at all. The slot of
// a run removed is left empty (only a ledger being opened removes one).
// Not safe for concurrent use: the Ledger's lock guards it.
type entries struct {
	seed  maphash.Seed
	slots []packed
	n     int // slots in use
	// byID, byPath and byHead chain the slots by the hash of a key: the
	// first slot of a hash, and each slot's next (-1: the last).
	byID, byPath, byHead chain
	// buf is where an entry is packed before it is copied into a slice
	// of its own size.
	buf []byte
	// byAlso is each copy's path's slots (Entry.Also: few runs have
	// any), by the hash of the path.
	byAlso map[uint64][]int32
}

// chain is a hash table of slots whose collisions are a linked list.
type chain struct {
	first map[uint64]int32
	next  []int32
}

func (c *chain) add(h uint64, slot int32) {
	if c.first == nil {
		c.first = map[uint64]int32{}
	}
	for len(c.next) <= int(slot) {
		c.next = append(c.next, -1)
	}
	if f, ok := c.first[h]; ok {
		c.next[slot] = f
	} else {
		c.next[slot] = -1
	}
	c.first[h] = slot
}

func (c *chain) remove(h uint64, slot int32) {
	f, ok := c.first[h]
	if !ok {
		return
	}
	if f == slot {
		if n := c.next[slot]; n >= 0 {
			c.first[h] = n
		} else {
			delete(c.first, h)
		}
		return
	}
	for s := f; c.next[s] >= 0; s = c.next[s] {
		if c.next[s] == slot {
			c.next[s] = c.next[slot]
			return
		}
	}
}

// each calls f with the slots of hash h until f returns false.
func (c *chain) each(h uint64, f func(slot int32) bool) {
	s, ok := c.first[h]
	for ok && s >= 0 {
		if !f(s) {
			return
		}
		s = c.next[s]
	}
}

func newEntries() *entries { return &entries{seed: maphash.MakeSeed()} }

func (x *entries) hash(s string) uint64  { return maphash.String(x.seed, s) }
func (x *entries) hashB(b []byte) uint64 { return maphash.Bytes(x.seed, b) }

// len is how many runs there are.
func (x *entries) len() int { return x.n }

// slotOf is the slot of run id (-1: none).
func (x *entries) slotOf(id string) int32 {
	found := int32(-1)
	x.byID.each(x.hash(id), func(s int32) bool {
		if string(x.slots[s].member(pmRunID)) == id {
			found = s
			return false
		}
		return true
	})
	return found
}

// get unpacks the entry of a slot into a new Entry.
func (x *entries) get(slot int32) *Entry {
	e := &Entry{}
	if err := unpackEntry(x.slots[slot], e); err != nil {
		panic(fmt.Sprintf("ledger: slot %d: %v", slot, err)) // packEntry's own bytes
	}
	return e
}

// byRun returns the entry of run id (nil: none), a copy.
func (x *entries) byRun(id string) *Entry {
	if s := x.slotOf(id); s >= 0 {
		return x.get(s)
	}
	return nil
}

// put sets the entry of e's run.
func (x *entries) put(e *Entry) error {
	b, err := packEntry(x.buf[:0], e)
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	x.buf = b
	p := packed(bytes.Clone(b))
	slot := x.slotOf(e.RunID)
	if slot >= 0 {
		x.unindex(slot)
	} else {
		slot = int32(len(x.slots))
		x.slots = append(x.slots, nil)
		x.byID.add(x.hash(e.RunID), slot)
		x.n++
	}
	x.slots[slot] = p
	x.index(slot, e)
	return nil
}

// remove forgets run id.
func (x *entries) remove(id string) {
	slot := x.slotOf(id)
	if slot < 0 {
		return
	}
	x.unindex(slot)
	x.byID.remove(x.hash(id), slot)
	x.slots[slot] = nil
	x.n--
}

// index adds a slot, holding e, to the chains of its path, head and
// copies.
func (x *entries) index(slot int32, e *Entry) {
	x.byPath.add(x.hash(e.Path), slot)
	x.byHead.add(x.hash(e.Head), slot)
	for _, s := range e.Also {
		if x.byAlso == nil {
			x.byAlso = map[uint64][]int32{}
		}
		h := x.hash(s.Path)
		if !slices.Contains(x.byAlso[h], slot) {
			x.byAlso[h] = append(x.byAlso[h], slot)
		}
	}
}

// unindex takes a slot out of the chains index put it in.
func (x *entries) unindex(slot int32) {
	p := x.slots[slot]
	var buf [64]byte
	x.byPath.remove(x.hashB(p.member(pmPath)), slot)
	x.byHead.remove(x.hashB(p.headKey(&buf)), slot)
	if also := p.member(pmAlso); len(also) > 0 {
		for h, ss := range x.byAlso {
			if i := slices.Index(ss, slot); i >= 0 {
				if ss = slices.Delete(ss, i, i+1); len(ss) == 0 {
					delete(x.byAlso, h)
				} else {
					x.byAlso[h] = ss
				}
			}
		}
	}
}

// each calls f with every slot in use until f returns false.
func (x *entries) each(f func(slot int32, p packed) bool) {
	for i, p := range x.slots {
		if p != nil && !f(int32(i), p) {
			return
		}
	}
}

// ids are the run ids with their slots, by run id.
func (x *entries) ids() []idSlot {
	out := make([]idSlot, 0, x.n)
	x.each(func(s int32, p packed) bool {
		out = append(out, idSlot{p.runID(), s})
		return true
	})
	slices.SortFunc(out, func(a, b idSlot) int { return strings.Compare(a.id, b.id) })
	return out
}

type idSlot struct {
	id   string
	slot int32
}

// pathSlot is the run a path was last synced from, as the ledger's
// index had it: among the runs read from path that hold a session (not
// ended with nothing archived), the open one (the greatest run id, if
// several), else the ended one of greatest run id; a run another
// supersedes (Entry.SupersededBy) only when no other was read from path,
// the least run id of them. -1: none.
func (x *entries) pathSlot(path string) int32 {
	best, bestRank := int32(-1), 0
	var bestID []byte
	x.byPath.each(x.hash(path), func(s int32) bool {
		p := x.slots[s]
		if p.holdsNoSession() || string(p.member(pmPath)) != path {
			return true
		}
		id := p.member(pmRunID)
		rank := 1 // superseded: the least run id
		switch {
		case p.flags()&pkSuperseded == 0 && !p.closed():
			rank = 3
		case p.flags()&pkSuperseded == 0:
			rank = 2
		}
		better := rank > bestRank ||
			rank == bestRank && rank > 1 && bytes.Compare(id, bestID) > 0 ||
			rank == bestRank && rank == 1 && bytes.Compare(id, bestID) < 0
		if better {
			best, bestRank, bestID = s, rank, id
		}
		return true
	})
	return best
}

// headSlots are the runs whose session has head (those that hold one
// and that no other run supersedes), by run id.
func (x *entries) headSlots(head string) []int32 {
	var out []int32
	var buf [64]byte
	x.byHead.each(x.hash(head), func(s int32) bool {
		p := x.slots[s]
		if !p.holdsNoSession() && p.flags()&pkSuperseded == 0 && string(p.headKey(&buf)) == head {
			out = append(out, s)
		}
		return true
	})
	slices.SortFunc(out, func(a, b int32) int {
		return bytes.Compare(x.slots[a].member(pmRunID), x.slots[b].member(pmRunID))
	})
	return out
}

// alsoSlot is the run that notes path among its copies (Entry.Also), the
// greatest run id of those that hold a session no other run supersedes
// (-1: none).
func (x *entries) alsoSlot(path string) (int32, *Entry) {
	best := int32(-1)
	var bestE *Entry
	for _, s := range x.byAlso[x.hash(path)] {
		p := x.slots[s]
		if p.holdsNoSession() || p.flags()&pkSuperseded != 0 {
			continue
		}
		e := x.get(s)
		if !slices.ContainsFunc(e.Also, func(c Seen) bool { return c.Path == path }) {
			continue
		}
		if bestE == nil || e.RunID > bestE.RunID {
			best, bestE = s, e
		}
	}
	return best, bestE
}

package archive

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/twasm/twasm/internal/runid"
)

// entries are a ledger's entries in memory: one fixed-size record per
// run (rec, 88 bytes) with what a sync's lookups compare (the hashes of
// its run id, path and head, the run id's bytes, size, mtime, parts and
// state), found by run id, by path and by head through open-addressed
// tables of slots (table, 4 bytes a slot, at most three quarters full)
// and by the paths of its copies (Entry.Also: few runs have any)
// through a map. The entry itself is read when asked for (get): from
// the ledger's file, at the offset of the line that wrote it last
// (lineAt), or, for an entry that no line of the file holds as it is
// (a ledger rebuilt from the transcripts, a pending entry settled on
// load, a run id that is not valid), packed in memory
// (packEntry). A sync of 20,000 sessions so holds about 120 bytes a run
// instead of the 480 of every entry packed, and its heap stops growing
// with the history it writes.
//
// A path is compared by two hashes of it with independent seeds (128
// bits): a re-sync with nothing new finds every file unchanged without
// reading one entry. Run ids compare by their 16 bytes, heads by the
// entry read. The slot of a run removed is left empty (only a ledger
// being opened removes one). Not safe for concurrent use: the Ledger's
// lock guards it.
type entries struct {
	seed, seed2 maphash.Seed
	recs        []rec
	n           int // slots in use
	// mem holds the entries no line of the file holds (rec.off < 0),
	// packed.
	mem                  map[int32]packed
	byID, byPath, byHead table
	// byAlso is each copy's path's slots (Entry.Also), by the hash of
	// the path.
	byAlso map[uint64][]int32
	// lineAt reads the ledger file's n bytes at off into buf (nil: no
	// file, every entry is in mem): fewer, with io.EOF, when the file
	// ends before.
	lineAt func(off int64, n int, buf []byte) ([]byte, error)
	buf    []byte
}

// rec is what a ledger holds of a run in memory.
type rec struct {
	off         int64 // the offset of its line in the ledger file; -1: in mem; -2: removed
	size, mtime int64
	idH         uint64 // the hash of the run id
	pathH       [2]uint64
	headH       uint64
	id          [16]byte // the run id's bytes (runid.Key), when recUUID
	ln          uint32   // the line's length, newline excluded
	parts       uint32   // Entry.Parts (at most MaxUint32)
	flags       uint16
}

// A rec's flags.
const (
	recClosed = 1 << iota
	recPending
	recSeal
	recSuperseded
	recResume
	recAlso
	recUUID   // the run id is valid (runid.Valid), its bytes held in rec.id
	recUnique // its line names each member once (linePath reads it)
	recLoose  // Entry.LooseAt is set
	recListed // its path is one the sync listed (Ledger.markListed)
)

func (r *rec) closed() bool { return r.flags&recClosed != 0 }

// holdsNoSession is index's first test: an interrupted run ended with
// nothing archived holds no session, and is found by run id only.
func (r *rec) holdsNoSession() bool { return r.closed() && r.parts == 0 }

func newEntries() *entries {
	x := &entries{seed: maphash.MakeSeed(), seed2: maphash.MakeSeed()}
	x.byID.key = func(s int32) uint64 { return x.recs[s].idH }
	x.byPath.key = func(s int32) uint64 { return x.recs[s].pathH[0] }
	x.byHead.key = func(s int32) uint64 { return x.recs[s].headH }
	return x
}

func (x *entries) hash(s string) uint64 { return maphash.String(x.seed, s) }

func (x *entries) pathHash(p string) [2]uint64 {
	return [2]uint64{maphash.String(x.seed, p), maphash.String(x.seed2, p)}
}

// len is how many runs there are.
func (x *entries) len() int { return x.n }

// slotOf is the slot of run id (-1: none).
func (x *entries) slotOf(id string) int32 {
	u, isUUID := runid.Key(id)
	found := int32(-1)
	x.byID.each(x.hash(id), func(s int32) bool {
		r := &x.recs[s]
		if r.flags&recUUID != 0 {
			if isUUID && r.id == u {
				found = s
			}
		} else if string(x.mem[s].member(pmRunID)) == id {
			found = s
		}
		return found < 0
	})
	return found
}

// runID is the run id of a slot.
func (x *entries) runID(s int32) string {
	if r := &x.recs[s]; r.flags&recUUID != 0 {
		return runid.FromKey(r.id)
	}
	return x.mem[s].runID()
}

// idCompare compares the run ids of two slots.
func (x *entries) idCompare(a, b int32) int {
	ra, rb := &x.recs[a], &x.recs[b]
	if ra.flags&rb.flags&recUUID != 0 {
		return bytes.Compare(ra.id[:], rb.id[:]) // the hex text's order
	}
	return strings.Compare(x.runID(a), x.runID(b))
}

// get reads the entry of a slot into a new Entry. The ledger's file
// failing to give back a line it wrote panics: nothing the ledger says
// could be trusted then, and a crash leaves every run complete or absent.
func (x *entries) get(slot int32) *Entry {
	e := &Entry{}
	r := &x.recs[slot]
	if r.off < 0 {
		if err := unpackEntry(x.mem[slot], e); err != nil {
			panic(fmt.Sprintf("ledger: slot %d: %v", slot, err)) // packEntry's own bytes
		}
		return e
	}
	b, err := x.lineAt(r.off, int(r.ln), x.buf)
	if err != nil {
		panic(fmt.Sprintf("ledger: reading back the line at %d: %v", r.off, err))
	}
	x.buf = b[:0]
	if !decodeEntry(b, e) {
		*e = Entry{}
		if err := json.Unmarshal(b, e); err != nil {
			panic(fmt.Sprintf("ledger: the line at %d: %v", r.off, err)) // a line load read
		}
	}
	if k, _ := runid.Key(e.RunID); k != r.id {
		// Not the line the record was made from (the file replaced
		// under a ledger closed): never another run's entry.
		panic(fmt.Sprintf("ledger: the line at %d is run %s's, not %s's", r.off, e.RunID, runid.FromKey(r.id)))
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

// put sets the entry of e's run, held packed in memory.
func (x *entries) put(e *Entry) error {
	b, err := packEntry(x.buf[:0], e)
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	x.buf = b[:0]
	slot := x.set(e, -1, 0)
	if x.mem == nil {
		x.mem = map[int32]packed{}
	}
	x.mem[slot] = packed(bytes.Clone(b))
	return nil
}

// putAt sets the entry of e's run as the ledger file's line of n bytes
// at off, which holds it: read from there when asked for. unique says
// that the line names each member once (json.Marshal wrote it, or
// decodeEntry read it). A run id that is not valid (runid.Valid) is held
// packed instead (put).
func (x *entries) putAt(e *Entry, off int64, n int, unique bool) error {
	if x.packs(e.RunID, n) {
		return x.put(e)
	}
	slot := x.set(e, off, uint32(n))
	if unique {
		x.recs[slot].flags |= recUnique
	}
	delete(x.mem, slot)
	return nil
}

// packs reports whether putAt holds the entry of run id, written in a
// line of n bytes, packed in memory (put) rather than read from its line.
func (x *entries) packs(id string, n int) bool {
	_, ok := runid.Key(id)
	return !ok || x.lineAt == nil || n > math.MaxUint32
}

// moveTo notes that the entry of slot is now the file's line of n bytes
// at off (compact wrote it there): the memory it held is given back.
func (x *entries) moveTo(slot int32, off int64, n int) {
	r := &x.recs[slot]
	if r.flags&recUUID == 0 || x.lineAt == nil || n > math.MaxUint32 {
		return
	}
	r.off, r.ln = off, uint32(n)
	r.flags |= recUnique // json.Marshal's
	delete(x.mem, slot)
}

// set writes e's record (at off, n) into its run's slot, a new one for
// a new run, indexed by its path, head and copies; it returns the slot.
func (x *entries) set(e *Entry, off int64, n uint32) int32 {
	slot := x.slotOf(e.RunID)
	if slot >= 0 {
		x.unindex(slot)
	} else {
		slot = int32(len(x.recs))
		x.recs = append(x.recs, rec{idH: x.hash(e.RunID)})
		x.byID.add(slot)
		x.n++
	}
	r := &x.recs[slot]
	*r = rec{off: off, ln: n, size: e.Size, mtime: e.ModTime, idH: r.idH,
		pathH: x.pathHash(e.Path), headH: x.hash(e.Head), parts: uint32(min(max(e.Parts, 0), math.MaxUint32))}
	if u, ok := runid.Key(e.RunID); ok {
		r.id, r.flags = u, recUUID
	}
	flag := func(ok bool, f uint16) {
		if ok {
			r.flags |= f
		}
	}
	flag(e.Closed, recClosed)
	flag(e.Pending, recPending)
	flag(e.Seal, recSeal)
	flag(e.SupersededBy != "", recSuperseded)
	flag(e.Resume != nil, recResume)
	flag(len(e.Also) > 0, recAlso)
	flag(e.LooseAt != 0, recLoose)
	x.index(slot, e)
	return slot
}

// remove forgets run id.
func (x *entries) remove(id string) {
	slot := x.slotOf(id)
	if slot < 0 {
		return
	}
	x.unindex(slot)
	x.byID.remove(slot)
	x.recs[slot] = rec{off: -2}
	delete(x.mem, slot)
	x.n--
}

// index adds a slot, holding e, to the tables of its path, head and
// copies.
func (x *entries) index(slot int32, e *Entry) {
	x.byPath.add(slot)
	x.byHead.add(slot)
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

// unindex takes a slot out of the tables index put it in.
func (x *entries) unindex(slot int32) {
	x.byPath.remove(slot)
	x.byHead.remove(slot)
	if x.recs[slot].flags&recAlso != 0 {
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
func (x *entries) each(f func(slot int32, r *rec) bool) {
	for i := range x.recs {
		if r := &x.recs[i]; r.off != -2 && !f(int32(i), r) {
			return
		}
	}
}

// paths calls f with every slot in use that keep keeps (nil: all) and
// its entry's path, reading the file's lines in the order of the file,
// a window at a time, and only the path of each (linePath), not the
// whole entry.
func (x *entries) paths(keep func(r *rec) bool, f func(slot int32, r *rec, path string)) {
	var inFile []int32
	x.each(func(s int32, r *rec) bool {
		if keep != nil && !keep(r) {
			return true
		}
		if r.off < 0 {
			f(s, r, x.get(s).Path)
		} else {
			inFile = append(inFile, s)
		}
		return true
	})
	slices.SortFunc(inFile, func(a, b int32) int { return cmp.Compare(x.recs[a].off, x.recs[b].off) })
	const window = 64 << 10
	var buf []byte
	var from int64 // the file's offset of buf[0]
	for _, s := range inFile {
		r := &x.recs[s]
		if r.off < from || r.off+int64(r.ln) > from+int64(len(buf)) {
			// Read from here: a window, or the line if longer.
			b, err := x.lineAt(r.off, max(window, int(r.ln)), buf)
			if errors.Is(err, io.EOF) && len(b) >= int(r.ln) {
				err = nil // the file's end is within the window
			}
			if err != nil {
				panic(fmt.Sprintf("ledger: reading back the line at %d: %v", r.off, err))
			}
			buf, from = b, r.off
		}
		p, ok := "", false
		if r.flags&recUnique != 0 {
			p, ok = linePath(buf[r.off-from : r.off-from+int64(r.ln)])
		}
		if !ok {
			p = x.get(s).Path
		}
		f(s, r, p)
	}
}

// ids are the run ids with their slots, by run id.
func (x *entries) ids() []idSlot {
	out := make([]idSlot, 0, x.n)
	x.each(func(s int32, _ *rec) bool {
		out = append(out, idSlot{x.runID(s), s})
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
	ph := x.pathHash(path)
	x.byPath.each(ph[0], func(s int32) bool {
		r := &x.recs[s]
		if r.holdsNoSession() || r.pathH != ph {
			return true
		}
		rank := 1 // superseded: the least run id
		switch {
		case r.flags&recSuperseded == 0 && !r.closed():
			rank = 3
		case r.flags&recSuperseded == 0:
			rank = 2
		}
		better := rank > bestRank ||
			rank == bestRank && rank > 1 && x.idCompare(s, best) > 0 ||
			rank == bestRank && rank == 1 && x.idCompare(s, best) < 0
		if better {
			best, bestRank = s, rank
		}
		return true
	})
	return best
}

// byHead are the entries of the runs whose session has head (those
// that hold one and that no other run supersedes), by run id.
func (x *entries) byHeadOf(head string) []*Entry {
	var slots []int32
	h := x.hash(head)
	x.byHead.each(h, func(s int32) bool {
		if r := &x.recs[s]; !r.holdsNoSession() && r.flags&recSuperseded == 0 {
			slots = append(slots, s)
		}
		return true
	})
	var out []*Entry
	for _, s := range slots {
		if e := x.get(s); e.Head == head {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b *Entry) int { return strings.Compare(a.RunID, b.RunID) })
	return out
}

// alsoSlot is the run that notes path among its copies (Entry.Also), the
// greatest run id of those that hold a session no other run supersedes
// (-1: none).
func (x *entries) alsoSlot(path string) (int32, *Entry) {
	best := int32(-1)
	var bestE *Entry
	for _, s := range x.byAlso[x.hash(path)] {
		r := &x.recs[s]
		if r.holdsNoSession() || r.flags&recSuperseded != 0 {
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

// table is a hash table of slots by a key each slot's record holds
// (key), open-addressed with linear probing: several slots may share a
// key, and each finds them all.
type table struct {
	key   func(slot int32) uint64
	slots []int32 // tableEmpty, tableGone, or a slot
	used  int
	gone  int
}

const (
	tableEmpty = -1
	tableGone  = -2
)

// add puts slot in the table under its key.
func (t *table) add(slot int32) {
	if (t.used+t.gone+1)*4 > len(t.slots)*3 {
		t.grow()
	}
	mask := uint64(len(t.slots) - 1)
	for i := t.key(slot) & mask; ; i = (i + 1) & mask {
		if s := t.slots[i]; s == tableEmpty || s == tableGone {
			if s == tableGone {
				t.gone--
			}
			t.slots[i] = slot
			t.used++
			return
		}
	}
}

// remove takes slot out of the table (its key as when added).
func (t *table) remove(slot int32) {
	if len(t.slots) == 0 {
		return
	}
	mask := uint64(len(t.slots) - 1)
	for i := t.key(slot) & mask; t.slots[i] != tableEmpty; i = (i + 1) & mask {
		if t.slots[i] == slot {
			t.slots[i] = tableGone
			t.used--
			t.gone++
			return
		}
	}
}

// each calls f with the slots of key h until f returns false.
func (t *table) each(h uint64, f func(slot int32) bool) {
	if len(t.slots) == 0 {
		return
	}
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; t.slots[i] != tableEmpty; i = (i + 1) & mask {
		if s := t.slots[i]; s >= 0 && t.key(s) == h && !f(s) {
			return
		}
	}
}

// grow makes room for more slots (twice the ones used, at least 64),
// dropping the marks of slots removed.
func (t *table) grow() {
	old := t.slots
	n := 64
	for n < 2*(t.used+1) {
		n *= 2
	}
	t.slots = make([]int32, n)
	for i := range t.slots {
		t.slots[i] = tableEmpty
	}
	t.used, t.gone = 0, 0
	for _, s := range old {
		if s >= 0 {
			t.add(s)
		}
	}
}

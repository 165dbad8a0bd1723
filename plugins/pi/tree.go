package pi

import (
	"strconv"
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// tree is the session's entry tree as far as the stream has read it:
// each entry's parent, so that an entry that does not continue from the
// one before it (the user went back in the tree and went on from there)
// is seen, and the branch it left is named.
//
// Pi's ids are 8 lower-case hex digits: such an id is kept as its number
// (with bit 32 set, so that no key is 0, which stands for "none"); any
// other id (a full UUID after a collision, another tool's) gets a number
// of its own from names. Nothing is allocated per entry but the map slot.
type tree struct {
	nodes map[uint64]node
	names map[string]uint64 // ids that are not 8 hex digits
	ids   map[uint64]string // and back
	last  uint64            // the entry read last (0: none yet)
}

// node is one entry of the tree.
type node struct {
	parent uint64 // 0: a root (parentId null) or a parent not in the file
	msg    bool   // a message entry
}

const hexKey = 1 << 32

func (t *tree) reset() {
	t.nodes, t.names, t.ids, t.last = nil, nil, nil, 0
}

// key returns the number of id, assigning one when add is set (0 when
// the id has none and add is not set).
func (t *tree) key(id string, add bool) uint64 {
	if len(id) == 8 {
		var k uint64
		ok := true
		for i := 0; i < 8; i++ {
			c := id[i]
			switch {
			case c >= '0' && c <= '9':
				k = k<<4 | uint64(c-'0')
			case c >= 'a' && c <= 'f':
				k = k<<4 | uint64(c-'a'+10)
			default:
				ok = false
			}
		}
		if ok {
			return hexKey | k
		}
	}
	if k, ok := t.names[id]; ok {
		return k
	}
	if !add {
		return 0
	}
	if t.names == nil {
		t.names, t.ids = map[string]uint64{}, map[uint64]string{}
	}
	k := uint64(1<<40) + uint64(len(t.names))
	s := strings.Clone(id)
	t.names[s], t.ids[k] = k, s
	return k
}

// name is the id of key k.
func (t *tree) name(k uint64) string {
	if k&^(hexKey-1) == hexKey {
		const hex = "0123456789abcdef"
		var b [8]byte
		for i := 7; i >= 0; i-- {
			b[i] = hex[k&0xf]
			k >>= 4
		}
		return string(b[:])
	}
	return t.ids[k]
}

// add puts an entry into the tree and reports whether it was there
// already (a replayed entry). An entry whose parent is not the entry read
// before it starts a branch: the entries between the point it goes on
// from and the entry read before it are a branch the conversation left,
// and a warning names them.
func (t *tree) add(idv, parentv abi.Value, msg bool, out *sdk.Out) (replayed bool) {
	if t.nodes == nil {
		t.nodes = map[uint64]node{}
	}
	id := sdk.View(idv)
	k := t.key(id, true)
	if _, seen := t.nodes[k]; seen {
		return true
	}
	var p uint64
	if !parentv.Exists() {
		// A writer that keeps no parents: the file's order is the
		// conversation.
		p = t.last
	}
	hasParent := parentv.Kind() == abi.KindString
	if hasParent {
		p = t.key(sdk.View(parentv), false)
		if _, known := t.nodes[p]; !known {
			p = 0
		}
	}
	if t.last != 0 && p != t.last {
		switch {
		case hasParent && p == 0:
			out.Warn("entry " + clip(id) + " names parent " + clip(sdk.View(parentv)) + ", which the session file does not hold before it")
		default:
			t.branch(id, p, out)
		}
	}
	t.nodes[k] = node{parent: p, msg: msg}
	t.last = k
	return false
}

// branch reports that entry id goes on from entry p (0: from the start)
// rather than from the last entry: the entries on the last entry's path
// that are not on p's are the branch left behind.
func (t *tree) branch(id string, p uint64, out *sdk.Out) {
	onPath := map[uint64]bool{}
	for k, n := 0, p; n != 0 && k <= len(t.nodes); k++ {
		onPath[n] = true
		n = t.nodes[n].parent
	}
	entries, msgs := 0, 0
	first := uint64(0)
	for k, n := 0, t.last; n != 0 && !onPath[n] && k <= len(t.nodes); k++ {
		nd := t.nodes[n]
		entries++
		if nd.msg {
			msgs++
		}
		first = n
		n = nd.parent
	}
	from := "the start of the session"
	if p != 0 {
		from = "entry " + clip(t.name(p))
	}
	msg := "branch: entry " + clip(id) + " goes on from " + from + ", not from the entry before it (" + clip(t.name(t.last)) + ")"
	if entries > 0 {
		msg += ": entries " + clip(t.name(first)) + " to " + clip(t.name(t.last)) + " (" + strconv.Itoa(entries) + " entries, " + strconv.Itoa(msgs) + " messages) are a branch the conversation left; the transcript keeps them above, where they happened"
	}
	out.Warn(msg)
}

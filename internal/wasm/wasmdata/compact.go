package wasmdata

import (
	"errors"
	"fmt"
	"slices"
)

var (
	// ErrUnsupported: the data section uses something Compact leaves alone.
	ErrUnsupported = errors.New("wasmdata: data section not compactable")
	// ErrMalformed: the module cannot be parsed.
	ErrMalformed = errors.New("wasmdata: malformed module")
)

const (
	sectionData      = 11
	sectionDataCount = 12
	// maxImage bounds the merged image: a 32-bit memory's size.
	maxImage = 1 << 32
)

// Gap is the widest run of zeros written out to merge two data segments,
// the maxGap the host and the build use: it makes a Go module's 25,000
// segments a handful, for ~12% more module bytes. The build compacts
// bundled modules with it, so the host finds nothing left to do on them.
const Gap = 64

type segment struct {
	off  uint32
	data []byte
}

// Compact returns wasm with its active data segments merged wherever the
// gap between two is at most maxGap bytes. It returns wasm itself when
// nothing would change, and an error wrapping ErrUnsupported or
// ErrMalformed when it leaves the module alone.
func Compact(wasm []byte, maxGap int) ([]byte, error) {
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" {
		return nil, fmt.Errorf("%w: no wasm header", ErrMalformed)
	}
	var dataStart, dataEnd int // the whole data section, id and size included
	var body []byte
	for i := 8; i < len(wasm); {
		id := wasm[i]
		size, n, ok := uleb32(wasm[i+1:])
		if !ok || uint64(len(wasm)-i-1-n) < uint64(size) {
			return nil, fmt.Errorf("%w: section at %d", ErrMalformed, i)
		}
		end := i + 1 + n + int(size)
		switch id {
		case sectionDataCount:
			return nil, fmt.Errorf("%w: data count section", ErrUnsupported)
		case sectionData:
			dataStart, dataEnd, body = i, end, wasm[i+1+n:end]
		}
		i = end
	}
	if body == nil {
		return wasm, nil
	}
	segs, err := segments(body)
	if err != nil {
		return nil, err
	}
	merged := merge(segs, maxGap)
	if len(merged) == len(segs) {
		return wasm, nil
	}
	var sec []byte
	sec = appendULEB(sec, uint64(len(merged)))
	for _, s := range merged {
		sec = append(sec, 0x00, 0x41) // active, memory 0; i32.const
		sec = appendSLEB(sec, int64(int32(s.off)))
		sec = append(sec, 0x0b) // end
		sec = appendULEB(sec, uint64(len(s.data)))
		sec = append(sec, s.data...)
	}
	out := make([]byte, 0, len(wasm)-(dataEnd-dataStart)+len(sec)+6)
	out = append(out, wasm[:dataStart]...)
	out = append(out, sectionData)
	out = appendULEB(out, uint64(len(sec)))
	out = append(out, sec...)
	return append(out, wasm[dataEnd:]...), nil
}

// segments parses a data section's segments, sorted by offset.
func segments(body []byte) ([]segment, error) {
	count, n, ok := uleb32(body)
	if !ok {
		return nil, fmt.Errorf("%w: segment count", ErrMalformed)
	}
	p := body[n:]
	// Every segment takes at least 4 bytes: this bounds a forged count.
	segs := make([]segment, 0, min(uint64(count), uint64(len(p)/4)))
	for i := uint32(0); i < count; i++ {
		if len(p) < 2 {
			return nil, fmt.Errorf("%w: segment %d", ErrMalformed, i)
		}
		if p[0] != 0x00 || p[1] != 0x41 {
			// Passive, explicit memory index, or an offset that is not
			// an i32.const.
			return nil, fmt.Errorf("%w: segment %d is not active with a constant offset", ErrUnsupported, i)
		}
		off, k, ok := sleb32(p[2:])
		p = p[2+k:]
		if !ok || len(p) < 1 || p[0] != 0x0b {
			return nil, fmt.Errorf("%w: segment %d offset", ErrUnsupported, i)
		}
		size, k, ok := uleb32(p[1:])
		if !ok || uint64(len(p)-1-k) < uint64(size) {
			return nil, fmt.Errorf("%w: segment %d size", ErrMalformed, i)
		}
		data := p[1+k : 1+k+int(size)]
		p = p[1+k+int(size):]
		if uint64(uint32(off))+uint64(size) > maxImage {
			// Out of bounds for any memory: instantiation fails either
			// way; leave it to wazero to say so.
			return nil, fmt.Errorf("%w: segment %d beyond 4 GiB", ErrUnsupported, i)
		}
		if size == 0 {
			// Its only effect is a bounds check at instantiation.
			return nil, fmt.Errorf("%w: segment %d is empty", ErrUnsupported, i)
		}
		segs = append(segs, segment{off: uint32(off), data: data})
	}
	if len(p) != 0 {
		return nil, fmt.Errorf("%w: bytes after the last segment", ErrMalformed)
	}
	// Later segments overwrite earlier ones where they overlap; merging
	// would have to keep that order. Go's linker never overlaps them.
	slices.SortStableFunc(segs, func(a, b segment) int { return int(int64(a.off) - int64(b.off)) })
	for i := 1; i < len(segs); i++ {
		if uint64(segs[i-1].off)+uint64(len(segs[i-1].data)) > uint64(segs[i].off) {
			return nil, fmt.Errorf("%w: overlapping segments", ErrUnsupported)
		}
	}
	return segs, nil
}

// merge joins sorted, disjoint segments separated by at most maxGap bytes.
func merge(segs []segment, maxGap int) []segment {
	var out []segment
	for i := 0; i < len(segs); {
		j := i + 1
		end := uint64(segs[i].off) + uint64(len(segs[i].data))
		for j < len(segs) && uint64(segs[j].off)-end <= uint64(maxGap) {
			end = uint64(segs[j].off) + uint64(len(segs[j].data))
			j++
		}
		if j == i+1 {
			out = append(out, segs[i])
		} else {
			img := make([]byte, end-uint64(segs[i].off))
			for _, s := range segs[i:j] {
				copy(img[s.off-segs[i].off:], s.data)
			}
			out = append(out, segment{off: segs[i].off, data: img})
		}
		i = j
	}
	return out
}

func uleb32(b []byte) (v uint32, n int, ok bool) {
	var x uint64
	for i := 0; i < 5 && i < len(b); i++ {
		x |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return uint32(x), i + 1, x <= 0xffffffff
		}
	}
	return 0, 0, false
}

func sleb32(b []byte) (v int32, n int, ok bool) {
	var x int64
	for i := 0; i < 5 && i < len(b); i++ {
		x |= int64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			if shift := 7 * (i + 1); shift < 64 && b[i]&0x40 != 0 {
				x |= -1 << shift
			}
			return int32(x), i + 1, x >= -1<<31 && x < 1<<31
		}
	}
	return 0, 0, false
}

func appendULEB(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func appendSLEB(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

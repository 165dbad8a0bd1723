package wasmdata

import (
	"errors"
	"fmt"
	"slices"

	"github.com/twasm/twasm/internal/wasm/wasmbin"
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
	r := wasmbin.Reader{B: wasm, Pos: 8}
	for r.Left() > 0 {
		start := r.Pos
		id, sec, err := r.Section("section")
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		switch id {
		case sectionDataCount:
			return nil, fmt.Errorf("%w: data count section", ErrUnsupported)
		case sectionData:
			dataStart, dataEnd, body = start, r.Pos, sec.B
		}
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
	sec = wasmbin.AppendULEB(sec, uint64(len(merged)))
	for _, s := range merged {
		sec = append(sec, 0x00, 0x41) // active, memory 0; i32.const
		sec = wasmbin.AppendSLEB(sec, int64(int32(s.off)))
		sec = append(sec, 0x0b) // end
		sec = wasmbin.AppendULEB(sec, uint64(len(s.data)))
		sec = append(sec, s.data...)
	}
	out := make([]byte, 0, len(wasm)-(dataEnd-dataStart)+len(sec)+6)
	out = append(out, wasm[:dataStart]...)
	out = append(out, sectionData)
	out = wasmbin.AppendULEB(out, uint64(len(sec)))
	out = append(out, sec...)
	return append(out, wasm[dataEnd:]...), nil
}

// segments parses a data section's segments, sorted by offset.
func segments(body []byte) ([]segment, error) {
	r := wasmbin.Reader{B: body}
	count, err := r.U32()
	if err != nil {
		return nil, fmt.Errorf("%w: segment count: %v", ErrMalformed, err)
	}
	// Every segment takes at least 4 bytes: this bounds a forged count.
	segs := make([]segment, 0, min(uint64(count), uint64(r.Left()/4)))
	for i := range count {
		head, err := r.Take(2, "segment header")
		if err != nil {
			return nil, fmt.Errorf("%w: segment %d: %v", ErrMalformed, i, err)
		}
		if head[0] != 0x00 || head[1] != 0x41 {
			// Passive, explicit memory index, or an offset that is not
			// an i32.const.
			return nil, fmt.Errorf("%w: segment %d is not active with a constant offset", ErrUnsupported, i)
		}
		off, err := r.S32()
		if err == nil {
			if c, _ := r.Byte(); c != 0x0b {
				err = errors.New("not a lone i32.const")
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%w: segment %d offset: %v", ErrUnsupported, i, err)
		}
		data, err := r.Name()
		if err != nil {
			return nil, fmt.Errorf("%w: segment %d size: %v", ErrMalformed, i, err)
		}
		size := uint32(len(data))
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
	if r.Left() != 0 {
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

package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"unsafe"
)

// A batch is the input of one feed call: one or more raw lines, each with
// its tape. Layout, little-endian, every field 4-byte aligned:
//
//	u32 count
//	count times:
//	  u32 line_no    1-based line number in the raw stream
//	  u32 line_len   bytes of the line, without its LF
//	  u32 ntok       tokens of the line's tape; 0 when it is not JSON
//	  line_len bytes, zero-padded to a multiple of 4
//	  ntok tokens of TokenSize bytes: u32 kind|flags<<8, u32 start, u32 end, u32 next
//
// Worked example: the line `{}` (line 7) is
// 01000000 07000000 02000000 01000000 7b7d0000 01000000 00000000 02000000 01000000.

// ErrBadBatch reports a batch that does not follow the layout.
var ErrBadBatch = errors.New("malformed batch")

// BatchLine is one line of a batch.
type BatchLine struct {
	No   int
	Line []byte
	Toks []Token
}

// AppendBatchHeader starts a batch of n lines.
func AppendBatchHeader(dst []byte, n int) []byte {
	return binary.LittleEndian.AppendUint32(dst, uint32(n))
}

// AppendBatchLine appends one line and its tape to a batch.
func AppendBatchLine(dst []byte, no int, line []byte, toks []Token) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(no))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(line)))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(toks)))
	dst = append(dst, line...)
	dst = append(dst, make([]byte, (4-len(dst)%4)%4)...)
	return appendTokens(dst, toks, littleEndian)
}

// appendTokens appends toks in the batch's layout. inPlace (on a
// little-endian machine) copies their memory at once: a Token is laid out
// as in the batch, which BatchReader relies on to view them in place.
func appendTokens(dst []byte, toks []Token, inPlace bool) []byte {
	if inPlace && len(toks) > 0 {
		return append(dst, unsafe.Slice((*byte)(unsafe.Pointer(&toks[0])), len(toks)*TokenSize)...)
	}
	for _, t := range toks {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(t.Kind)|uint32(t.Flags)<<8|uint32(t.Hash)<<16)
		dst = binary.LittleEndian.AppendUint32(dst, t.Start)
		dst = binary.LittleEndian.AppendUint32(dst, t.End)
		dst = binary.LittleEndian.AppendUint32(dst, t.Next)
	}
	return dst
}

// BatchLineSize is the number of bytes AppendBatchLine adds.
func BatchLineSize(lineLen, ntok int) int { return 12 + (lineLen+3)&^3 + ntok*TokenSize }

// littleEndian is true when the machine's byte order matches the batch's,
// so tokens can be viewed in place instead of copied.
var littleEndian = func() bool { x := uint16(1); return *(*byte)(unsafe.Pointer(&x)) == 1 }()

// DecodeBatch calls fn for every line of a batch. The BatchLine aliases
// buf. It checks every length and every token against the line, so a
// reader can trust the tape it is handed.
func DecodeBatch(buf []byte, scratch []Token, fn func(BatchLine) error) error {
	return decodeBatch(buf, scratch, fn, true)
}

// DecodeBatchTrusted is DecodeBatch without the per-token check of the
// tapes (lengths are still checked): for a plugin, which trusts the host
// that built them. Walking every token again inside the sandbox cost about
// 5% of a plugin's time; a forged tape can at worst make the plugin panic.
func DecodeBatchTrusted(buf []byte, scratch []Token, fn func(BatchLine) error) error {
	return decodeBatch(buf, scratch, fn, false)
}

func decodeBatch(buf []byte, scratch []Token, fn func(BatchLine) error, check bool) error {
	r := BatchReader{buf: buf, scratch: scratch, check: check}
	for {
		bl, ok := r.Next()
		if !ok {
			return r.Err()
		}
		if err := fn(bl); err != nil {
			return err
		}
	}
}

// BatchReader walks a batch one line at a time, as DecodeBatchTrusted
// does, for a caller that keeps the loop in its own function: inside
// WebAssembly the callback DecodeBatchTrusted makes for every line is an
// indirect call, which costs more than the call to Next.
type BatchReader struct {
	buf     []byte
	scratch []Token
	off     int // next line's offset; 0 before the header is read
	left    int // lines still to read
	check   bool
	err     error
}

// NewBatchReader returns a reader of buf that, like DecodeBatchTrusted,
// checks lengths but not the tokens of each tape. scratch is reused for
// tapes that cannot be viewed in place.
func NewBatchReader(buf []byte, scratch []Token) BatchReader {
	return BatchReader{buf: buf, scratch: scratch}
}

// maxViewTokens bounds the tokens viewed in place as one array; a batch
// is far smaller (MaxLineBytes).
const maxViewTokens = 1 << 27

// Next returns the next line (aliasing the batch). ok is false at the end
// of the batch or on a malformed one (then Err says so).
func (r *BatchReader) Next() (bl BatchLine, ok bool) {
	buf := r.buf
	off := r.off
	if off == 0 {
		if len(buf) < 4 {
			r.err = ErrBadBatch
			return bl, false
		}
		r.left = int(binary.LittleEndian.Uint32(buf))
		off = 4
	}
	if r.left <= 0 {
		if r.err == nil && off != len(buf) {
			// Bytes after the last line: not a batch this package
			// wrote.
			r.err = ErrBadBatch
		}
		r.off = off
		return bl, false
	}
	if len(buf)-off < 12 {
		return r.fail()
	}
	no := int(binary.LittleEndian.Uint32(buf[off:]))
	ll := int(binary.LittleEndian.Uint32(buf[off+4:]))
	nt := int(binary.LittleEndian.Uint32(buf[off+8:]))
	off += 12
	if ll < 0 || nt < 0 || ll > len(buf)-off {
		return r.fail()
	}
	line := buf[off : off+ll]
	off += (ll + 3) &^ 3
	if off > len(buf) || nt > (len(buf)-off)/TokenSize || nt > maxViewTokens {
		return r.fail()
	}
	raw := buf[off : off+nt*TokenSize]
	off += nt * TokenSize
	var toks []Token
	if nt > 0 {
		if littleEndian && uintptr(unsafe.Pointer(&raw[0]))%4 == 0 {
			// An array view rather than unsafe.Slice, whose overflow
			// check is a call inside WebAssembly.
			toks = (*[maxViewTokens]Token)(unsafe.Pointer(&raw[0]))[:nt:nt]
		} else {
			scratch := r.scratch[:0]
			for j := 0; j < nt; j++ {
				w := raw[j*TokenSize:]
				kf := binary.LittleEndian.Uint32(w)
				scratch = append(scratch, Token{Kind: uint8(kf), Flags: uint8(kf >> 8), Hash: uint16(kf >> 16),
					Start: binary.LittleEndian.Uint32(w[4:]), End: binary.LittleEndian.Uint32(w[8:]), Next: binary.LittleEndian.Uint32(w[12:])})
			}
			r.scratch = scratch
			toks = scratch
		}
		if r.check && !checkTape(toks, len(line)) {
			return r.fail()
		}
	}
	r.off = off
	r.left--
	return BatchLine{No: no, Line: line, Toks: toks}, true
}

func (r *BatchReader) fail() (BatchLine, bool) {
	r.err = ErrBadBatch
	r.left = 0
	r.off = len(r.buf) + 1
	return BatchLine{}, false
}

// Err returns ErrBadBatch when the batch did not follow the layout, once
// Next has returned false.
func (r *BatchReader) Err() error { return r.err }

// checkTape verifies that every token stays inside the line and every Next
// moves forward inside the tape, so navigation cannot loop or read out of
// bounds even on a forged tape.
func checkTape(toks []Token, lineLen int) bool {
	for i, t := range toks {
		if t.Start > t.End || int(t.End) > lineLen || int(t.Next) <= i || int(t.Next) > len(toks) || t.Kind == KindInvalid || t.Kind > KindNull {
			return false
		}
		if t.Kind == KindString && t.End-t.Start < 2 {
			return false
		}
	}
	return true
}

// Batches cuts raw into batches of at most maxLines lines the way the
// host does: blank lines are skipped, every other line is indexed with
// [BuildTape] (an empty tape when it is not JSON), and a batch stays
// within [MaxBatchBytes]. Unlike the host it does not escape raw control
// bytes: the plugin sees such a line as not JSON. Tests and benchmarks
// feed a plugin's driver with it.
func Batches(raw []byte, maxLines int) [][]byte {
	var out [][]byte
	var cur []byte
	n := 0
	flush := func() {
		if n > 0 {
			out = append(out, append(AppendBatchHeader(nil, n), cur...))
		}
		cur, n = nil, 0
	}
	for i, line := range bytes.Split(raw, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		toks, ok := BuildTape(nil, line)
		if !ok {
			toks = nil
		}
		if n == maxLines || len(cur)+BatchLineSize(len(line), len(toks)) > MaxBatchBytes {
			flush()
		}
		cur = AppendBatchLine(cur, i+1, line, toks)
		n++
	}
	flush()
	return out
}

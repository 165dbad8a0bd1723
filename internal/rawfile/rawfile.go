package rawfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/klauspost/compress/zstd"

	"github.com/twasm/twasm/internal/durable"
	"github.com/twasm/twasm/internal/regfile"
)

// Ext ends the name of a framed raw capture ("agent.0.0.ab12cd34.raw.zst").
const Ext = ".zst"

// FrameBytes is the most uncompressed bytes one frame holds.
const FrameBytes = 1 << 20

const (
	magicFile  = 0x184D2A5E // skippable frame: the file header
	magicFrame = 0x184D2A5F // skippable frame: a frame's lengths
	headerLen  = 16         // magic, length 8, payload 8
)

var fileHeader = func() []byte {
	b := make([]byte, headerLen)
	binary.LittleEndian.PutUint32(b, magicFile)
	binary.LittleEndian.PutUint32(b[4:], 8)
	copy(b[8:], "twraw 1\n")
	return b
}()

// ErrTorn is wrapped when a framed capture ends in a frame cut short (a
// writer killed while it wrote the frame): the frames before it are whole.
var ErrTorn = errors.New("raw capture ends in a frame cut short")

// ErrCorrupt is wrapped when a framed capture holds bytes that are not
// a frame, or a frame that does not decode to what its header states.
var ErrCorrupt = errors.New("raw capture damaged")

// Framed reports whether the raw capture named name is framed (its name
// ends in [Ext]); any other is plain.
func Framed(name string) bool { return strings.HasSuffix(name, Ext) }

var (
	encoder = sync.OnceValues(func() (*zstd.Encoder, error) {
		// The fastest level with the smaller tables: on real captures in
		// 256 KiB frames it keeps 0.126 of the bytes at about 390 MB per
		// CPU second, where the default level keeps 0.121 at 130-250 (its
		// larger tables are cleared at every frame). In frames of a MiB
		// (package capture reads a file a frame at a time), on the
		// repository's real Codex logs: 0.205 at 520 MB per CPU second,
		// against the default level's 0.195 at 370.
		// Its window is a frame: the encoder then keeps 1.4 MiB live
		// (4.4 MiB with the default window), which a process under
		// twasm's 64 MiB memory limit pays for in collections.
		return zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(true),
			zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithLowerEncoderMem(true), zstd.WithWindowSize(FrameBytes))
	})
	decoder = sync.OnceValues(func() (*zstd.Decoder, error) {
		return zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(FrameBytes+1), zstd.WithDecoderMaxWindow(FrameBytes*2))
	})
)

// frame is one frame's place: its zstd bytes at off (file) of clen
// bytes, holding ulen bytes from start (uncompressed).
type frame struct {
	off, start int64
	clen, ulen int
}

// File is a raw capture open for reading.
type File struct {
	f      io.ReaderAt
	c      io.Closer
	name   string
	framed bool
	frames []frame
	size   int64 // uncompressed bytes in the complete frames (plain: the file's size)
	end    int64 // file offset where the complete frames end
	damage error
}

// Open opens the raw capture at path (a regular file: a FIFO or a device
// is refused without blocking) and, when it is framed, reads its frame
// headers. A damaged tail is not an error here: [File.Damage] says it.
func Open(path string) (*File, error) {
	f, err := regfile.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := newFile(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

func newFile(f *os.File, name string) (*File, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return newReaderAt(f, f, name, st.Size()), nil
}

// newReaderAt reads a capture of size bytes named name from f.
func newReaderAt(f io.ReaderAt, c io.Closer, name string, size int64) *File {
	r := &File{f: f, c: c, name: name, framed: Framed(name)}
	if !r.framed {
		r.size, r.end = size, size
		return r
	}
	r.scan(size)
	return r
}

// scan reads the frame headers of a framed file of fsize bytes.
func (r *File) scan(fsize int64) {
	var h [headerLen]byte
	if fsize == 0 {
		// Created, killed before its header was written: nothing in it.
		return
	}
	if n, err := r.f.ReadAt(h[:], 0); n < headerLen {
		if bytes.HasPrefix(fileHeader, h[:n]) {
			r.damage = fmt.Errorf("%s: file header: %w (%v)", r.name, ErrTorn, err)
		} else {
			r.damage = fmt.Errorf("%s: not a framed raw capture: %w", r.name, ErrCorrupt)
		}
		return
	}
	if !bytes.Equal(h[:], fileHeader) {
		r.damage = fmt.Errorf("%s: not a framed raw capture: %w", r.name, ErrCorrupt)
		return
	}
	off := int64(headerLen)
	for off < fsize {
		if fsize-off < headerLen {
			r.damage = fmt.Errorf("%s: frame header at byte %d: %w", r.name, off, ErrTorn)
			break
		}
		if _, err := r.f.ReadAt(h[:], off); err != nil {
			r.damage = fmt.Errorf("%s: frame header at byte %d: %w", r.name, off, err)
			break
		}
		clen, ulen := binary.LittleEndian.Uint32(h[8:]), binary.LittleEndian.Uint32(h[12:])
		if binary.LittleEndian.Uint32(h[:]) != magicFrame || binary.LittleEndian.Uint32(h[4:]) != 8 ||
			ulen > FrameBytes || clen == 0 || int64(clen) > maxCompressed {
			r.damage = fmt.Errorf("%s: no frame at byte %d: %w", r.name, off, ErrCorrupt)
			break
		}
		if fsize-off-headerLen < int64(clen) {
			r.damage = fmt.Errorf("%s: frame at byte %d holds %d of its %d bytes: %w", r.name, off, fsize-off-headerLen, clen, ErrTorn)
			break
		}
		r.frames = append(r.frames, frame{off: off + headerLen, start: r.size, clen: int(clen), ulen: int(ulen)})
		r.size += int64(ulen)
		off += headerLen + int64(clen)
	}
	r.end = off
	if r.damage != nil && len(r.frames) > 0 {
		last := r.frames[len(r.frames)-1]
		r.end = last.off + int64(last.clen)
	} else if r.damage != nil {
		r.end = headerLen
	}
}

// maxCompressed bounds a frame's compressed length (zstd's worst case
// for FrameBytes is a little more than FrameBytes).
const maxCompressed = FrameBytes + FrameBytes/64 + 1024

// Size is how many raw bytes the capture holds: a plain file's size, the
// sum of a framed file's complete frames.
func (r *File) Size() int64 { return r.size }

// Damage is nil unless the framed capture ends in something other than a
// whole frame: ErrTorn (a frame cut short) or ErrCorrupt is wrapped.
func (r *File) Damage() error { return r.damage }

// Close closes the file.
func (r *File) Close() error { return r.c.Close() }

// All returns a reader of every raw byte: after the last complete frame,
// it returns the damage, if any, instead of io.EOF.
func (r *File) All() io.Reader { return r.Section(0, -1) }

// Section returns a reader of the n raw bytes from off (n < 0: to the
// end). It decodes only the frames that hold them. Reading past the
// complete frames of a damaged capture returns the damage (wrapping
// ErrTorn or ErrCorrupt), never a silent io.EOF.
func (r *File) Section(off, n int64) io.Reader {
	if n < 0 {
		n = max(0, r.size-off)
		if r.damage != nil {
			n = int64(1) << 62
		}
	}
	if !r.framed {
		return io.NewSectionReader(r.f, off, min(n, max(0, r.size-off)))
	}
	i := sort.Search(len(r.frames), func(i int) bool { return r.frames[i].start+int64(r.frames[i].ulen) > off })
	return &section{r: r, i: i, pos: off, left: n}
}

type section struct {
	r   *File
	i   int    // next frame to decode
	buf []byte // decoded bytes not read yet
	// cbuf and dbuf are reused for every frame: a frame's compressed
	// bytes and its decoded bytes.
	cbuf, dbuf []byte
	pos        int64 // uncompressed offset of buf[0] (or of the next byte)
	left       int64
	err        error
}

func (s *section) Read(p []byte) (int, error) {
	if s.left <= 0 {
		return 0, io.EOF
	}
	for len(s.buf) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		if s.i >= len(s.r.frames) {
			if s.r.damage != nil {
				s.err = s.r.damage
			} else {
				s.err = io.EOF
			}
			return 0, s.err
		}
		fr := s.r.frames[s.i]
		s.i++
		b, err := s.decode(fr)
		if err != nil {
			s.err = err
			return 0, err
		}
		if skip := s.pos - fr.start; skip > 0 {
			b = b[skip:]
		}
		s.buf = b
	}
	n := copy(p, s.buf[:min(int64(len(s.buf)), s.left)])
	s.buf, s.pos, s.left = s.buf[n:], s.pos+int64(n), s.left-int64(n)
	return n, nil
}

// decode reads and decodes one frame, checking it holds what its header
// says.
func (s *section) decode(fr frame) ([]byte, error) {
	r := s.r
	if cap(s.cbuf) < fr.clen {
		s.cbuf = make([]byte, fr.clen)
	}
	c := s.cbuf[:fr.clen]
	if _, err := r.f.ReadAt(c, fr.off); err != nil {
		return nil, fmt.Errorf("%s: frame at byte %d: %w", r.name, fr.off-headerLen, err)
	}
	dec, err := decoder()
	if err != nil {
		return nil, err
	}
	if cap(s.dbuf) < fr.ulen {
		s.dbuf = make([]byte, 0, fr.ulen)
	}
	out, err := dec.DecodeAll(c, s.dbuf[:0])
	if err != nil || len(out) != fr.ulen {
		return nil, fmt.Errorf("%s: frame at byte %d (raw bytes %d to %d) does not decode: %w (%v)", r.name, fr.off-headerLen, fr.start, fr.start+int64(fr.ulen), ErrCorrupt, err)
	}
	return out, nil
}

// ReadFile returns every raw byte of the capture at path, or an error
// (wrapping ErrTorn or ErrCorrupt for a damaged framed capture).
func ReadFile(path string) ([]byte, error) {
	r, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r.All())
}

// Writer writes a raw capture: a plain one as it is fed, a framed one a
// frame at a time.
type Writer struct {
	f      *os.File
	framed bool
	buf    []byte // framed: bytes not in a frame yet
	out    []byte // framed: the frame being encoded
	err    error  // the first write error: nothing is written after it
}

// Create creates a new raw capture at path (0600, failing if it exists),
// framed when its name says so ([Framed]).
func Create(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	w := &Writer{f: f, framed: Framed(path)}
	if w.framed {
		if _, err := f.Write(fileHeader); err != nil {
			f.Close()
			return nil, err
		}
	}
	return w, nil
}

// Append opens an existing raw capture at path to extend it. A framed one
// must end in a whole frame: its damage ([File.Damage]) is returned, and
// nothing is written after it.
func Append(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = &fs.PathError{Op: "open", Path: path, Err: regfile.NotRegular(st.Mode())}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	w := &Writer{f: f, framed: Framed(path)}
	if !w.framed {
		return w, nil
	}
	r, err := newFile(f, path)
	if err == nil {
		err = r.damage
	}
	if err == nil && st.Size() == 0 {
		_, err = f.Write(fileHeader)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// File is the file written, for its name and fsync: flush first.
func (w *Writer) File() *os.File { return w.f }

// Write takes the next raw bytes. A framed writer writes a frame each time
// FrameBytes are pending; the rest waits for Flush.
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if !w.framed {
		n, err := w.f.Write(p)
		w.err = err
		return n, err
	}
	n := len(p)
	for len(p) > 0 {
		if len(w.buf) == 0 && len(p) >= FrameBytes {
			// A whole frame fed at once (a file read a frame at a
			// time): encoded from p, not copied first.
			if err := w.frame(p[:FrameBytes]); err != nil {
				return 0, err
			}
			p = p[FrameBytes:]
			continue
		}
		k := min(len(p), FrameBytes-len(w.buf))
		w.buf = append(w.buf, p[:k]...)
		p = p[k:]
		if len(w.buf) == FrameBytes {
			if err := w.Flush(); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

// WriteFlush is Write of p then Flush: the file it makes is theirs. When
// nothing is pending and p fits a frame, p is encoded as one frame
// without being copied first (a caller that reads a file a frame at a
// time and writes the last, shorter read).
func (w *Writer) WriteFlush(p []byte) error {
	if w.err == nil && w.framed && len(w.buf) == 0 && len(p) > 0 && len(p) <= FrameBytes {
		return w.frame(p)
	}
	if _, err := w.Write(p); err != nil {
		return err
	}
	return w.Flush()
}

// Flush writes what is pending as one frame (one write), so that the
// file holds every byte written so far.
func (w *Writer) Flush() error {
	if w.err != nil || !w.framed || len(w.buf) == 0 {
		return w.err
	}
	if err := w.frame(w.buf); err != nil {
		return err
	}
	w.buf = w.buf[:0]
	return nil
}

// frame writes b, at most FrameBytes, as one frame (one write).
func (w *Writer) frame(b []byte) error {
	enc, err := encoder()
	if err != nil {
		w.err = err
		return err
	}
	// The output buffer, kept for the next frame, is made at once with
	// room for the frame compressed to a quarter of its bytes (real
	// session logs: 0.12-0.21), rather than grown by the encoder block
	// by block, 1.25x at a time: the first frame of a MiB allocated and
	// copied 1.4 MB on the way (the benchmark's real Codex logs).
	if want := headerLen + len(b)/4; cap(w.out) < want {
		w.out = make([]byte, 0, want)
	}
	out := append(w.out[:0], make([]byte, headerLen)...)
	out = enc.EncodeAll(b, out)
	binary.LittleEndian.PutUint32(out, magicFrame)
	binary.LittleEndian.PutUint32(out[4:], 8)
	binary.LittleEndian.PutUint32(out[8:], uint32(len(out)-headerLen))
	binary.LittleEndian.PutUint32(out[12:], uint32(len(b)))
	w.out = out
	if _, err := w.f.Write(out); err != nil {
		w.err = err
		return err
	}
	return nil
}

// Close flushes and closes the file.
func (w *Writer) Close() error {
	return errors.Join(w.Flush(), w.f.Close())
}

// Cut cuts the raw capture at path back to its first n raw bytes, when
// they hash to sha (hex sha256) and it holds more (a damaged framed tail
// counts as more): a plain capture at byte n, a framed one at the frame
// boundary after byte n, which must be one (a step's bytes begin a
// frame). It returns the capture's size before (raw bytes, the damaged
// tail not counted) and whether it cut; the file is synced after a cut.
func Cut(path string, n int64, sha string) (before int64, cut bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, false, err
	}
	if !st.Mode().IsRegular() {
		return 0, false, &fs.PathError{Op: "open", Path: path, Err: regfile.NotRegular(st.Mode())}
	}
	r, err := newFile(f, path)
	if err != nil {
		return 0, false, err
	}
	before = r.size
	if r.size <= n && r.damage == nil {
		return before, false, nil
	}
	if r.size < n {
		return before, false, fmt.Errorf("raw capture holds %d whole bytes, fewer than the %d to keep: %w", r.size, n, r.damage)
	}
	at := n // plain: the byte; framed: the boundary's file offset
	if r.framed && len(r.frames) == 0 && errors.Is(r.damage, ErrCorrupt) {
		return before, false, r.damage
	} else if r.framed && len(r.frames) == 0 && r.end < headerLen {
		at = 0 // the file header cut short: an empty capture
	} else if r.framed {
		i := sort.Search(len(r.frames), func(i int) bool { return r.frames[i].start >= n })
		switch {
		case i < len(r.frames) && r.frames[i].start == n:
			at = r.frames[i].off - headerLen
		case n == r.size:
			at = r.end
		default:
			return before, false, fmt.Errorf("raw capture: byte %d is not at a frame boundary: %w", n, ErrCorrupt)
		}
		if n == 0 {
			at = headerLen
		}
	}
	if at == 0 && r.framed && n > 0 {
		return before, false, r.damage
	}
	h := sha256.New()
	if _, err := io.Copy(h, r.Section(0, n)); err != nil {
		return before, false, err
	}
	if hex.EncodeToString(h.Sum(nil)) != sha {
		return before, false, fmt.Errorf("raw capture does not start with the %d bytes to keep (sha256 differs)", n)
	}
	if err := f.Truncate(at); err != nil {
		return before, false, err
	}
	return before, true, f.Sync()
}

// OpenAll opens the raw capture at path for reading every raw byte
// ([File.All]); closing the reader closes the file.
func OpenAll(path string) (io.ReadCloser, error) {
	r, err := Open(path)
	if err != nil {
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{r.All(), r}, nil
}

// SealExt ends the name of the file [Seal] writes beside a capture before
// it takes the capture's place.
const SealExt = ".sealing"

// Seal rewrites the framed raw capture at path in whole frames of
// [FrameBytes] when it holds a frame shorter than that before its last
// (a session archived in several parts: each part starts a frame, and
// zstd compresses a small frame worse, with no context from the frames
// before). The raw bytes stay the same: the new capture is written
// beside it (path + [SealExt]), synced, read back and checked to hold
// the same bytes (size and sha256), renamed over it, and the rename
// synced in the directory, so that a crash leaves one or the other whole
// (and perhaps the file beside it, which no reader opens). Whatever the
// capture, a file a seal cut short left beside it is removed first (a
// link there too, not what it names): it is never taken, only made
// again from the capture. A plain capture, one already in whole frames
// and a damaged one are left as they are (sealed false). Only a capture
// that nothing will extend again may be sealed: its frames no longer
// start where its parts do, which [Cut] needs.
func Seal(path string) (sealed bool, err error) {
	tmp := path + SealExt
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	r, err := Open(path)
	if err != nil {
		return false, err
	}
	defer r.Close()
	if !r.framed || r.damage != nil || !r.fragmented() {
		return false, nil
	}
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return false, err
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(tmp)
		}
	}()
	w := &Writer{f: f, framed: true}
	if _, err := f.Write(fileHeader); err != nil {
		return false, err
	}
	old := sha256.New()
	if _, err := io.Copy(w, io.TeeReader(r.All(), old)); err != nil {
		return false, err
	}
	if err := w.Flush(); err != nil {
		return false, err
	}
	if err := f.Sync(); err != nil {
		return false, err
	}
	done = true
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return false, err
	}
	if err := sameBytes(tmp, path, r.size, old.Sum(nil)); err != nil {
		os.Remove(tmp)
		return false, err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return false, err
	}
	if err := durable.SyncDir(filepath.Dir(path)); err != nil {
		return true, err
	}
	return true, nil
}

// fragmented reports whether a frame before the last holds fewer than
// FrameBytes.
func (r *File) fragmented() bool {
	for i := 0; i+1 < len(r.frames); i++ {
		if r.frames[i].ulen < FrameBytes {
			return true
		}
	}
	return false
}

// sameBytes checks that the capture at path, read as the one named name
// is, is whole and holds size bytes of sha256 sum.
func sameBytes(path, name string, size int64, sum []byte) error {
	f, err := regfile.Open(path)
	if err != nil {
		return err
	}
	r, err := newFile(f, name)
	if err != nil {
		f.Close()
		return err
	}
	defer r.Close()
	if r.damage != nil {
		return r.damage
	}
	h := sha256.New()
	n, err := io.Copy(h, r.All())
	if err == nil && (n != size || r.size != size || !bytes.Equal(h.Sum(nil), sum)) {
		err = fmt.Errorf("raw capture %s: the sealed copy does not hold the capture's bytes", path)
	}
	return err
}

package rawfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lines makes n bytes of JSON Lines that compress as logs do.
func lines(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, 1))
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, `{"type":"assistant","seq":%d,"text":"%x","usage":{"input_tokens":%d}}`+"\n", i, rng.Uint64(), rng.IntN(100000))
	}
	return b.Bytes()[:n]
}

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// write creates (or extends) the capture at path with parts, each
// written in chunks of chunk bytes and flushed at the end, as a step is.
func write(t *testing.T, path string, appendTo bool, part []byte, chunk int) {
	t.Helper()
	var w *Writer
	var err error
	if appendTo {
		w, err = Append(path)
	} else {
		w, err = Create(path)
	}
	if err != nil {
		t.Fatal(err)
	}
	for len(part) > 0 {
		k := min(chunk, len(part))
		if _, err := w.Write(part[:k]); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		part = part[k:]
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestRoundTrip(t *testing.T) {
	for _, name := range []string{"a.raw.zst", "a.raw"} {
		for _, tc := range []struct {
			size, chunk int
		}{{0, 1}, {1, 1}, {1000, 7}, {FrameBytes - 1, 1 << 18}, {FrameBytes, FrameBytes}, {3*FrameBytes + 5, 3 << 20}, {2*FrameBytes + 9, 100000}} {
			t.Run(fmt.Sprintf("%s/%d/%d", name, tc.size, tc.chunk), func(t *testing.T) {
				path := filepath.Join(t.TempDir(), name)
				want := lines(uint64(tc.size), tc.size)
				write(t, path, false, want, tc.chunk)
				got, err := ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("read %d bytes, want %d (equal prefix: %v)", len(got), len(want), bytes.HasPrefix(want, got))
				}
				r, err := Open(path)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				if r.Size() != int64(len(want)) || r.Damage() != nil {
					t.Fatalf("size %d damage %v, want %d and none", r.Size(), r.Damage(), len(want))
				}
				rng := rand.New(rand.NewPCG(2, 3))
				for range 20 {
					off := rng.Int64N(int64(len(want)) + 1)
					n := rng.Int64N(int64(len(want)) - off + 1)
					got, err := io.ReadAll(r.Section(off, n))
					if err != nil || !bytes.Equal(got, want[off:off+n]) {
						t.Fatalf("section [%d,+%d): %d bytes, %v", off, n, len(got), err)
					}
				}
				if Framed(name) && tc.size > 0 {
					st, _ := os.Stat(path)
					if st.Size() >= int64(tc.size) && tc.size > 1000 {
						t.Errorf("framed capture of %d bytes takes %d", tc.size, st.Size())
					}
					// A standard zstd reader reads it back (it skips the
					// skippable frames).
					f, _ := os.Open(path)
					defer f.Close()
					zr, err := zstd.NewReader(f)
					if err != nil {
						t.Fatal(err)
					}
					defer zr.Close()
					got, err := io.ReadAll(zr)
					if err != nil || !bytes.Equal(got, want) {
						t.Fatalf("zstd reader: %d bytes, %v", len(got), err)
					}
				}
			})
		}
	}
}

// TestGrowingSession extends a capture part after part, as the archive
// does a session that grew: each part begins a frame, the whole reads
// back, and the capture can be cut back to any part's end.
func TestGrowingSession(t *testing.T) {
	for _, name := range []string{"s.raw.zst", "s.raw"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, name)
			var all []byte
			var ends []int64
			for i, n := range []int{300, 0, 70000, FrameBytes + 17, 5} {
				part := lines(uint64(i), n)
				write(t, path, i > 0, part, 1<<18)
				all = append(all, part...)
				ends = append(ends, int64(len(all)))
				got, err := ReadFile(path)
				if err != nil || !bytes.Equal(got, all) {
					t.Fatalf("after part %d: %d bytes (want %d), %v", i, len(got), len(all), err)
				}
			}
			// Cut back to each part's end, from the last: the bytes kept
			// are the parts' bytes.
			for i := len(ends) - 1; i >= 0; i-- {
				before, _, err := Cut(path, ends[i], sum(all[:ends[i]]))
				if err != nil {
					t.Fatalf("cut to part %d's end %d: %v", i, ends[i], err)
				}
				if i == len(ends)-1 && before != ends[i] {
					t.Fatalf("before %d, want %d", before, ends[i])
				}
				got, err := ReadFile(path)
				if err != nil || !bytes.Equal(got, all[:ends[i]]) {
					t.Fatalf("after cut to %d: %d bytes, %v", ends[i], len(got), err)
				}
			}
			if _, _, err := Cut(path, 10, sum(all[:10])); err != nil && Framed(name) == false {
				t.Fatal(err)
			}
		})
	}
}

// TestTornLastFrame cuts a framed capture at every byte of its last
// frame, as a crash while it was written leaves it: the frames before it
// are read, reading on reports the tear, appending is refused until Cut
// cuts it back, and then the session goes on.
func TestTornLastFrame(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.raw.zst")
	first := lines(1, 5000)
	second := lines(2, 4000)
	write(t, path, false, first, 1<<20)
	st, _ := os.Stat(path)
	durable := st.Size()
	write(t, path, true, second, 1<<20)
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for cut := durable + 1; cut < int64(len(whole)); cut++ {
		p := filepath.Join(dir, fmt.Sprintf("c%d.raw.zst", cut))
		if err := os.WriteFile(p, whole[:cut], 0o600); err != nil {
			t.Fatal(err)
		}
		r, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		if r.Size() != int64(len(first)) || !errors.Is(r.Damage(), ErrTorn) {
			t.Fatalf("cut at %d: size %d damage %v, want %d and ErrTorn", cut, r.Size(), r.Damage(), len(first))
		}
		got, err := io.ReadAll(r.Section(0, r.Size()))
		if err != nil || !bytes.Equal(got, first) {
			t.Fatalf("cut at %d: the whole frames: %d bytes, %v", cut, len(got), err)
		}
		got, err = io.ReadAll(r.All())
		if !errors.Is(err, ErrTorn) || !bytes.Equal(got, first) {
			t.Fatalf("cut at %d: reading on gave %d bytes and %v, want the first part and ErrTorn", cut, len(got), err)
		}
		r.Close()
		if _, err := Append(p); !errors.Is(err, ErrTorn) {
			t.Fatalf("cut at %d: append to a torn capture: %v, want ErrTorn", cut, err)
		}
		if _, _, err := Cut(p, int64(len(first)), sum(second[:10])); err == nil {
			t.Fatalf("cut at %d: cut with the wrong sha256 succeeded", cut)
		}
		if _, cutDone, err := Cut(p, int64(len(first)), sum(first)); err != nil || !cutDone {
			t.Fatalf("cut at %d: Cut: %v %v", cut, cutDone, err)
		}
		write(t, p, true, second, 1<<20)
		got, err = ReadFile(p)
		if err != nil || !bytes.Equal(got, append(bytes.Clone(first), second...)) {
			t.Fatalf("cut at %d: after cut and append: %d bytes, %v", cut, len(got), err)
		}
		os.Remove(p)
	}
	// A file header cut short holds nothing; Cut to 0 empties it.
	p := filepath.Join(dir, "h.raw.zst")
	os.WriteFile(p, whole[:5], 0o600)
	if r, err := Open(p); err != nil || r.Size() != 0 || !errors.Is(r.Damage(), ErrTorn) {
		t.Fatalf("header cut short: %v", err)
	}
	if _, _, err := Cut(p, 0, sum(nil)); err != nil {
		t.Fatal(err)
	}
	write(t, p, true, first, 1<<20)
	if got, err := ReadFile(p); err != nil || !bytes.Equal(got, first) {
		t.Fatalf("after the header was cut short: %v", err)
	}
}

// TestCorrupt: a frame whose bytes changed, or bytes that are no frame,
// are reported, never read as raw bytes.
func TestCorrupt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.raw.zst")
	want := lines(3, 20000)
	write(t, path, false, want, 1<<20)
	whole, _ := os.ReadFile(path)
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"payload", func() []byte { b := bytes.Clone(whole); b[len(b)-10] ^= 0x55; return b }()},
		{"length", func() []byte { b := bytes.Clone(whole); b[headerLen+12]++; return b }()},
		{"garbage after", append(bytes.Clone(whole), bytes.Repeat([]byte{'x'}, 40)...)},
		{"plain bytes named framed", want},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name+".raw.zst")
			os.WriteFile(p, tc.b, 0o600)
			got, err := ReadFile(p)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("read %d bytes, err %v, want ErrCorrupt", len(got), err)
			}
			if !bytes.HasPrefix(want, got) {
				t.Fatalf("read bytes that are not the capture's")
			}
		})
	}
}

// FuzzOpen reads arbitrary bytes as a framed capture: no panic, what it
// reads is bounded by the headers, and Size bytes are read or an error is.
func FuzzOpen(f *testing.F) {
	dir := f.TempDir()
	p := filepath.Join(dir, "seed.raw.zst")
	w, _ := Create(p)
	w.Write(lines(1, 3000))
	w.Flush()
	w.Write(lines(2, 100))
	w.Close()
	seed, _ := os.ReadFile(p)
	f.Add(seed)
	f.Add(seed[:len(seed)-3])
	f.Add(fileHeader)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := newReaderAt(bytes.NewReader(b), io.NopCloser(nil), "f.raw.zst", int64(len(b)))
		if r.Size() > int64(len(b)/headerLen+1)*FrameBytes {
			t.Fatalf("size %d from %d bytes", r.Size(), len(b))
		}
		got, err := io.ReadAll(r.Section(0, r.Size()))
		if err == nil && int64(len(got)) != r.Size() {
			t.Fatalf("read %d of %d bytes without an error", len(got), r.Size())
		}
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error %v does not wrap ErrCorrupt", err)
		}
		_, err = io.ReadAll(r.All())
		if err == nil && r.Damage() != nil {
			t.Fatalf("read past a damaged tail without its error %v", r.Damage())
		}
	})
}

// A whole frame fed at once (capture reads a file a frame at a time) is
// encoded from the bytes fed, never copied into the writer's buffer, and
// the file is the one writes of any size make: frames cut at every
// FrameBytes, the rest at Close.
func TestWholeFramesNotCopied(t *testing.T) {
	data := lines(7, 3*FrameBytes+5)
	dir := t.TempDir()
	writeAll := func(name string, sizes ...int) []byte {
		t.Helper()
		path := filepath.Join(dir, name)
		w, err := Create(path)
		if err != nil {
			t.Fatal(err)
		}
		p := data
		for i := 0; len(p) > 0; i++ {
			k := min(len(p), sizes[min(i, len(sizes)-1)])
			if _, err := w.Write(p[:k]); err != nil {
				t.Fatal(err)
			}
			p = p[k:]
		}
		if len(data) >= FrameBytes && sizes[0] >= FrameBytes && cap(w.buf) >= FrameBytes {
			t.Errorf("%s: the writer's buffer grew to %d bytes for whole frames", name, cap(w.buf))
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ReadFile(path)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%s: read back %d bytes, %v", name, len(got), err)
		}
		return b
	}
	small := writeAll("small.raw.zst", 4096)
	for name, sizes := range map[string][]int{
		"one write.raw.zst":     {len(data)},
		"frame writes.raw.zst":  {FrameBytes},
		"two frames.raw.zst":    {2 * FrameBytes},
		"after pending.raw.zst": {100, len(data)},
	} {
		if b := writeAll(name, sizes...); !bytes.Equal(b, small) {
			t.Errorf("%s: %d bytes, not those of 4 KiB writes (%d)", name, len(b), len(small))
		}
	}
}

// TestWriteFlush: WriteFlush makes the file of Write then Flush, framed
// (whole frames, a shorter last one, after pending bytes, an empty one)
// or plain, and encodes a shorter frame without copying it into the
// writer's buffer.
func TestWriteFlush(t *testing.T) {
	data := lines(11, 2*FrameBytes+FrameBytes/3)
	dir := t.TempDir()
	for _, ext := range []string{".raw" + Ext, ".raw"} {
		for name, writes := range map[string][]int{
			"frames then shorter": {FrameBytes, FrameBytes, FrameBytes / 3},
			"pending first":       {100, FrameBytes, FrameBytes - 100, FrameBytes / 3},
			"empty and more":      {0, FrameBytes + 7, FrameBytes/3 - 7},
		} {
			write := func(file string, flush bool) []byte {
				t.Helper()
				path := filepath.Join(dir, file)
				w, err := Create(path)
				if err != nil {
					t.Fatal(err)
				}
				p := data
				for i, k := range writes {
					if flush && i > 0 {
						err = w.WriteFlush(p[:k])
						if name == "frames then shorter" && cap(w.buf) > 0 {
							t.Errorf("%s: a shorter frame copied into the writer's buffer", name)
						}
					} else {
						_, err = w.Write(p[:k])
						if err == nil && i > 0 {
							err = w.Flush()
						}
					}
					if err != nil {
						t.Fatal(err)
					}
					p = p[k:]
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
			got, want := write(name+"-flush"+ext, true), write(name+"-write"+ext, false)
			if !bytes.Equal(got, want) {
				t.Errorf("%s%s: %d bytes, not the %d of Write then Flush", name, ext, len(got), len(want))
			}
		}
	}
}

// TestSeal: a framed capture grown in parts is rewritten in whole frames
// holding the same bytes, smaller, readable by a standard zstd reader;
// one already in whole frames, a plain one and a damaged one are left
// byte for byte as they were; a file left beside it by a seal cut short
// (here a hard link to another file) is removed whatever the capture
// holds (a capture sealed already among them), never written through.
func TestSeal(t *testing.T) {
	parts := [][]byte{lines(1, 300), lines(2, 70000), lines(3, FrameBytes+17), lines(4, 5), lines(5, 40000)}
	for _, tc := range []struct {
		name   string
		file   string
		parts  [][]byte
		damage bool // the last frame cut short
		stale  bool // a hard link to another file where the copy goes
		sealed bool
	}{
		{"grown in parts", "s.raw.zst", parts, false, false, true},
		{"grown in parts, a stale copy beside it", "s.raw.zst", parts, false, true, true},
		{"one part", "s.raw.zst", [][]byte{slices.Concat(parts...)}, false, false, false},
		{"one part, a stale copy beside it", "s.raw.zst", [][]byte{slices.Concat(parts...)}, false, true, false},
		{"plain", "s.raw", parts, false, false, false},
		{"damaged", "s.raw.zst", parts, true, false, false},
		{"damaged, a stale copy beside it", "s.raw.zst", parts, true, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, tc.file)
			for i, p := range tc.parts {
				write(t, path, i > 0, p, FrameBytes)
			}
			if tc.damage {
				st, err := os.Stat(path)
				require.NoError(t, err)
				require.NoError(t, os.Truncate(path, st.Size()-3))
			}
			other := filepath.Join(dir, "other")
			if tc.stale {
				require.NoError(t, os.WriteFile(other, []byte("not a capture"), 0o600))
				require.NoError(t, os.Link(other, path+SealExt))
			}
			before, err := os.ReadFile(path)
			require.NoError(t, err)
			sealed, err := Seal(path)
			require.NoError(t, err)
			assert.Equal(t, tc.sealed, sealed)
			after, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.NoFileExists(t, path+SealExt)
			if tc.stale {
				got, err := os.ReadFile(other)
				require.NoError(t, err)
				assert.Equal(t, "not a capture", string(got), "the file linked beside it")
			}
			if !tc.sealed {
				assert.Equal(t, before, after, "left as it was")
				return
			}
			all := slices.Concat(tc.parts...)
			got, err := ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, all, got, "the same raw bytes")
			assert.Less(t, len(after), len(before), "smaller")
			r, err := Open(path)
			require.NoError(t, err)
			defer r.Close()
			require.NoError(t, r.Damage())
			for i, f := range r.frames[:len(r.frames)-1] {
				assert.Equal(t, FrameBytes, f.ulen, "frame %d", i)
			}
			dec, err := zstd.NewReader(nil)
			require.NoError(t, err)
			defer dec.Close()
			std, err := dec.DecodeAll(after, nil)
			require.NoError(t, err)
			assert.Equal(t, all, std, "a standard zstd reader reads it")
			_, cut, err := Cut(path, int64(len(all)), sum(all))
			require.NoError(t, err)
			assert.False(t, cut, "it holds exactly its bytes")
			again, err := Seal(path)
			require.NoError(t, err)
			assert.False(t, again, "sealed once")
		})
	}
}

// TestFrameOutputSizedOnce: a writer encodes each frame into an output
// buffer it keeps, made at once with room for a frame compressed to a
// quarter of its bytes, not grown block by block inside the encoder:
// writing a capture of two frames (each compressing to about a third of
// a quarter) allocates less than a frame. A first capture sets up the
// encoder, which a process does once.
func TestFrameOutputSizedOnce(t *testing.T) {
	data := lines(11, 2*FrameBytes)
	dir := t.TempDir()
	capture := func(name string) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		w, err := Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	capture("first.raw.zst")
	allocated := capture("second.raw.zst")
	t.Logf("a capture of %d bytes allocated %d bytes", len(data), allocated)
	if allocated >= FrameBytes/2 {
		t.Errorf("a capture of %d bytes allocated %d bytes, not under %d", len(data), allocated, FrameBytes/2)
	}
	got, err := ReadFile(filepath.Join(dir, "second.raw.zst"))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, %v", len(got), err)
	}
}

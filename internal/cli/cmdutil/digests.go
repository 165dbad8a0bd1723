package cmdutil

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"sync"

	"github.com/twasm/twasm/internal/cli/build"
	"github.com/twasm/twasm/internal/index"
	"github.com/twasm/twasm/internal/views"
)

// DigestKind names the views.RunDigest data in the index: its version,
// bumped whenever the digest or the views that make it change, and the
// build (its version and the executable's size and time), so that a new
// twasm reads every run once rather than trust what an older one derived.
func DigestKind() string {
	k := "views.RunDigest/2/" + build.Version
	if exe, err := os.Executable(); err == nil {
		if st, err := os.Stat(exe); err == nil {
			k += "/" + strconv.FormatInt(st.Size(), 10) + "-" + strconv.FormatInt(st.ModTime().UnixNano(), 10)
		}
	}
	return k
}

// RunDigests returns the digest of each run id's transcript (ls and
// stats), from the storage's index (<storage>/index.db) for the files
// unchanged since it last read them; the others are read again and the
// index updated. A missing index is built, a damaged one rebuilt, and
// either is said on w. An index that cannot be used at all (a read-only
// storage) is an error: the caller reads the files instead.
func (f *Factory) RunDigests(ctx context.Context, ids []string, w io.Writer) (map[string]*views.RunDigest, error) {
	return derivedOf(ctx, f, DigestKind(), ids, w, views.DigestFile, jsonCodec[views.RunDigest](), false)
}

// codec is how derivedOf keeps a T in the index.
type codec[T any] struct {
	marshal   func(*T) ([]byte, error)
	unmarshal func([]byte, *T) error
}

// jsonCodec keeps a T as JSON.
func jsonCodec[T any]() codec[T] {
	return codec[T]{
		marshal:   func(v *T) ([]byte, error) { return json.Marshal(v) },
		unmarshal: func(b []byte, v *T) error { return json.Unmarshal(b, v) },
	}
}

// derivedOf returns, for each run id, what fromFile derives from its
// transcript, from the index's derived table of kind for the files
// unchanged since (encoded by c), else made again and stored; an entry
// that no longer decodes is made from the file. With update, the index is
// brought up to date first (index.Update: from the change journal, as
// search does) and its entries checked against what it saw of each file
// (index.DerivedCurrent) rather than by a stat of every file; an index
// that cannot be updated is checked by the stats.
func derivedOf[T any](ctx context.Context, f *Factory, kind string, ids []string, w io.Writer, fromFile func(path string) *T, c codec[T], update bool) (map[string]*T, error) {
	compute := func(path string) ([]byte, error) { return c.marshal(fromFile(path)) }
	data, err := withIndex(ctx, f.StorageRoot(), len(ids) > 0, w, func(ix *index.Index) (map[string][]byte, error) {
		if update {
			_, err := ix.Update(ctx)
			if err == nil {
				data, _, err := ix.DerivedCurrent(ctx, kind, ids, compute)
				return data, err
			}
			if index.IsCorrupt(err) || ctx.Err() != nil {
				return nil, err
			}
		}
		data, _, err := ix.Derived(ctx, kind, ids, compute)
		return data, err
	})
	if err != nil {
		return nil, err
	}
	// Decoding is most of the work once the index is warm: spread over
	// the cores, each worker writing only its own slots.
	ids = ids[:0:0]
	for id := range data {
		ids = append(ids, id)
	}
	vals := make([]*T, len(ids))
	var wg sync.WaitGroup
	workers := max(1, min(runtime.GOMAXPROCS(0), len(ids)/256))
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(ids); i += workers {
				v := new(T)
				if c.unmarshal(data[ids[i]], v) != nil {
					v = fromFile(f.TranscriptDir() + string(os.PathSeparator) + ids[i] + ".jsonl")
				}
				vals[i] = v
			}
		})
	}
	wg.Wait()
	out := make(map[string]*T, len(ids))
	for i, id := range ids {
		out[id] = vals[i]
	}
	return out, nil
}

// withIndex opens the storage's index and runs fn on it. A missing index
// (when the storage has runs), one that is damaged or of another version,
// and one found damaged while fn used it (deleted, rebuilt, fn run again)
// are said on w.
func withIndex[T any](ctx context.Context, root string, hasRuns bool, w io.Writer, fn func(*index.Index) (T, error)) (T, error) {
	var zero T
	_, statErr := os.Stat(index.File(root))
	ix, why, err := index.Open(ctx, root)
	if err != nil {
		return zero, err
	}
	switch {
	case why != "":
		fmt.Fprintf(w, "twasm: index %s rebuilt from the transcripts (%s)\n", index.File(root), why)
	case statErr != nil && hasRuns:
		fmt.Fprintf(w, "twasm: index %s was missing: built from the transcripts\n", index.File(root))
	}
	v, err := fn(ix)
	ix.Close()
	if err == nil || !index.IsCorrupt(err) {
		return v, err
	}
	// Damaged while in use: start again from the transcripts.
	if err := index.Remove(root); err != nil {
		return zero, err
	}
	fmt.Fprintf(w, "twasm: index %s rebuilt from the transcripts (%v)\n", index.File(root), err)
	if ix, _, err = index.Open(ctx, root); err != nil {
		return zero, err
	}
	defer ix.Close()
	return fn(ix)
}

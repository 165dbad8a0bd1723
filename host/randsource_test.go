package host

import (
	"context"
	"io"
	"sync"
	"testing"
)

// countingReader is a fixed random source that counts what it gives.
type countingReader struct {
	mu sync.Mutex
	n  int
}

func (r *countingReader) Read(b []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range b {
		b[i] = byte(r.n + i)
	}
	r.n += len(b)
	return len(b), nil
}

func (r *countingReader) read() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// TestRandSource checks that Options.RandSource gives every instance a
// reader of its own, and that the guest's random numbers come from it:
// a guest seeds its map hashes at start, so a new instance reads its
// source before it serves a call.
func TestRandSource(t *testing.T) {
	for _, bundled := range []bool{true, false} {
		name := map[bool]string{true: "bundled", false: "external"}[bundled]
		t.Run(name, func(t *testing.T) {
			var mu sync.Mutex
			var readers []*countingReader
			opts := set(testOptions(), func(o *Options) {
				o.RandSource = func() io.Reader {
					mu.Lock()
					defer mu.Unlock()
					r := &countingReader{}
					readers = append(readers, r)
					return r
				}
			})
			p := load(t, newRuntime(t, opts), "echo", bundled)
			ctx := context.Background()
			// Two instances held at once: the second cannot be the
			// first's, given back to the pool.
			a, err := p.NewInstance(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer a.(*instance).Close(ctx)
			b, err := p.NewInstance(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer b.(*instance).Close(ctx)
			mu.Lock()
			defer mu.Unlock()
			if len(readers) != 2 {
				t.Fatalf("RandSource called %d times for two instances, want 2", len(readers))
			}
			for i, r := range readers {
				if r.read() == 0 {
					t.Errorf("instance %d read nothing from its random source", i)
				}
			}
		})
	}
}

package synccmd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// fakeIndexer records what the live indexer asks of it; each batch is
// also sent on batches, so that a test waits for it as an event.
type fakeIndexer struct {
	mu      sync.Mutex
	runs    []string
	closed  int
	fail    error
	batches chan []string
}

func (f *fakeIndexer) UpdateRuns(_ context.Context, ids []string) error {
	f.mu.Lock()
	f.runs = append(f.runs, ids...)
	f.mu.Unlock()
	f.batches <- slices.Clone(ids)
	return f.fail
}

func (f *fakeIndexer) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed++
	return nil
}

func ids(from, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("run-%d", from+i))
	}
	return out
}

// TestLiveIndex: the live indexer opens the index at the first run
// written, never for a round that writes none; indexes a batch once
// liveBatch runs wait; leaves a smaller rest to the round's own update;
// closes the index when the round ends; reports an open or update error
// at finish without blocking the runs written after it.
func TestLiveIndex(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := context.Background()
	t.Run("nothing written", func(t *testing.T) {
		opened := 0
		l := newLiveIndex(func(context.Context) (RunIndexer, error) { opened++; return &fakeIndexer{}, nil })
		assert.NoError(t, l.finish())
		assert.Equal(t, 0, opened)
	})
	t.Run("a batch, then a rest", func(t *testing.T) {
		f := &fakeIndexer{batches: make(chan []string, 4)}
		opened := 0
		l := newLiveIndex(func(context.Context) (RunIndexer, error) { opened++; return f, nil })
		for _, id := range ids(0, liveBatch) {
			l.written(ctx, id)
		}
		assert.Equal(t, ids(0, liveBatch), <-f.batches)
		for _, id := range ids(liveBatch, 3) {
			l.written(ctx, id)
		}
		require.NoError(t, l.finish())
		l.written(ctx, "after the end") // ignored
		assert.Equal(t, 1, opened)
		assert.Equal(t, 1, f.closed)
		assert.Equal(t, ids(0, liveBatch), f.runs, "the rest is the round's update's")
		assert.NoError(t, l.finish(), "finish twice")
	})
	t.Run("a batch filled while the index opened", func(t *testing.T) {
		f := &fakeIndexer{batches: make(chan []string, 4)}
		opening := make(chan struct{})
		l := newLiveIndex(func(context.Context) (RunIndexer, error) { <-opening; return f, nil })
		for _, id := range ids(0, liveBatch+3) {
			l.written(ctx, id)
		}
		l.mu.Lock()
		l.ending = true // the round ends (finish's first step)...
		l.mu.Unlock()
		close(opening) // ...while the index was opening
		require.NoError(t, l.finish())
		assert.Equal(t, ids(0, liveBatch), f.runs, "the whole batch indexed, the rest left")
		assert.Equal(t, 1, f.closed)
	})
	t.Run("open fails", func(t *testing.T) {
		l := newLiveIndex(func(context.Context) (RunIndexer, error) { return nil, errors.New("no index") })
		for _, id := range ids(0, 3*liveBatch) {
			l.written(ctx, id)
		}
		assert.ErrorContains(t, l.finish(), "no index")
	})
	t.Run("update fails", func(t *testing.T) {
		f := &fakeIndexer{batches: make(chan []string, 4), fail: errors.New("disk full")}
		l := newLiveIndex(func(context.Context) (RunIndexer, error) { return f, nil })
		for _, id := range ids(0, liveBatch) {
			l.written(ctx, id)
		}
		<-f.batches
		for _, id := range ids(liveBatch, 2*liveBatch) { // not blocked
			l.written(ctx, id)
		}
		assert.ErrorContains(t, l.finish(), "disk full")
		assert.Equal(t, 1, f.closed)
	})
	t.Run("no index asked", func(t *testing.T) {
		l := newLiveIndex(nil)
		l.written(ctx, "x")
		assert.NoError(t, l.finish())
	})
}

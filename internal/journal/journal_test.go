package journal_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/twasm/twasm/internal/journal"
	"github.com/twasm/twasm/recorder"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The recorder writes an open entry before its first write and a close
// entry after its last, in a storage's transcripts directory only.
func TestRecorderWritesEntries(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	id := uuid.NewString()
	r, err := recorder.NewStore(root).Open(ctx, id)
	require.NoError(t, err)
	dir := filepath.Join(root, "transcripts")
	es, end, cont, err := journal.Read(dir, journal.Pos{})
	require.NoError(t, err)
	assert.True(t, cont)
	require.Len(t, es, 1)
	assert.Equal(t, journal.Entry{Kind: journal.Open, RunID: id, Nonce: es[0].Nonce}, es[0])
	require.NoError(t, r.Close())
	es, _, cont, err = journal.Read(dir, end)
	require.NoError(t, err)
	assert.True(t, cont)
	assert.Equal(t, []journal.Entry{{Kind: journal.Close, RunID: id, Nonce: es[0].Nonce}}, es)

	other := filepath.Join(t.TempDir(), id+".jsonl")
	r, err = recorder.Open(ctx, other, id)
	require.NoError(t, err)
	require.NoError(t, r.Close())
	_, err = os.Stat(journal.Path(filepath.Dir(other)))
	assert.ErrorIs(t, err, os.ErrNotExist, "a file outside a storage has no journal")
}

// Compact replaces a journal read to its end, and no entry appended
// meanwhile is lost: every one is read, before or after the compaction.
func TestCompactLosesNoEntry(t *testing.T) {
	dir := t.TempDir()
	const writers, each = 4, 200
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range each {
				w, err := journal.Begin(dir, uuid.NewString())
				assert.NoError(t, err)
				_ = w
			}
		})
	}
	seen := 0
	var pos journal.Pos
	compacted := 0
	read := func() {
		es, end, cont, err := journal.Read(dir, pos)
		require.NoError(t, err)
		require.True(t, cont || pos == journal.Pos{}, "continued from %+v", pos)
		seen += len(es)
		pos = end
		ok, err := journal.Compact(dir, end, func() error { pos = journal.Pos{}; return nil })
		require.NoError(t, err)
		if ok {
			compacted++
		} else {
			pos = end
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		read()
	}
	read()
	assert.Equal(t, writers*each, seen)
	assert.NotZero(t, compacted)
}

// FuzzRead: any journal bytes and position read without a panic; what is
// read from a position it does not continue is the whole journal's.
func FuzzRead(f *testing.F) {
	f.Add([]byte("o 6fa78c2d-79e5-4b11-a726-765c5d7bab69 26ebd2f41d74e84a\n"), int64(0), "")
	f.Add([]byte("c 6fa78c2d-79e5-4b11-a726-765c5d7bab69 x\no 1"), int64(3), "c")
	f.Fuzz(func(t *testing.T, data []byte, off int64, tail string) {
		dir := t.TempDir()
		if err := os.WriteFile(journal.Path(dir), data, 0o600); err != nil {
			t.Fatal(err)
		}
		es, end, cont, err := journal.Read(dir, journal.Pos{Off: off, Tail: tail})
		if err != nil {
			t.Fatal(err)
		}
		if end.Off > int64(len(data)) {
			t.Fatalf("end %d past the journal's %d bytes", end.Off, len(data))
		}
		if !cont {
			all, _, _, _ := journal.Read(dir, journal.Pos{})
			if len(all) != len(es) {
				t.Fatalf("not continued: %d entries, the whole journal has %d", len(es), len(all))
			}
		}
	})
}

// TestReadLongLine: a line longer than a read's buffer is not an entry
// (the journal is not continued), and the entries around it are read.
func TestReadLongLine(t *testing.T) {
	dir := t.TempDir()
	a := "o 6fa78c2d-79e5-4b11-a726-765c5d7bab69 26ebd2f41d74e84a\n"
	b := "c 6fa78c2d-79e5-4b11-a726-765c5d7bab69 26ebd2f41d74e84a\n"
	data := a + strings.Repeat("x", 100<<10) + "\n" + b
	if err := os.WriteFile(journal.Path(dir), []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	es, end, cont, err := journal.Read(dir, journal.Pos{})
	if err != nil {
		t.Fatal(err)
	}
	if cont || len(es) != 2 || es[0].Kind != journal.Open || es[1].Kind != journal.Close || end.Off != int64(len(data)) {
		t.Fatalf("cont %v, %d entries %v, end %d of %d", cont, len(es), es, end.Off, len(data))
	}
	var n int
	end2, _, err := journal.Each(dir, journal.Pos{}, func(journal.Entry) { n++ })
	if err != nil || n != 2 || end2 != end {
		t.Fatalf("Each: %v, %d entries, end %v", err, n, end2)
	}
}

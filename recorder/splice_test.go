package recorder

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twasm/twasm/transcript"
)

// TestSeqSplice: a single event's seq is written into the room before its
// line, a batch's are copied with the lines; every width of seq, up to the
// 20 digits of the largest, comes out as the same line the encoder writes
// with that seq.
func TestSeqSplice(t *testing.T) {
	r, _, id := openTemp(t, Options{Fsync: FsyncNever})
	ctx := context.Background()
	for i := 1; i <= 1005; i++ {
		var err error
		if i%7 == 0 {
			err = r.RecordBatch(ctx, []*transcript.Event{assistantEvent("a"), assistantEvent("b")})
			i++
		} else {
			err = r.Record(ctx, assistantEvent("single"))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	checkFile(t, r.Path(), id) // seqs 1..1005 in order, each line well formed

	// A run whose last line has the second largest seq: the next single
	// event takes all the room.
	path := filepath.Join(t.TempDir(), id+".jsonl")
	last := assistantEvent("before")
	last.Seq, last.RunID, last.Timestamp = math.MaxUint64-1, id, time.Now()
	line, err := transcript.AppendEvent(nil, last)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(line, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	r2, err := Open(ctx, path, id, Options{Fsync: FsyncNever, Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	ev := assistantEvent("largest")
	if err := r2.Record(ctx, ev); err != nil {
		t.Fatal(err)
	}
	if err := r2.Close(); err != nil {
		t.Fatal(err)
	}
	want, err := transcript.AppendEvent(nil, ev)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := bytes.TrimPrefix(data, append(line, '\n')); string(got) != string(want)+"\n" {
		t.Fatalf("got %q, want %q", got, want)
	}
}

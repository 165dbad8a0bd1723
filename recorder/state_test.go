package recorder

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/twasm/twasm/fanout"
	"github.com/twasm/twasm/internal/regfile"
	"github.com/twasm/twasm/internal/runid"
	"github.com/twasm/twasm/internal/runstate"
	"github.com/twasm/twasm/internal/testing/syncbuf"
	"github.com/twasm/twasm/transcript"
)

func stepEvent(t transcript.EventType, path string, it int) *transcript.Event {
	p := &transcript.StepPayload{Name: path, Kind: transcript.KindAgent}
	if t == transcript.RunStarted || t == transcript.RunCompleted {
		p.Kind = transcript.KindWorkflow
		path = ""
	}
	if t == transcript.RunStarted {
		p.Name, p.Schema, p.Producer = "run", transcript.Schema, &transcript.Producer{Name: "test"}
	}
	if t == transcript.StepCompleted || t == transcript.RunCompleted {
		p.Status = transcript.StatusOK
	}
	return &transcript.Event{Type: t, Path: path, Iteration: it, Payload: p}
}

// TestNothingAfterRunCompleted: once run.completed is in the file, every
// append is refused, from this recorder and from another one on the same
// file (another process); a second run.completed too.
func TestNothingAfterRunCompleted(t *testing.T) {
	r1, _, id := openTemp(t)
	ctx := context.Background()
	r2, err := Open(ctx, r1.Path(), id, Options{Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	for _, ev := range []*transcript.Event{stepEvent(transcript.RunStarted, "", 0), assistantEvent("a"), stepEvent(transcript.RunCompleted, "", 0)} {
		if err := r1.Record(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	for name, r := range map[string]*Recorder{"same recorder": r1, "other recorder": r2} {
		for _, ev := range []*transcript.Event{assistantEvent("late"), stepEvent(transcript.RunCompleted, "", 0)} {
			if err := r.Record(ctx, ev); !errors.Is(err, ErrRunFinished) || !strings.Contains(err.Error(), "seq 3") {
				t.Fatalf("%s: %s after run.completed: %v", name, ev.Type, err)
			}
		}
	}
	if evs := checkFile(t, r1.Path(), id); len(evs) != 3 || evs[2].Type != transcript.RunCompleted {
		t.Fatalf("%d events", len(evs))
	}
	if !r2.State().Finished {
		t.Fatal("state not finished")
	}
}

// TestEndOnceUnderLock: eight recorders (as eight `run end` processes)
// each end the run with RecordFunc; exactly one writes run.completed, the
// others see the run finished inside the critical section.
func TestEndOnceUnderLock(t *testing.T) {
	r0, _, id := openTemp(t)
	ctx := context.Background()
	if err := r0.Record(ctx, stepEvent(transcript.RunStarted, "", 0)); err != nil {
		t.Fatal(err)
	}
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		r, err := Open(ctx, r0.Path(), id, Options{Logger: quietLog()})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = r.RecordFunc(ctx, func(st runstate.State) ([]*transcript.Event, error) {
				if st.Finished {
					return nil, ErrRunFinished
				}
				return []*transcript.Event{stepEvent(transcript.RunCompleted, "", 0)}, nil
			})
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, ErrRunFinished):
			t.Fatal(err)
		}
	}
	evs := checkFile(t, r0.Path(), id)
	if ok != 1 || len(evs) != 2 {
		t.Fatalf("%d ends succeeded, %d events", ok, len(evs))
	}
}

// TestStateTracksBrackets: the open steps and links are the same whether
// this recorder wrote them or read them from another writer's lines.
func TestStateTracksBrackets(t *testing.T) {
	r1, _, id := openTemp(t)
	ctx := context.Background()
	r2, err := Open(ctx, r1.Path(), id, Options{Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	child := runid.New()
	link := &transcript.Event{Type: transcript.StepCallWorkflowStarted, Path: "sub", ChildRunID: child,
		Payload: &transcript.StepPayload{Name: "sub", Kind: transcript.KindCallWorkflow}}
	steps := []*transcript.Event{
		stepEvent(transcript.RunStarted, "", 0),
		stepEvent(transcript.StepStarted, "plan", 0),
		stepEvent(transcript.StepStarted, "fix", 0),
		stepEvent(transcript.StepStarted, "fix", 1),
		link,
		stepEvent(transcript.StepCompleted, "fix", 0),
	}
	for i, ev := range steps {
		r := r1
		if i%2 == 1 {
			r = r2
		}
		if err := r.Record(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	// r1 reads r2's last line on its next critical section.
	var got runstate.State
	if err := r1.RecordFunc(ctx, func(st runstate.State) ([]*transcript.Event, error) { got = st; return nil, nil }); err != nil {
		t.Fatal(err)
	}
	var open []string
	for _, b := range got.Open {
		open = append(open, b.Path+"/"+strconv.Itoa(b.Iteration)+"/"+string(b.Type))
	}
	want := []string{"plan/0/step.started", "fix/1/step.started", "sub/0/step.call_workflow.started"}
	if strings.Join(open, " ") != strings.Join(want, " ") || got.LastSeq != 6 || got.First != transcript.RunStarted || got.Finished {
		t.Fatalf("state %+v", got)
	}
	if got.Open[2].ChildRunID != child {
		t.Fatalf("link %+v", got.Open[2])
	}
	// Closing them all in one batch, with run.completed last.
	err = r2.RecordFunc(ctx, func(st runstate.State) ([]*transcript.Event, error) {
		var evs []*transcript.Event
		for i := len(st.Open) - 1; i >= 0; i-- {
			evs = append(evs, st.Open[i].Completion(transcript.StatusCancelled, "run ended"))
		}
		return append(evs, stepEvent(transcript.RunCompleted, "", 0)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if st := r2.State(); len(st.Open) != 0 || !st.Finished || st.LastSeq != 10 {
		t.Fatalf("after closing: %+v", st)
	}
	checkValidate(t, r1.Path(), id)
}

// TestRecordBatch: one batch is consecutive seqs, one write, published in
// order; an invalid event or run.completed before the end fails the
// whole batch before anything is written.
func TestRecordBatch(t *testing.T) {
	r, _, id := openTemp(t)
	ctx := context.Background()
	sub := r.fan.Subscribe(fanout.SubscribeOptions{BufferSize: 64})
	writes := 0
	r.writeHook = func(fd int, b []byte) (int, error) { writes++; return unix.Write(fd, b) }
	evs := []*transcript.Event{stepEvent(transcript.RunStarted, "", 0), assistantEvent("a"), assistantEvent("b")}
	if err := r.RecordBatch(ctx, evs); err != nil {
		t.Fatal(err)
	}
	if writes != 1 || evs[0].Seq != 1 || evs[2].Seq != 3 {
		t.Fatalf("%d writes, seqs %d..%d", writes, evs[0].Seq, evs[2].Seq)
	}
	bad := [][]*transcript.Event{
		{assistantEvent("c"), {Type: "bogus"}},
		{stepEvent(transcript.RunCompleted, "", 0), assistantEvent("d")},
		{assistantEvent("e"), nil},
	}
	for _, b := range bad {
		if err := r.RecordBatch(ctx, b); !errors.Is(err, transcript.ErrInvalidEvent) {
			t.Fatalf("bad batch: %v", err)
		}
	}
	if writes != 1 || r.lastSeq.Load() != 3 {
		t.Fatalf("a bad batch wrote: %d writes, seq %d", writes, r.lastSeq.Load())
	}
	if err := r.RecordBatch(ctx, nil); err != nil {
		t.Fatal(err)
	}
	r.writeHook = nil
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	var seqs []uint64
	for ev := range sub.C() {
		seqs = append(seqs, ev.Seq)
	}
	if len(seqs) != 3 || seqs[0] != 1 || seqs[2] != 3 {
		t.Fatalf("published %v", seqs)
	}
	checkFile(t, r.Path(), id)
}

// TestCheckpoint: a run reopened after a clean close continues from the
// checkpoint and reads only what was written after it: a line of another
// run planted before the checkpoint (which a whole-file read would
// refuse) is never read. A checkpoint that does not match the file is
// ignored, with a warning, and the whole file is read.
func TestCheckpoint(t *testing.T) {
	r, _, id := openTemp(t)
	ctx := context.Background()
	for _, ev := range []*transcript.Event{stepEvent(transcript.RunStarted, "", 0), stepEvent(transcript.StepStarted, "plan", 0), assistantEvent("x")} {
		if err := r.Record(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(r.Path() + stateSuffix); err != nil {
		t.Fatal("no checkpoint after closing an unfinished run:", err)
	}
	// Overwrite the run id of line 2 in place with another run's.
	data, _ := os.ReadFile(r.Path())
	other := runid.New()
	nl := bytes.IndexByte(data, '\n')
	i := nl + bytes.Index(data[nl:], []byte(id))
	planted := append(bytes.Clone(data[:i]), append([]byte(other), data[i+len(id):]...)...)
	if err := os.WriteFile(r.Path(), planted, 0o600); err != nil {
		t.Fatal(err)
	}
	r2, err := Open(ctx, r.Path(), id, Options{Logger: quietLog()})
	if err != nil {
		t.Fatalf("reopening read before the checkpoint: %v", err)
	}
	if st := r2.State(); st.LastSeq != 3 || len(st.Open) != 1 || st.Open[0].Path != "plan" || st.Name != "run" {
		t.Fatalf("state from the checkpoint: %+v", st)
	}
	if err := r2.Record(ctx, stepEvent(transcript.StepCompleted, "plan", 0)); err != nil {
		t.Fatal(err)
	}
	if err := r2.Close(); err != nil {
		t.Fatal(err)
	}
	// A checkpoint whose line does not match: the whole file is read
	// (and the planted line is found).
	if err := os.WriteFile(r.Path()+stateSuffix, []byte(`{"run_id":"`+id+`","offset":5,"lines":1,"state":{"last_seq":1}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	_, err = Open(ctx, r.Path(), id, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if !errors.Is(err, ErrRunMismatch) || !strings.Contains(logs.String(), "ignoring the run's checkpoint") {
		t.Fatalf("stale checkpoint: %v\n%s", err, logs.String())
	}
}

// TestCheckpointRemovedWhenFinished: a finished run leaves no checkpoint.
func TestCheckpointRemovedWhenFinished(t *testing.T) {
	r, _, _ := openTemp(t)
	ctx := context.Background()
	if err := r.Record(ctx, stepEvent(transcript.RunStarted, "", 0)); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	r2, err := Open(ctx, r.Path(), r.runID, Options{Logger: quietLog(), MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := r2.Record(ctx, stepEvent(transcript.RunCompleted, "", 0)); err != nil {
		t.Fatal(err)
	}
	if err := r2.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(r.Path() + stateSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("checkpoint of a finished run: %v", err)
	}
	if _, err := Open(ctx, r.Path()+"x", r.runID, Options{MustExist: true}); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("MustExist on a missing file: %v", err)
	}
}

// TestLockHolderNamed: a writer waiting for the lock says which process
// holds it after the warn delay, and with a lock timeout it fails naming
// it. The holder here is this process, through another descriptor.
func TestLockHolderNamed(t *testing.T) {
	var logs syncbuf.Buffer
	r, _, _ := openTemp(t, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), LockWarnAfter: time.Millisecond, LockTimeout: 200 * time.Millisecond})
	f, err := os.OpenFile(r.Path(), os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	err = r.Record(context.Background(), assistantEvent("x"))
	self := "process " + strconv.Itoa(os.Getpid())
	if !errors.Is(err, ErrLockTimeout) || !strings.Contains(err.Error(), self) {
		t.Fatalf("got %v", err)
	}
	if !strings.Contains(logs.String(), "waiting for the transcript's lock") || !strings.Contains(logs.String(), self) {
		t.Fatalf("no warning naming the holder:\n%s", logs.String())
	}
	unix.Flock(int(f.Fd()), unix.LOCK_UN)
	if err := r.Record(context.Background(), assistantEvent("y")); err != nil {
		t.Fatal(err)
	}
}

// TestOpenRefusesFIFO: the writer refuses a FIFO at a transcript path
// without blocking, and names it.
func TestOpenRefusesFIFO(t *testing.T) {
	fifo := t.TempDir() + "/x.jsonl"
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), fifo, runid.New(), Options{Logger: quietLog()})
	if !errors.Is(err, regfile.ErrNotRegular) || !strings.Contains(err.Error(), "named pipe") {
		t.Fatalf("Open: %v", err)
	}
}

// TestPeriodicCheckpoint: a writer that appends a lot leaves checkpoints
// as it goes, so one killed mid-step (no Close) leaves little to read.
func TestPeriodicCheckpoint(t *testing.T) {
	r, _, id := openTemp(t)
	r.cpEvery = 4 << 10
	ctx := context.Background()
	if err := r.Record(ctx, stepEvent(transcript.RunStarted, "", 0)); err != nil {
		t.Fatal(err)
	}
	for range 40 {
		if err := r.Record(ctx, assistantEvent(text200)); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(r.Path() + stateSuffix)
	if err != nil {
		t.Fatal("no checkpoint while writing:", err)
	}
	// Without closing r (as if it were killed), another writer starts from
	// that checkpoint and continues the series.
	r2, err := Open(ctx, r.Path(), id, Options{Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if r2.lastSeq.Load() != 41 || r2.State().Name != "run" {
		t.Fatalf("reopened at seq %d, state %+v (checkpoint %s)", r2.lastSeq.Load(), r2.State(), data)
	}
}

// TestStaleWaitSignal: a waiter that set its wait signal and then stopped
// (here: a descriptor holding the signal and never taking the lock) does
// not stop a lease holder: it gives way once, waits a bounded time, then
// goes on, and every append succeeds in order.
func TestStaleWaitSignal(t *testing.T) {
	r, _, id := openTemp(t, Options{Fsync: FsyncNever})
	setStaleWaitSignal(t, r)
	ctx := context.Background()
	for i := 0; i < 2000; i++ {
		if err := r.Record(ctx, assistantEvent("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if evs := checkFile(t, r.Path(), id); len(evs) != 2000 {
		t.Fatalf("%d lines", len(evs))
	}
}

// A batch of large events is encoded and spliced without growing a
// buffer line by line: the seqs' buffer is sized at once, the encoding
// buffer starts at the size of the batch before, and the line offsets
// are kept. All three grew from nothing (a copy per doubling), on every
// batch once a batch was larger than the buffers kept for reuse: 36
// allocations a batch of 16 events of 100 KiB, against 1 of 100 B. The
// file holds every line, in order, whatever the sizes.
func TestRecordBatchAllocationsFlatInSize(t *testing.T) {
	ctx := context.Background()
	allocs := map[int]float64{}
	for _, size := range []int{100, 100 << 10} {
		r, _, id := openTemp(t)
		path := r.Path()
		r.cpEvery = 1 << 40 // no checkpoint, whose writes count too
		batch := func() []*transcript.Event {
			evs := make([]*transcript.Event, 16)
			for i := range evs {
				evs[i] = assistantEvent(strings.Repeat("x", size))
			}
			return evs
		}
		// Warm: the pool and the hint hold buffers from a first batch.
		if err := r.RecordBatch(ctx, batch()); err != nil {
			t.Fatal(err)
		}
		evs := make([][]*transcript.Event, 12)
		for i := range evs {
			evs[i] = batch()
		}
		n := 0
		allocs[size] = testing.AllocsPerRun(10, func() {
			if err := r.RecordBatch(ctx, evs[n]); err != nil {
				t.Fatal(err)
			}
			n++
		})
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if got := checkFile(t, path, id); len(got) != 16*12 {
			t.Fatalf("%d-byte events: %d lines, want %d", size, len(got), 16*12)
		}
	}
	// Above maxKeptBuf the two buffers are not kept: each is allocated
	// once a batch, at its size.
	if !raceEnabled && allocs[100<<10] > allocs[100]+2 {
		t.Errorf("%v allocations a batch of 16 events of 100 KiB, %v of 100 B: more than the two buffers, each once", allocs[100<<10], allocs[100])
	}
}

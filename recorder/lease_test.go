package recorder

import (
	"context"
	"errors"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/twasm/twasm/transcript"
)

// TestLeaseEndsWhenIdle: a recorder that stops appending gives up the
// file lock by itself, so a writer that takes the flock without the wait
// signal (a tool other than this package) gets in; what that writer
// appends is read before the recorder's next line, which takes the next
// seq.
func TestLeaseEndsWhenIdle(t *testing.T) {
	r, _, id := openTemp(t, Options{Fsync: FsyncNever})
	ctx := context.Background()
	if err := r.Record(ctx, assistantEvent("first")); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(r.Path(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Poll without the signal; the deadline only turns a hang into a
	// failure.
	deadline := time.Now().Add(time.Minute)
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if err != unix.EWOULDBLOCK || time.Now().After(deadline) {
			t.Fatalf("the idle lease was never given up: %v", err)
		}
		time.Sleep(100 * time.Microsecond)
	}
	other := assistantEvent("other writer")
	other.Seq, other.RunID, other.Timestamp = 2, id, time.Now()
	line, err := transcript.AppendEvent(nil, other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	ev := assistantEvent("after")
	if err := r.Record(ctx, ev); err != nil {
		t.Fatal(err)
	}
	if ev.Seq != 3 {
		t.Fatalf("seq %d after the other writer's line, want 3", ev.Seq)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if evs := checkFile(t, r.Path(), id); len(evs) != 3 || evs[1].Message().Blocks[0].Text != "other writer" {
		t.Fatalf("%d lines", len(evs))
	}
}

// TestLeaseGivesWayWhileBusy: a recorder appending without a pause still
// lets a waiting writer in (the idle timer's ticks make it look for the
// wait signal), both when the waiter opens the run and when it appends;
// the file holds one gap-free series with the waiter's lines in it.
func TestLeaseGivesWayWhileBusy(t *testing.T) {
	r1, st, id := openTemp(t, Options{Fsync: FsyncNever})
	if r1.noLease {
		t.Skip("no OFD locks here")
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var busyErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := r1.Record(context.Background(), assistantEvent("busy")); err != nil {
				busyErr = err
				return
			}
		}
	}()
	// The deadline only turns a hang into a failure.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r2, err := st.Open(ctx, id, Options{Fsync: FsyncNever, Logger: quietLog()})
	if err != nil {
		close(stop)
		wg.Wait()
		t.Fatal(err)
	}
	for range 3 {
		if err = r2.Record(ctx, assistantEvent("waiter")); err != nil {
			break
		}
	}
	close(stop)
	wg.Wait()
	if err != nil || busyErr != nil {
		t.Fatal(err, busyErr)
	}
	if err := r2.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r1.Close(); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range checkFile(t, r1.Path(), id) {
		if ev.Message().Blocks[0].Text == "waiter" {
			n++
		}
	}
	if n != 3 {
		t.Fatalf("%d of the waiter's lines", n)
	}
}

// TestLeaseLooksForWaitersWhileBusy: while appends keep coming, the idle
// timer's ticks (which take no lock) make a critical section look for the
// wait signal, and the holder gives the lock up to the waiter (yielded is
// set only on that path; an idle release does not set it).
func TestLeaseLooksForWaitersWhileBusy(t *testing.T) {
	r, _, _ := openTemp(t, Options{Fsync: FsyncNever})
	setStaleWaitSignal(t, r)
	ctx := context.Background()
	yielded := false
	for i := 0; i < 100000 && !yielded; i++ {
		if err := r.Record(ctx, assistantEvent("x")); err != nil {
			t.Fatal(err)
		}
		r.mu.Lock()
		yielded = !r.yielded.IsZero()
		r.mu.Unlock()
	}
	if !yielded {
		t.Fatal("a busy holder never gave way to the waiting writer")
	}
}

// setStaleWaitSignal sets the wait signal on r's file from a descriptor
// that never takes the lock (a stopped waiter), until the test ends; it
// skips the test where the system refuses OFD locks.
func setStaleWaitSignal(t *testing.T, r *Recorder) {
	t.Helper()
	if r.noLease {
		t.Skip("no OFD locks here")
	}
	f, err := os.Open(r.Path())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if _, err := fcntlLock(int(f.Fd()), unix.F_OFD_SETLK, unix.F_RDLCK); err != nil {
		t.Fatal(err)
	}
}

// TestCloseRacesTheIdleTimer: Close while appends keep the lease and its
// idle timer ticking, from other goroutines: Records after Close fail with
// ErrClosed, and once Close returns the file lock is free (no tick holds
// or releases it later: another descriptor takes it at once) and no
// goroutine is left (goleak, in TestMain).
func TestCloseRacesTheIdleTimer(t *testing.T) {
	ctx := context.Background()
	for range 40 {
		r, _, _ := openTemp(t, Options{Fsync: FsyncNever})
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				for {
					if err := r.Record(ctx, assistantEvent("x")); err != nil {
						if !errors.Is(err, ErrClosed) {
							t.Error(err)
						}
						return
					}
				}
			})
		}
		// Let the appends run past a few ticks of the idle timer.
		for r.lastSeq.Load() < 200 {
			runtime.Gosched()
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(r.Path(), os.O_RDONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			t.Fatalf("the lock is still held after Close: %v", err)
		}
		f.Close()
		wg.Wait()
	}
}

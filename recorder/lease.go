package recorder

import (
	"context"
	"fmt"
	"io"
	"time"

	"golang.org/x/sys/unix"
)

// The lease: a recorder keeps the file lock between its critical sections
// while it is appending and nobody else asks for the lock, so that a
// stream of Records costs one write(2) each instead of flock, fstat,
// write, flock. While the lock is held no cooperating writer can append,
// so the file's end is still where this recorder's last write left it:
// nothing needs to be read and no fstat is needed to know it.
//
// The lease ends (the lock is released, and the next critical section
// takes it again and reads what others appended, as before):
//   - when the recorder has made no append for a while: an idle timer
//     ticks every leaseIdle while the lease is held and ends it at the
//     first tick that finds no append since the one before (so after
//     leaseIdle to 2*leaseIdle without an append). A tick that finds
//     appends takes no lock: it re-arms itself, so a stream of appends
//     never waits for the timer, and no append reads the clock for it;
//   - when another writer is waiting: a waiting recorder sets its wait
//     signal (an OFD read lock on one byte far beyond any file end,
//     wantOffset; OFD locks and flock do not interact), and the holder
//     looks for it at the end of the first critical section after each
//     tick, so about every leaseIdle while it appends. It then releases
//     the lock and, before it takes it again, lets the waiter in (waits,
//     up to yieldWait, for the signal to go away);
//   - before an fsync, on any error, and at Close.
//
// A stopped waiter keeps its signal; a holder that waited yieldWait for it
// in vain ignores signals for staleWant, so a stopped waiter costs a
// running writer a bounded share of its time. Where the signal is not
// available (the system refuses OFD locks), the recorder takes and
// releases the lock in every critical section, as without a lease.
const (
	leaseIdle = time.Millisecond
	yieldWait = 50 * time.Millisecond
	staleWant = time.Second
	// maxLockPoll caps the back-off of a writer polling for the lock.
	maxLockPoll = time.Millisecond
	// wantOffset is the byte whose OFD read lock says "a writer is waiting
	// for the file lock": far beyond any transcript's end, so it never
	// meets a lock on data.
	wantOffset = 1 << 62
)

// fcntlLock runs an OFD lock command on the wait-signal byte, retrying
// EINTR.
func fcntlLock(fd, cmd int, typ int16) (int16, error) {
	lk := unix.Flock_t{Type: typ, Whence: io.SeekStart, Start: wantOffset, Len: 1}
	for {
		err := unix.FcntlFlock(uintptr(fd), cmd, &lk)
		if err != unix.EINTR {
			return lk.Type, err
		}
	}
}

// probeLease turns the lease off when the system cannot tell waiters
// (OFD locks refused: an old kernel, some network file systems).
func (r *Recorder) probeLease() {
	if _, err := fcntlLock(r.rfd, unix.F_OFD_GETLK, unix.F_WRLCK); err != nil {
		r.noLease = true
		r.log.Debug("recorder: no lock lease: the file system refuses OFD locks", "path", r.path, "err", err)
	}
}

// signalWait sets or clears this recorder's wait signal. It is a courtesy
// that only makes a lease holder give way sooner, so failures are ignored.
func (r *Recorder) signalWait(on bool) {
	if r.noLease || on == r.wanting {
		return
	}
	typ := int16(unix.F_UNLCK)
	if on {
		typ = unix.F_RDLCK
	}
	_, err := fcntlLock(r.rfd, unix.F_OFD_SETLK, typ)
	r.wanting = on && err == nil
}

// othersWaiting reports whether another writer's wait signal is set.
func (r *Recorder) othersWaiting(now time.Time) bool {
	if now.Before(r.ignoreWant) {
		return false
	}
	typ, err := fcntlLock(r.rfd, unix.F_OFD_GETLK, unix.F_WRLCK)
	if err != nil {
		// Cannot tell any more: give up leases for good.
		r.noLease = true
		return true
	}
	return typ != unix.F_UNLCK
}

// acquire makes the caller the holder of the file lock, knowing the file
// up to its end: under a lease there is nothing to do; otherwise it takes
// the lock and reads what other writers appended (refreshTail). Called
// with mu held.
func (r *Recorder) acquire(ctx context.Context, when string) error {
	if r.held {
		return nil
	}
	if err := r.lockFile(ctx); err != nil {
		return err
	}
	if err := r.refreshTail(when); err != nil {
		r.unlockFile()
		return err
	}
	return nil
}

// endLocked ends a critical section that holds the file lock: with keep,
// the lock stays held as a lease (unless another writer waits for it);
// otherwise it is released. Called with mu held.
func (r *Recorder) endLocked(keep bool) {
	if !keep || r.noLease || r.closed {
		r.release()
		return
	}
	if !r.held {
		r.held = true
	} else if r.lookDue.Load() {
		r.lookDue.Store(false)
		if now := time.Now(); r.othersWaiting(now) {
			r.release()
			r.yielded = now
			return
		}
	}
	if !r.idleArmed {
		// The first tick comes leaseIdle after this append.
		r.idleArmed = true
		r.used.Store(false)
		r.lookDue.Store(false)
		r.idle.Reset(leaseIdle)
	} else if !r.used.Load() {
		r.used.Store(true)
	}
}

// release ends the lease (or the critical section's hold) on the file
// lock. Called with mu held.
func (r *Recorder) release() {
	r.held = false
	r.unlockFile()
}

// newIdleTimer makes the lease's idle timer, stopped. Open makes it before
// anything can arm it, so that r.idle never changes and the tick reads it
// without the lock.
func (r *Recorder) newIdleTimer() {
	r.idle = time.AfterFunc(time.Hour, r.idleTick)
	r.idle.Stop()
}

// idleTick is the idle timer, armed while the lease may be held: a tick
// that finds an append since the last one re-arms it (without the lock,
// so that it never makes an append wait) and asks the next critical
// section to look for waiters; one that finds none ends the lease. Only
// the tick touches the timer while it is armed (idleArmed), except Close,
// which stops it: a tick racing with Close re-arms it once more, and the
// next finds the recorder closed.
func (r *Recorder) idleTick() {
	if r.used.Swap(false) {
		r.lookDue.Store(true)
		r.idle.Reset(leaseIdle)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.used.Swap(false) && !r.closed { // an append came in meanwhile
		r.lookDue.Store(true)
		r.idle.Reset(leaseIdle)
		return
	}
	r.idleArmed = false
	if r.held {
		r.release()
	}
}

// letWaiterIn runs before taking the lock again after giving it up to a
// waiting writer: it waits until the waiter's signal is gone (it took the
// lock, or gave up), at most yieldWait; a waiter that did not come in by
// then (stopped, or starved of CPU) is ignored for staleWant. Called with
// mu held.
func (r *Recorder) letWaiterIn(ctx context.Context) error {
	since := r.yielded
	r.yielded = time.Time{}
	wait := 20 * time.Microsecond
	var t *time.Timer
	for {
		now := time.Now()
		if !r.othersWaiting(now) {
			return nil
		}
		if now.Sub(since) >= yieldWait {
			r.ignoreWant = now.Add(staleWant)
			r.log.Debug("recorder: a waiting writer did not take the lock; not giving way for a while", "path", r.path, "for", staleWant)
			return nil
		}
		if t == nil {
			t = time.NewTimer(wait)
			defer t.Stop()
		} else {
			t.Reset(wait)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("recorder: waiting for the lock of %s: %w", r.path, ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, maxLockPoll)
	}
}

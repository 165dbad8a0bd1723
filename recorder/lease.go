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
//   - when the recorder has made no append for leaseIdle (a timer);
//   - when another writer is waiting: a waiting recorder sets its wait
//     signal (an OFD read lock on one byte far beyond any file end,
//     wantOffset; OFD locks and flock do not interact), and the holder
//     looks for it at the end of a critical section at least every
//     leaseCheck. It then releases the lock and, before it takes it
//     again, lets the waiter in (waits, up to yieldWait, for the signal to
//     go away);
//   - before an fsync, on any error, and at Close.
//
// A stopped waiter keeps its signal; a holder that waited yieldWait for it
// in vain ignores signals for staleWant, so a stopped waiter costs a
// running writer a bounded share of its time. Where the signal is not
// available (the system refuses OFD locks), the recorder takes and
// releases the lock in every critical section, as without a lease.
const (
	leaseIdle  = time.Millisecond
	leaseCheck = time.Millisecond
	yieldWait  = 50 * time.Millisecond
	staleWant  = time.Second
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
	now := time.Now()
	if !r.held {
		r.held, r.checked = true, now
	} else if now.Sub(r.checked) >= leaseCheck {
		r.checked = now
		if r.othersWaiting(now) {
			r.release()
			r.yielded = now
			return
		}
	}
	r.lastUse = now
	if !r.idleArmed {
		r.idleArmed = true
		if r.idle == nil {
			r.idle = time.AfterFunc(leaseIdle, r.idleRelease)
		} else {
			r.idle.Reset(leaseIdle)
		}
	}
}

// release ends the lease (or the critical section's hold) on the file
// lock. Called with mu held.
func (r *Recorder) release() {
	r.held = false
	r.unlockFile()
}

// idleRelease is the idle timer: it ends a lease unused for leaseIdle.
func (r *Recorder) idleRelease() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.idleArmed = false
	if !r.held {
		return
	}
	if d := time.Since(r.lastUse); d < leaseIdle {
		r.idleArmed = true
		r.idle.Reset(leaseIdle - d)
		return
	}
	r.release()
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

package recorder

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// ErrLockTimeout is wrapped when the file lock was not free within the
// time set by [Options].LockTimeout. The error names the process holding it
// when the system says.
var ErrLockTimeout = errors.New("timed out waiting for the transcript's lock")

// defaultLockWarnAfter is how long a writer waits for the file lock before
// it says which process holds it.
const defaultLockWarnAfter = 3 * time.Second

// lockFile takes the advisory lock shared with every other recorder (in
// this or another process) appending to the same file. It polls (backing
// off to a millisecond), so that ctx and the lock timeout bound the
// wait, and after the warn delay it logs which process holds the lock: a
// stopped or hung holder would otherwise block every writer without a
// word.
func (r *Recorder) lockFile(ctx context.Context) error {
	if !r.yielded.IsZero() {
		if err := r.letWaiterIn(ctx); err != nil {
			return err
		}
	}
	err := flock(r.fd, unix.LOCK_EX|unix.LOCK_NB)
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.EWOULDBLOCK) {
		return fmt.Errorf("recorder: lock %s: %w", r.path, err)
	}
	// Say that we wait, so that a holder keeping the lock between its
	// appends (a lease, see lease.go) gives it up.
	r.signalWait(true)
	defer r.signalWait(false)
	start := time.Now()
	warnAt, timeout := r.opts.lockWarn, r.opts.lockTimeout
	warned := false
	wait := 20 * time.Microsecond
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("recorder: waiting for the lock of %s: %w", r.path, ctx.Err())
		case <-t.C:
		}
		err := flock(r.fd, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			if warned {
				r.log.Info("recorder: got the lock", "path", r.path, "waited", time.Since(start).Round(time.Millisecond).String())
			}
			return nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return fmt.Errorf("recorder: lock %s: %w", r.path, err)
		}
		waited := time.Since(start)
		// The warning first: a writer that waited past LockWarnAfter has
		// said so even when the same poll finds the timeout passed (a
		// writer descheduled that long on a busy machine).
		if !warned && warnAt > 0 && waited >= warnAt {
			warned = true
			r.log.Warn("recorder: waiting for the transcript's lock held by another process (a stopped process holds it until it is continued or killed; --lock-timeout gives up instead)",
				"path", r.path, "holder", r.lockHolder(), "waited", waited.Round(time.Millisecond).String())
		}
		if timeout > 0 && waited >= timeout {
			return fmt.Errorf("recorder: %s: %w after %s: held by %s", r.path, ErrLockTimeout, timeout, r.lockHolder())
		}
		wait = min(2*wait, maxLockPoll)
		t.Reset(wait)
	}
}

// lockHolder describes the process holding the flock on the transcript, as
// /proc/locks and /proc/<pid> tell it: "process 1234 (twasm record ...,
// stopped)". It says "another process" when the system does not tell.
func (r *Recorder) lockHolder() string {
	var st unix.Stat_t
	if err := fstat(r.fd, &st); err != nil {
		return "another process"
	}
	pid := flockHolder("/proc/locks", unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino)
	if pid <= 0 {
		return "another process"
	}
	return describeProcess(pid)
}

// flockHolder returns the pid holding a FLOCK write lock on the file, or 0.
// A line of /proc/locks reads "1: FLOCK  ADVISORY  WRITE 1234 fe:00:9978098
// 0 EOF" (device major:minor in hex, inode in decimal); waiters are marked
// with "->" and skipped.
func flockHolder(locks string, major, minor uint32, ino uint64) int {
	f, err := os.Open(locks)
	if err != nil {
		return 0
	}
	defer f.Close()
	want := fmt.Sprintf("%02x:%02x:%d", major, minor, ino)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] != "FLOCK" || fields[3] != "WRITE" || fields[5] != want {
			continue
		}
		if pid, err := strconv.Atoi(fields[4]); err == nil {
			return pid
		}
	}
	return 0
}

// describeProcess names a process by pid, command line and state.
func describeProcess(pid int) string {
	desc := "process " + strconv.Itoa(pid)
	var parts []string
	if cmd, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); err == nil && len(cmd) > 0 {
		c := strings.TrimSpace(string(bytes.ReplaceAll(bytes.TrimRight(cmd, "\x00"), []byte{0}, []byte{' '})))
		if len(c) > 80 {
			c = c[:80] + "..."
		}
		parts = append(parts, strconv.Quote(c))
	}
	if stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		// The state follows the command name in parentheses, which may
		// itself hold spaces and parentheses.
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
			switch stat[i+2] {
			case 'T', 't':
				parts = append(parts, "stopped")
			case 'Z':
				parts = append(parts, "zombie")
			}
		}
	}
	if len(parts) > 0 {
		desc += " (" + strings.Join(parts, ", ") + ")"
	}
	return desc
}

func (r *Recorder) unlockFile() {
	if err := flock(r.fd, unix.LOCK_UN); err != nil {
		// Closing the descriptor releases the lock anyway; other writers
		// are only delayed until then.
		r.log.Warn("recorder: unlock failed", "path", r.path, "err", err)
	}
}

func flock(fd, how int) error {
	for {
		err := unix.Flock(fd, how)
		if err != unix.EINTR {
			return err
		}
	}
}

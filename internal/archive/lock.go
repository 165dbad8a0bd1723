package archive

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// ErrBusy is returned by Lock when another sync or import holds the
// archive and the caller did not ask to wait.
var ErrBusy = errors.New("another twasm sync or import is running on this storage")

// BusyError names the process holding the lock.
type BusyError struct{ PID string }

func (e *BusyError) Error() string {
	if e.PID != "" {
		return fmt.Sprintf("%v (pid %s); wait for it or run with --wait", ErrBusy, e.PID)
	}
	return ErrBusy.Error() + "; wait for it or run with --wait"
}

func (e *BusyError) Unwrap() error { return ErrBusy }

// Lock is the archive's exclusive lock: one sync or import at a time per
// storage root (an advisory flock on archive/sync.lock, dropped by the
// kernel when the process dies).
type Lock struct{ f *os.File }

// AcquireLock takes the lock. Without wait it fails at once with a
// *BusyError; with wait it polls until ctx is done, calling waiting once
// (with the holder's pid) when it has to wait.
func AcquireLock(ctx context.Context, root string, wait bool, waiting func(pid string)) (*Lock, error) {
	dir := filepath.Join(root, "archive")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("archive lock: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "sync.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("archive lock: %w", err)
	}
	told := false
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, fmt.Errorf("archive lock: %w", err)
		}
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		pid := strings.TrimSpace(string(b[:n]))
		if !wait {
			f.Close()
			return nil, &BusyError{PID: pid}
		}
		if !told && waiting != nil {
			waiting(pid)
			told = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return &Lock{f: f}, nil
}

// Release drops the lock.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	_ = l.f.Truncate(0)
	err := l.f.Close()
	l.f = nil
	return err
}

package agentproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// DefaultWaitDelay is how long output is still read after the agent
// exits while a process it started keeps its stdout or stderr open.
const DefaultWaitDelay = 2 * time.Second

// Options configure a run.
type Options struct {
	// Args is the command and its arguments.
	Args []string
	// Dir and Env as in exec.Cmd (nil Env inherits twasm's).
	Dir string
	Env []string
	// Stdin, when set, is the child's stdin; otherwise it reads from the
	// null device.
	Stdin io.Reader
	// Stdout receives each chunk of the child's stdout, in order, from one
	// goroutine. An error stops reading (the child then gets EPIPE).
	Stdout func(p []byte) error
	// Stderr receives each chunk of the child's stderr, from another
	// goroutine, never while Stdout runs.
	Stderr func(p []byte)
	// Signals are forwarded to the child's process group (default SIGINT,
	// SIGTERM and SIGHUP).
	Signals []os.Signal
	// WaitDelay bounds how long a read waits for the pipes after the child
	// exits (default DefaultWaitDelay): a grandchild that inherited the
	// pipes and outlives the agent would otherwise keep twasm waiting.
	// What the pipes hold is read whatever time the callbacks take.
	WaitDelay time.Duration
}

// Result is how the child ended.
type Result struct {
	// ExitCode is the child's exit code; for a child killed by a signal
	// it is 128 + the signal number, as shells report it.
	ExitCode int
	// Signaled is the last signal that was forwarded to the child, if any.
	Signaled os.Signal
	// OutputLeftOpen is set when, after the agent exited, its stdout or
	// stderr stayed open and silent for WaitDelay (a process it started
	// held it), and reading stopped there.
	OutputLeftOpen bool
}

// ErrStart is wrapped when the command cannot be started (not found, not
// executable).
var ErrStart = errors.New("cannot start the agent command")

// Run starts the command in a process group of its own and waits for it.
// The signals in opts.Signals that twasm receives are forwarded to that
// group, once each: a Ctrl-C at the terminal reaches twasm's group only, so
// the agent gets it once, from twasm, and twasm keeps reading what the
// agent prints while it stops. Cancelling ctx kills the group.
func Run(ctx context.Context, opts Options) (Result, error) {
	if len(opts.Args) == 0 {
		return Result{}, fmt.Errorf("%w: no command", ErrStart)
	}
	cmd := exec.CommandContext(ctx, opts.Args[0], opts.Args[1:]...)
	cmd.Dir = opts.Dir
	cmd.Env = opts.Env
	cmd.Stdin = opts.Stdin
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Let the child finish on its own after a forwarded signal; a
	// cancelled context kills it and whatever it started in its group.
	cmd.Cancel = func() error {
		if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
			return cmd.Process.Kill()
		}
		return nil
	}
	wait := opts.WaitDelay
	if wait <= 0 {
		wait = DefaultWaitDelay
	}
	// The pipes are twasm's own, read by goroutines of Run's, not
	// os/exec's copying goroutines: exec's WaitDelay counts the time the
	// callbacks take (normalizing a chunk may take seconds on a busy
	// machine) and would drop what the agent printed last. Here, after
	// the child exits, each read may wait at most wait for the pipe to
	// give something (idleRead): only a pipe that stays open and silent
	// (a process the agent started holds it) stops the reading.
	outR, outW, err := os.Pipe()
	if err != nil {
		return Result{}, fmt.Errorf("%w %q: %v", ErrStart, opts.Args[0], err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return Result{}, fmt.Errorf("%w %q: %v", ErrStart, opts.Args[0], err)
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	// Only a Stdin that is not a file gets a copying goroutine of
	// os/exec's now: it is not waited for past wait after the exit.
	cmd.WaitDelay = wait
	sigs := opts.Signals
	if sigs == nil {
		sigs = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}
	}
	sigc := make(chan os.Signal, 4)
	signal.Notify(sigc, sigs...)
	defer signal.Stop(sigc)

	err = cmd.Start()
	// The child holds the write ends now; twasm's copies would keep the
	// pipes open forever.
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return Result{}, fmt.Errorf("%w %q: %v", ErrStart, opts.Args[0], err)
	}

	var res Result
	var mu sync.Mutex
	done := make(chan struct{})
	var fwd sync.WaitGroup
	fwd.Add(1)
	go func() {
		defer fwd.Done()
		for {
			select {
			case s := <-sigc:
				mu.Lock()
				res.Signaled = s
				mu.Unlock()
				if ss, ok := s.(syscall.Signal); ok {
					if err := syscall.Kill(-cmd.Process.Pid, ss); err == nil {
						continue
					}
				}
				_ = cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()

	var exited atomic.Bool
	var cbMu sync.Mutex // the callbacks run one at a time, as they always did
	var readErr error
	var leftOpen atomic.Bool
	var readers sync.WaitGroup
	readers.Add(2)
	go func() {
		defer readers.Done()
		readErr = readPipe(outR, &exited, wait, &leftOpen, func(p []byte) error {
			cbMu.Lock()
			defer cbMu.Unlock()
			if opts.Stdout == nil {
				return nil
			}
			return opts.Stdout(p)
		})
	}()
	go func() {
		defer readers.Done()
		_ = readPipe(errR, &exited, wait, &leftOpen, func(p []byte) error {
			cbMu.Lock()
			defer cbMu.Unlock()
			if opts.Stderr != nil {
				opts.Stderr(p)
			}
			return nil
		})
	}()

	waitErr := cmd.Wait()
	exited.Store(true)
	// A read already waiting gets its bound now; later reads set their
	// own (readPipe).
	deadline := time.Now().Add(wait)
	_ = outR.SetReadDeadline(deadline)
	_ = errR.SetReadDeadline(deadline)
	readers.Wait()
	close(done)
	fwd.Wait()

	mu.Lock()
	defer mu.Unlock()
	res.ExitCode = exitCode(cmd.ProcessState)
	res.OutputLeftOpen = leftOpen.Load()
	if readErr != nil {
		return res, readErr
	}
	var exitErr *exec.ExitError
	switch {
	case waitErr == nil, errors.As(waitErr, &exitErr), errors.Is(waitErr, exec.ErrWaitDelay):
	default:
		return res, fmt.Errorf("agentproc: wait: %w", waitErr)
	}
	return res, nil
}

// readPipe reads r to its end, handing each chunk to fn, and closes r.
// Once exited is set (the child is gone), each read waits at most wait
// for the pipe to give something: the time fn takes is not counted. A
// read that times out means a process the agent started holds the pipe:
// leftOpen is set and reading stops. An error from fn stops reading; it
// is returned (the writer then gets EPIPE).
func readPipe(r *os.File, exited *atomic.Bool, wait time.Duration, leftOpen *atomic.Bool, fn func([]byte) error) error {
	defer r.Close()
	buf := make([]byte, 32<<10)
	for {
		var began time.Time
		if exited.Load() {
			began = time.Now()
			_ = r.SetReadDeadline(began.Add(wait))
		}
		n, err := r.Read(buf)
		if n > 0 {
			if ferr := fn(buf[:n]); ferr != nil {
				return ferr
			}
		}
		switch {
		case err == nil:
		case errors.Is(err, os.ErrDeadlineExceeded):
			if !began.IsZero() && time.Since(began) < wait {
				// The deadline passed before the read could wait (set
				// by Run at the exit, or this goroutine was not run for
				// that long on a busy machine): the pipe was not given
				// its time.
				continue
			}
			leftOpen.Store(true)
			return nil
		default: // io.EOF: every writer closed it
			return nil
		}
	}
}

func exitCode(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

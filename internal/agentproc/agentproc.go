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
	// Stderr receives each chunk of the child's stderr, concurrently with
	// Stdout.
	Stderr func(p []byte)
	// Signals are forwarded to the child's process group (default SIGINT,
	// SIGTERM and SIGHUP).
	Signals []os.Signal
	// WaitDelay bounds how long output is read after the child exits
	// (default DefaultWaitDelay): a grandchild that inherited the pipes
	// and outlives the agent would otherwise keep twasm waiting.
	WaitDelay time.Duration
}

// Result is how the child ended.
type Result struct {
	// ExitCode is the child's exit code; for a child killed by a signal
	// it is 128 + the signal number, as shells report it.
	ExitCode int
	// Signaled is the last signal that was forwarded to the child, if any.
	Signaled os.Signal
	// OutputLeftOpen is set when a process the agent started still held
	// its stdout or stderr WaitDelay after the agent exited, and reading
	// stopped there.
	OutputLeftOpen bool
}

// ErrStart is wrapped when the command cannot be started (not found, not
// executable).
var ErrStart = errors.New("cannot start the agent command")

// writerFunc adapts a chunk callback to the io.Writer os/exec copies to.
type writerFunc func(p []byte) error

func (w writerFunc) Write(p []byte) (int, error) {
	if err := w(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

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
	cmd.WaitDelay = opts.WaitDelay
	if cmd.WaitDelay <= 0 {
		cmd.WaitDelay = DefaultWaitDelay
	}
	// The callbacks run in os/exec's copying goroutines. After WaitDelay
	// Wait returns without waiting for them, so they are fenced: once Run
	// is done, a late chunk is dropped instead of reaching a caller that
	// has moved on.
	var cbMu sync.Mutex
	var readErr error
	finished := false
	cmd.Stdout = writerFunc(func(p []byte) error {
		cbMu.Lock()
		defer cbMu.Unlock()
		if finished || opts.Stdout == nil {
			return nil
		}
		if err := opts.Stdout(p); err != nil {
			readErr = err
			return err
		}
		return nil
	})
	cmd.Stderr = writerFunc(func(p []byte) error {
		cbMu.Lock()
		defer cbMu.Unlock()
		if !finished && opts.Stderr != nil {
			opts.Stderr(p)
		}
		return nil
	})
	sigs := opts.Signals
	if sigs == nil {
		sigs = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}
	}
	sigc := make(chan os.Signal, 4)
	signal.Notify(sigc, sigs...)
	defer signal.Stop(sigc)

	if err := cmd.Start(); err != nil {
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

	waitErr := cmd.Wait()
	close(done)
	fwd.Wait()
	cbMu.Lock()
	finished = true
	cbMu.Unlock()

	mu.Lock()
	defer mu.Unlock()
	res.ExitCode = exitCode(cmd.ProcessState)
	if readErr != nil {
		return res, readErr
	}
	var exitErr *exec.ExitError
	switch {
	case errors.Is(waitErr, exec.ErrWaitDelay):
		res.OutputLeftOpen = true
	case waitErr == nil, errors.As(waitErr, &exitErr):
	default:
		return res, fmt.Errorf("agentproc: wait: %w", waitErr)
	}
	return res, nil
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

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
)

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
	// Signals are forwarded to the child (default SIGINT and SIGTERM).
	Signals []os.Signal
}

// Result is how the child ended.
type Result struct {
	// ExitCode is the child's exit code; for a child killed by a signal
	// it is 128 + the signal number, as shells report it.
	ExitCode int
	// Signaled is the signal that was forwarded to the child, if any.
	Signaled os.Signal
}

// ErrStart is wrapped when the command cannot be started (not found, not
// executable).
var ErrStart = errors.New("cannot start the agent command")

// Run starts the command and waits for it. Cancelling ctx kills the child.
func Run(ctx context.Context, opts Options) (Result, error) {
	if len(opts.Args) == 0 {
		return Result{}, fmt.Errorf("%w: no command", ErrStart)
	}
	cmd := exec.CommandContext(ctx, opts.Args[0], opts.Args[1:]...)
	cmd.Dir = opts.Dir
	cmd.Env = opts.Env
	cmd.Stdin = opts.Stdin
	// Let the child finish on its own after a forwarded signal; a
	// cancelled context still kills it.
	cmd.Cancel = func() error { return cmd.Process.Kill() }
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return Result{}, fmt.Errorf("agentproc: %w", err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return Result{}, fmt.Errorf("agentproc: %w", err)
	}
	sigs := opts.Signals
	if sigs == nil {
		sigs = []os.Signal{os.Interrupt, syscall.SIGTERM}
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
				_ = cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		pump(stderr, func(p []byte) error {
			if opts.Stderr != nil {
				opts.Stderr(p)
			}
			return nil
		})
	}()
	readErr := pump(stdout, func(p []byte) error {
		if opts.Stdout != nil {
			return opts.Stdout(p)
		}
		return nil
	})
	if readErr != nil {
		// Stop reading; closing the pipe makes the child's writes fail
		// rather than block forever.
		_ = stdout.Close()
	}
	wg.Wait()
	waitErr := cmd.Wait()
	close(done)
	fwd.Wait()

	mu.Lock()
	defer mu.Unlock()
	res.ExitCode = exitCode(cmd.ProcessState)
	if readErr != nil {
		return res, readErr
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		return res, fmt.Errorf("agentproc: wait: %w", waitErr)
	}
	return res, nil
}

// pump copies r to fn in chunks until EOF or fn fails. Pipe read errors
// after the child exits are EOF in practice.
func pump(r io.Reader, fn func([]byte) error) error {
	buf := make([]byte, 64<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if ferr := fn(buf[:n]); ferr != nil {
				return ferr
			}
		}
		if err != nil {
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

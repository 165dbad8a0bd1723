package cmdutil

import (
	"context"
	"errors"
	"fmt"
)

// Exit codes of twasm. They are part of the interface: scripts branch on
// them.
const (
	ExitOK        = 0   // success
	ExitFailure   = 1   // the command ran and found a failure (a broken transcript)
	ExitUsage     = 2   // bad flags or arguments, or input that cannot be read
	ExitCancelled = 130 // interrupted (SIGINT), as shells report it
)

// FlagError is a usage mistake: the command prints its usage after the
// message.
type FlagError struct{ Err error }

func (e *FlagError) Error() string { return e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

// FlagErrorf returns a *FlagError.
func FlagErrorf(format string, args ...any) error {
	return &FlagError{Err: fmt.Errorf(format, args...)}
}

// InputError is input that cannot be used: a run that does not exist, a
// file that cannot be read. It exits 2 like a usage error but without the
// usage text, which would bury the path and the reason.
type InputError struct {
	Path string
	Err  error
}

func (e *InputError) Error() string {
	if e.Path == "" {
		return e.Err.Error()
	}
	return fmt.Sprintf("%s: %v", e.Path, e.Err)
}
func (e *InputError) Unwrap() error { return e.Err }

// ErrSilent is returned by a command that already reported its failure
// (validate prints the issues on stdout) and wants exit code 1 with no
// further message.
var ErrSilent = errors.New("silent failure")

// ExitStatuser is an error that decides the exit code itself: `twasm
// record -- CMD` exits with the agent's exit code.
type ExitStatuser interface {
	error
	ExitStatus() int
}

// ExitCode maps a command's error to the process exit code.
func ExitCode(err error) int {
	var fe *FlagError
	var ie *InputError
	var es ExitStatuser
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &es):
		return es.ExitStatus()
	case errors.Is(err, context.Canceled):
		return ExitCancelled
	case errors.As(err, &fe), errors.As(err, &ie):
		return ExitUsage
	}
	return ExitFailure
}

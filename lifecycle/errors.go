package lifecycle

import (
	"errors"
	"fmt"
	"strings"

	"github.com/twasm/twasm/internal/vocab"
)

// Sentinel errors. Every error this package returns for misuse wraps one of
// them, so callers can tell misuse from a failing step.
var (
	// ErrInvalidName is wrapped when a run, step or tool name is unusable:
	// empty, or (for steps) not a single path segment.
	ErrInvalidName = errors.New("lifecycle: invalid name")
	// ErrInvalidKind is wrapped when a step kind is outside the grammar of
	// [transcript.StepKind.Valid] or is the run-only kind "workflow".
	ErrInvalidKind = errors.New("lifecycle: invalid step kind")
	// ErrEnded is wrapped when something is recorded in a run or step whose
	// completion has already been written: the event would fall outside
	// its bracket, so it is refused instead.
	ErrEnded = errors.New("lifecycle: already ended")
	// ErrReservedType is wrapped when a caller tries to record a run.* or
	// step.* event through a step: those are written by this package only,
	// so that every bracket is opened and closed exactly once.
	ErrReservedType = errors.New("lifecycle: event type is reserved for the lifecycle")
)

// errUnknownTool is wrapped by [Router.Call] for a name that was never
// registered.
var errUnknownTool = errors.New("lifecycle: unknown tool")

// errParentEnded is the error recorded for a sub-run (see [Step.SubRun])
// that its caller never ended before the parent run ended.
var errParentEnded = errors.New("lifecycle: parent run ended before the sub-run")

// StepError reports which step failed. Only the innermost failing step
// wraps an error, so a failure deep in the tree reads "step
// per_file.lint (iteration 2): ..." and not a chain of every ancestor.
type StepError struct {
	Path      string
	Iteration int
	Attempt   int
	Err       error
}

// Error names the step (path, and iteration and attempt when not 0) and
// the error it failed with.
func (e *StepError) Error() string {
	s := fmt.Sprintf("step %s", e.Path)
	if e.Iteration != 0 || e.Attempt != 0 {
		s += fmt.Sprintf(" (iteration %d", e.Iteration)
		if e.Attempt != 0 {
			s += fmt.Sprintf(", attempt %d", e.Attempt)
		}
		s += ")"
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns the error the step failed with.
func (e *StepError) Unwrap() error { return e.Err }

// PanicError carries a panic across goroutines: a panicking parallel
// branch is recorded as failed and then the panic is raised again, as a
// *PanicError, in the goroutine that called [Step.Parallel], because a
// panic cannot cross goroutines by itself.
type PanicError struct {
	Value any
	Stack []byte // stack of the goroutine that panicked
}

// Error is "panic: " and the panic value.
func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// Unwrap returns the panic value when it is an error.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// errGoexit stands for runtime.Goexit (t.FailNow in a test) inside a step:
// the goroutine is going away, but the step's completion is still written.
var errGoexit = errors.New("goroutine exited (runtime.Goexit) inside the step")

// wrapStep attaches the step's identity to err unless an inner step already
// did.
func wrapStep(err error, path string, iteration, attempt int) error {
	if err == nil {
		return nil
	}
	if se := (*StepError)(nil); errors.As(err, &se) {
		return err
	}
	if pe := (*PanicError)(nil); errors.As(err, &pe) {
		return err
	}
	return &StepError{Path: path, Iteration: iteration, Attempt: attempt, Err: err}
}

// validName reports whether name can be one segment of a step path.
func validName(name string) bool {
	return name != "" && !strings.Contains(name, ".") && validStepPath(name) == nil
}

// validStepPath checks a step path as given from outside (see
// vocab.StepPath); the error wraps [ErrInvalidName].
func validStepPath(path string) error {
	if why := vocab.StepPath(path); why != "" {
		return fmt.Errorf("%w: %s", ErrInvalidName, why)
	}
	return nil
}

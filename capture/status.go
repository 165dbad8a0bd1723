package capture

import (
	"errors"

	"github.com/twasm/twasm/transcript"
)

// ErrAgent is matched (errors.Is) by the error an agent step ends with
// when its agent ended in error or incomplete: the step did not succeed,
// and the run records it with the agent's status (lifecycle reads it from
// the error), but the capture itself worked. Commands that capture
// (record, import, renormalize) return that error from the step function,
// so that the same bytes give the same step and run status whichever
// command read them, and tell it from a failure to capture with
// errors.Is(err, ErrAgent). Its message is the agent's status and error,
// e.g. "agent error: rate limited".
var ErrAgent = errors.New("agent did not end ok")

type agentError struct{ res *transcript.AgentResult }

func (e *agentError) Error() string {
	if e.res.Error != "" {
		return "agent " + e.res.Status + ": " + e.res.Error
	}
	return "agent " + e.res.Status
}

func (e *agentError) Is(target error) bool { return target == ErrAgent }

// Status is the agent's status: lifecycle records an agent step (and the
// run it ends) that stopped without a terminal event as incomplete, not
// as error (spec 6.7).
func (e *agentError) Status() string { return e.res.Status }

// ended is how a sub-agent's child run ended, when not ok: its status
// (error, incomplete or cancelled) and why.
type ended struct{ status, text string }

func (e *ended) Error() string  { return e.text }
func (e *ended) Status() string { return e.status }

// ResultError returns nil when res is ok (or nil), else an error matching
// [ErrAgent].
func ResultError(res *transcript.AgentResult) error {
	if res == nil || res.Status == transcript.StatusOK {
		return nil
	}
	return &agentError{res: res}
}

package capture

import (
	"errors"

	"github.com/twasm/twasm/transcript"
)

// AgentError is the error an agent step ends with when its agent ended
// in error or incomplete: the step failed, and the run records it, but
// the capture itself worked. Commands that capture (record, import,
// renormalize) return it from the step function, so that the same bytes
// give the same step and run status whichever command read them, and
// tell it from a failure to capture with [errors.As].
type AgentError struct {
	Result *transcript.AgentResult
}

func (e *AgentError) Error() string {
	if e.Result.Error != "" {
		return "agent " + e.Result.Status + ": " + e.Result.Error
	}
	return "agent " + e.Result.Status
}

// ResultError returns nil when res is ok (or nil), else an *AgentError.
func ResultError(res *transcript.AgentResult) error {
	if res == nil || res.Status == transcript.StatusOK {
		return nil
	}
	return &AgentError{Result: res}
}

// IsAgentError reports whether err is (or wraps) an *AgentError.
func IsAgentError(err error) bool {
	var e *AgentError
	return errors.As(err, &e)
}

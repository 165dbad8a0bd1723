package capture

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/transcript"
)

// Source is the output of one agent step that exists already: a saved
// stream, a native session log, the raw capture of an earlier recording.
type Source struct {
	// Stdout is the provider output, read to its end.
	Stdout io.Reader
	// Stderr, when set, is the agent's stderr: kept beside the raw
	// capture, never parsed.
	Stderr io.Reader
	// ExitCode is the agent process's exit code, when there was a
	// process: without a terminal event, a non-zero code makes the step
	// "error" (spec 6.7).
	ExitCode *int
	// Replay, when set, is fed to the plugin before Stdout with its
	// output dropped and nothing kept ([Agent.Replay]): what an earlier
	// step read of the same session (an archived session's earlier parts).
	Replay io.Reader
}

// Result is what [Run] and [Agent.Finish] return: the step's result, as
// written into the transcript, and the raw lines the plugin said nothing
// about.
type Result struct {
	*transcript.AgentResult
	// Silent counts the raw lines that produced no record and were neither
	// declared ignored nor counted unmapped by the plugin (spec 6.8 wants
	// none); SilentLines are the first few of them.
	Silent      int
	SilentLines []int
}

// Run is the capture pipeline for output that exists already: `twasm
// record --input`, `twasm import` and `twasm renormalize` all capture
// through it, so the same bytes give the same transcript whichever
// command read them. It starts an [Agent] in step (opts as for [Start]),
// reads src.Stdout to its end, keeps src.Stderr, finishes with
// src.ExitCode and sets the step's result.
//
// The error is a failure to capture (wrapping [ErrRead] when src.Stdout
// failed, or ctx's error), or, when everything was captured but the agent
// did not end ok, an error matching [ErrAgent]. Return it from the step function: the
// step and the run then record the agent's status, the same way for every
// caller. The result is returned whenever the step got one, errors or
// not.
func Run(ctx context.Context, step *lifecycle.Step, src Source, opts Options) (*Result, error) {
	if src.Stdout == nil {
		return nil, errors.New("capture: no output to read")
	}
	a, err := Start(ctx, step, opts)
	if err != nil {
		return nil, err
	}
	var feedErr error
	if src.Replay != nil {
		feedErr = a.Replay(ctx, src.Replay, nil)
	}
	if feedErr == nil {
		feedErr = a.readFrom(ctx, src.Stdout)
	}
	if feedErr == nil && src.Stderr != nil {
		feedErr = a.copyStderr(src.Stderr)
	}
	out, err := a.Finish(context.WithoutCancel(ctx), src.ExitCode)
	if err := errors.Join(feedErr, err); err != nil {
		return out, err
	}
	return out, ResultError(out.AgentResult)
}

// copyStderr keeps r as the agent's stderr.
func (a *Agent) copyStderr(r io.Reader) error {
	buf := make([]byte, 64<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if ferr := a.FeedStderr(buf[:n]); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("capture: read stderr: %w", err)
		}
	}
}

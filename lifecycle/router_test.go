package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/twasm/twasm/transcript"
)

func TestRouter(t *testing.T) {
	toolErr := errors.New("disk on fire")
	var rt Router // the zero value is usable
	noErr(t, rt.Register("echo", transcript.ToolOther, func(_ context.Context, in json.RawMessage) (string, error) {
		return string(in), nil
	}))
	noErr(t, rt.Register("fail", transcript.ToolExecute, func(context.Context, json.RawMessage) (string, error) {
		return "partial", toolErr
	}))
	noErr(t, rt.Register("wait", "", func(ctx context.Context, _ json.RawMessage) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}))
	noErr(t, rt.Register("quiet", transcript.ToolOther, func(context.Context, json.RawMessage) (string, error) {
		return "", nil
	}))
	noErr(t, rt.Register("boom", transcript.ToolThink, func(context.Context, json.RawMessage) (string, error) {
		panic("tool exploded")
	}))

	tests := []struct {
		name       string
		tool       string
		input      string
		cancel     bool
		panics     bool
		wantOut    string
		wantErr    error
		wantStatus string
		wantInput  string
		wantText   string
		wantKind   transcript.ToolKind
		noOutput   bool // the result has no output (the tool did not return)
	}{
		{name: "ok", tool: "echo", input: `{"a": 1}`, wantOut: `{"a": 1}`, wantStatus: "ok", wantInput: `{"a":1}`, wantKind: transcript.ToolOther},
		{name: "empty input", tool: "echo", wantOut: `{}`, wantStatus: "ok", wantInput: `{}`, wantKind: transcript.ToolOther},
		{name: "tool error", tool: "fail", input: `{}`, wantOut: "partial", wantErr: toolErr, wantStatus: "error", wantInput: `{}`, wantText: "disk on fire", wantKind: transcript.ToolExecute},
		{name: "unknown tool", tool: "nope", input: `{"x":true}`, wantErr: errUnknownTool, wantStatus: "error", wantInput: `{"x":true}`, wantText: "lifecycle: unknown tool: nope", noOutput: true},
		{name: "input not JSON", tool: "echo", input: `ls -l`, wantErr: errors.New(""), wantStatus: "error", wantInput: `"ls -l"`, wantText: "input is not valid JSON", wantKind: transcript.ToolOther, noOutput: true},
		{name: "cancelled", tool: "wait", input: `{}`, cancel: true, wantErr: context.Canceled, wantStatus: "cancelled", wantInput: `{}`, wantText: "context canceled"},
		{name: "panic", tool: "boom", input: `{}`, panics: true, wantStatus: "error", wantInput: `{}`, wantText: "panic: tool exploded", wantKind: transcript.ToolThink, noOutput: true},
		{name: "empty output", tool: "quiet", input: `{}`, wantStatus: "ok", wantInput: `{}`, wantKind: transcript.ToolOther},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out string
			var callErr error
			evs, _ := doRun(t, func(ctx context.Context, r *Step) error {
				return r.ForEach(ctx, "loop", 2, func(ctx context.Context, i int, b *Step) error {
					if i == 0 {
						return nil
					}
					return b.Step(ctx, "agent", transcript.KindAgent, func(ctx context.Context, s *Step) error {
						if tc.cancel {
							var cancel context.CancelFunc
							ctx, cancel = context.WithCancel(ctx)
							cancel()
						}
						call := func() { out, callErr = rt.Call(ctx, s, tc.tool, json.RawMessage(tc.input)) }
						if tc.panics {
							eq(t, "tool exploded", panics(t, call))
							return nil
						}
						call()
						return nil
					})
				})
			})
			if !tc.panics {
				eq(t, tc.wantOut, out)
				if tc.wantErr != nil {
					isErr(t, callErr)
					if tc.wantErr.Error() != "" {
						errIs(t, callErr, tc.wantErr)
					}
				} else {
					noErr(t, callErr)
				}
			}
			calls := find(evs, transcript.ToolCall, "")
			results := find(evs, transcript.ToolResult, "")
			hasLen(t, calls, 1)
			hasLen(t, results, 1)
			c, res := calls[0], results[0]
			for _, ev := range []*transcript.Event{c, res} {
				eq(t, "loop.agent", ev.Path)
				eq(t, 1, ev.Iteration)
				eq(t, transcript.FidelityRouter, ev.Tool().Fidelity)
				eq(t, tc.tool, ev.Tool().Name)
				eq(t, tc.wantKind, ev.Tool().Kind)
			}
			notEmpty(t, c.Tool().CallID)
			eq(t, c.Tool().CallID, res.Tool().CallID)
			isTrue(t, c.Seq < res.Seq)
			eq(t, tc.wantInput, string(c.Tool().Input))
			eq(t, tc.wantStatus, res.Tool().Status)
			eq(t, tc.wantText, res.Tool().Error)
			eq(t, tc.wantOut, res.Tool().Output)
			eq(t, !tc.noOutput, res.Tool().HasOutput)
		})
	}
}

func TestRouterMisuse(t *testing.T) {
	rt := &Router{}
	fn := func(context.Context, json.RawMessage) (string, error) { return "", nil }
	noErr(t, rt.Register("a", "", fn))
	errIs(t, rt.Register("a", "", fn), ErrInvalidName)
	errIs(t, rt.Register("", "", fn), ErrInvalidName)
	isErr(t, rt.Register("b", "teleport", fn))
	isErr(t, rt.Register("c", "", nil))
	_, err := rt.Call(context.Background(), nil, "a", nil)
	isErr(t, err)

	// A call through an ended step records nothing and calls nothing.
	called := false
	noErr(t, rt.Register("d", "", func(context.Context, json.RawMessage) (string, error) { called = true; return "", nil }))
	var kept *Step
	evs, err := doRun(t, func(ctx context.Context, r *Step) error {
		if err := r.Step(ctx, "s", transcript.KindAgent, func(_ context.Context, s *Step) error { kept = s; return nil }); err != nil {
			return err
		}
		_, err := rt.Call(ctx, kept, "d", nil)
		errIs(t, err, ErrEnded)
		return nil
	})
	noErr(t, err)
	isTrue(t, !called)
	hasLen(t, evs, 4)
}

func TestMessages(t *testing.T) {
	var sink *Step
	evs, err := doRun(t, func(ctx context.Context, r *Step) error {
		return r.Step(ctx, "review", transcript.KindAgent, func(ctx context.Context, s *Step) error {
			sink = s
			if err := s.UserMessage(ctx, "Fix the bug.", "You are terse."); err != nil {
				return err
			}
			if err := s.UserMessage(ctx, "Again.", ""); err != nil {
				return err
			}
			in := []transcript.Block{
				{Type: transcript.BlockThinking, Thinking: "hmm"},
				{Type: transcript.BlockText, Fidelity: transcript.FidelityRouter, Text: "done"},
			}
			if err := s.AssistantMessage(ctx, in...); err != nil {
				return err
			}
			eq(t, transcript.Fidelity(""), in[0].Fidelity, "caller's blocks untouched")
			// A plugin host records events through the step; whatever
			// path/iteration/run ids they carry is replaced.
			ev := &transcript.Event{
				Seq: 99, RunID: "other", Path: "elsewhere", Iteration: 7, ChildRunID: "11111111-1111-4111-8111-111111111111",
				Type:    transcript.ToolCall,
				Payload: &transcript.ToolPayload{Name: "Task", CallID: "toolu_1", Fidelity: transcript.FidelityAgentEmitted},
			}
			if err := sink.Record(ctx, ev); err != nil {
				return err
			}
			eq(t, "elsewhere", ev.Path, "the caller's event is not modified")
			errIs(t, s.Record(ctx, &transcript.Event{Type: transcript.StepCompleted, Payload: &transcript.StepPayload{}}), ErrReservedType)
			errIs(t, s.Record(ctx, &transcript.Event{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{}}), ErrReservedType)
			isErr(t, s.Record(ctx, nil))
			isErr(t, s.Record(ctx, &transcript.Event{Type: "bogus.type"}))
			isErr(t, s.SetResult(func() {}))
			return nil
		})
	})
	noErr(t, err)
	users := find(evs, transcript.MessageUser, "review")
	hasLen(t, users, 2)
	first := users[0].Message()
	eq(t, "user", first.Role)
	hasLen(t, first.Blocks, 2)
	eq(t, transcript.OriginSystemPrompt, first.Blocks[0].Origin)
	eq(t, "You are terse.", first.Blocks[0].Text)
	eq(t, transcript.OriginPrompt, first.Blocks[1].Origin)
	eq(t, "Fix the bug.", first.Blocks[1].Text)
	for _, b := range first.Blocks {
		eq(t, transcript.BlockText, b.Type)
		eq(t, transcript.FidelityRouter, b.Fidelity)
	}
	hasLen(t, users[1].Message().Blocks, 1)
	eq(t, transcript.OriginPrompt, users[1].Message().Blocks[0].Origin)

	asst := find(evs, transcript.MessageAssistant, "review")[0].Message()
	eq(t, "assistant", asst.Role)
	eq(t, transcript.FidelityAgentEmitted, asst.Blocks[0].Fidelity)
	eq(t, transcript.FidelityRouter, asst.Blocks[1].Fidelity)

	sunk := find(evs, transcript.ToolCall, "review")
	hasLen(t, sunk, 1)
	eq(t, 0, sunk[0].Iteration)
	eq(t, "11111111-1111-4111-8111-111111111111", sunk[0].ChildRunID)
}

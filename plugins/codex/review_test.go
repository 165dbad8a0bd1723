//go:build !wasip1

package codex_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/codex"
	"github.com/twasm/twasm/transcript"
)

// TestReviewExit: a /review's end is read wherever Codex reports it,
// whatever else of the review the input holds (openai/codex
// codex-rs/core/src/tasks/review.rs: exit_review_mode records a user
// message of its own, sends ExitedReviewMode {review_output}, then
// records its rendering of the output as an assistant message, "Review
// was interrupted. Please re-run /review and wait for it to complete."
// when there is none; review_output is None when the review was
// aborted, which a turn_aborted follows, and when the reviewer's
// conversation ended without completing, which a task_complete follows;
// builds that record turn items write the same end as an item_completed
// whose item is an ExitedReviewMode {id, review_output}, the app
// server's codex/event stream sends the events as they are):
//   - the findings are the review's result: an assistant message, once,
//     that answers the turn, Codex's rendering of them left out;
//   - a review that ended without findings and was not aborted failed:
//     the turn is an error, and Codex's "Review was interrupted" is not
//     the model's answer;
//   - one that was aborted is incomplete.
//
// Before, the legacy stream counted the review's events unmapped and
// took Codex's rendering for the answer, a review that ended without
// findings answered its turn with "Review was interrupted" (ok), and
// an ExitedReviewMode item was ignored (no result).
func TestReviewExit(t *testing.T) {
	const (
		output   = `{"findings":[{"title":"[P1] Off-by-one in loop","body":"The loop skips the last item.","confidence_score":0.8,"priority":1,"code_location":{"absolute_file_path":"/w/main.go","line_range":{"start":10,"end":12}}}],"overall_correctness":"patch is incorrect","overall_explanation":"The patch is mostly fine.","overall_confidence_score":0.7}`
		findings = "The patch is mostly fine.\n\n[P1] Off-by-one in loop\n/w/main.go:10-12\nThe loop skips the last item.\n\nOverall correctness: patch is incorrect"
		rendered = "The patch is mostly fine.\n\nReview comment:\n\n- [P1] Off-by-one in loop — /w/main.go:10-12"
		stopped  = "Review was interrupted. Please re-run /review and wait for it to complete."
	)
	ev, item := rolloutEvent, rolloutItem
	legacy := func(msg string) string { return `{"id":"1","msg":` + msg + `}` }
	var (
		meta          = `{"timestamp":"t","type":"session_meta","payload":{"id":"s1","cli_version":"0.160.0"}}`
		start         = ev(`{"type":"task_started","turn_id":"u1"}`)
		noAnswer      = ev(`{"type":"task_complete","turn_id":"u1","last_agent_message":null}`)
		aborted       = ev(`{"type":"turn_aborted","reason":"interrupted"}`)
		exited        = ev(`{"type":"exited_review_mode","review_output":` + output + `}`)
		exitedNone    = ev(`{"type":"exited_review_mode","review_output":null}`)
		userFailed    = item(`{"type":"message","id":"review:rollout:user","role":"user","content":[{"type":"input_text","text":"<user_action>\n  <context>User initiated a review task, but was interrupted. If user asks about this, tell them to re-initiate a review with ` + "`/review`" + ` and wait for it to complete.</context>\n  <action>review</action>\n  <results>\n  None.\n  </results>\n</user_action>"}]}`)
		echoStopped   = item(`{"type":"message","id":"review:rollout:assistant","role":"assistant","content":[{"type":"output_text","text":"` + stopped + `"}]}`)
		echoStoppedEv = ev(`{"type":"agent_message","message":"` + stopped + `"}`)
		itemEntered   = ev(`{"type":"item_completed","thread_id":"s1","turn_id":"u1","item":{"type":"EnteredReviewMode","id":"r1","target":{"type":"uncommittedChanges"},"user_facing_hint":"current changes"},"completed_at_ms":1}`)
		itemExited    = ev(`{"type":"item_completed","thread_id":"s1","turn_id":"u1","item":{"type":"ExitedReviewMode","id":"r2","review_output":` + output + `},"completed_at_ms":2}`)
		itemExitedNil = ev(`{"type":"item_completed","thread_id":"s1","turn_id":"u1","item":{"type":"ExitedReviewMode","id":"r2","review_output":null},"completed_at_ms":2}`)

		lStart      = legacy(`{"type":"task_started","model_context_window":272000}`)
		lEntered    = legacy(`{"type":"entered_review_mode","target":{"type":"uncommittedChanges"},"user_facing_hint":"current changes"}`)
		lExited     = legacy(`{"type":"exited_review_mode","review_output":` + output + `}`)
		lExitedNone = legacy(`{"type":"exited_review_mode","review_output":null}`)
		lEcho       = legacy(`{"type":"agent_message","message":"` + strings.ReplaceAll(rendered, "\n", `\n`) + `"}`)
		lStopped    = legacy(`{"type":"agent_message","message":"` + stopped + `"}`)
		lDone       = legacy(`{"type":"task_complete","last_agent_message":null}`)
		lAborted    = legacy(`{"type":"turn_aborted","reason":"interrupted"}`)
	)
	tests := []struct {
		name      string
		lines     []string
		status    string
		errText   string
		assistant []string
	}{
		{"rollout: the exit event alone", []string{meta, start, exited, noAnswer}, "ok", "", []string{findings}},
		{"rollout: no findings, not aborted", []string{meta, start, userFailed, exitedNone, echoStopped, echoStoppedEv, noAnswer}, "error", "review ended without findings", nil},
		{"rollout: no findings, aborted", []string{meta, start, exitedNone, aborted}, "incomplete", "turn aborted", nil},
		{"rollout: the exit item alone", []string{meta, start, itemExited, noAnswer}, "ok", "", []string{findings}},
		{"rollout: the items of a review", []string{meta, start, itemEntered, itemExited, noAnswer}, "ok", "", []string{findings}},
		{"rollout: the exit event and item, once", []string{meta, start, exited, itemExited, noAnswer}, "ok", "", []string{findings}},
		{"rollout: the exit item without findings, aborted", []string{meta, start, itemEntered, itemExitedNil, aborted}, "incomplete", "turn aborted", nil},
		{"legacy stream: a review", []string{lStart, lEntered, lExited, lEcho, lDone}, "ok", "", []string{findings}},
		{"legacy stream: the exit event alone", []string{lStart, lExited, lDone}, "ok", "", []string{findings}},
		{"legacy stream: no findings, not aborted", []string{lStart, lEntered, lExitedNone, lStopped, lDone}, "error", "review ended without findings", nil},
		{"legacy stream: no findings, aborted", []string{lStart, lEntered, lExitedNone, lAborted}, "incomplete", "turn aborted", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := plugintest.Run(t, codex.Plugin, []byte(strings.Join(tt.lines, "\n")+"\n"), normalize.Options{Provider: "codex"})
			r := o.Result
			if r.Status != tt.status || !strings.Contains(r.Error, tt.errText) {
				t.Errorf("status %q (%q); want %q holding %q", r.Status, r.Error, tt.status, tt.errText)
			}
			if len(r.Unmapped) != 0 {
				t.Errorf("unmapped %v; want none", r.Unmapped)
			}
			var assistant []string
			for _, it := range o.Sink.Items {
				if it.Event == nil || it.Event.Type != transcript.MessageAssistant {
					continue
				}
				for _, b := range it.Event.Message().Blocks {
					if b.Type == transcript.BlockText {
						assistant = append(assistant, b.Text)
					}
				}
			}
			if !slices.Equal(assistant, tt.assistant) {
				t.Errorf("assistant texts %q; want %q", assistant, tt.assistant)
			}
			if tt.assistant != nil && r.FinalText != findings {
				t.Errorf("final text %q; want the findings", r.FinalText)
			}
		})
	}
}

// TestReviewFailedEverywhere: a review that failed is an error in every
// format Codex writes it in (openai/codex codex-rs/core/src/tasks/review.rs
// and review_format.rs):
//   - the reviewer's last message empty: parse_review_output_event gives
//     a review_output with no explanation and no findings, and Codex
//     renders "Reviewer failed to output a response." (rollout, legacy
//     stream);
//   - codex exec --json (codex exec review) writes no item for the
//     review's start or end (event_processor_with_jsonl_output.rs maps
//     neither), only the assistant message exit_review_mode records,
//     "Review was interrupted. Please re-run /review and wait for it to
//     complete." when the review ended without output (the reviewer's
//     error event before it), or the fallback text, then turn.completed.
//
// Before, each read ok: the empty review_output was declared ignored and
// its turn completed, and exec's turn.completed was ok whatever the
// message said.
func TestReviewFailedEverywhere(t *testing.T) {
	const (
		empty       = `{"findings":[],"overall_correctness":"","overall_explanation":"","overall_confidence_score":0.0}`
		interrupted = "Review was interrupted. Please re-run /review and wait for it to complete."
		fallback    = "Reviewer failed to output a response."
		limit       = "You've hit your usage limit. Try again at 1:16 PM."
	)
	legacy := func(msg string) string { return `{"id":"1","msg":` + msg + `}` }
	var (
		meta      = `{"timestamp":"t","type":"session_meta","payload":{"id":"s1","cli_version":"0.160.0"}}`
		start     = rolloutEvent(`{"type":"task_started","turn_id":"u1"}`)
		exitEmpty = rolloutEvent(`{"type":"exited_review_mode","review_output":` + empty + `}`)
		echo      = rolloutItem(`{"type":"message","id":"review:rollout:assistant","role":"assistant","content":[{"type":"output_text","text":"` + fallback + `"}]}`)
		noAnswer  = rolloutEvent(`{"type":"task_complete","turn_id":"u1","last_agent_message":null}`)
		lStart    = legacy(`{"type":"task_started"}`)
		lExit     = legacy(`{"type":"exited_review_mode","review_output":` + empty + `}`)
		lEcho     = legacy(`{"type":"agent_message","message":"` + fallback + `"}`)
		lDone     = legacy(`{"type":"task_complete","last_agent_message":null}`)
		thread    = `{"type":"thread.started","thread_id":"019b1a2c-bbbb-7aaa-9bbb-0123456789ab"}`
		turn      = `{"type":"turn.started"}`
		errEv     = `{"type":"error","message":"` + limit + `"}`
		msg       = func(text string) string {
			return `{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"` + text + `"}}`
		}
		done = `{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":2}}`
	)
	tests := []struct {
		name            string
		lines           []string
		status, errText string
	}{
		{"rollout: an empty review", []string{meta, start, exitEmpty, echo, noAnswer}, "error", "Reviewer failed to output a response."},
		{"legacy stream: an empty review", []string{lStart, lExit, lEcho, lDone}, "error", "Reviewer failed to output a response."},
		{"exec: a review interrupted by an error", []string{thread, turn, errEv, msg(interrupted), done}, "error", "review ended without findings"},
		{"exec: an empty review", []string{thread, turn, msg(fallback), done}, "error", "Reviewer failed to output a response."},
		{"exec: a review's findings", []string{thread, turn, msg("Looks good: no issues found."), done}, "ok", ""},
		{"exec: a failed review, then a turn that completes", []string{thread, turn, msg(interrupted), done, turn, msg("Done."), done}, "ok", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runRollout(t, tt.lines).Result
			if r.Status != tt.status || !strings.Contains(r.Error, tt.errText) {
				t.Errorf("status %q (%q); want %q holding %q", r.Status, r.Error, tt.status, tt.errText)
			}
			if len(r.Unmapped) != 0 {
				t.Errorf("unmapped %v; want none", r.Unmapped)
			}
		})
	}
}

package codex

import (
	"strconv"
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// exitedReview handles the end of a /review (openai/codex
// codex-rs/core/src/tasks/review.rs, exit_review_mode): its
// review_output r, in a rollout's or the legacy stream's
// exited_review_mode event or a rollout's item_completed whose item is an
// ExitedReviewMode (builds that record turn items), native being the
// line's type. The reviewer (a sub-agent of its own) reports its
// findings in review_output ({findings, overall_correctness,
// overall_explanation, overall_confidence_score}): the review's result,
// an assistant message, the answer of the review's turn (its final
// text). r is null when the review ended without them: aborted (a
// turn_aborted follows: incomplete), or its reviewer's conversation
// ended without completing (a task_complete follows): the review failed,
// the turn is an error (reviewFailed). Either way Codex then records an
// assistant message of its own rendering (the findings, or "Review was
// interrupted. Please re-run /review and wait for it to complete."), an
// echo that is declared ignored (reviewEchoed, legacyReviewEchoed), so
// the findings are there once and Codex's words are not taken for the
// model's answer. A turn's review ends once: a second report of it (a
// build that wrote both the event and the item) is declared ignored.
func (n *normalizer) exitedReview(out *sdk.Out, r abi.Value, ts sdk.Str, native string) {
	if n.reviewed {
		out.Ignored(sdk.S(native))
		return
	}
	n.reviewed, n.reviewEcho = true, true
	if r.Kind() != abi.KindObject {
		out.Warn("codex: " + reviewFailed)
		if n.turnErr == "" {
			n.turnErr = reviewFailed
		}
		return
	}
	text := reviewText(r)
	if text == "" {
		// The reviewer's last message said nothing Codex could read
		// as a review (an empty answer: render_review_output_text
		// falls back to "Reviewer failed to output a response."): no
		// findings, no explanation, the review failed.
		out.Warn("codex: " + reviewEmpty)
		if n.turnErr == "" {
			n.turnErr = reviewEmpty
		}
		return
	}
	n.awaitAnswer = false
	n.textMessage(out, n.newKey(), sdk.Message{Model: n.model, Time: ts}, sdk.BlockText, sdk.S(text))
	out.Final(sdk.S(text), true)
}

// reviewFailed is the error of a turn whose review ended without
// findings (exitedReview), reviewEmpty of one whose reviewer output
// nothing.
const (
	reviewFailed = "the review ended without findings (Codex: Review was interrupted)"
	reviewEmpty  = "the reviewer output no review (Codex: Reviewer failed to output a response.)"
)

// Codex's own texts for a review that failed, which it records as the
// review turn's assistant message (codex-rs/core/src/tasks/review.rs,
// exit_review_mode; review_format.rs, REVIEW_FALLBACK_MESSAGE).
const (
	reviewInterruptedText = "Review was interrupted. Please re-run /review and wait for it to complete."
	reviewFallbackText    = "Reviewer failed to output a response."
)

// execReviewFailed notes an exec-json agent message that is Codex's text
// for a failed review: codex exec --json (codex exec review) writes no
// item for a review's start or end (event_processor_with_jsonl_output.rs
// maps neither EnteredReviewMode nor ExitedReviewMode), only the message
// exit_review_mode records after it, then turn.completed. That message
// is all the stream says of the failure: the turn is an error.
func (n *normalizer) execReviewFailed(text abi.Value) {
	if n.turnErr != "" || text.Kind() != abi.KindString {
		return
	}
	switch sdk.Text(text).String() {
	case reviewInterruptedText:
		n.turnErr = reviewFailed
	case reviewFallbackText:
		n.turnErr = reviewEmpty
	}
}

// reviewText renders a review's output: its overall explanation, each
// finding (its title, file and lines, and body) and its verdict.
func reviewText(r abi.Value) string {
	var b strings.Builder
	para := func(s string) {
		if s = strings.TrimSpace(s); s == "" {
			return
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(s)
	}
	para(sdk.StringOf(r.Get("overall_explanation")).String())
	it := r.Get("findings").Iter()
	for it.Next() {
		f := it.Value()
		var s strings.Builder
		s.WriteString(sdk.StringOf(f.Get("title")).String())
		loc := f.Get("code_location")
		if path := sdk.StringOf(loc.Get("absolute_file_path")).String(); path != "" {
			s.WriteString("\n")
			s.WriteString(path)
			if start, ok := loc.Path("line_range", "start").Int(); ok {
				s.WriteString(":" + strconv.FormatInt(start, 10))
				if end, ok := loc.Path("line_range", "end").Int(); ok && end != start {
					s.WriteString("-" + strconv.FormatInt(end, 10))
				}
			}
		}
		if body := strings.TrimSpace(sdk.StringOf(f.Get("body")).String()); body != "" {
			s.WriteString("\n")
			s.WriteString(body)
		}
		para(s.String())
	}
	if c := strings.TrimSpace(sdk.StringOf(r.Get("overall_correctness")).String()); c != "" {
		para("Overall correctness: " + c)
	}
	return b.String()
}

// reviewEchoed reports whether assistant message item p is the echo of
// the review's end that exitedReview just read (the message
// exit_review_mode records right after the event). Its texts are marked
// reported, so that their agent_message event twins are not reported
// either.
func (n *normalizer) reviewEchoed(p abi.Value) bool {
	if !n.reviewEcho {
		return false
	}
	n.reviewEcho = false
	it := p.Get("content").Iter()
	for it.Next() {
		if text := it.Value().Get("text"); text.Kind() == abi.KindString {
			n.seen(nsAssistant, text, true)
		}
	}
	return true
}

// legacyReviewEchoed reports whether a legacy stream's agent_message is
// the echo of the review's end that exitedReview just read (the stream
// has no message items: the message exit_review_mode records arrives as
// this event).
func (n *normalizer) legacyReviewEchoed() bool {
	echo := n.reviewEcho
	n.reviewEcho = false
	return echo
}

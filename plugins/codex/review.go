package codex

import (
	"strconv"
	"strings"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// exitedReview handles a rollout's exited_review_mode event: the end of
// a /review, whose reviewer (a sub-agent of its own) reports its
// findings in review_output ({findings, overall_correctness,
// overall_explanation, overall_confidence_score}), null when the review
// was interrupted. The findings are the review's result: an assistant
// message, the answer of the review's turn (its final text). Codex records the same
// result right after the event as an assistant message of its own
// rendering (exit_review_mode): that echo is declared ignored (see
// messageItem), so the findings are there once.
func (n *normalizer) exitedReview(out *sdk.Out, p abi.Value, ts sdk.Str) {
	r := p.Get("review_output")
	if r.Kind() != abi.KindObject {
		out.Warn("codex: the review ended without findings (interrupted)")
		return
	}
	text := reviewText(r)
	if text == "" {
		out.Ignored(sdk.S("event_msg/exited_review_mode"))
		return
	}
	n.awaitAnswer = false
	n.reviewEcho = true
	n.textMessage(out, n.newKey(), sdk.Message{Model: n.model, Time: ts}, sdk.BlockText, sdk.S(text))
	out.Final(sdk.S(text), true)
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
// the findings an exited_review_mode just reported (the message
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

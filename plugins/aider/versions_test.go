//go:build !wasip1

package aider_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/aider"
	"github.com/twasm/twasm/transcript"
)

// history is a chat history of one session: a prompt, an answer, then
// Aider's lines after it.
func history(after ...string) []byte {
	lines := append([]string{"", "# aider chat started at 2024-06-01 10:00:00", "", "#### Fix the bug.  ", "", "Done.", ""}, after...)
	return []byte(strings.Join(lines, "\n") + "\n")
}

func runHistory(t *testing.T, raw []byte) *plugintest.Outcome {
	t.Helper()
	return plugintest.Run(t, aider.Plugin, raw, normalize.Options{Provider: "aider"})
}

func n(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

// TestUsageShapes: every shape of the usage report Aider wrote into the
// history (aider/coders/base_coder.py, Aider-AI/aider): v0.11 to v0.45
// "N prompt tokens, M completion tokens, $X cost" (d5a7aac56, the reply's
// cost, --no-stream only); v0.46 on "Tokens: ... Cost: $X request, $Y
// session." (effa5236c; "message" from 8cb59902a); v0.80 on, a reply
// that read and wrote the cache has its "Cost: ..." on the next line,
// without "> " (f37b81457, sep "\n"). Each reply's tokens are added, the
// cost is the session's.
func TestUsageShapes(t *testing.T) {
	tests := []struct {
		name              string
		lines             []string
		in, out, hit, wrt int64
		cost              float64
	}{
		{"v0.11-v0.45: prompt and completion tokens, the reply's cost", []string{
			"> 1234 prompt tokens, 56 completion tokens, $0.004542 cost  ",
			"> 1000 prompt tokens, 44 completion tokens, $0.003660 cost  ",
		}, 2234, 100, -1, -1, 0.008202},
		{"v0.11-v0.45: no price known, no cost", []string{"> 1234 prompt tokens, 56 completion tokens  "}, 1234, 56, -1, -1, -1},
		{"v0.46: Tokens and request cost", []string{"> Tokens: 1,234 sent, 56 received. Cost: $0.0045 request, $0.0045 session.  "}, 1234, 56, -1, -1, 0.0045},
		{"v0.80: the cost on the next line", []string{
			"> Tokens: 3.2k sent, 1.1k cache write, 2.0k cache hit, 222 received.",
			"Cost: $0.01 message, $0.05 session.  ",
		}, 3200, 222, 2000, 1100, 0.05},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := runHistory(t, history(tt.lines...))
			u := o.Result.Usage
			if u == nil {
				t.Fatalf("no usage; want input %d", tt.in)
			}
			if n(u.InputTokens) != tt.in || n(u.OutputTokens) != tt.out || n(u.CacheReadTokens) != tt.hit || n(u.CacheWriteTokens) != tt.wrt {
				t.Errorf("usage in %d out %d hit %d write %d; want %d %d %d %d", n(u.InputTokens), n(u.OutputTokens), n(u.CacheReadTokens), n(u.CacheWriteTokens), tt.in, tt.out, tt.hit, tt.wrt)
			}
			cost := -1.0
			if o.Result.CostUSD != nil {
				cost = *o.Result.CostUSD
			}
			if d := cost - tt.cost; d > 1e-9 || d < -1e-9 {
				t.Errorf("cost %v; want %v", cost, tt.cost)
			}
			if len(o.Result.Unmapped) != 0 {
				t.Errorf("unmapped %v", o.Result.Unmapped)
			}
		})
	}
}

// TestConfirmShapes: each shape of confirm_ask's line (aider/io.py):
// v0.5-v0.51 "Question? y" (what the user typed; yes unless it starts
// with "y", a395d9bb5), v0.52 "Question? [Y/n] y" (2dc2b45d1), v0.53 on
// "Question? (Y)es/(N)o[/(A)ll/(S)kip all][/(D)on't ask again] [Yes]: y",
// the first letter, "a" a yes and "s", "d" a no (c1642b5ec). A
// confirmation answered from an earlier "(A)ll" is echoed as a "####"
// line, then logged as Aider's: one call, no prompt.
func TestConfirmShapes(t *testing.T) {
	tests := []struct {
		name, line, status string
	}{
		{"v0.51 yes", "> Add these files to the chat? y  ", "ok"},
		{"v0.51 no", "> Allow creation of new file foo.py? n  ", "denied"},
		{"v0.30 typed no", "> Commit before the chat proceeds? No  ", "denied"},
		{"v0.52 yes", "> Add these files to the chat? [Y/n] y  ", "ok"},
		{"v0.52 no", "> Run pip install? [y/N] n  ", "denied"},
		{"v0.53 all", "> Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all [Yes]: a  ", "ok"},
		{"v0.53 skip all", "> Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all [Yes]: s  ", "denied"},
		{"v0.58 don't ask again", "> Open URL for more info? (Y)es/(N)o/(D)on't ask again [Yes]: d  ", "denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := runHistory(t, history(tt.line))
			st, ok := o.ResultStatus("aider-1")
			if !ok || st != tt.status {
				t.Errorf("confirm result %q (%v); want %q; trace %q", st, ok, tt.status, o.ToolTrace())
			}
		})
	}
	t.Run("echo of a group's choice", func(t *testing.T) {
		o := runHistory(t, history(
			"#### Add src/b.py to the chat? (Y)es/(N)o/(A)ll/(S)kip all [Yes]: all  ",
			"> Add src/b.py to the chat? (Y)es/(N)o/(A)ll/(S)kip all [Yes]: a  ",
		))
		users := 0
		for _, it := range o.Sink.Items {
			if it.Event != nil && it.Event.Type == transcript.MessageUser {
				users++
			}
		}
		if tr := o.ToolTrace(); users != 1 || len(tr) != 2 {
			t.Errorf("%d prompts, trace %q; want 1 prompt and one confirm", users, tr)
		}
	})
}

// TestErrorShapes: an API error Aider could not retry, as each version
// logged it (base_coder.py's send_message): v0.3x-v0.5x "BadRequestError:
// <litellm's message>" and "Unexpected error: <message>", later
// "litellm.<Class>: message". Each is one of the step's errors.
func TestErrorShapes(t *testing.T) {
	tests := []struct {
		name, line, code, msg string
	}{
		{"litellm", "> litellm.RateLimitError: AnthropicException - rate limited  ", "RateLimitError", "AnthropicException - rate limited"},
		{"v0.40 BadRequestError", "> BadRequestError: litellm.BadRequestError: AnthropicException - prompt is too long  ", "BadRequestError", "AnthropicException - prompt is too long"},
		{"v0.40 Unexpected error, litellm", "> Unexpected error: litellm.APIConnectionError: Connection refused  ", "APIConnectionError", "Connection refused"},
		{"v0.40 Unexpected error", "> Unexpected error: Connection aborted.  ", "Unexpected error", "Connection aborted."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := runHistory(t, history(tt.line))
			errs := o.Result.Errors
			if len(errs) != 1 || errs[0].Code != tt.code || errs[0].Message != tt.msg {
				t.Errorf("errors %+v; want one, code %q, message %q", errs, tt.code, tt.msg)
			}
			if o.Result.Status != "error" {
				t.Errorf("status %q; want error (the error came after the last answer)", o.Result.Status)
			}
		})
	}
}

// TestModelShapes: the model line of Aider's announcements in each
// version (base_coder.py's get_announcements): "Model: gpt-4" (before
// v0.19), "Model: gpt-4 using diff edit format" (360846320, v0.19),
// "Models: ... with ..., weak model ..." (7ec4de865, v0.29 to v0.50),
// "Main model: ... with ..." (v0.51 on).
func TestModelShapes(t *testing.T) {
	tests := []struct{ line, model string }{
		{"> Model: gpt-4", "gpt-4"},
		{"> Model: gpt-4-1106-preview using udiff edit format  ", "gpt-4-1106-preview"},
		{"> Models: gpt-4o with diff edit format, weak model gpt-4o-mini  ", "gpt-4o"},
		{"> Model: claude-3-5-sonnet-20240620 with ♾️ diff edit format  ", "claude-3-5-sonnet-20240620"},
		{"> Main model: anthropic/claude-sonnet-4-20250514 with diff edit format, infinite output  ", "anthropic/claude-sonnet-4-20250514"},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			raw := []byte("# aider chat started at 2024-06-01 10:00:00\n\n> Aider v0.40.0  \n" + tt.line + "\n\n#### Hi.  \n\nHello.\n")
			if got := runHistory(t, raw).Result.Model; got != tt.model {
				t.Errorf("model %q; want %q", got, tt.model)
			}
		})
	}
}

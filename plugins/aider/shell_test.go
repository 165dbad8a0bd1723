//go:build !wasip1

package aider_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/transcript"
)

// TestShellCommandsAndTokenLimit: each shell command Aider ran after the
// user allowed it ("Run shell commands? ... y", then "Running <command>")
// is a call of kind execute with no result (Aider logs no exit status or
// output: dangling, so a session that ends on one reads incomplete), an
// error when Aider could not run it, cancelled when Ctrl-C stopped it;
// "Model X has hit a token limit!" is a provider error, not the model's
// text, and so is an empty response. The lines are modelled on real
// histories (Aider v0.85.1 running a bazel build's commands; Aider v0.86
// with deepseek-coder and gemini models hitting their limits), written
// for the test.
func TestShellCommandsAndTokenLimit(t *testing.T) {
	const (
		run     = "> Run shell commands? (Y)es/(N)o/(D)on't ask again [Yes]: "
		addOut  = "> Add command output to the chat? (Y)es/(N)o/(D)on't ask again [Yes]: y  "
		answer  = "#### build it  \n\nRun these:\n\n```bash\nmake clean\nmake\n```\n\n> Tokens: 1.0k sent, 20 received.  \n> make clean  \nmake  "
		limited = "> Model deepseek/deepseek-coder has hit a token limit!  "
	)
	type call struct{ name, command, status, err string }
	tests := []struct {
		name     string
		raw      string
		calls    []call // "-" status: no result
		status   string
		errCodes []string
	}{
		{
			name:   "commands ran, outcome unstated, the session ends",
			raw:    answer + "\n" + run + "y  \n> Running make clean  \n> Running make  \n" + addOut + "\n> Added 12 lines of output to the chat.  \n",
			calls:  []call{{"confirm", "", "ok", ""}, {"shell", "make clean", "-", ""}, {"shell", "make", "-", ""}, {"confirm", "", "ok", ""}},
			status: "incomplete",
		},
		{
			name:   "commands ran, outcome unstated, the session goes on",
			raw:    answer + "\n" + run + "y  \n> Running make clean  \n> You can use /undo to undo and discard each aider commit.  \n\n#### thanks  \n\nBye.\n",
			calls:  []call{{"confirm", "", "ok", ""}, {"shell", "make clean", "-", ""}},
			status: "ok",
		},
		{
			name:   "commands refused",
			raw:    answer + "\n" + run + "n  \n\n#### thanks  \n\nBye.\n",
			calls:  []call{{"confirm", "", "denied", "denied"}},
			status: "ok",
		},
		{
			name:   "a command that could not run",
			raw:    answer + "\n" + run + "y  \n> Running make clean  \n> Error running command: [Errno 2] No such file or directory: 'make'  \n",
			calls:  []call{{"confirm", "", "ok", ""}, {"shell", "make clean", "error", "Error running command: [Errno 2] No such file or directory: 'make'"}},
			status: "ok",
		},
		{
			name:   "a command interrupted",
			raw:    answer + "\n" + run + "y  \n> Running make clean  \n>  \n>  \n> ^C again to exit  \n",
			calls:  []call{{"confirm", "", "ok", ""}, {"shell", "make clean", "cancelled", "interrupted (Ctrl-C)"}},
			status: "ok",
		},
		{
			name:   "the history ends on a command",
			raw:    answer + "\n" + run + "y  \n> Running make clean  \n",
			calls:  []call{{"confirm", "", "ok", ""}, {"shell", "make clean", "-", ""}},
			status: "incomplete",
		},
		{
			name:     "an empty response",
			raw:      "#### hi  \n> Empty response received from LLM. Check your provider account?  \n",
			status:   "error",
			errCodes: []string{"empty_response"},
		},
		{
			name:     "a token limit after a partial answer",
			raw:      "#### write it all  \n\nHere is the whole file:\n\n```ruby\nclass Window\n\n>  \n>  \n" + limited + "\n> Token counts below are approximate.  \n>  \n> Input tokens: ~15,461 of 128,000  \n> Output tokens: ~3,711 of 4,096 -- possibly exceeded output limit!  \n> For more info: https://aider.chat/docs/troubleshooting/token-limits.html  \n",
			status:   "error",
			errCodes: []string{"token_limit"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runSession(t, "2025-07-02 15:27:10", "> Aider v0.85.1  ", "", strings.TrimSuffix(tt.raw, "\n"))
			var got []call
			index := map[string]int{}
			for _, e := range r.Events {
				p := e.Event.Tool()
				switch {
				case p == nil:
				case e.Event.Type == transcript.ToolCall:
					index[p.CallID] = len(got)
					got = append(got, call{p.Name, p.Command, "-", ""})
				case e.Event.Type == transcript.ToolResult:
					got[index[p.CallID]].status, got[index[p.CallID]].err = p.Status, p.Error
				}
			}
			if len(got) != len(tt.calls) {
				t.Fatalf("calls %+v, want %+v", got, tt.calls)
			}
			for i := range got {
				if got[i] != tt.calls[i] {
					t.Errorf("call %d %+v, want %+v", i, got[i], tt.calls[i])
				}
			}
			if r.Step.Status != tt.status {
				t.Errorf("status %q, want %q", r.Step.Status, tt.status)
			}
			var codes []string
			for _, e := range r.Step.Errors {
				codes = append(codes, e.Code)
			}
			if strings.Join(codes, ",") != strings.Join(tt.errCodes, ",") {
				t.Errorf("error codes %v, want %v", codes, tt.errCodes)
			}
		})
	}
}

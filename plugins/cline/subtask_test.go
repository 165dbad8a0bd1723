package cline

import (
	"testing"

	"github.com/twasm/twasm/abi/sdk"
)

// TestSubtaskReport: Roo Code's report of an ended sub-task ("Subtask
// <id> completed.\n\nResult:\n...", reopenParentFromDelegation) is told
// from a user's words that merely start so, and, written as a user text
// with no new_task call waiting (the XML protocol's call is answered, or
// there is none), it is Roo's injected context, not a prompt.
func TestSubtaskReport(t *testing.T) {
	for _, c := range []struct {
		text string
		want bool
	}{
		{"Subtask c2000000-0000-4000-8000-000000000002 completed.\n\nResult:\nWrote CHANGELOG.md.", true},
		{"Subtask 1 completed.\n\nResult:\n", true},
		{"Subtask completed.\n\nResult:\nx", false},
		{"Subtask the docs completed.\n\nResult:\nx", false},
		{"Subtask c2 completed.", false},
		{"Subtask c2 completed. Now deploy.", false},
	} {
		if got := subtaskReport(c.text); got != c.want {
			t.Errorf("subtaskReport(%q) = %v, want %v", c.text, got, c.want)
		}
		want := sdk.OriginPrompt
		if c.want {
			want = sdk.OriginInjected
		}
		if got := originOf(c.text, 2); got != want {
			t.Errorf("originOf(%q) = %q, want %q", c.text, got, want)
		}
	}
}

//go:build !wasip1

package amp_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/amp"
)

// TestFork: a thread Amp forked (createForkedThread: the parent's
// messages up to forkPointIndex copied whole, usage and all, and a
// relationship naming the parent, role "child") holds, in its run, only
// the messages after that index: the copy's answers, calls and tokens
// are the parent's run's. Every version of the thread read leaves them
// out. The parent, whose relationship names the fork (role "parent"),
// is read whole; a fork stating no forkPointIndex is read whole with a
// warning, once, that its copy counts in both runs.
func TestFork(t *testing.T) {
	usage := func(in int) string {
		return `,"usage":{"model":"claude-sonnet-4-5","inputTokens":` + strconv.Itoa(in) + `,"outputTokens":5}`
	}
	msgs := []string{
		threadMsg(0, "user", `{"type":"text","text":"Go."}`),
		strings.TrimSuffix(threadMsg(1, "assistant", `{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"cmd":"ls"}}`), "}") + usage(100) + "}",
		threadMsg(2, "user", `{"type":"tool_result","toolUseID":"toolu_1","run":{"status":"done","result":{"output":"a.go","exitCode":0}}}`),
		strings.TrimSuffix(threadMsg(3, "assistant", `{"type":"text","text":"copied answer"}`), "}") + usage(200) + "}",
		threadMsg(4, "user", `{"type":"text","text":"Now test it."}`),
		strings.TrimSuffix(threadMsg(5, "assistant", `{"type":"text","text":"own answer"}`), "}") + usage(7) + "}",
	}
	doc := func(extra string) string {
		return `{"v":3,"id":"T-2","created":1767607200000` + extra + `,"messages":[` + strings.Join(msgs, ",") + `]}` + "\n"
	}
	const child = `,"originThreadID":"T-1","relationships":[{"threadID":"T-1","type":"fork","role":"child","messageIndex":3,"createdAt":1767607300000}]`
	tests := []struct {
		name, in, texts string
		calls           int
		input           int64
		warned          bool
	}{
		{"a fork", doc(child + `,"forkPointIndex":3`), "own answer", 0, 7, false},
		{"a fork read in two versions", doc(child+`,"forkPointIndex":3`) + doc(child+`,"forkPointIndex":3`), "own answer", 0, 7, false},
		{"the parent", doc(`,"relationships":[{"threadID":"T-3","type":"fork","role":"parent","messageIndex":3,"createdAt":1767607300000}]`), "copied answer|own answer", 1, 307, false},
		{"a fork with no fork point", doc(child) + doc(child), "copied answer|own answer", 1, 307, true},
		{"not a fork", doc(""), "copied answer|own answer", 1, 307, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, texts, calls, input := plugintest.Turns(t, amp.Plugin, "amp", []byte(tt.in))
			if texts != tt.texts || calls != tt.calls || input != tt.input {
				t.Errorf("answers %q, %d calls, input %d; want %q, %d, %d", texts, calls, input, tt.texts, tt.calls, tt.input)
			}
			n := 0
			for _, w := range r.Step.Warnings {
				if strings.Contains(w, "fork of T-1") {
					n++
				}
			}
			if want := map[bool]int{true: 1}[tt.warned]; n != want {
				t.Errorf("%d fork warnings %q, want %d", n, r.Step.Warnings, want)
			}
		})
	}
}

//go:build !wasip1

package amp_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/amp"
	"github.com/twasm/twasm/transcript"
)

// TestMidTurn: `twasm sync` reads a thread file while Amp streams an
// answer into it (the assistant message's state is {type: "streaming"}
// until it is complete, cancelled or an error). A thread whose last
// message is still streaming is in the middle of a turn: incomplete. A
// later version, the answer finished, is ok, and holds the whole answer
// and its usage once (the streaming version's figures are not final).
func TestMidTurn(t *testing.T) {
	const user = `{"role":"user","messageId":0,"content":[{"type":"text","text":"Fix the parser"}],"meta":{"sentAt":1772359200000}}`
	asst := func(state, text string, out int) string {
		return `{"role":"assistant","messageId":1,"content":[{"type":"text","text":"` + text + `"}],"state":` + state +
			`,"usage":{"model":"claude-sonnet-4-5","inputTokens":10,"outputTokens":` + strconv.Itoa(out) + `,"timestamp":"2026-03-01T10:00:01Z"}}`
	}
	thread := func(msgs ...string) string { return `{"id":"T-1","messages":[` + strings.Join(msgs, ",") + `]}` }
	streamingV := asst(`{"type":"streaming"}`, "Let me", 2)
	done := asst(`{"type":"complete","stopReason":"end_turn"}`, "Let me fix it. Fixed.", 9)
	for _, tc := range []struct {
		name   string
		in     string
		status string
		texts  []string
		output int64
	}{
		{"the last answer still streaming", thread(user, streamingV), transcript.StatusIncomplete, []string{"Let me"}, 0},
		{"the last answer complete", thread(user, done), transcript.StatusOK, []string{"Let me fix it. Fixed."}, 9},
		{"read streaming, then complete", thread(user, streamingV) + "\n" + thread(user, done), transcript.StatusOK, []string{"Let me", "Let me fix it. Fixed."}, 9},
		{"read complete twice", thread(user, done) + "\n" + thread(user, done), transcript.StatusOK, []string{"Let me fix it. Fixed."}, 9},
		{"the last answer cancelled by the user: cut", thread(user, asst(`{"type":"cancelled"}`, "Let me", 2)), transcript.StatusIncomplete, []string{"Let me"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := plugintest.Run(t, amp.Plugin, []byte(tc.in+"\n"), normalize.Options{Provider: "amp"})
			if o.Result.Status != tc.status {
				t.Errorf("status %s (%q), want %s", o.Result.Status, o.Result.Error, tc.status)
			}
			plugintest.CheckTexts(t, o.Texts(plugintest.Assistant), tc.texts, false)
			var got int64
			if o.Result.Usage != nil && o.Result.Usage.OutputTokens != nil {
				got = *o.Result.Usage.OutputTokens
			}
			if got != tc.output {
				t.Errorf("output tokens %d, want %d", got, tc.output)
			}
		})
	}
}

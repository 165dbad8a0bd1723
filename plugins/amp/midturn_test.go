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

// TestStreamingCalls: a tool_use block of a message Amp is still
// streaming holds the input written so far. Its call is reported once,
// with the input of the message's finished version; a message still
// streaming when the input ends reports its calls at the end, with the
// input last read (dangling: no result can have come). Never twice,
// never lost.
func TestStreamingCalls(t *testing.T) {
	const user = `{"role":"user","messageId":0,"content":[{"type":"text","text":"Run the tests"}],"meta":{"sentAt":1772359200000}}`
	asst := func(state, name, input string) string {
		return `{"role":"assistant","messageId":1,"content":[{"type":"text","text":"Running them."},{"type":"tool_use","id":"toolu_1","name":"` + name + `","input":` + input + `}],"state":` + state +
			`,"usage":{"model":"claude-sonnet-4-5","inputTokens":10,"outputTokens":5,"timestamp":"2026-03-01T10:00:01Z"}}`
	}
	const (
		live    = `{"type":"streaming"}`
		done    = `{"type":"complete","stopReason":"tool_use"}`
		partial = `{"cmd":"go te"}`
		whole   = `{"cmd":"go test ./..."}`
		result  = `{"role":"user","messageId":2,"content":[{"type":"tool_result","toolUseID":"toolu_1","run":{"status":"done","result":{"output":"ok","exitCode":0}}}],"meta":{"sentAt":1772359203000}}`
	)
	thread := func(msgs ...string) string { return `{"id":"T-1","messages":[` + strings.Join(msgs, ",") + `]}` }
	for _, tc := range []struct {
		name     string
		docs     []string
		inputs   []string // of the tool.calls, in order
		results  int
		status   string
		dangling int
	}{
		{"streaming, then complete", []string{thread(user, asst(live, "Bash", partial)), thread(user, asst(done, "Bash", whole))}, []string{whole}, 0, transcript.StatusIncomplete, 1},
		{"streaming twice, then complete, then the result", []string{thread(user, asst(live, "Bash", `{}`)), thread(user, asst(live, "Bash", partial)), thread(user, asst(done, "Bash", whole)), thread(user, asst(done, "Bash", whole), result)}, []string{whole}, 1, transcript.StatusOK, 0},
		{"still streaming at the end: the input last read", []string{thread(user, asst(live, "Bash", `{}`)), thread(user, asst(live, "Bash", partial))}, []string{partial}, 0, transcript.StatusIncomplete, 1},
		{"complete at once", []string{thread(user, asst(done, "Bash", whole), result)}, []string{whole}, 1, transcript.StatusOK, 0},
		{"a Task call streaming, then complete", []string{thread(user, asst(live, "Task", `{"description":"look"}`)), thread(user, asst(done, "Task", `{"description":"look","prompt":"Find the parser"}`))}, []string{`{"description":"look","prompt":"Find the parser"}`}, 0, transcript.StatusIncomplete, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := plugintest.Run(t, amp.Plugin, []byte(strings.Join(tc.docs, "\n")+"\n"), normalize.Options{Provider: "amp"})
			calls, results := o.Tools()
			var inputs []string
			for _, c := range calls {
				inputs = append(inputs, string(c.Input))
			}
			if strings.Join(inputs, "|") != strings.Join(tc.inputs, "|") {
				t.Errorf("tool.call inputs %q, want %q", inputs, tc.inputs)
			}
			if len(results) != tc.results {
				t.Errorf("%d tool.results, want %d", len(results), tc.results)
			}
			if o.Result.Status != tc.status || len(o.Result.Dangling) != tc.dangling {
				t.Errorf("status %s (%q), dangling %q; want %s, %d dangling", o.Result.Status, o.Result.Error, o.Result.Dangling, tc.status, tc.dangling)
			}
		})
	}
}

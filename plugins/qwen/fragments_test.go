//go:build !wasip1

package qwen_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/qwen"
	"github.com/twasm/twasm/transcript"
)

// TestFragments: Qwen Code may write one message as several records that
// share its uuid, and reads them back as one (SessionService
// .reconstructHistory groups the records by uuid and aggregateRecords
// joins them: the parts of each fragment after the first's, the latest
// usageMetadata, the first model). The later fragments' text, calls and
// usage belong to that message; one message is written, with the
// usage of its latest fragment that states one. A record written again
// byte for byte (a file copied after itself) stays a replay, each
// fragment included.
func TestFragments(t *testing.T) {
	rec := func(uuid, typ, body string) string { return chatRecord(uuid, typ, body) + "\n" }
	prompt := rec("u1", "user", `,"message":{"role":"user","parts":[{"text":"list the files"}]}`)
	text := rec("a1", "assistant", `,"model":"qwen3-coder","message":{"role":"model","parts":[{"text":"Listing them."}]}`)
	call := lsCall + "\n"
	usage1 := rec("a1", "assistant", `,"message":{"role":"model","parts":[{"text":"Listing them."}]},"usageMetadata":{"promptTokenCount":90,"candidatesTokenCount":5,"totalTokenCount":95}`)
	result := lsResult + "\n"
	answer := oneFile + "\n"
	tests := []struct {
		name, in      string
		texts         string // each assistant message's texts, "|" between messages
		calls         int
		input, output int64
	}{
		{"text, then the call and usage", prompt + text + call + result + answer, "Listing them.|One file.", 1, 230, 24},
		{"usage on both: the latest", prompt + usage1 + call + result + answer, "Listing them.|One file.", 1, 230, 24},
		{"a fragment after an ignored telemetry record", prompt + text + rec("x1", "system", `,"subtype":"ui_telemetry","systemPayload":{"uiEvent":{"event.name":"qwen-code.api_response"}}`) + call + result + answer, "Listing them.|One file.", 1, 230, 24},
		{"a record replayed byte for byte", prompt + call + call + result + answer, "One file.", 1, 230, 24},
		// Every fragment is a replay too, not only the message's
		// latest: a replayed first fragment was read as a new message,
		// and the rest of the copy with it (each copy's records kept:
		// TestPluginMemoryFlat ran out of memory).
		{"a file with fragments copied after itself", prompt + text + call + result + answer + prompt + text + call + result + answer, "Listing them.|One file.", 1, 230, 24},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _, calls, input := plugintest.Turns(t, qwen.Plugin, "qwen", []byte(tt.in))
			o := plugintest.FromResult(r)
			var msgs []string
			ids := map[string]int{}
			for _, it := range o.Sink.Items {
				if it.Event == nil || it.Event.Type != transcript.MessageAssistant {
					continue
				}
				m := it.Event.Message()
				ids[m.ID]++
				var s []string
				for _, b := range m.Blocks {
					if b.Type == transcript.BlockText {
						s = append(s, b.Text)
					}
				}
				if len(s) > 0 {
					msgs = append(msgs, strings.Join(s, " "))
				}
			}
			if got := strings.Join(msgs, "|"); got != tt.texts {
				t.Errorf("assistant texts %q, want %q", got, tt.texts)
			}
			for id, n := range ids {
				if n != 1 {
					t.Errorf("message %s written %d times, want once", id, n)
				}
			}
			_, _, _, output := o.Summary(nil)
			if calls != tt.calls || input != tt.input || output != tt.output {
				t.Errorf("%d calls, input %d, output %d; want %d, %d, %d", calls, input, output, tt.calls, tt.input, tt.output)
			}
			if st, _ := o.ResultStatus("c1"); st != "ok" {
				t.Errorf("c1's result %q, want ok", st)
			}
		})
	}
}

// chatRecord is a Qwen Code chat record of session s (without its
// newline): uuid, type, and the rest of its members (body, from its
// leading comma).
func chatRecord(uuid, typ, body string) string {
	return `{"uuid":"` + uuid + `","parentUuid":null,"sessionId":"s","timestamp":"2026-04-23T00:39:48Z","type":"` + typ + `","cwd":"/w","version":"0.24.4"` + body + `}`
}

// A turn the fragment and glued-record tests share: an ls call (100
// tokens in, 20 out), its result go.mod, and the answer (130 in, 4 out).
var (
	lsCall   = chatRecord("a1", "assistant", `,"model":"qwen3-coder","message":{"role":"model","parts":[{"functionCall":{"id":"c1","name":"run_shell_command","args":{"command":"ls"}}}]},"usageMetadata":{"promptTokenCount":100,"candidatesTokenCount":20,"totalTokenCount":120}`)
	lsResult = chatRecord("t1", "tool_result", `,"message":{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"run_shell_command","response":{"output":"go.mod"}}}]},"toolCallResult":{"callId":"c1","status":"success"}`)
	oneFile  = chatRecord("a2", "assistant", `,"model":"qwen3-coder","message":{"role":"model","parts":[{"text":"One file."}]},"usageMetadata":{"promptTokenCount":130,"candidatesTokenCount":4,"totalTokenCount":134}`)
)

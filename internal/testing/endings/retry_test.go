package endings

import (
	"fmt"

	"github.com/twasm/twasm/internal/testing/natives"
)

// Copilot's events.jsonl with its model turns' bounds, where a provider
// error is the CLI retrying the turn (assistant.turn_retry): the log
// keeps no other record of the failed call (model.call_failure is
// ephemeral).
func init() {
	formats = append(formats, format{Native: natives.Named("copilot"), format: "turn-retry", errWords: "rate_limit", render: func(evs []ev) string {
		start := `{"type":"session.start","data":{"sessionId":"049410b4-0000-4000-8000-0000000000e2","version":1,"producer":"copilot-agent","copilotVersion":"1.0.78","startTime":"2026-03-01T10:00:00.000Z","context":{"cwd":"/w"}},"id":"r0","timestamp":"2026-03-01T10:00:00.000Z","parentId":null}`
		turn, open := 0, false
		return lines([]string{start}, evs, func(i int, e ev) string {
			sub := 0
			event := func(typ, data string) string {
				sub++
				return fmt.Sprintf(`{"type":%q,"data":%s,"id":"r%d-%d","timestamp":%q,"parentId":"r%d"}`, typ, data, i, sub, ts(i), i-1)
			}
			begin := func() string {
				if open {
					return ""
				}
				open = true
				turn++
				return event("assistant.turn_start", fmt.Sprintf(`{"turnId":"%d","interactionId":"i1"}`, turn)) + "\n"
			}
			end := func() string {
				open = false
				return "\n" + event("assistant.turn_end", fmt.Sprintf(`{"turnId":"%d"}`, turn))
			}
			msg := func(content, calls string) string {
				return event("assistant.message", fmt.Sprintf(`{"messageId":"m%d","model":"gpt-5","content":%s,"toolRequests":[%s],"interactionId":"i1","turnId":"%d"}`, i, q(content), calls, turn))
			}
			switch e.k {
			case prompt:
				return event("user.message", fmt.Sprintf(`{"content":%s,"attachments":[],"interactionId":"i1"}`, q(e.text)))
			case answer:
				return begin() + msg(e.text, "") + end()
			case call:
				return begin() + msg("", `{"toolCallId":"`+e.text+`","name":"bash","arguments":{"command":"cat missing.txt"},"type":"function"}`) + end()
			case resultOK:
				return event("tool.execution_complete", fmt.Sprintf(`{"toolCallId":%q,"model":"gpt-5","success":true,"result":{"content":%s}}`, callID, q(e.text)))
			case failed:
				return event("tool.execution_complete", fmt.Sprintf(`{"toolCallId":%q,"model":"gpt-5","success":false,"error":{"message":%s,"code":"failure"}}`, callID, q(e.text)))
			case provErr:
				// The turn's call failed; the CLI calls the model again
				// in the same turn.
				return begin() + event("assistant.turn_retry", fmt.Sprintf(`{"turnId":"%d","model":"gpt-5","reason":"rate_limit"}`, turn))
			}
			return ""
		})
	}})
}

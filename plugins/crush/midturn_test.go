//go:build !wasip1

package crush_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/crush"
	"github.com/twasm/twasm/transcript"
)

// msgRow is a messages row as the host hands it: role, parts (JSON) and
// finished_at (null or seconds).
func msgRow(id, role, parts, finished string, version int) string {
	return fmt.Sprintf(`{"$twasm":"row","table":"messages","key":%q,"version":%d,"row":{"id":%q,"session_id":"s","role":%q,"parts":%s,"model":"m1","created_at":1772359200,"updated_at":%d,"finished_at":%s}}`,
		id, version, id, role, parts, version, finished)
}

// TestMidTurn: `twasm sync` reads crush.db while Crush streams an answer
// (it rewrites the message in place; message.AddFinish adds the finish
// part, and finished_at, when the response ends, whether it ended well,
// failed or was cancelled). A session whose newest message is an
// assistant's without a finish part is in the middle of a turn:
// incomplete; the same message read again finished is ok.
func TestMidTurn(t *testing.T) {
	const (
		prompt    = `[{"type":"text","data":{"text":"Fix the parser"}}]`
		partial   = `[{"type":"text","data":{"text":"Let me look"}}]`
		answered  = `[{"type":"text","data":{"text":"Let me look. Fixed."}},{"type":"finish","data":{"reason":"end_turn","time":1772359210}}]`
		call      = `[{"type":"tool_call","data":{"id":"c1","name":"view","input":"{\"file_path\":\"p.go\"}","finished":true}},{"type":"finish","data":{"reason":"tool_use","time":1772359205}}]`
		cancelled = `[{"type":"text","data":{"text":"Let me"}},{"type":"finish","data":{"reason":"canceled","time":1772359210}}]`
		result    = `[{"type":"tool_result","data":{"tool_call_id":"c1","name":"view","content":"package p","is_error":false}}]`
	)
	for _, tc := range []struct {
		name   string
		rows   []string
		status string
	}{
		{"the newest answer still streaming", []string{
			msgRow("u1", "user", prompt, "null", 1), msgRow("a1", "assistant", partial, "null", 2),
		}, transcript.StatusIncomplete},
		{"a call's result, then the next answer streaming", []string{
			msgRow("u1", "user", prompt, "null", 1), msgRow("a1", "assistant", call, "1772359205", 2),
			msgRow("t1", "tool", result, "null", 3), msgRow("a2", "assistant", partial, "null", 4),
		}, transcript.StatusIncomplete},
		{"the answer finished", []string{
			msgRow("u1", "user", prompt, "null", 1), msgRow("a1", "assistant", answered, "1772359210", 2),
		}, transcript.StatusOK},
		{"read mid-turn, then again finished", []string{
			msgRow("u1", "user", prompt, "null", 1), msgRow("a1", "assistant", partial, "null", 2),
			msgRow("a1", "assistant", answered, "1772359210", 3),
		}, transcript.StatusOK},
		{"a finished message read again after the newest, still streaming", []string{
			msgRow("u1", "user", prompt, "null", 1), msgRow("a1", "assistant", call, "1772359205", 2),
			msgRow("t1", "tool", result, "null", 3), msgRow("a2", "assistant", partial, "null", 4),
			msgRow("a1", "assistant", call, "1772359205", 5),
		}, transcript.StatusIncomplete},
		{"the last answer cancelled by the user: cut", []string{
			msgRow("u1", "user", prompt, "null", 1), msgRow("a1", "assistant", cancelled, "1772359210", 2),
		}, transcript.StatusIncomplete},
		{"an answer cancelled, then asked and answered", []string{
			msgRow("u1", "user", prompt, "null", 1), msgRow("a1", "assistant", cancelled, "1772359210", 2),
			msgRow("u2", "user", prompt, "null", 3), msgRow("a2", "assistant", answered, "1772359220", 4),
		}, transcript.StatusOK},
		{"the call's result is the newest message", []string{
			msgRow("u1", "user", prompt, "null", 1), msgRow("a1", "assistant", call, "1772359205", 2),
			msgRow("t1", "tool", result, "null", 3),
		}, transcript.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := plugintest.Run(t, crush.Plugin, []byte(strings.Join(tc.rows, "\n")+"\n"), normalize.Options{Provider: "crush"})
			if o.Result.Status != tc.status {
				t.Errorf("status %s (%q), want %s", o.Result.Status, o.Result.Error, tc.status)
			}
		})
	}
}

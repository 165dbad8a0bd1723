//go:build !wasip1

package gemini_test

import (
	"context"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/gemini"
)

// TestTurnLimit: when the client's session turn limit stops a
// non-interactive run (GeminiEventType.MaxSessionTurns; the agent
// session's agent_end with reason max_turns and no configured limit), the
// CLI writes the error event "Maximum session turns exceeded" (severity
// error) and then a result with status "success" (google-gemini/gemini-cli
// packages/cli/src/nonInteractiveCli.ts and nonInteractiveCliAgentSession.ts
// at 5411f11); --output-format json writes it among its warnings and no
// error. The run stopped at a limit before its work was done: an error,
// as Claude Code's max_turns is, never ok. A run whose only error event is
// another one stays as its result says.
//
// Loop detection stops a run the same way: when the client detects a loop
// a second time in a prompt (LoopDetectionService's count above 1; the
// first detection feeds the model a recovery prompt instead), it yields
// GeminiEventType.LoopDetected and ends the turn, and every later turn of
// the prompt does the same, so the run ends there. The CLI writes the
// error event "Loop detected, stopping execution" with severity warning
// (the agent session: an error event with status INTERNAL, code
// LOOP_DETECTED, fatal false), then a result "success" and exit code 0
// (client.ts, nonInteractiveCli.ts, nonInteractiveCliAgentSession.ts,
// event-translator.ts at 5411f11); --output-format json writes it among
// its warnings. The CLI stopped the task before it was done: an error,
// recorded among the step's errors.
func TestTurnLimit(t *testing.T) {
	head := streamHead("Fix every lint warning.") +
		`{"type":"message","timestamp":"2026-08-20T10:00:01.000Z","role":"assistant","content":"Fixing the first one.","delta":true}` + "\n"
	limit := `{"type":"error","timestamp":"2026-08-20T10:00:02.000Z","severity":"error","message":"Maximum session turns exceeded"}` + "\n"
	loop := `{"type":"error","timestamp":"2026-08-20T10:00:02.000Z","severity":"warning","message":"Loop detected, stopping execution"}` + "\n"
	blocked := `{"type":"error","timestamp":"2026-08-20T10:00:02.000Z","severity":"warning","message":"Agent execution blocked: hook said no"}` + "\n"
	other := `{"type":"error","timestamp":"2026-08-20T10:00:02.000Z","severity":"error","message":"Quota exceeded for quota metric"}` + "\n"
	success := `{"type":"result","timestamp":"2026-08-20T10:00:03.000Z","status":"success","stats":{"total_tokens":10,"input_tokens":8,"output_tokens":2,"cached":0,"input":8,"duration_ms":3000,"tool_calls":0}}` + "\n"
	tests := []struct {
		name, in, status, errText string
		errors                    int // step errors: the error events, then the terminal one
	}{
		{"stream: the turn limit, then success", head + limit + success, "error", "Maximum session turns exceeded", 2},
		{"stream: another error event, then success", head + other + success, "ok", "", 1},
		{"stream: loop detected, then success", head + loop + success, "error", "Loop detected, stopping execution", 2},
		{"stream: loop detected twice (a pending call ran), then success", head + loop + loop + success, "error", "Loop detected, stopping execution", 3},
		{"stream: another warning, then success", head + blocked + success, "ok", "", 0},
		{"json: the turn limit among the warnings", `{"session_id":"s1","response":"Fixing the first one.","stats":{"models":{}},"warnings":["Maximum session turns exceeded"]}` + "\n", "error", "Maximum session turns exceeded", 1},
		{"json: loop detected among the warnings", `{"session_id":"s1","response":"Fixing the first one.","stats":{"models":{}},"warnings":["Loop detected, stopping execution"]}` + "\n", "error", "Loop detected, stopping execution", 1},
		{"json: another warning", `{"session_id":"s1","response":"Done.","stats":{"models":{}},"warnings":["Agent execution blocked: hook said no"]}` + "\n", "ok", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runStatus(t, tt.in, tt.status, tt.errText)
			if len(r.Step.Errors) != tt.errors {
				t.Errorf("errors %v, want %d", r.Step.Errors, tt.errors)
			}
		})
	}
}

// streamHead is the start of a stream-json run: its init line and the
// user's prompt.
func streamHead(prompt string) string {
	return `{"type":"init","timestamp":"2026-08-20T10:00:00.000Z","session_id":"s1","model":"gemini-3-flash-preview"}` + "\n" +
		`{"type":"message","timestamp":"2026-08-20T10:00:00.001Z","role":"user","content":"` + prompt + `"}` + "\n"
}

// runStatus normalizes in with the plugin and checks the run's status,
// that its error holds errText, and that every line was read (none
// unmapped, none silent).
func runStatus(t *testing.T, in, status, errText string) *sdktest.Result {
	t.Helper()
	r, err := sdktest.Run(context.Background(), gemini.Plugin, "gemini", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if r.Step.Status != status || !strings.Contains(r.Step.Error, errText) {
		t.Errorf("status %q (%q), want %q holding %q", r.Step.Status, r.Step.Error, status, errText)
	}
	if len(r.Step.Unmapped) != 0 || r.SilentN != 0 {
		t.Errorf("unmapped %v, %d silent lines; want none", r.Step.Unmapped, r.SilentN)
	}
	return r
}

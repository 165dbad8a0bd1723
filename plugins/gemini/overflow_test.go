//go:build !wasip1

package gemini_test

import "testing"

// TestContextOverflow: a non-interactive run whose request would
// overflow the context window is stopped before the model is called
// (google-gemini/gemini-cli packages/core/src/core/client.ts at 5411f11,
// processTurn: it yields only ContextWindowWillOverflow), and
// nonInteractiveCli.ts, which does not read that event, ends its loop on
// a turn with no text and no call: stream-json writes a result "success"
// (exit code 0), --output-format json a response "" and no error. The
// chat file records nothing of the request (geminiChat records the
// user's message only when it sends it). The same happens when the
// overflow comes with the results of the model's calls, and when a hook
// stops the run (a BeforeAgent hook's AgentExecutionStopped: a warning of
// the json object; a tool's result of error type stop_execution). The
// request got no answer: an error, never ok. Before, each read ok. (The
// agent session's run, nonInteractiveCliAgentSession.ts, throws the
// overflow as a fatal error, "Context window will overflow (estimated:
// N, remaining: M)": a result "error", read as such before too.)
func TestContextOverflow(t *testing.T) {
	head := streamHead("Summarize the logs.")
	text := `{"type":"message","timestamp":"2026-08-20T10:00:01.000Z","role":"assistant","content":"Reading them.","delta":true}` + "\n"
	use := `{"type":"tool_use","timestamp":"2026-08-20T10:00:01.100Z","tool_name":"read_file","tool_id":"read_file-1","parameters":{"file_path":"/w/huge.log"}}` + "\n"
	res := `{"type":"tool_result","timestamp":"2026-08-20T10:00:01.200Z","tool_id":"read_file-1","status":"success","output":"(a very long log)"}` + "\n"
	stop := `{"type":"tool_result","timestamp":"2026-08-20T10:00:01.200Z","tool_id":"read_file-1","status":"error","output":"","error":{"type":"stop_execution","message":"policy hook: stop after reading logs"}}` + "\n"
	answer := `{"type":"message","timestamp":"2026-08-20T10:00:02.000Z","role":"assistant","content":"The logs show two timeouts.","delta":true}` + "\n"
	success := `{"type":"result","timestamp":"2026-08-20T10:00:03.000Z","status":"success","stats":{"total_tokens":10,"input_tokens":8,"output_tokens":2,"cached":0,"input":8,"duration_ms":3000,"tool_calls":1}}` + "\n"
	tests := []struct{ name, in, status, errText string }{
		{"stream: the prompt would overflow", head + success, "error", "did not answer the run's last request"},
		{"stream: the calls' results would overflow", head + text + use + res + success, "error", "did not answer the run's last request"},
		{"stream: a hook stopped the run after a call", head + text + use + stop + success, "error", "policy hook: stop after reading logs"},
		{"stream, the agent session: the overflow is a fatal error", head + `{"type":"result","timestamp":"2026-08-20T10:00:03.000Z","status":"error","error":{"type":"Error","message":"Context window will overflow (estimated: 1200000, remaining: 3000)"},"stats":{"total_tokens":0,"input_tokens":0,"output_tokens":0,"cached":0,"input":0,"duration_ms":0,"tool_calls":0}}` + "\n", "error", "Context window will overflow"},
		{"stream: answered", head + text + use + res + answer + success, "ok", ""},
		{"stream: answered at once", head + answer + success, "ok", ""},
		{"json: the request would overflow", `{"session_id":"s1","response":"","stats":{"models":{}}}` + "\n", "error", "did not answer the run's last request"},
		{"json: a hook stopped the run", `{"session_id":"s1","response":"","stats":{"models":{}},"warnings":["Agent execution stopped: not on Fridays"]}` + "\n", "error", "not on Fridays"},
		{"json: answered", `{"session_id":"s1","response":"Two timeouts.","stats":{"models":{}}}` + "\n", "ok", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { runStatus(t, tt.in, tt.status, tt.errText) })
	}
}

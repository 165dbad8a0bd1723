//go:build !wasip1

package opencode_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/opencode"
)

// v2Tool is a tool_use line as the "mini" client of OpenCode's v2 event
// runtime prints it for run --format json (cli/cmd/run/noninteractive.ts
// at 0f582b14246bad74884e6ebbe92f0ba8d175177e): a settled tool's state is
// built from the session.next.tool.success or .failed event, its
// metadata holds the tool's structured output (metadata.structured, never
// metadata.exit), its output the text content joined, its error the
// event's error.message (the error's type is dropped).
func v2Tool(tool, state string) string {
	return `{"type":"tool_use","timestamp":1762077601000,"sessionID":"ses_1","part":{"id":"prt_1","sessionID":"ses_1","messageID":"msg_1","type":"tool","callID":"c1","tool":"` + tool + `","state":` + state + `}}`
}

// v2Shell is a completed shell call: its output and structured output
// (core/src/tool/plugin/shell.ts: {exit?, signal?, shellID?, truncated,
// timeout?}; shell/result.ts: the notice "Command exited with code N.",
// "Command timed out before completion." or "Command stopped by user. ..."
// follows the output as its own text content).
func v2Shell(output, structured string) string {
	return v2Tool("shell", `{"status":"completed","input":{"command":"go test ./..."},"output":"`+output+`","title":"shell","metadata":{"structured":`+structured+`,"content":[{"type":"text","text":"`+output+`"}],"outputPaths":[]},"time":{"start":1762077600000,"end":1762077601000}}`)
}

// TestV2RunJSON: what run --format json of OpenCode's v2 runtime states
// of a settled tool reads as its result, though no metadata.exit is
// there: the exit code, a timeout or a signal in metadata.structured, the
// notice the shell tool appends, the error texts of the v2 runtime.
func TestV2RunJSON(t *testing.T) {
	for _, tc := range []struct {
		name, line, status, err string
		exit                    int64 // -1: none stated
	}{
		{"a command that exited 1", v2Shell(`FAIL\n\nCommand exited with code 1.`, `{"exit":1,"truncated":false}`), "error", "exit code 1", 1},
		{"a command that exited 0", v2Shell(`ok\n\nCommand exited with code 0.`, `{"exit":0,"truncated":false}`), "ok", "", 0},
		{"the exit stated by the notice alone", v2Shell(`FAIL\n\nCommand exited with code 2.`, `{"truncated":false}`), "error", "exit code 2", 2},
		{"a command that timed out", v2Shell(`started\n\nCommand exceeded timeout of 120000 ms. Retry with a larger timeout if the command is expected to take longer.\n\nCommand timed out before completion.`, `{"truncated":false,"timeout":true}`), "cancelled", "Command exceeded timeout of 120000 ms", -1},
		{"a command the user stopped", v2Shell(`started\n\nCommand stopped by user. Do not restart it unless the user asks.`, `{"truncated":false}`), "cancelled", "Command stopped by user", -1},
		{"a command a signal ended", v2Shell(`Killed`, `{"signal":"SIGKILL","truncated":false}`), "error", "SIGKILL", -1},
		{"a tool the interruption failed", v2Tool("shell", `{"status":"error","input":{"command":"sleep 99"},"error":"Tool execution interrupted: shell","metadata":{},"time":{"start":1762077600000,"end":1762077601000}}`), "cancelled", "Tool execution interrupted", -1},
		{"a tool a restart failed", v2Tool("read", `{"status":"error","input":{},"error":"Tool execution interrupted","metadata":{},"time":{"start":1762077600000,"end":1762077601000}}`), "cancelled", "Tool execution interrupted", -1},
		{"a permission rule refused it", v2Tool("shell", `{"status":"error","input":{"command":"rm -rf x"},"error":"Permission denied: shell","metadata":{},"time":{"start":1762077600000,"end":1762077601000}}`), "denied", "Permission denied", -1},
		{"the user dismissed a question", v2Tool("question", `{"status":"error","input":{},"error":"The user dismissed this question: \"Scope\"=\"Which files?\"","metadata":{},"time":{"start":1762077600000,"end":1762077601000}}`), "denied", "dismissed", -1},
		{"a tool that failed", v2Tool("read", `{"status":"error","input":{},"error":"File not found: /x","metadata":{},"time":{"start":1762077600000,"end":1762077601000}}`), "error", "File not found", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := plugintest.Run(t, opencode.Plugin, []byte(tc.line+"\n"), normalize.Options{Provider: "opencode"})
			if st, ok := o.ResultStatus("c1"); st != tc.status {
				t.Errorf("c1's status %q (a result: %v), want %s", st, ok, tc.status)
			}
			_, rs := o.Tools()
			if len(rs) != 1 {
				t.Fatalf("results %+v, want one", rs)
			}
			if tc.err != "" && !strings.Contains(rs[0].Error, tc.err) {
				t.Errorf("error %q, want one that says %q", rs[0].Error, tc.err)
			}
			if tc.err == "" && rs[0].Error != "" {
				t.Errorf("error %q, want none", rs[0].Error)
			}
			got := int64(-1)
			if rs[0].ExitCode != nil {
				got = int64(*rs[0].ExitCode)
			}
			if got != tc.exit {
				t.Errorf("exit code %d, want %d (-1: none)", got, tc.exit)
			}
			if n, first := silent(t, []byte(tc.line+"\n")); n != 0 {
				t.Errorf("%d line(s) without a record (spec 6.8): %v", n, first)
			}
		})
	}
}

// TestV2RunJSONError: the error line of the v2 client holds a session
// error {type, message} (schema/session-error.ts), not the v1 {name,
// data: {message}}: its type is the error's code.
func TestV2RunJSONError(t *testing.T) {
	for _, tc := range []struct{ name, line, code, msg string }{
		{"a provider error", `{"type":"error","timestamp":1762077602000,"sessionID":"ses_1","error":{"type":"provider.unknown","message":"Overloaded"}}`, "provider.unknown", "Overloaded"},
		{"a failed execution", `{"type":"error","timestamp":1762077602000,"sessionID":"ses_1","error":{"type":"unknown","message":"Session execution failed"}}`, "unknown", "Session execution failed"},
		{"a v1 error", `{"type":"error","timestamp":1762077602000,"sessionID":"ses_1","error":{"name":"APIError","data":{"message":"Overloaded"}}}`, "APIError", "Overloaded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := plugintest.Run(t, opencode.Plugin, []byte(tc.line+"\n"), normalize.Options{Provider: "opencode"})
			if len(o.Result.Errors) != 1 || o.Result.Errors[0].Code != tc.code || o.Result.Errors[0].Message != tc.msg {
				t.Errorf("errors %+v, want %s: %s", o.Result.Errors, tc.code, tc.msg)
			}
		})
	}
}

// TestV2RunJSONText: the v2 client prints a text as it streams, each
// delta a text line of the same part id holding that delta alone
// (noninteractive.ts, session.next.text.delta), then what the deltas
// lacked at text.ended: the text is every line's, in order. OpenCode
// before it printed a text once, whole, at its end, and a text printed
// again whole replaces the first.
func TestV2RunJSONText(t *testing.T) {
	text := func(id, s string) string {
		return `{"type":"text","timestamp":1762077601000,"sessionID":"ses_1","part":{"id":"` + id + `","sessionID":"ses_1","messageID":"msg_1","type":"text","text":"` + s + `","time":{"start":1762077600000,"end":1762077601000}}}`
	}
	for _, tc := range []struct {
		name  string
		lines []string
		want  []string
	}{
		{"deltas", []string{text("prt_1", "The tests "), text("prt_1", "fail in "), text("prt_1", "parse.go.")}, []string{"The tests fail in parse.go."}},
		{"deltas of two texts", []string{text("prt_1", "One"), text("prt_1", "."), text("prt_2", "Two"), text("prt_2", ".")}, []string{"One.", "Two."}},
		{"a text printed again whole", []string{text("prt_1", "Done"), text("prt_1", "Done.")}, []string{"Done."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := []byte(strings.Join(tc.lines, "\n") + "\n")
			o := plugintest.Run(t, opencode.Plugin, raw, normalize.Options{Provider: "opencode"})
			plugintest.CheckTexts(t, o.Texts(plugintest.Assistant), tc.want, false)
			if n, first := silent(t, raw); n != 0 {
				t.Errorf("%d line(s) without a record (spec 6.8): %v", n, first)
			}
		})
	}
}

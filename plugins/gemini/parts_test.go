//go:build !wasip1

package gemini_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/gemini"
	"github.com/twasm/twasm/transcript"
)

// partsSession is a whole session document of a build that writes the
// model's response as its parts (thought:true, text, functionCall), its
// thoughts again in thoughts[], and in each call of a response the
// responses of all its calls, each naming its own (a real chat of
// June 2026, gemini-3-flash-preview, kept by a user in a repository
// without a licence: its shapes, not its text).
func partsSession(msgs ...string) []byte {
	return []byte(`{"sessionId":"b7db0000-0000-4000-8000-000000000001","projectHash":"ab","startTime":"2026-06-12T04:14:14.031Z","lastUpdated":"2026-06-12T04:20:00.000Z","kind":"main","messages":[` +
		strings.Join(msgs, ",") + "]}\n")
}

const partsPrompt = `{"id":"u1","timestamp":"2026-06-12T04:16:58.419Z","type":"user","content":[{"text":"explain the error"}]}`

// partsCall is a toolCalls entry whose result holds responses, each
// {id, output or error}.
func partsCall(id, name, status string, responses ...[2]string) string {
	var rs []string
	for _, r := range responses {
		rs = append(rs, `{"functionResponse":{"id":"`+r[0]+`","name":"x","response":{`+r[1]+`}}}`)
	}
	return `{"id":"` + id + `","name":"` + name + `","args":{"command":"ls"},"result":[` + strings.Join(rs, ",") + `],"status":"` + status + `","timestamp":"2026-06-12T04:17:54.266Z"}`
}

// partsRecord is a gemini record with content parts, thoughts and calls.
func partsRecord(content, thoughts, calls string) string {
	return `{"id":"g1","timestamp":"2026-06-12T04:17:09.308Z","type":"gemini","content":[` + content + `],"thoughts":[` + thoughts +
		`],"tokens":{"input":100,"output":10,"cached":0,"thoughts":5,"tool":0,"total":115},"model":"gemini-3-flash-preview","toolCalls":[` + calls + `]}`
}

// TestSiblingResponses: a call's result holding the responses of every
// call of its response gets its own: output, error and the exit code
// its output states; a part naming no call stays the call's.
func TestSiblingResponses(t *testing.T) {
	topic := [2]string{"t1", `"output":"Current topic: Errors"`}
	read := [2]string{"r1", `"output":"flask==3.1.3"`}
	shellFail := [2]string{"s1", `"output":"Output: boom\nExit Code: 1"`}
	denied := [2]string{"s1", `"error":"[Operation Cancelled] Reason: User denied execution."`}
	type want struct{ output, status, err string }
	tests := []struct {
		name  string
		calls []string
		want  []want
	}{
		{"three calls, one result list each", []string{
			partsCall("t1", "update_topic", "success", topic, read, shellFail),
			partsCall("r1", "read_file", "success", topic, read, shellFail),
			partsCall("s1", "run_shell_command", "success", topic, read, shellFail),
		}, []want{
			{"Current topic: Errors", "ok", ""},
			{"flask==3.1.3", "ok", ""},
			{"Output: boom\nExit Code: 1", "error", "exit code 1: boom"},
		}},
		{"a sibling refused: its error is its own", []string{
			partsCall("t1", "update_topic", "success", topic, denied),
			partsCall("s1", "run_shell_command", "cancelled", topic, denied),
		}, []want{
			{"Current topic: Errors", "ok", ""},
			{"", "denied", "[Operation Cancelled] Reason: User denied execution."},
		}},
		{"parts naming no call are the call's", []string{
			`{"id":"m1","name":"read_many_files","args":{},"result":[{"functionResponse":{"name":"read_many_files","response":{"output":"a"}}},{"functionResponse":{"name":"read_many_files","response":{"output":"b"}}}],"status":"success"}`,
		}, []want{{"a\nb", "ok", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := partsSession(partsPrompt, partsRecord(`{"text":"Checking."}`, "", strings.Join(tt.calls, ",")))
			_, results := plugintest.Run(t, gemini.Plugin, raw, normalize.Options{Provider: "gemini"}).Tools()
			var got []want
			for _, r := range results {
				got = append(got, want{r.Output, r.Status, r.Error})
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("results (output, status, error)\n\t%q\nwant\n\t%q", got, tt.want)
			}
		})
	}
}

// TestResponseParts: a gemini record whose content is the response's
// parts says each thought once (thoughts[] when it lists them, else the
// thought parts), its text as text, and each function call as one
// tool_use block, never as text.
func TestResponseParts(t *testing.T) {
	const (
		thoughtPart = `{"text":"**Analyzing** I'm reading the traceback.","thought":true}`
		thought     = `{"subject":"Analyzing","description":"I'm reading the traceback.","timestamp":"2026-06-12T04:17:07.158Z"}`
		text        = `{"text":"Flask is not installed."}`
		fcPart      = `{"functionCall":{"id":"r1","name":"read_file","args":{"file_path":"requirements.txt"}}}`
	)
	call := partsCall("r1", "read_file", "success", [2]string{"r1", `"output":"flask==3.1.3"`})
	tests := []struct {
		name             string
		content, thoughs string
		calls            string
		want             []string // the blocks, "type:text"
		toolCalls        int
	}{
		{"thoughts listed twice, a call in toolCalls", thoughtPart + "," + text + "," + fcPart, thought, call,
			[]string{"thinking:Analyzing\nI'm reading the traceback.", "text:Flask is not installed.", "tool_use:read_file"}, 1},
		{"thought parts alone", thoughtPart + "," + text, "", "",
			[]string{"thinking:**Analyzing** I'm reading the traceback.", "text:Flask is not installed."}, 0},
		{"a call only in the parts (written before toolCalls)", text + "," + fcPart, "", "",
			[]string{"text:Flask is not installed.", "tool_use:read_file"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := partsSession(partsPrompt, partsRecord(tt.content, tt.thoughs, tt.calls))
			o := plugintest.Run(t, gemini.Plugin, raw, normalize.Options{Provider: "gemini"})
			var got []string
			for _, it := range o.Sink.Items {
				if it.Event == nil || it.Event.Type != transcript.MessageAssistant {
					continue
				}
				for _, b := range it.Event.Message().Blocks {
					got = append(got, fmt.Sprintf("%s:%s%s%s", b.Type, b.Text, b.Thinking, b.ToolName))
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("blocks\n\t%q\nwant\n\t%q", got, tt.want)
			}
			if calls, _ := o.Tools(); len(calls) != tt.toolCalls {
				t.Errorf("%d tool.call events; want %d", len(calls), tt.toolCalls)
			}
		})
	}
}

// TestShellModeRecord: the user message the CLI adds when the user runs
// a command in shell mode is injected context, not a prompt, so a
// session that ends on one has no prompt left unanswered.
func TestShellModeRecord(t *testing.T) {
	const shell = `{"id":"u2","timestamp":"2026-06-12T04:19:15.186Z","type":"user","content":[{"text":"I ran the following shell command:\n` +
		"```sh\\ngit push origin main\\n```\\n\\nThis produced the following result:\\n```\\nCommand exited with code 1.\\nerror: src refspec main does not match any\\n```" + `"}]}`
	answer := `{"id":"g1","timestamp":"2026-06-12T04:17:09.308Z","type":"gemini","content":"Flask is not installed.","tokens":{"input":100,"output":10},"model":"gemini-3-flash-preview"}`
	raw := partsSession(partsPrompt, answer, shell)
	o := plugintest.Run(t, gemini.Plugin, raw, normalize.Options{Provider: "gemini"})
	var origins []string
	for _, it := range o.Sink.Items {
		if it.Event != nil && it.Event.Type == transcript.MessageUser {
			for _, b := range it.Event.Message().Blocks {
				origins = append(origins, string(b.Origin))
			}
		}
	}
	if want := []string{"prompt", "injected_context"}; !slices.Equal(origins, want) {
		t.Errorf("user block origins %q; want %q", origins, want)
	}
	plugintest.WantStatus(t, gemini.Plugin, "gemini", raw, "ok")
}

// TestErrorBetweenTurns: the CLI records every error it shows as an
// error record (useHistoryManager), a slash command's usage among them
// ("Please provide a file path to export the session to", seen in a real
// chat after its last answer). After an answer, with no prompt or call
// since, such a record is a warning, not the session's error; one that
// comes while a turn is open (a prompt without an answer, a call's
// continuation) is the turn's error, as before.
func TestErrorBetweenTurns(t *testing.T) {
	const (
		answer   = `{"id":"g1","timestamp":"2026-06-12T13:07:06.564Z","type":"gemini","content":"Jinja fills templates.","tokens":{"input":10,"output":5},"model":"gemini-3-flash-preview"}`
		cmdErr   = `{"id":"e1","timestamp":"2026-06-12T13:10:21.208Z","type":"error","content":"Please provide a file path to export the session to. Example: /export-session ./my-session.json"}`
		apiErr   = `{"id":"e2","timestamp":"2026-06-12T13:10:21.208Z","type":"error","content":"[API Error: quota exceeded]"}`
		prompt2  = `{"id":"u2","timestamp":"2026-06-12T13:09:00.000Z","type":"user","content":[{"text":"and now?"}]}`
		shell    = `{"id":"u3","timestamp":"2026-06-12T13:09:00.000Z","type":"user","content":[{"text":"I ran the following shell command:\n` + "```sh\\nls\\n```\\n\\nThis produced the following result:\\n```\\na.txt\\n```" + `"}]}`
		callOnly = `{"id":"g2","timestamp":"2026-06-12T13:09:01.000Z","type":"gemini","content":"","tokens":{"input":10,"output":5},"model":"m","toolCalls":[{"id":"c1","name":"read_file","args":{},"status":"success","result":[{"functionResponse":{"id":"c1","name":"read_file","response":{"output":"x"}}}]}]}`
	)
	tests := []struct {
		name   string
		msgs   []string
		status string
	}{
		{"a command's error after the answer", []string{partsPrompt, answer, cmdErr}, "ok"},
		{"after a shell-mode record", []string{partsPrompt, answer, shell, cmdErr}, "ok"},
		{"an API error on a new prompt", []string{partsPrompt, answer, prompt2, apiErr}, "error"},
		{"an error while a call's turn goes on", []string{partsPrompt, callOnly, apiErr}, "error"},
		{"an error before any answer", []string{partsPrompt, apiErr}, "error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plugintest.WantStatus(t, gemini.Plugin, "gemini", partsSession(tt.msgs...), tt.status)
		})
	}
}

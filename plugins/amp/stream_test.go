//go:build !wasip1

package amp_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/amp"
)

// TestStreamJSON: `amp --execute --stream-json` writes Claude Code's
// stream shapes (system init, user, assistant, result); the plugin read
// none of them (every line "(no messages)", no prompt, answer, call or
// token, status incomplete). The lines are the shapes of Amp's own
// examples (ampcode.com/news/streaming-json, the manual's tool usage
// example) and of a real output of amp 0.0.1775837683 (izzoa/
// unison-mcp-server's smoke test, AGPL-3.0: read, not copied).
func TestStreamJSON(t *testing.T) {
	const sid = `"session_id":"T-2775dc92-90ed-4f85-8b73-8f9766029e83"`
	initLine := `{"type":"system","subtype":"init","cwd":"/Users/dev/work/amp",` + sid + `,"tools":["Bash","Read","Task"],"mcp_servers":[]}`
	user := func(content string) string {
		return `{"type":"user","message":{"role":"user","content":[` + content + `]},"parent_tool_use_id":null,` + sid + `}`
	}
	assistant := func(parent, content, usage string) string {
		return `{"type":"assistant","message":{"type":"message","role":"assistant","content":[` + content + `],"stop_reason":"end_turn","usage":{` + usage +
			`,"max_tokens":968000,"service_tier":"standard"}},"parent_tool_use_id":` + parent + `,` + sid + `}`
	}
	ok := `{"type":"result","subtype":"success","duration_ms":2906,"is_error":false,"num_turns":1,"result":"done",` + sid + `}`
	type tool struct{ name, scope, status, output string }
	tests := []struct {
		name          string
		lines         []string
		status, error string
		input, cacheR int64
		output        int64
		final         string
		tools         []tool
	}{
		{"a prompt answered, input_tokens the whole prompt", []string{
			initLine, user(`{"type":"text","text":"what is 2+2?"}`),
			assistant("null", `{"type":"text","text":"2 + 2 equals 4."}`, `"input_tokens":12783,"cache_creation_input_tokens":367,"cache_read_input_tokens":12416,"output_tokens":8`),
			ok,
		}, "ok", "", 12783, 12416, 8, "2 + 2 equals 4.", nil},
		{"a tool call and its result, input_tokens uncached", []string{
			initLine, user(`{"type":"text","text":"list files using a tool"}`),
			assistant("null", `{"type":"tool_use","id":"toolu_1","name":"Read","input":{"path":"/Users/dev/work/amp"}}`, `"input_tokens":10,"cache_creation_input_tokens":13150,"cache_read_input_tokens":0,"output_tokens":111`),
			user(`{"type":"tool_result","tool_use_id":"toolu_1","content":"[\"index.js\",\"README.md\"]","is_error":false}`),
			assistant("null", `{"type":"text","text":"Two files: index.js and README.md"}`, `"input_tokens":7,"cache_creation_input_tokens":133,"cache_read_input_tokens":13150,"output_tokens":13`),
			ok,
		}, "ok", "", 26450, 13150, 124, "Two files: index.js and README.md", []tool{{"Read", "", "ok", `["index.js","README.md"]`}}},
		{"a failed command, its result's content blocks", []string{
			initLine, user(`{"type":"text","text":"run the tests"}`),
			assistant("null", `{"type":"tool_use","id":"toolu_2","name":"Bash","input":{"cmd":"make test"}}`, `"input_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":3`),
			user(`{"type":"tool_result","tool_use_id":"toolu_2","content":[{"type":"text","text":"FAIL: TestX"}],"is_error":true}`),
			`{"type":"result","subtype":"error_during_execution","duration_ms":90,"is_error":true,"num_turns":1,"error":"boom",` + sid + `}`,
		}, "error", "boom", 5, 0, 3, "", []tool{{"Bash", "", "error", "FAIL: TestX"}}},
		{"a sub-agent's lines in its Task call's scope, its tokens its own", []string{
			initLine, user(`{"type":"text","text":"delegate"}`),
			assistant("null", `{"type":"tool_use","id":"toolu_3","name":"Task","input":{"description":"count","prompt":"count the files"}}`, `"input_tokens":4,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":2`),
			`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"count the files"}]},"parent_tool_use_id":"toolu_3",` + sid + `}`,
			assistant(`"toolu_3"`, `{"type":"tool_use","id":"toolu_4","name":"Bash","input":{"cmd":"ls | wc -l"}}`, `"input_tokens":50,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":5`),
			`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_4","content":"2","is_error":false}]},"parent_tool_use_id":"toolu_3",` + sid + `}`,
			user(`{"type":"tool_result","tool_use_id":"toolu_3","content":"2 files","is_error":false}`),
			assistant("null", `{"type":"text","text":"There are 2 files."}`, `"input_tokens":6,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":4`),
			ok,
		}, "ok", "", 10, 0, 6, "There are 2 files.", []tool{{"Task", "", "ok", "2 files"}, {"Bash", "toolu_3", "ok", "2"}}},
		{"no result: cut", []string{
			initLine, user(`{"type":"text","text":"what is 2+2?"}`),
		}, "incomplete", "", 0, 0, 0, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := plugintest.Run(t, amp.Plugin, []byte(strings.Join(tt.lines, "\n")+"\n"), normalize.Options{Provider: "amp"})
			r := o.Result
			if r.Status != tt.status || (tt.error != "" && r.Error != tt.error) {
				t.Errorf("status %s (%q); want %s (%q)", r.Status, r.Error, tt.status, tt.error)
			}
			if r.SessionID != "T-2775dc92-90ed-4f85-8b73-8f9766029e83" || r.Format != "stream-json" || r.Cwd != "/Users/dev/work/amp" {
				t.Errorf("session %q, format %q, cwd %q", r.SessionID, r.Format, r.Cwd)
			}
			var in, cr, out int64
			if u := r.Usage; u != nil {
				in, cr, out = deref(u.InputTokens), deref(u.CacheReadTokens), deref(u.OutputTokens)
			}
			if in != tt.input || cr != tt.cacheR || out != tt.output {
				t.Errorf("usage input %d, cache read %d, output %d; want %d, %d, %d", in, cr, out, tt.input, tt.cacheR, tt.output)
			}
			if r.FinalText != tt.final {
				t.Errorf("final text %q; want %q", r.FinalText, tt.final)
			}
			var got []tool
			calls, results := o.Tools()
			for _, c := range calls {
				tl := tool{name: c.Name}
				for _, it := range o.Sink.Items {
					if it.Event != nil && it.Event.Tool() == c {
						tl.scope = it.Scope
					}
				}
				for _, res := range results {
					if res.CallID == c.CallID {
						tl.status, tl.output = res.Status, res.Output
					}
				}
				got = append(got, tl)
			}
			if !slices.Equal(got, tt.tools) {
				t.Errorf("tools (name, scope, status, output)\n\t%q\nwant\n\t%q", got, tt.tools)
			}
			if n := r.Unmapped; len(n) != 0 {
				t.Errorf("unmapped %v; want none", n)
			}
		})
	}
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

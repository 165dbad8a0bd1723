//go:build !wasip1

package cline_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/cline"
	"github.com/twasm/twasm/transcript"
)

// TestCallChangedInPlace: a task's conversation read again with a
// message changed at an index read before. Changed in place (its ts
// kept, or none stated), its calls and results are reported revised
// (ABI 1.13), and the host counts each call once, with its latest input
// and output; a message written there after the history was cut back
// (a ts of its own) is another request: its call is one more, even under
// the same id (the id Cline's XML tools get from the message's index).
func TestCallChangedInPlace(t *testing.T) {
	const file = `{"$twasm":"file","path":"api_conversation_history.json","size":1,"mtime":"2026-01-01T00:05:00Z","document":true}`
	doc := func(callTs, resultTs, id, cmd, out string) string {
		ts := func(v string) string {
			if v == "" {
				return ""
			}
			return `,"ts":` + v
		}
		idField := ""
		if id != "" {
			idField = `"id":"` + id + `",`
		}
		result := `{"type":"text","text":"[execute_command for '` + cmd + `'] Result:\nCommand executed.\nOutput:\n` + out + `"}`
		if id != "" {
			result = `{"type":"tool_result","tool_use_id":"` + id + `","content":"Command executed.\nOutput:\n` + out + `"}`
		}
		return file + "\n" + `[{"role":"user","content":[{"type":"text","text":"<task>\nList it\n</task>"}],"ts":1767225600000},` +
			`{"role":"assistant","content":[{"type":"tool_use",` + idField + `"name":"execute_command","input":{"command":"` + cmd + `"}}]` + ts(callTs) + `},` +
			`{"role":"user","content":[` + result + `]` + ts(resultTs) + `}]`
	}
	tests := []struct {
		name          string
		v1, v2        string
		trace         []string // tool events: call id input | result id output, revised
		calls         int
		input, output string // the last call's latest
	}{
		{"changed in place", doc("1767225601000", "1767225602000", "toolu_1", "ls", "a"), doc("1767225601000", "1767225602000", "toolu_1", "ls -l", "b"),
			[]string{`call toolu_1 {"command":"ls"}`, "result toolu_1 Command executed.\nOutput:\na", `call toolu_1 {"command":"ls -l"} revised`, "result toolu_1 Command executed.\nOutput:\nb revised"},
			1, `{"command":"ls -l"}`, "Command executed.\nOutput:\nb"},
		{"changed in place, no ts", doc("", "", "toolu_1", "ls", "a"), doc("", "", "toolu_1", "ls -l", "a"),
			[]string{`call toolu_1 {"command":"ls"}`, "result toolu_1 Command executed.\nOutput:\na", `call toolu_1 {"command":"ls -l"} revised`},
			1, `{"command":"ls -l"}`, "Command executed.\nOutput:\na"},
		{"the XML id changed in place", doc("1767225601000", "1767225602000", "", "ls", "a"), doc("1767225601000", "1767225602000", "", "pwd", "b"),
			[]string{`call cline-1-0 {"command":"ls"}`, "result cline-1-0 Command executed.\nOutput:\na", `call cline-1-0 {"command":"pwd"} revised`, "result cline-1-0 Command executed.\nOutput:\nb revised"},
			1, `{"command":"pwd"}`, "Command executed.\nOutput:\nb"},
		{"another request at the index, the same XML id", doc("1767225601000", "1767225602000", "", "ls", "a"), doc("1767225611000", "1767225612000", "", "pwd", "b"),
			[]string{`call cline-1-0 {"command":"ls"}`, "result cline-1-0 Command executed.\nOutput:\na", `call cline-1-0 {"command":"pwd"}`, "result cline-1-0 Command executed.\nOutput:\nb"},
			2, `{"command":"pwd"}`, "Command executed.\nOutput:\nb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := plugintest.Run(t, cline.Plugin, []byte(tt.v1+"\n"+tt.v2+"\n"), normalize.Options{Provider: "cline"})
			var trace []string
			var evs []*transcript.Event
			for _, it := range o.Sink.Items {
				ev := it.Event
				if ev == nil || ev.Tool() == nil {
					continue
				}
				p := ev.Tool()
				s := "result " + p.CallID + " " + p.Output
				if ev.Type == transcript.ToolCall {
					s = "call " + p.CallID + " " + string(p.Input)
				}
				if p.Revised() {
					s += " revised"
				}
				trace, evs = append(trace, s), append(evs, ev)
			}
			if strings.Join(trace, "|") != strings.Join(tt.trace, "|") {
				t.Errorf("tool events:\n%q\nwant\n%q", trace, tt.trace)
			}
			// The calls as every reader counts them: each at its latest
			// version, with its latest result.
			pairs, old := transcript.PairEvents(evs), transcript.Superseded(evs)
			var calls []*transcript.Event
			for _, ev := range evs {
				if ev.Type == transcript.ToolCall && !old[ev] {
					calls = append(calls, ev)
				}
			}
			if len(calls) != tt.calls || len(o.Result.Dangling) != 0 {
				t.Fatalf("calls counted %d, dangling %v; want %d, none", len(calls), o.Result.Dangling, tt.calls)
			}
			last := calls[len(calls)-1]
			r := pairs[last]
			if r == nil || string(last.Tool().Input) != tt.input || r.Tool().Output != tt.output {
				t.Errorf("the last call: input %s, result %v; want %s, %q", last.Tool().Input, r, tt.input, tt.output)
			}
		})
	}
}

//go:build !wasip1

package claude_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/claude"
	"github.com/twasm/twasm/transcript"
)

// TestCallIDScopes checks a session whose model server names every call
// call_1 and whose Task call starts a sub-agent: the sub-agent's own
// call_1 is a call of its scope, answered there, while the Task call
// waits in the step's scope for its own result; a main-thread call
// pending beside the Task keeps its result too. In each of the three
// ways a sub-agent's records come (stream-json lines naming their
// parent_tool_use_id, session-log sidechain records, agent_progress
// records). A Task call that reuses the id of one whose sub-agent ran
// opens a scope of its own.
func TestCallIDScopes(t *testing.T) {
	const task = `{"type":"tool_use","id":"call_1","name":"Task","input":{"description":"Survey","prompt":"List the files.","subagent_type":"Explore"}}`
	const bash = `{"type":"tool_use","id":"call_1","name":"Bash","input":{"command":"ls"}}`
	result := func(id, out string) string {
		return `{"type":"tool_result","tool_use_id":"` + id + `","content":"` + out + `"}`
	}
	// stream-json lines; parent is the parent_tool_use_id ("" for null).
	sj := func(typ, msgID, parent, block string) string {
		p := `null`
		if parent != "" {
			p = `"` + parent + `"`
		}
		m := `{"role":"user","content":[` + block + `]}`
		if typ == "assistant" {
			m = `{"id":"` + msgID + `","type":"message","role":"assistant","model":"m","content":[` + block + `]}`
		}
		return `{"type":"` + typ + `","message":` + m + `,"parent_tool_use_id":` + p + `,"session_id":"s1"}`
	}
	// Session-log records; parentUuid "" is null.
	rec := func(uuid, parentUUID string, side bool, typ, msgID, block string) string {
		p, sc := `null`, `false`
		if parentUUID != "" {
			p = `"` + parentUUID + `"`
		}
		if side {
			sc = `true`
		}
		m := `{"role":"user","content":[` + block + `]}`
		if typ == "assistant" {
			m = `{"id":"` + msgID + `","type":"message","role":"assistant","model":"m","content":[` + block + `]}`
		}
		return `{"type":"` + typ + `","uuid":"` + uuid + `","parentUuid":` + p + `,"isSidechain":` + sc + `,"sessionId":"s1","timestamp":"2026-01-05T10:00:00.000Z","message":` + m + `}`
	}
	prompt := rec("u0", "", false, "user", "", `{"type":"text","text":"Go."}`)
	sidePrompt := func(uuid string) string {
		return `{"type":"user","uuid":"` + uuid + `","parentUuid":null,"isSidechain":true,"sessionId":"s1","timestamp":"2026-01-05T10:00:00.000Z","message":{"role":"user","content":"List the files."}}`
	}
	// agent_progress records of the sub-agent started by call_1.
	prog := func(uuid, typ, msgID, block string) string {
		m := `{"role":"user","content":[` + block + `]}`
		if typ == "assistant" {
			m = `{"id":"` + msgID + `","type":"message","role":"assistant","model":"m","content":[` + block + `]}`
		}
		return `{"type":"progress","uuid":"p` + uuid + `","parentUuid":"a1","isSidechain":false,"sessionId":"s1","timestamp":"2026-01-05T10:00:00.000Z","parentToolUseID":"call_1","toolUseID":"agent_1","data":{"type":"agent_progress","prompt":"List the files.","agentId":"ag1","message":{"type":"` + typ + `","uuid":"` + uuid + `","message":` + m + `}}}`
	}
	subTrace := []string{
		"main: call Task call_1",
		"open call_1 by call_1",
		"call_1: call Bash call_1",
		"call_1: result Bash call_1: main.go",
		"main: result Task call_1: one file",
		"close call_1 ok",
	}
	// The main call_1 pending beside the Task call_2.
	besideTrace := []string{
		"main: call Bash call_1",
		"main: call Task call_2",
		"open call_2 by call_2",
		"call_2: call Read call_1",
		"call_2: result Read call_1: module m",
		"main: result Bash call_1: main.go",
		"main: result Task call_2: one file",
		"close call_2 ok",
	}
	// Two Task calls of one id, each with its sub-agent.
	reusedTrace := []string{
		"main: call Task call_1",
		"open call_1 by call_1",
		"main: result Task call_1: first done",
		"close call_1 ok",
		"main: call Task call_1",
		"open call_1#2 by call_1",
		"main: result Task call_1: second done",
		"close call_1#2 ok",
	}
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"stream-json: the sub-agent's call reuses the Task's id", []string{
			sj("assistant", "msg_1", "", task),
			sj("assistant", "msg_s1", "call_1", bash),
			sj("user", "", "call_1", result("call_1", "main.go")),
			sj("assistant", "msg_s2", "call_1", `{"type":"text","text":"one file"}`),
			sj("user", "", "", result("call_1", "one file")),
		}, subTrace},
		{"session log: the sidechain's call reuses the Task's id", []string{
			prompt,
			rec("a1", "u0", false, "assistant", "msg_1", task),
			sidePrompt("s1"),
			rec("s2", "s1", true, "assistant", "msg_s1", bash),
			rec("s3", "s2", true, "user", "", result("call_1", "main.go")),
			rec("s4", "s3", true, "assistant", "msg_s2", `{"type":"text","text":"one file"}`),
			rec("u1", "a1", false, "user", "", result("call_1", "one file")),
		}, subTrace},
		{"agent_progress: the sub-agent's call reuses the Task's id", []string{
			prompt,
			rec("a1", "u0", false, "assistant", "msg_1", task),
			prog("s2", "assistant", "msg_s1", bash),
			prog("s3", "user", "", result("call_1", "main.go")),
			prog("s4", "assistant", "msg_s2", `{"type":"text","text":"one file"}`),
			rec("u1", "a1", false, "user", "", result("call_1", "one file")),
		}, subTrace},
		{"stream-json: a main call pending beside the Task", []string{
			sj("assistant", "msg_1", "", bash+`,{"type":"tool_use","id":"call_2","name":"Task","input":{"description":"Survey","prompt":"List the files.","subagent_type":"Explore"}}`),
			sj("assistant", "msg_s1", "call_2", `{"type":"tool_use","id":"call_1","name":"Read","input":{"file_path":"go.mod"}}`),
			sj("user", "", "call_2", result("call_1", "module m")),
			sj("user", "", "", result("call_1", "main.go")),
			sj("user", "", "", result("call_2", "one file")),
		}, besideTrace},
		{"session log: a main call pending beside the Task", []string{
			prompt,
			rec("a1", "u0", false, "assistant", "msg_1", bash+`,{"type":"tool_use","id":"call_2","name":"Task","input":{"description":"Survey","prompt":"List the files.","subagent_type":"Explore"}}`),
			sidePrompt("s1"),
			rec("s2", "s1", true, "assistant", "msg_s1", `{"type":"tool_use","id":"call_1","name":"Read","input":{"file_path":"go.mod"}}`),
			rec("s3", "s2", true, "user", "", result("call_1", "module m")),
			rec("u1", "a1", false, "user", "", result("call_1", "main.go")),
			rec("u2", "u1", false, "user", "", result("call_2", "one file")),
		}, besideTrace},
		{"stream-json: a Task reuses the id of one whose sub-agent ran", []string{
			sj("assistant", "msg_1", "", task),
			sj("assistant", "msg_s1", "call_1", `{"type":"text","text":"first"}`),
			sj("user", "", "", result("call_1", "first done")),
			sj("assistant", "msg_2", "", task),
			sj("assistant", "msg_s2", "call_1", `{"type":"text","text":"second"}`),
			sj("user", "", "", result("call_1", "second done")),
		}, reusedTrace},
		{"session log: a Task reuses the id of one whose sidechain ran", []string{
			prompt,
			rec("a1", "u0", false, "assistant", "msg_1", task),
			sidePrompt("s1"),
			rec("s2", "s1", true, "assistant", "msg_s1", `{"type":"text","text":"first"}`),
			rec("u1", "a1", false, "user", "", result("call_1", "first done")),
			rec("a2", "u1", false, "assistant", "msg_2", task),
			sidePrompt("t1"),
			rec("t2", "t1", true, "assistant", "msg_t1", `{"type":"text","text":"second"}`),
			rec("u2", "a2", false, "user", "", result("call_1", "second done")),
		}, reusedTrace},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plugintest.WantToolTrace(t, claude.Plugin, "claude", tt.lines, tt.want)
		})
	}
}

// streamLine is a stream-json line of type typ ("assistant": message
// msg; else a user line) holding block, of the sub-agent parent started
// ("" for the step's own).
func streamLine(typ, parent, msg, block string) string {
	p := `null`
	if parent != "" {
		p = `"` + parent + `"`
	}
	m := `{"role":"user","content":[` + block + `]}`
	if typ == "assistant" {
		m = `{"id":"` + msg + `","type":"message","role":"assistant","model":"m","content":[` + block + `]}`
	}
	return `{"type":"` + typ + `","message":` + m + `,"parent_tool_use_id":` + p + `,"session_id":"s1"}`
}

// TestPermissionCallOnce checks that a call a can_use_tool request asked
// about is reported once, in the scope it shows up in: its tool_use in a
// sub-agent's scope, or its result alone (the call synthesized); one
// that never shows up is a dangling call of the step's scope.
func TestPermissionCallOnce(t *testing.T) {
	ask := func(id string) string {
		return `{"type":"control_request","request_id":"req_` + id + `","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls"},"tool_use_id":"` + id + `"}}`
	}
	line := func(typ, parent, block string) string { return streamLine(typ, parent, "msg_"+parent, block) }
	const task = `{"type":"tool_use","id":"toolu_T","name":"Task","input":{"description":"Survey","prompt":"List the files.","subagent_type":"Explore"}}`
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"its tool_use in a sub-agent's scope", []string{
			line("assistant", "", task),
			ask("toolu_B"),
			line("assistant", "toolu_T", `{"type":"tool_use","id":"toolu_B","name":"Bash","input":{"command":"ls"}}`),
			line("user", "toolu_T", `{"type":"tool_result","tool_use_id":"toolu_B","content":"main.go"}`),
			line("user", "", `{"type":"tool_result","tool_use_id":"toolu_T","content":"done"}`),
		}, []string{
			"main: call Task toolu_T",
			"open toolu_T by toolu_T",
			"toolu_T: call Bash toolu_B",
			"toolu_T: result Bash toolu_B: main.go",
			"main: result Task toolu_T: done",
			"close toolu_T ok",
		}},
		{"its result alone", []string{
			ask("toolu_B"),
			line("user", "", `{"type":"tool_result","tool_use_id":"toolu_B","content":"main.go"}`),
		}, []string{
			"main: call unknown toolu_B",
			"main: result unknown toolu_B: main.go",
		}},
		{"never shows up", []string{ask("toolu_B")}, []string{"main: call Bash toolu_B"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plugintest.WantToolTrace(t, claude.Plugin, "claude", tt.lines, tt.want)
		})
	}
}

// TestPermissionScopes checks whose call a can_use_tool request is about
// when ids repeat across scopes (a model server naming every call
// call_N): the request names the call by its id alone (and agent_id when
// a sub-agent asks, claude-agent-sdk's SDKControlPermissionRequest), and
// what it says is kept with the call it was about, by scope and id. A
// request for a step's call does not make a sub-agent's failed call of
// the id denied; a request made while the step's Task call of the id runs
// its sub-agent is the sub-agent's call's.
func TestPermissionScopes(t *testing.T) {
	ask := func(id, agent string) string {
		a := ""
		if agent != "" {
			a = `,"agent_id":"` + agent + `"`
		}
		return `{"type":"control_request","request_id":"req_` + id + agent + `","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"make"},"tool_use_id":"` + id + `"` + a + `}}`
	}
	line := streamLine
	const task = `{"type":"tool_use","id":"call_1","name":"Task","input":{"description":"Build","prompt":"Run make.","subagent_type":"general-purpose"}}`
	bash := func(id string) string {
		return `{"type":"tool_use","id":"` + id + `","name":"Bash","input":{"command":"make"}}`
	}
	failed := func(id string) string {
		return `{"type":"tool_result","tool_use_id":"` + id + `","content":"make: *** No rule to make target","is_error":true}`
	}
	statuses := func(o *plugintest.Outcome) []string {
		var got []string
		for _, it := range o.Sink.Items {
			if it.Event != nil && it.Event.Type == transcript.ToolResult {
				tp := it.Event.Tool()
				got = append(got, strings.TrimPrefix(it.Scope+" ", " ")+tp.CallID+" "+tp.Status)
			}
		}
		return got
	}
	tests := []struct {
		name  string
		lines []string
		want  []string // scope, call id and status of every result, in order
	}{
		{"the step's call asked; a sub-agent's call of the id fails", []string{
			line("assistant", "", "msg_1", task+","+bash("call_2")),
			ask("call_2", ""), // answered outside the capture: allowed
			line("assistant", "call_1", "msg_s1", bash("call_2")),
			line("user", "call_1", "", failed("call_2")),
			line("user", "", "", `{"type":"tool_result","tool_use_id":"call_2","content":"built"}`),
			line("user", "", "", `{"type":"tool_result","tool_use_id":"call_1","content":"done"}`),
		}, []string{"call_1 call_2 error", "call_2 ok", "call_1 ok"}},
		{"asked while the Task call of the id runs its sub-agent", []string{
			line("assistant", "", "msg_1", task),
			line("assistant", "call_1", "msg_s1", bash("call_1")),
			ask("call_1", ""),
			line("user", "call_1", "", failed("call_1")),
			line("user", "", "", `{"type":"tool_result","tool_use_id":"call_1","content":"the build failed","is_error":true}`),
		}, []string{"call_1 call_1 denied", "call_1 error"}},
		{"a sub-agent asks (agent_id)", []string{
			line("assistant", "", "msg_1", task+","+bash("call_2")),
			line("assistant", "call_1", "msg_s1", bash("call_2")),
			ask("call_2", "a1b2c3"),
			line("user", "", "", failed("call_2")),
			line("user", "call_1", "", failed("call_2")),
			line("user", "", "", `{"type":"tool_result","tool_use_id":"call_1","content":"done"}`),
		}, []string{"call_2 error", "call_1 call_2 denied", "call_1 ok"}},
		{"a sub-agent asks before its call shows up, the Task call of the id running", []string{
			line("assistant", "", "msg_1", task),
			line("assistant", "call_1", "msg_s0", `{"type":"text","text":"Building."}`),
			ask("call_1", "a1b2c3"),
			line("assistant", "call_1", "msg_s1", bash("call_1")),
			line("user", "call_1", "", failed("call_1")),
			line("user", "", "", `{"type":"tool_result","tool_use_id":"call_1","content":"the build failed","is_error":true}`),
		}, []string{"call_1 call_1 denied", "call_1 error"}},
		{"asked with no agent_id while the Task call of the id runs, its call not shown yet", []string{
			line("assistant", "", "msg_1", task),
			line("assistant", "call_1", "msg_s0", `{"type":"text","text":"Building."}`),
			ask("call_1", ""),
			line("assistant", "call_1", "msg_s1", bash("call_1")),
			line("user", "call_1", "", failed("call_1")),
			line("user", "", "", `{"type":"tool_result","tool_use_id":"call_1","content":"the build failed","is_error":true}`),
		}, []string{"call_1 call_1 denied", "call_1 error"}},
		{"a request whose call never shows up beside a Task call of the id", []string{
			line("assistant", "", "msg_1", task),
			line("assistant", "call_1", "msg_s0", `{"type":"text","text":"Building."}`),
			ask("call_1", "a1b2c3"),
			line("user", "", "", `{"type":"tool_result","tool_use_id":"call_1","content":"done"}`),
		}, []string{"call_1 ok"}},
		{"asked before the sub-agent's call shows up", []string{
			line("assistant", "", "msg_1", task),
			ask("call_2", ""),
			line("assistant", "call_1", "msg_s1", bash("call_2")),
			line("user", "call_1", "", failed("call_2")),
			line("user", "", "", `{"type":"tool_result","tool_use_id":"call_1","content":"done"}`),
		}, []string{"call_1 call_2 denied", "call_1 ok"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := plugintest.Run(t, claude.Plugin, []byte(strings.Join(tt.lines, "\n")+"\n"), normalize.Options{Provider: "claude"})
			if got := statuses(o); !slices.Equal(got, tt.want) {
				t.Errorf("results %q, want %q", got, tt.want)
			}
			calls := map[string]int{}
			for _, it := range o.Sink.Items {
				if it.Event != nil && it.Event.Type == transcript.ToolCall {
					if calls[it.Scope+" "+it.Event.Tool().CallID]++; calls[it.Scope+" "+it.Event.Tool().CallID] > 1 {
						t.Errorf("call %s %s written twice", it.Scope, it.Event.Tool().CallID)
					}
				}
			}
		})
	}
}

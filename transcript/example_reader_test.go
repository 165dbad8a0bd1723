package transcript_test

import (
	"fmt"
	"strings"

	"github.com/twasm/twasm/transcript"
)

// A transcript whose writer was killed: a tool call that failed, a line of
// a newer writer's event type, and a torn last line.
const killedRun = `{"seq":1,"run_id":"5b6f3c2e-8d1a-4f0b-9c7e-2a4d6e8f0a1b","type":"run.started","path":"","iteration":0,"timestamp":"2026-11-24T19:26:06.737Z","payload":{"name":"review","kind":"workflow","schema":"twasm.transcript/1","producer":{"name":"twasm"}}}
{"seq":2,"run_id":"5b6f3c2e-8d1a-4f0b-9c7e-2a4d6e8f0a1b","type":"step.started","path":"review","iteration":0,"timestamp":"2026-11-24T19:26:06.737Z","payload":{"name":"review","kind":"agent"}}
{"seq":3,"run_id":"5b6f3c2e-8d1a-4f0b-9c7e-2a4d6e8f0a1b","type":"message.user","path":"review","iteration":0,"timestamp":"2026-11-24T19:26:06.737Z","payload":{"role":"user","blocks":[{"type":"text","fidelity":"router","text":"Run the tests.","origin":"prompt"}]}}
{"seq":4,"run_id":"5b6f3c2e-8d1a-4f0b-9c7e-2a4d6e8f0a1b","type":"tool.call","path":"review","iteration":0,"timestamp":"2026-11-24T19:26:06.738Z","payload":{"name":"Bash","call_id":"c1","input":{"command":"go test ./..."},"fidelity":"agent_emitted","kind":"execute"}}
{"seq":5,"run_id":"5b6f3c2e-8d1a-4f0b-9c7e-2a4d6e8f0a1b","type":"tool.result","path":"review","iteration":0,"timestamp":"2026-11-24T19:26:06.738Z","payload":{"name":"Bash","call_id":"c1","output":"FAIL","exit_code":1,"fidelity":"agent_emitted","kind":"execute"}}
{"seq":6,"run_id":"5b6f3c2e-8d1a-4f0b-9c7e-2a4d6e8f0a1b","type":"agent.heartbeat","path":"review","iteration":0,"timestamp":"2026-11-24T19:26:07.000Z","payload":{}}
{"seq":7,"run_id":"5b6f3c2e-8d1a-4f0b-9c7e-2a4d6e8f0a1b","type":"step.comp`

// Reading and validating a transcript: the Reader goes on past a line it
// cannot decode, reports unknown types as warnings with the event still
// usable, and ToolOutcome reads a tool result's status whatever version
// wrote it; Validate checks the file against the format and lists what
// it breaks, each issue with its line and a stable code.
func ExampleReader() {
	r := transcript.NewReader(strings.NewReader(killedRun))
	for r.Next() {
		ev := r.Event()
		for _, p := range r.Problems() {
			if ev == nil {
				fmt.Println("unreadable:", p)
			} else {
				fmt.Println("warning:", p)
			}
		}
		if ev == nil {
			continue
		}
		if tp := ev.Tool(); tp != nil && ev.Type == transcript.ToolResult {
			fmt.Println(ev.Seq, ev.Type, tp.Name, transcript.ToolOutcome(tp))
			continue
		}
		fmt.Printf("%d %s %q\n", ev.Seq, ev.Type, ev.Path)
	}
	if err := r.Err(); err != nil {
		panic(err) // an I/O error, not a bad line
	}

	rep := transcript.Validate(strings.NewReader(killedRun), transcript.ValidateOptions{})
	fmt.Println("valid:", rep.OK(), "finished:", rep.Finished)
	for _, is := range rep.Errors {
		fmt.Println("error:", is)
	}
	for _, is := range rep.Warnings {
		fmt.Println("warning:", is)
	}
	// Output:
	// 1 run.started ""
	// 2 step.started "review"
	// 3 message.user "review"
	// 4 tool.call "review"
	// 5 tool.result Bash error
	// warning: line 6: unknown event type "agent.heartbeat"
	// 6 agent.heartbeat "review"
	// unreadable: line 7: malformed transcript line: unexpected end of JSON input (truncated final line (no trailing LF))
	// valid: false finished: false
	// error: line 7: torn_line: malformed transcript line: unexpected end of JSON input (truncated final line (no trailing LF))
	// warning: unfinished: no run.completed: the run is still going or its writer was stopped
	// warning: line 2: step_unclosed: step "review" iteration 0 never completed
	// warning: line 6: unknown_event_type: event type "agent.heartbeat" is not in the vocabulary
}

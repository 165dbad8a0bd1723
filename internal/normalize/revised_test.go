package normalize

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/twasm/twasm/transcript"
)

// TestRevisedToolEvents: a call or result the plugin marks revised (ABI
// 1.13: an element of a Cline or Roo Code task's conversation changed in
// place, read again under a new message key m<i>.<v>) is written as a
// new version of the call or result of its id reported before, marked
// revised (transcript.RevisedField), so that transcript.Pairer counts
// the call once, with its latest input and outcome, none dangling. With
// nothing of its id reported before it is an ordinary call or result.
// Before, a call changed after its result was a new call reusing the id,
// left dangling, a call changed before its result was ignored (its new
// input lost) and a changed result was ignored with a warning.
func TestRevisedToolEvents(t *testing.T) {
	use := func(key, id, cmd string, revised bool) string {
		return do(`{"op":"open","key":"`+key+`"}`,
			`{"op":"block","key":"`+key+`","slot":0,"type":"tool_use","tool_name":"Bash","tool_id":"`+id+`","tool_input":{"command":"`+cmd+`"}}`,
			fmt.Sprintf(`{"op":"call","id":"%s","name":"Bash","input":{"command":"%s"},"revised":%v}`, id, cmd, revised),
			`{"op":"close","key":"`+key+`"}`)
	}
	result := func(id, out string, revised bool) string {
		return do(fmt.Sprintf(`{"op":"result","id":"%s","output":"%s","revised":%v}`, id, out, revised))
	}
	for _, c := range []struct {
		name  string
		lines []string
		want  []string // tool events: type, call id, input or output, revised
		// calls is how many calls transcript.Pairer counts; latest the
		// input and output it keeps of each (its latest version's).
		calls  int
		latest []string
		warn   string // a warning that must be there ("" none)
	}{
		{"call changed after its result",
			[]string{use("m1", "c1", "ls", false), result("c1", "a", false), use("m1.1", "c1", "pwd", true)},
			[]string{`call c1 {"command":"ls"}`, "result c1 a", `call c1 {"command":"pwd"} revised`},
			1, []string{`c1 {"command":"pwd"} a`}, ""},
		{"call changed before its result",
			[]string{use("m1", "c1", "l", false), use("m1.1", "c1", "ls", true), result("c1", "a", false)},
			[]string{`call c1 {"command":"l"}`, `call c1 {"command":"ls"} revised`, "result c1 a"},
			1, []string{`c1 {"command":"ls"} a`}, ""},
		{"result changed",
			[]string{use("m1", "c1", "ls", false), result("c1", "a", false), result("c1", "b", true)},
			[]string{`call c1 {"command":"ls"}`, "result c1 a", "result c1 b revised"},
			1, []string{`c1 {"command":"ls"} b`}, ""},
		{"call and result changed",
			[]string{use("m1", "c1", "ls", false), result("c1", "a", false), use("m1.1", "c1", "pwd", true), result("c1", "b", true)},
			[]string{`call c1 {"command":"ls"}`, "result c1 a", `call c1 {"command":"pwd"} revised`, "result c1 b revised"},
			1, []string{`c1 {"command":"pwd"} b`}, ""},
		{"changed twice",
			[]string{use("m1", "c1", "ls", false), result("c1", "a", false), use("m1.1", "c1", "pwd", true), use("m1.2", "c1", "id", true), result("c1", "c", true)},
			[]string{`call c1 {"command":"ls"}`, "result c1 a", `call c1 {"command":"pwd"} revised`, `call c1 {"command":"id"} revised`, "result c1 c revised"},
			1, []string{`c1 {"command":"id"} c`}, ""},
		{"changed call reported again from its new message",
			[]string{use("m1", "c1", "ls", false), result("c1", "a", false), use("m1.1", "c1", "pwd", true), use("m1.1", "c1", "pwd", false), result("c1", "a", false)},
			[]string{`call c1 {"command":"ls"}`, "result c1 a", `call c1 {"command":"pwd"} revised`},
			1, []string{`c1 {"command":"pwd"} a`}, "second result for tool call c1"},
		{"a new call reusing the id after a changed one",
			[]string{use("m1", "c1", "ls", false), result("c1", "a", false), use("m1.1", "c1", "pwd", true), use("m2", "c1", "id", false), result("c1", "b", false)},
			[]string{`call c1 {"command":"ls"}`, "result c1 a", `call c1 {"command":"pwd"} revised`, `call c1 {"command":"id"}`, "result c1 b"},
			2, []string{`c1 {"command":"pwd"} a`, `c1 {"command":"id"} b`}, ""},
		{"revised with no call of its id before: an ordinary call",
			[]string{use("m1.1", "c1", "ls", true), result("c1", "a", false)},
			[]string{`call c1 {"command":"ls"}`, "result c1 a"},
			1, []string{`c1 {"command":"ls"} a`}, ""},
		{"revised with no result of its id before: an ordinary result",
			[]string{use("m1", "c1", "ls", false), result("c1", "a", true)},
			[]string{`call c1 {"command":"ls"}`, "result c1 a"},
			1, []string{`c1 {"command":"ls"} a`}, ""},
		{"revised result with no call: a call synthesized",
			[]string{result("c1", "a", true)},
			[]string{"call c1 ", "result c1 a"},
			1, []string{"c1  a"}, "c1 had no tool call"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sink, res := runScript(t, c.lines...)
			var got []string
			var evs []*transcript.Event
			for _, e := range events(sink, "") {
				if p := e.Tool(); p != nil {
					s := fmt.Sprintf("result %s %s", p.CallID, p.Output)
					if e.Type == transcript.ToolCall {
						s = fmt.Sprintf("call %s %s", p.CallID, p.Input)
					}
					if p.Revised() {
						s += " revised"
					}
					got, evs = append(got, s), append(evs, e)
				}
			}
			assert.Equal(t, c.want, got)
			// Each call once, at its latest version, with its latest
			// result, as every reader reads them.
			pairs, old := transcript.PairEvents(evs), transcript.Superseded(evs)
			var latest []string
			for _, e := range evs {
				if e.Type != transcript.ToolCall || old[e] {
					continue
				}
				r := pairs[e]
				if assert.NotNil(t, r, "call %s dangling", e.Tool().CallID) {
					latest = append(latest, e.Tool().CallID+" "+string(e.Tool().Input)+" "+r.Tool().Output)
				}
			}
			assert.Equal(t, c.calls, len(latest), "calls counted")
			assert.Equal(t, c.latest, latest, "each call's latest input and output")
			assert.Empty(t, res.Dangling, "calls dangling in the step result")
			if c.warn == "" {
				assert.Empty(t, res.Warnings)
			} else {
				assert.Contains(t, strings.Join(res.Warnings, "\n"), c.warn)
			}
		})
	}
}

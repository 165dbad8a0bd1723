//go:build !wasip1

package cline_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/cline"
)

// TestUnnamedSubTask: the result Roo Code before 3.35 (Kilo Code before
// 4.135) gives a new_task call names no task, and the sub-task's folder
// names no parent (RooCodeInc/Roo-Code v3.34.8: NewTaskTool's
// "Successfully created new task in <mode> mode with message: ...",
// Task.completeSubtask's "[new_task completed] Result: ..." as the
// call's tool_result under the native protocol; HistoryItem's
// parentTaskId kept in the editor's state only): the step warns that
// the sub-task is a run of its own, once per call. A result that names
// the sub-task (3.35 to 3.48, linked by the host) or a failure gets no
// such warning. Before, nothing said why the call had no child run.
func TestUnnamedSubTask(t *testing.T) {
	call := func(id string) string {
		return `{"role":"assistant","content":[{"type":"tool_use","id":"` + id + `","name":"new_task","input":{"mode":"code","message":"Write the tests."}}],"ts":1772359203000}`
	}
	result := func(id, text string) string {
		return `{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + id + `","content":"` + text + `"}],"ts":1772359210000}`
	}
	for _, c := range []struct {
		name   string
		msgs   []string
		warned []string // call ids
	}{
		{"native, before 3.35", []string{call("t1"), result("t1", `[new_task completed] Result: Added parser_test.go.`)}, []string{"t1"}},
		{"XML, before 3.35", []string{
			`{"role":"assistant","content":[{"type":"text","text":"<new_task>\n<mode>code</mode>\n<message>Write the tests.</message>\n</new_task>"}],"ts":1772359203000}`,
			`{"role":"user","content":[{"type":"text","text":"[new_task in Code mode: 'Write the tests.'] Result:"},{"type":"text","text":"Successfully created new task in Code mode with message: Write the tests. and 0 todo items"}],"ts":1772359204000}`},
			[]string{"cline-1-x0"}},
		{"two calls", []string{call("t1"), result("t1", `[new_task completed] Result: A.`), call("t2"), result("t2", `[new_task completed] Result: B.`)}, []string{"t1", "t2"}},
		{"3.35: the result names the sub-task", []string{call("t1"), result("t1", `Subtask c2000000-0000-4000-8000-000000000002 completed.\n\nResult:\nAdded parser_test.go.`)}, nil},
		{"a failure", []string{call("t1"), result("t1", `Invalid mode: codex`)}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			raw := `{"$twasm":"source","store":"Roo Code tasks (Code)","path":"t1","name":"t1","size":1,"mtime":"2026-03-01T10:00:10Z"}` + "\n" +
				`{"$twasm":"file","path":"api_conversation_history.json","size":1,"mtime":"2026-03-01T10:00:10Z","document":true}` + "\n" +
				`[{"role":"user","content":[{"type":"text","text":"<task>\nAdd tests\n</task>"}],"ts":1772359200000},` + strings.Join(c.msgs, ",") + "]\n"
			res := plugintest.Run(t, cline.Plugin, []byte(raw), normalize.Options{Provider: "roo"}).Result
			var got []string
			for _, w := range res.Warnings {
				if id, ok := strings.CutPrefix(w, "roo: new_task call "); ok {
					got = append(got, strings.Fields(id)[0])
				}
			}
			if !slices.Equal(got, c.warned) {
				t.Errorf("warned of calls %q, want %q (warnings %q)", got, c.warned, res.Warnings)
			}
		})
	}
}

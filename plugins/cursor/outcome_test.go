//go:build !wasip1

package cursor_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/cursor"
)

// TestToolOutcomeMemberOrder: a completed tool_call's result object holds
// its outcome as a member named for it (success, failure, rejected,
// timeout, ...) beside flags such as isBackground, which cursor-agent
// writes after the outcome (a real capture: {"success":{...},
// "isBackground":false}) but which JSON leaves free to come first. The
// outcome is read by its member, whatever the order: a failure written
// after isBackground was read as an outcome named "isBackground" whose
// output was "false", and a result holding only the flag as an error,
// where its outcome is not known. The member's name says the outcome
// (the members of a protobuf oneof, as a peer's parser of current
// streams lists them): success's variants (complete, startSuccess, ...)
// succeeded, where anything but success was an error; approved, async,
// stillRunning and needsConfirmation leave the work undone (no result,
// a warning); any other failed.
func TestToolOutcomeMemberOrder(t *testing.T) {
	const sid = `"session_id":"s1"`
	initLine := `{"type":"system","subtype":"init","cwd":"/w",` + sid + `,"model":"Auto"}`
	user := `{"type":"user","message":{"role":"user","content":[{"type":"text","text":"run it"}]},` + sid + `}`
	done := `{"type":"result","subtype":"success","duration_ms":10,"is_error":false,"result":"",` + sid + `}`
	completed := func(result string) string {
		return `{"type":"tool_call","subtype":"completed","call_id":"c1","tool_call":{"shellToolCall":{"args":{"command":"make test","isBackground":false},"result":` + result + `}},` + sid + `}`
	}
	type res struct{ status, output, err string }
	tests := []struct {
		name     string
		result   string
		want     []res // nil: no result (dangling)
		warnings []string
	}{
		{"success, then the flag (as cursor-agent writes it)", `{"success":{"command":"make test","exitCode":0,"stdout":"ok","stderr":"","interleavedOutput":"ok"},"isBackground":false}`,
			[]res{{"ok", "ok", ""}}, nil},
		{"the flag, then success", `{"isBackground":false,"success":{"exitCode":0,"interleavedOutput":"ok"}}`,
			[]res{{"ok", "ok", ""}}, nil},
		{"failure, then the flag", `{"failure":{"command":"make test","exitCode":1,"stdout":"","stderr":"boom"},"isBackground":false}`,
			[]res{{"error", "boom", "boom"}}, nil},
		{"the flag, then failure", `{"isBackground":false,"failure":{"command":"make test","exitCode":1,"stdout":"","stderr":"boom"}}`,
			[]res{{"error", "boom", "boom"}}, nil},
		{"the flag, then a failure naming no error", `{"isBackground":true,"failure":{"exitCode":1}}`,
			[]res{{"error", `{"exitCode":1}`, "the tool call ended with failure"}}, nil},
		{"the flag, then rejected", `{"isBackground":false,"rejected":{"command":"make test","reason":"not allowed"}}`,
			[]res{{"denied", "", "not allowed"}}, nil},
		{"the flag, then a timeout", `{"isBackground":false,"timeout":{"message":"timed out after 10s"}}`,
			[]res{{"error", "timed out after 10s", "timed out after 10s"}}, nil},
		{"the flag, then an error as a string", `{"isBackground":false,"error":"spawn sh ENOENT"}`,
			[]res{{"error", "spawn sh ENOENT", "spawn sh ENOENT"}}, nil},
		{"complete, a success by another name", `{"isBackground":false,"complete":{"message":"todo list updated"}}`,
			[]res{{"ok", "todo list updated", ""}}, nil},
		{"startSuccess", `{"startSuccess":{"message":"started"},"isBackground":true}`,
			[]res{{"ok", "started", ""}}, nil},
		{"spawnError", `{"isBackground":false,"spawnError":{"error":"spawn sh ENOENT"}}`,
			[]res{{"error", `{"error":"spawn sh ENOENT"}`, "spawn sh ENOENT"}}, nil},
		{"still running: no outcome yet", `{"isBackground":true,"stillRunning":{}}`,
			nil, []string{"cursor tool call c1 completed as stillRunning: its outcome is not known"}},
		{"waiting for a confirmation: no outcome yet", `{"needsConfirmation":{}}`,
			nil, []string{"cursor tool call c1 completed as needsConfirmation: its outcome is not known"}},
		{"the flag alone: no outcome", `{"isBackground":true}`,
			nil, []string{"cursor tool call c1 completed without a result"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := strings.Join([]string{initLine, user, completed(tt.result), done}, "\n") + "\n"
			o := plugintest.Run(t, cursor.Plugin, []byte(in), normalize.Options{Provider: "cursor"})
			calls, results := o.Tools()
			if len(calls) != 1 {
				t.Fatalf("%d calls, want 1", len(calls))
			}
			var got []res
			for _, r := range results {
				got = append(got, res{r.Status, r.Output, r.Error})
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("results (status, output, error) %q, want %q", got, tt.want)
			}
			if !slices.Equal(o.Result.Warnings, tt.warnings) {
				t.Errorf("warnings %q, want %q", o.Result.Warnings, tt.warnings)
			}
			if len(o.Result.Unmapped) != 0 {
				t.Errorf("unmapped %v", o.Result.Unmapped)
			}
		})
	}
}

//go:build !wasip1

package droid_test

import (
	"context"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/droid"
)

// TestExecToolCallID: a droid exec event that names its call by
// toolCallId (beside an id of the event's own, in the versions that
// write both) pairs by toolCallId: the result answers that call, not the
// earliest one waiting, and is never lost for naming an id no call has.
func TestExecToolCallID(t *testing.T) {
	const (
		initL = `{"type":"system","subtype":"init","cwd":"/w","session_id":"s1","model":"m"}`
		call1 = `{"type":"tool_call","id":"call_1","messageId":"m2","toolId":"Execute","toolName":"Execute","parameters":{"command":"ls"},"session_id":"s1"}`
		call2 = `{"type":"tool_call","id":"call_2","messageId":"m2","toolId":"Execute","toolName":"Execute","parameters":{"command":"ls /nope"},"session_id":"s1"}`
		done  = `{"type":"completion","finalText":"Done.","session_id":"s1"}`
	)
	tests := []struct {
		name  string
		lines []string
		want  map[string]string // call id -> result output
	}{
		{"result ids of their own, toolCallId naming the call", []string{initL, call1, call2,
			`{"type":"tool_result","id":"r_9","toolCallId":"call_2","toolId":"Execute","isError":false,"value":"two","session_id":"s1"}`,
			`{"type":"tool_result","id":"r_8","toolCallId":"call_1","toolId":"Execute","isError":false,"value":"one","session_id":"s1"}`, done},
			map[string]string{"call_1": "one", "call_2": "two"}},
		{"calls and results named by toolCallId only", []string{initL,
			`{"type":"tool_call","toolCallId":"tc_1","toolName":"Execute","parameters":{"command":"ls"},"session_id":"s1"}`,
			`{"type":"tool_call","toolCallId":"tc_2","toolName":"Execute","parameters":{"command":"pwd"},"session_id":"s1"}`,
			`{"type":"tool_result","toolCallId":"tc_2","isError":false,"value":"/w","session_id":"s1"}`,
			`{"type":"tool_result","toolCallId":"tc_1","isError":false,"value":"a.go","session_id":"s1"}`, done},
			map[string]string{"tc_1": "a.go", "tc_2": "/w"}},
		{"the call's event id beside its toolCallId", []string{initL,
			`{"type":"tool_call","id":"e_1","toolCallId":"tc_1","toolName":"Execute","parameters":{"command":"ls"},"session_id":"s1"}`,
			`{"type":"tool_result","id":"e_2","toolCallId":"tc_1","isError":false,"value":"a.go","session_id":"s1"}`, done},
			map[string]string{"tc_1": "a.go"}},
		{"id alone, as before", []string{initL, call1, call2,
			`{"type":"tool_result","id":"call_2","toolId":"Execute","isError":false,"value":"two","session_id":"s1"}`,
			`{"type":"tool_result","id":"call_1","toolId":"Execute","isError":false,"value":"one","session_id":"s1"}`, done},
			map[string]string{"call_1": "one", "call_2": "two"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := plugintest.Run(t, droid.Plugin, []byte(strings.Join(tt.lines, "\n")+"\n"), normalize.Options{Provider: "droid"})
			_, results := o.Tools()
			got := map[string]string{}
			for _, r := range results {
				got[r.CallID] = r.Output
			}
			if len(got) != len(tt.want) {
				t.Errorf("results %v, want %v", got, tt.want)
			}
			for id, out := range tt.want {
				if got[id] != out {
					t.Errorf("%s's output %q, want %q (results %v)", id, got[id], out, got)
				}
			}
			if len(o.Result.Warnings) != 0 {
				t.Errorf("warnings %q, want none", o.Result.Warnings)
			}
		})
	}
}

// TestExecSessionAndCwd: the init event states the working directory,
// and some versions name the session sessionId (camel case, as Agent
// Sessions' droid stream-json fixture writes every event): both are read,
// whichever event names the session first.
func TestExecSessionAndCwd(t *testing.T) {
	tests := []struct {
		name, raw, session, cwd string
	}{
		{"snake case on every event", `{"type":"system","subtype":"init","cwd":"/w","session_id":"s1","model":"m"}` + "\n" + `{"type":"completion","finalText":"Done.","session_id":"s1"}`, "s1", "/w"},
		{"camel case", `{"type":"system","subtype":"init","sessionId":"sid_2","cwd":"/tmp/drift","model":"m","id":"sys1"}` + "\n" + `{"type":"completion","sessionId":"sid_2","finalText":"Done","id":"end"}`, "sid_2", "/tmp/drift"},
		{"init without a session id, later events with one", `{"type":"system","subtype":"init","cwd":"/w","model":"m"}` + "\n" + `{"type":"message","role":"user","id":"m1","text":"hi","session_id":"s3"}` + "\n" + `{"type":"completion","finalText":"Done.","session_id":"s3"}`, "s3", "/w"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := sdktest.Run(context.Background(), droid.Plugin, "droid", []byte(tt.raw+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			if r.Step.SessionID != tt.session || r.Step.Cwd != tt.cwd {
				t.Errorf("session %q, cwd %q; want %q, %q", r.Step.SessionID, r.Step.Cwd, tt.session, tt.cwd)
			}
		})
	}
}

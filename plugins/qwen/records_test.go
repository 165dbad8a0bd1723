//go:build !wasip1

package qwen_test

import (
	"context"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/qwen"
)

// TestAPIErrorMessage pins the text of a failed API call's error:
// today's Qwen Code writes it as error_message (its ApiErrorEvent),
// older builds as error, and a record with neither gives its error_type.
// The message must never be reduced to the error's class when it is
// stated.
func TestAPIErrorMessage(t *testing.T) {
	rec := func(ev string) string {
		return `{"uuid":"u1","parentUuid":null,"sessionId":"s","timestamp":"2026-04-23T00:39:48Z","type":"user","cwd":"/w","version":"0.24.4","message":{"role":"user","parts":[{"text":"hi"}]}}` + "\n" +
			`{"uuid":"u2","parentUuid":"u1","sessionId":"s","timestamp":"2026-04-23T00:39:51Z","type":"system","subtype":"ui_telemetry","cwd":"/w","version":"0.24.4","systemPayload":{"uiEvent":{"event.name":"qwen-code.api_error",` + ev + `}}}` + "\n"
	}
	tests := []struct{ name, event, message, code string }{
		{"error_message", `"model":"qwen3.6-plus","duration_ms":2769,"auth_type":"openai","error_message":"Connection error. (cause: fetch failed)","error_type":"APIConnectionError"`, "Connection error. (cause: fetch failed)", "APIConnectionError"},
		{"error_message and a status code", `"error_message":"429 too many requests","error_type":"RateLimitError","status_code":429`, "429 too many requests", "429"},
		{"older builds' error", `"error":"429 Throttling: Requests rate limit exceeded","error_type":"Throttling","status_code":429`, "429 Throttling: Requests rate limit exceeded", "429"},
		{"only the error type", `"error_type":"APIConnectionError"`, "APIConnectionError", "APIConnectionError"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := sdktest.Run(context.Background(), qwen.Plugin, "qwen", []byte(rec(tt.event)))
			if err != nil {
				t.Fatal(err)
			}
			res := r.Step
			if len(res.Errors) != 1 || res.Errors[0].Message != tt.message || res.Errors[0].Code != tt.code {
				t.Fatalf("errors %+v, want one %q (code %q)", res.Errors, tt.message, tt.code)
			}
			if res.Status != "error" {
				t.Errorf("status %q, want error", res.Status)
			}
		})
	}
}

// TestRealtimeDialogue: what the user said in a Realtime voice dialogue
// (a user record of subtype realtime_message, provenance real_user) is a
// prompt, not context the CLI added; its answer is an assistant message.
// Qwen Code writes both as user and assistant records; a system record
// of that subtype is read by its message's role, and one without a
// message holds nothing of the dialogue: ignored, never unmapped.
func TestRealtimeDialogue(t *testing.T) {
	rec := func(uuid, typ, body string) string {
		return `{"uuid":"` + uuid + `","parentUuid":null,"sessionId":"s","timestamp":"2026-09-24T04:08:35Z","type":"` + typ + `","subtype":"realtime_message","cwd":"/w","version":"0.24.4"` + body + "}\n"
	}
	const user = `,"provenance":"real_user","message":{"role":"user","parts":[{"text":"voice question"}]}`
	const model = `,"provenance":"assistant_output","model":"qwen3.5-omni-plus-realtime","message":{"role":"model","parts":[{"text":"voice answer"}]}`
	tests := []struct {
		name, in, prompt, answer string
	}{
		{"user and assistant records", rec("r1", "user", user) + rec("r2", "assistant", model), "voice question", "voice answer"},
		{"system records, read by their message's role", rec("r1", "system", user) + rec("r2", "system", model), "voice question", "voice answer"},
		{"a system record without a message", rec("r0", "system", `,"systemPayload":{}`) + rec("r1", "user", user), "voice question", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := sdktest.Run(context.Background(), qwen.Plugin, "qwen", []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			var prompt, answer string
			for _, e := range r.Events {
				m := e.Event.Message()
				if m == nil {
					continue
				}
				for _, b := range m.Blocks {
					switch {
					case m.Role == "user" && b.Origin == "prompt":
						prompt += b.Text
					case m.Role == "assistant":
						answer += b.Text
					}
				}
			}
			if prompt != tt.prompt || answer != tt.answer {
				t.Errorf("prompt %q, answer %q; want %q as a prompt and %q as its answer", prompt, answer, tt.prompt, tt.answer)
			}
			if len(r.Step.Unmapped) != 0 {
				t.Errorf("unmapped %v, want none", r.Step.Unmapped)
			}
		})
	}
}

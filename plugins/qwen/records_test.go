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
func TestRealtimeDialogue(t *testing.T) {
	in := `{"uuid":"r1","parentUuid":null,"sessionId":"s","timestamp":"2026-09-24T04:08:35Z","type":"user","subtype":"realtime_message","provenance":"real_user","cwd":"/w","version":"0.24.4","message":{"role":"user","parts":[{"text":"voice question"}]}}` + "\n" +
		`{"uuid":"r2","parentUuid":"r1","sessionId":"s","timestamp":"2026-09-24T04:08:37Z","type":"assistant","subtype":"realtime_message","provenance":"assistant_output","cwd":"/w","version":"0.24.4","model":"qwen3.5-omni-plus-realtime","message":{"role":"model","parts":[{"text":"voice answer"}]}}` + "\n"
	r, err := sdktest.Run(context.Background(), qwen.Plugin, "qwen", []byte(in))
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
	if prompt != "voice question" || answer != "voice answer" {
		t.Errorf("prompt %q, answer %q; want the voice question as a prompt and its answer", prompt, answer)
	}
	if r.Step.Status != "ok" || len(r.Step.Unmapped) != 0 {
		t.Errorf("status %q, unmapped %v; want ok and none", r.Step.Status, r.Step.Unmapped)
	}
}

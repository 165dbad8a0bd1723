//go:build !wasip1

package copilot_test

import (
	"context"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/copilot"
)

// TestHooks: Copilot CLI writes a hook.start and a hook.end around every
// run of a hook the user configured (1.0.8x events.jsonl). A run that
// succeeded is bookkeeping (declared ignored), not an unmapped line in
// every session with hooks; one that failed (success false, with
// error.message, as a real 1.0.91 run records "Hook command failed with
// code 1") is a warning naming the hook, not silence.
func TestHooks(t *testing.T) {
	start := sessionStart("1.0.91")
	user := `{"type":"user.message","data":{"content":"Fix the build"},"id":"e1","timestamp":"2026-11-01T10:00:01.000Z","parentId":"e0"}`
	answer := `{"type":"assistant.message","data":{"messageId":"m1","content":"Fixed.","toolRequests":[]},"id":"e4","timestamp":"2026-11-01T10:00:04.000Z","parentId":"e3"}`
	hookStart := `{"type":"hook.start","data":{"hookInvocationId":"h1","hookType":"userPromptSubmitted","input":{"sessionId":"s","prompt":"Fix the build","timestamp":1790000000000}},"id":"e2","timestamp":"2026-11-01T10:00:02.000Z","parentId":"e1"}`
	hookOK := `{"type":"hook.end","data":{"hookInvocationId":"h1","hookType":"userPromptSubmitted","success":true},"id":"e3","timestamp":"2026-11-01T10:00:03.000Z","parentId":"e2"}`
	hookFailed := `{"type":"hook.end","data":{"hookInvocationId":"h1","hookType":"userPromptSubmitted","success":false,"error":{"message":"Error: Hook command failed with code 1\nStderr: bash: /hooks/turn.sh: No such file or directory\n","source":"loci"}},"id":"e3","timestamp":"2026-11-01T10:00:03.000Z","parentId":"e2"}`
	tests := []struct {
		name     string
		lines    []string
		warnings []string
	}{
		{"a hook that succeeded", []string{start, user, hookStart, hookOK, answer}, nil},
		{"a hook that failed", []string{start, user, hookStart, hookFailed, answer},
			[]string{"copilot: hook userPromptSubmitted failed: Error: Hook command failed with code 1\nStderr: bash: /hooks/turn.sh: No such file or directory\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := sdktest.Run(context.Background(), copilot.Plugin, "copilot", []byte(strings.Join(tt.lines, "\n")+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			if r.Step.Status != "ok" || len(r.Step.Errors) != 0 || strings.Join(r.Step.Warnings, "|") != strings.Join(tt.warnings, "|") {
				t.Errorf("status %q, errors %+v, warnings %q; want ok, no error, warnings %q", r.Step.Status, r.Step.Errors, r.Step.Warnings, tt.warnings)
			}
			if len(r.Step.Unmapped) != 0 {
				t.Errorf("unmapped %v, want none", r.Step.Unmapped)
			}
			if r.SilentN != 0 {
				t.Errorf("%d silent lines, want none", r.SilentN)
			}
		})
	}
}

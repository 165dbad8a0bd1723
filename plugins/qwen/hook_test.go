//go:build !wasip1

package qwen_test

import (
	"context"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/qwen"
)

// TestHookContext: Qwen Code appends a UserPromptSubmit hook's
// additionalContext to the prompt's user record as a part of its own,
// wholly wrapped in <qwen:user-prompt-submit-context> (hooks/
// user-prompt-submit-context.ts; the record's systemPayload.hookContext
// repeats it). That part is context the CLI injected, not what the user
// typed; a sole part, or one where the tag is mixed with prose, is the
// user's (Qwen Code's own reading of it).
func TestHookContext(t *testing.T) {
	const tagged = "<qwen:user-prompt-submit-context>\nbranch: main, 3 files changed\n</qwen:user-prompt-submit-context>"
	rec := func(parts, payload string) string {
		return `{"uuid":"u1","parentUuid":null,"sessionId":"s","timestamp":"2026-04-23T00:39:48Z","type":"user","cwd":"/w","version":"0.24.4","message":{"role":"user","parts":[` + parts + `]}` + payload + "}\n"
	}
	tests := []struct {
		name, in, prompt, injected string
	}{
		{"the hook's part after the prompt", rec(`{"text":"fix the build"},{"text":"`+jsonEsc(tagged)+`"}`, `,"systemPayload":{"displayText":"fix the build","hookContext":"branch: main, 3 files changed"}`), "fix the build", tagged},
		{"without the payload", rec(`{"text":"fix the build"},{"text":"  `+jsonEsc(tagged)+`\n"}`, ``), "fix the build", "  " + tagged + "\n"},
		{"a sole tagged part is the user's", rec(`{"text":"`+jsonEsc(tagged)+`"}`, ``), tagged, ""},
		{"the tag inside prose is the user's", rec(`{"text":"fix the build"},{"text":"see `+jsonEsc(tagged)+`"}`, ``), "fix the build" + "see " + tagged, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := sdktest.Run(context.Background(), qwen.Plugin, "qwen", []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			var prompt, injected string
			for _, e := range r.Events {
				m := e.Event.Message()
				if m == nil || m.Role != "user" {
					continue
				}
				for _, b := range m.Blocks {
					switch b.Origin {
					case "prompt":
						prompt += b.Text
					case "injected_context":
						injected += b.Text
					}
				}
			}
			if prompt != tt.prompt || injected != tt.injected {
				t.Errorf("prompt %q, injected %q; want %q and %q", prompt, injected, tt.prompt, tt.injected)
			}
		})
	}
}

// jsonEsc escapes s for a JSON string (newlines only: the tests' texts
// hold no quote or backslash).
func jsonEsc(s string) string {
	out := ""
	for _, c := range s {
		if c == '\n' {
			out += `\n`
			continue
		}
		out += string(c)
	}
	return out
}

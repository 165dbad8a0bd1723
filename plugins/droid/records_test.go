//go:build !wasip1

package droid_test

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/droid"
)

// TestSessionRecords pins the records a session holds beside its
// messages: a turn's outcome decides nothing when it went well and is a
// provider error when it names one (so a session whose last turn failed
// is not ok), an unknown outcome is counted by its kind, a notice Droid
// shows the user only is a warning (an error when it says so, or when it
// ended a turn the model never answered: TestSessionRecords' refused
// turns), never a prompt, one only the model sees is injected context,
// a compaction's summary is injected context with a warning, and the
// todo list and the session's end are accounted for without a record.
func TestSessionRecords(t *testing.T) {
	const (
		start  = `{"type":"session_start","id":"s1","title":"t","cwd":"/w"}`
		prompt = `{"type":"message","id":"u1","timestamp":"2026-07-28T10:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"go"}]}}`
		answer = `{"type":"message","id":"a1","timestamp":"2026-07-28T10:00:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"trying"}]}}`
		// A prompt as Droid writes it (its reminders, then the user's
		// text), the notice it answers one with when it does not run
		// the turn, a second prompt and its answer.
		reminded = `{"type":"message","id":"u1","timestamp":"2026-07-28T10:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"<system-reminder>\nUser system info (linux 6.8.0)\n</system-reminder>"},{"type":"text","text":"<system-reminder>IMPORTANT: TodoWrite was not called yet.</system-reminder>"},{"type":"text","text":"go"}]}}`
		limit    = `{"type":"message","id":"n1","timestamp":"2026-07-28T10:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"Token limit reached. Use /limits to manage your usage preferences or visit https://app.factory.ai/settings/billing"}],"visibility":"user_only"},"parentId":"u1"}`
		again    = `{"type":"message","id":"u2","timestamp":"2026-07-28T10:01:00.000Z","message":{"role":"user","content":[{"type":"text","text":"try again"}]}}`
		answer2  = `{"type":"message","id":"a2","timestamp":"2026-07-28T10:01:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"done"}]}}`
	)
	tests := []struct {
		name     string
		lines    []string
		status   string
		errors   []string // substrings of the step's errors, in order
		unmapped map[string]int
		injected string // the text of an injected-context user message
		warning  string // a substring of a warning
		notice   string // text that must be in no prompt
	}{
		{name: "a turn that went well", lines: []string{start, prompt, answer,
			`{"type":"agent_turn_outcome","turnId":"t1","reason":"end_turn","resultKind":"success"}`}, status: "ok"},
		{name: "reason only", lines: []string{start, prompt, answer,
			`{"type":"agent_turn_outcome","turnId":"t1","reason":"completed"}`}, status: "ok"},
		{name: "a provider error ends the last turn", lines: []string{start, prompt, answer,
			`{"type":"agent_turn_outcome","id":"o1","turnId":"t1","reason":"error","resultKind":"provider_error"}`},
			status: "error", errors: []string{"provider_error"}},
		{name: "an unknown outcome is counted by its kind", lines: []string{start, prompt, answer,
			`{"type":"agent_turn_outcome","turnId":"t1","reason":"stopped","resultKind":"interrupted"}`},
			status: "ok", unmapped: map[string]int{"agent_turn_outcome/interrupted": 1}},
		{name: "a notice shown to the user only is not a prompt", lines: []string{start, prompt,
			`{"type":"message","id":"n1","timestamp":"2026-07-28T10:00:02.000Z","message":{"role":"user","visibility":"user_only","content":[{"type":"text","text":"No active subscription found."}]}}`,
			answer, `{"type":"agent_turn_outcome","id":"o1","turnId":"t1","reason":"error","resultKind":"provider_error"}`},
			status: "error", errors: []string{"provider_error"}, warning: "No active subscription found.", notice: "No active subscription found."},
		{name: "an error notice is a provider error", lines: []string{start, prompt, answer,
			`{"type":"message","id":"msg-050","timestamp":"2026-07-28T10:00:05.000Z","message":{"role":"user","content":[{"type":"text","text":"Error: Connection error."}],"visibility":"user_only"},"parentId":"a1"}`},
			status: "error", errors: []string{"Connection error"}, warning: "Connection error", notice: "Connection error"},
		// Context only the model sees ("visibility": "llm_only", as
		// Droid marks the context it adds) after the last answer: not
		// a prompt left unanswered (it read incomplete), injected.
		{name: "a message only the model sees is injected context", lines: []string{start, prompt, answer,
			`{"type":"message","id":"c1","timestamp":"2026-07-28T10:00:04.000Z","message":{"role":"user","visibility":"llm_only","content":[{"type":"text","text":"The open file is parser.go."}]}}`},
			status: "ok", injected: "The open file is parser.go."},
		// Droid answers a prompt it does not run with a notice shown
		// to the user only ("Token limit reached. ...", parentId the
		// prompt: two real sessions of an unlicensed repository end on
		// a prompt and that notice): the error that ended the turn when
		// no answer of the model comes after it (the log ends, the
		// turn's outcome or the next prompt comes); it read incomplete,
		// "the log ends on a prompt that got no answer". A notice the
		// model answers after, or one after an answer, is a warning
		// only.
		{name: "the log ends on the notice that answered the prompt", lines: []string{start, reminded, limit},
			injected: "TodoWrite was not called yet.", status: "error", errors: []string{"Token limit reached"}, warning: "Token limit reached", notice: "Token limit reached"},
		{name: "the model answered after the notice: a notice in passing", lines: []string{start, reminded, limit, answer},
			injected: "TodoWrite was not called yet.", status: "ok", warning: "Token limit reached", notice: "Token limit reached"},
		{name: "the turn refused, the next prompt answered", lines: []string{start, reminded, limit, again, answer2},
			injected: "TodoWrite was not called yet.", status: "ok", errors: []string{"Token limit reached"}, warning: "Token limit reached", notice: "Token limit reached"},
		{name: "the refused turn's outcome names an error too", lines: []string{start, reminded, limit,
			`{"type":"agent_turn_outcome","turnId":"t1","reason":"error","resultKind":"provider_error"}`},
			injected: "TodoWrite was not called yet.", status: "error", errors: []string{"Token limit reached", "provider_error"}, warning: "Token limit reached", notice: "Token limit reached"},
		{name: "a notice after the answer is a warning only", lines: []string{start, reminded, answer,
			`{"type":"message","id":"n2","timestamp":"2026-07-28T10:00:04.000Z","message":{"role":"user","content":[{"type":"text","text":"Switched to the next model."}],"visibility":"user_only"}}`},
			injected: "TodoWrite was not called yet.", status: "ok", warning: "Switched to the next model.", notice: "Switched to the next model."},
		{name: "a Droid that writes outcomes, its next turn refused", lines: []string{start, reminded, answer,
			`{"type":"agent_turn_outcome","turnId":"t1","reason":"end_turn","resultKind":"success"}`, again, limit},
			injected: "TodoWrite was not called yet.", status: "error", errors: []string{"Token limit reached"}, warning: "Token limit reached", notice: "Token limit reached"},
		{name: "compaction summary, todo list, session end", lines: []string{start, prompt, answer,
			`{"type":"todo_state","id":"d4","timestamp":"2026-07-28T10:00:04.000Z","todos":[{"content":"Fix parser","status":"in_progress"}]}`,
			`{"type":"compaction_state","id":"c","timestamp":"2026-07-28T10:00:05.000Z","summaryText":"S: the parser was fixed","summaryTokens":1,"summaryKind":"llm_summary","anchorMessage":{"id":"a1","index":1},"removedCount":2}`,
			`{"type":"compaction_state","timestamp":"2026-07-28T10:00:06.000Z"}`,
			`{"type":"session_end","id":"e1"}`},
			status: "ok", injected: "S: the parser was fixed", warning: "compacted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := sdktest.Run(context.Background(), droid.Plugin, "droid", []byte(strings.Join(tt.lines, "\n")+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			res := r.Step
			if res.Status != tt.status {
				t.Errorf("status %q, want %q (errors %v)", res.Status, tt.status, res.Errors)
			}
			if len(res.Errors) != len(tt.errors) {
				t.Errorf("errors %v, want %d", res.Errors, len(tt.errors))
			}
			for i, e := range tt.errors {
				if i < len(res.Errors) && !strings.Contains(res.Errors[i].Message, e) {
					t.Errorf("error %d %q, want it to hold %q", i, res.Errors[i].Message, e)
				}
			}
			if !maps.Equal(res.Unmapped, tt.unmapped) {
				t.Errorf("unmapped %v, want %v", res.Unmapped, tt.unmapped)
			}
			if r.SilentN != 0 {
				t.Errorf("%d silent line(s)", r.SilentN)
			}
			var injected string
			for _, e := range r.Events {
				if m := e.Event.Message(); m != nil {
					for _, b := range m.Blocks {
						if b.Origin == "injected_context" {
							injected += b.Text
						}
					}
				}
			}
			if tt.injected != "" && !strings.Contains(injected, tt.injected) || tt.injected == "" && injected != "" {
				t.Errorf("injected context %q, want %q", injected, tt.injected)
			}
			for _, e := range r.Events {
				if m := e.Event.Message(); tt.notice != "" && m != nil {
					for _, b := range m.Blocks {
						if strings.Contains(b.Text, tt.notice) {
							t.Errorf("the notice is in a %s message (%s): %q", m.Role, b.Origin, b.Text)
						}
					}
				}
			}
			warned := tt.warning == ""
			for _, w := range res.Warnings {
				warned = warned || strings.Contains(w, tt.warning)
			}
			if !warned {
				t.Errorf("warnings %q, want one holding %q", res.Warnings, tt.warning)
			}
		})
	}
}

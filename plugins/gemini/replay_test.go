//go:build !wasip1

package gemini_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/gemini"
	"github.com/twasm/twasm/transcript"
)

// TestHistoryWrittenAgain: GeminiChat.setHistory, given messages without
// ids (a checkpoint's history on /chat resume, a tool call's checkpoint
// on /restore, a history the CLI masked or compressed), records each as
// a message of its own under a new id (recordSyntheticMessage: no model,
// no tokens, the content the message's parts), then sets the session's
// messages ($set); google-gemini/gemini-cli 5411f11. Those records are
// no turns: a copy of a turn already reported is that turn, and the rest
// is history the CLI wrote (injected context), so the session's prompts,
// answers, calls and tokens are each counted once. A prompt the user
// types again, and a real answer, are turns as before.
func TestHistoryWrittenAgain(t *testing.T) {
	const (
		header = `{"sessionId":"d1d1d1d1-0000-4000-8000-000000000999","projectHash":"cd34","startTime":"2026-07-03T09:00:00.000Z","lastUpdated":"2026-07-03T09:00:00.000Z","kind":"main"}`
		ctx    = `{"text":"<session_context>\nToday's date is Friday, July 3, 2026.\n</session_context>"}`
		start  = `{"$set":{"messages":[{"id":"ctxA","timestamp":"2026-07-03T09:00:00.001Z","type":"user","content":[` + ctx + `]}],"lastUpdated":"2026-07-03T09:00:00.001Z"}}`
		u1     = `{"id":"u1","timestamp":"2026-07-03T09:00:10.000Z","type":"user","content":[{"text":"Run the tests"}]}`
		g1     = `{"id":"g1","timestamp":"2026-07-03T09:00:12.000Z","type":"gemini","content":"Running them.","thoughts":[],"tokens":{"input":500,"output":10,"cached":0,"thoughts":0,"tool":0,"total":510},"model":"gemini-2.5-flash","toolCalls":[{"id":"c1","name":"run_shell_command","args":{"command":"go test ./..."},"status":"success","timestamp":"2026-07-03T09:00:13.000Z","result":[{"functionResponse":{"id":"c1","name":"run_shell_command","response":{"output":"ok"}}}]}]}`
		g2     = `{"id":"g2","timestamp":"2026-07-03T09:00:15.000Z","type":"gemini","content":"Tests pass.","thoughts":[],"tokens":{"input":600,"output":3,"cached":500,"thoughts":0,"tool":0,"total":603},"model":"gemini-2.5-flash"}`
		u2     = `{"id":"u2","timestamp":"2026-07-03T10:00:10.000Z","type":"user","content":[{"text":"Now lint"}]}`
		g3     = `{"id":"g3","timestamp":"2026-07-03T10:00:12.000Z","type":"gemini","content":"Lint is clean.","thoughts":[],"tokens":{"input":700,"output":4,"cached":600,"thoughts":0,"tool":0,"total":704},"model":"gemini-2.5-flash"}`
	)
	// synth is a record recordSyntheticMessage writes.
	synth := func(id, typ, parts string) string {
		if typ == "gemini" {
			return `{"id":"` + id + `","timestamp":"2026-07-03T10:00:00.000Z","type":"gemini","content":[` + parts + `],"thoughts":[],"tokens":null}`
		}
		return `{"id":"` + id + `","timestamp":"2026-07-03T10:00:00.000Z","type":"user","content":[` + parts + `]}`
	}
	set := func(ids ...string) string {
		var ms []string
		for _, id := range ids {
			ms = append(ms, `{"id":"`+id+`","timestamp":"2026-07-03T10:00:00.000Z","type":"user","content":[{"text":"(the message)"}]}`)
		}
		return `{"$set":{"messages":[` + strings.Join(ms, ",") + `],"lastUpdated":"2026-07-03T10:00:00.005Z"}}`
	}
	// The history of the turn u1 to g2, as a checkpoint holds it.
	again := []string{
		synth("s0", "user", ctx),
		synth("s1", "user", `{"text":"Run the tests"}`),
		synth("s2", "gemini", `{"text":"Running them."},{"functionCall":{"id":"c1","name":"run_shell_command","args":{"command":"go test ./..."}}}`),
		synth("s3", "user", `{"functionResponse":{"id":"c1","name":"run_shell_command","response":{"output":"ok"}}}`),
		synth("s4", "gemini", `{"text":"Tests pass."}`),
		set("s0", "s1", "s2", "s3", "s4"),
	}
	join := func(parts ...[]string) []byte {
		var all []string
		for _, p := range parts {
			all = append(all, p...)
		}
		return []byte(strings.Join(all, "\n") + "\n")
	}
	turn := []string{header, start, u1, g1, g2}
	later := []string{u2, g3}
	// Another session's checkpoint resumed in a new one: none of its
	// turns is this session's.
	other := []string{
		synth("o0", "user", `{"text":"<session_context>\nToday's date is Thursday, July 2, 2026.\n</session_context>"}`),
		synth("o1", "user", `{"text":"Explain main.go"}`),
		synth("o2", "gemini", `{"text":"It starts the server."}`),
		set("o0", "o1", "o2"),
	}
	// A compression: the summary, the CLI's reply to it, and the last
	// turn kept (written again).
	compressed := []string{
		synth("k0", "user", `{"text":"<state_snapshot>\nThe tests pass.\n</state_snapshot>"}`),
		synth("k1", "gemini", `{"text":"Got it. Thanks for the additional context!"}`),
		synth("k2", "gemini", `{"text":"Tests pass."}`),
		set("k0", "k1", "k2"),
	}
	tests := []struct {
		name           string
		in             []byte
		prompts, texts string // joined by "|"
		calls          int
		input          int64
		injected       int // user messages of injected context
		warned         bool
	}{
		{"a session of its own", join(turn, later), "Run the tests|Now lint", "Running them.|Tests pass.|Lint is clean.", 1, 1800, 1, false},
		{"/chat resume or /restore of its own turn", join(turn, again, later), "Run the tests|Now lint", "Running them.|Tests pass.|Lint is clean.", 1, 1800, 1, true},
		{"another session's checkpoint resumed", join([]string{header, start}, other, later), "Now lint", "Lint is clean.", 0, 700, 4, true},
		{"a compression written as records", join(turn, compressed, later), "Run the tests|Now lint", "Running them.|Tests pass.|Lint is clean.", 1, 1800, 3, true},
		{"a prompt typed again is a prompt", join(turn, []string{strings.Replace(u2, "Now lint", "Run the tests", 1), g3}), "Run the tests|Run the tests", "Running them.|Tests pass.|Lint is clean.", 1, 1800, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, texts, calls, in := plugintest.Turns(t, gemini.Plugin, "gemini", tt.in)
			var prompts []string
			injected := 0
			for _, e := range r.Events {
				m := e.Event.Message()
				if e.Type != transcript.MessageUser || m == nil {
					continue
				}
				inj := false
				for _, b := range m.Blocks {
					switch {
					case b.Origin == transcript.OriginPrompt && b.Text != "":
						prompts = append(prompts, b.Text)
					case b.Origin == transcript.OriginInjected:
						inj = true
					}
				}
				if inj {
					injected++
				}
			}
			if got := strings.Join(prompts, "|"); got != tt.prompts {
				t.Errorf("prompts %q; want %q", got, tt.prompts)
			}
			if texts != tt.texts {
				t.Errorf("assistant texts %q; want %q", texts, tt.texts)
			}
			if calls != tt.calls || in != tt.input {
				t.Errorf("%d tool calls, %d input tokens; want %d, %d", calls, in, tt.calls, tt.input)
			}
			if injected != tt.injected {
				t.Errorf("%d user messages of injected context; want %d", injected, tt.injected)
			}
			warned := false
			for _, w := range r.Step.Warnings {
				warned = warned || strings.Contains(w, "history written again")
			}
			if warned != tt.warned {
				t.Errorf("warned %v; want %v (%q)", warned, tt.warned, r.Step.Warnings)
			}
		})
	}
}

//go:build !wasip1

package droid_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/droid"
)

// TestNoticeEndsTurn: Droid answers a prompt it does not run with a
// notice it shows the user only ("visibility": "user_only", parentId
// the prompt), such as "Token limit reached. Use /limits to manage your
// usage preferences or visit https://app.factory.ai/settings/billing"
// (two real sessions of an unlicensed repository end so: the prompt,
// then that notice, then nothing). Such a notice is the error that
// ended the turn when no answer of the model comes after it (the log
// ends, the turn's outcome or the next prompt comes): the session read
// incomplete, "the log ends on a prompt that got no answer", though
// Droid had said why. A notice the model answers after, or one after
// an answer, is a warning only, as before.
func TestNoticeEndsTurn(t *testing.T) {
	const (
		start   = `{"type":"session_start","id":"s1","title":"t","sessionTitle":"New Session","owner":"me","version":2,"cwd":"/w"}`
		prompt  = `{"type":"message","id":"u1","timestamp":"2026-03-30T18:50:09.639Z","message":{"role":"user","content":[{"type":"text","text":"<system-reminder>\nUser system info (darwin 24.6.0)\n</system-reminder>"},{"type":"text","text":"<system-reminder>IMPORTANT: TodoWrite was not called yet.</system-reminder>"},{"type":"text","text":"create a markdown file"}]}}`
		limit   = `{"type":"message","id":"n1","timestamp":"2026-03-30T18:50:10.011Z","message":{"role":"user","content":[{"type":"text","text":"Token limit reached. Use /limits to manage your usage preferences or visit https://app.factory.ai/settings/billing"}],"visibility":"user_only"},"parentId":"u1"}`
		answer  = `{"type":"message","id":"a1","timestamp":"2026-03-30T18:50:12.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Created the file."}]},"parentId":"n1"}`
		again   = `{"type":"message","id":"u2","timestamp":"2026-03-30T19:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"try again"}]}}`
		ok2     = `{"type":"message","id":"a2","timestamp":"2026-03-30T19:00:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Done."}]}}`
		done    = `{"type":"agent_turn_outcome","turnId":"t1","reason":"end_turn","resultKind":"success"}`
		failed  = `{"type":"agent_turn_outcome","turnId":"t2","reason":"error","resultKind":"provider_error"}`
		passing = `{"type":"message","id":"n2","timestamp":"2026-03-30T18:50:13.000Z","message":{"role":"user","content":[{"type":"text","text":"Switched to the next model."}],"visibility":"user_only"}}`
	)
	tests := []struct {
		name   string
		lines  []string
		status string
		errors []string // substrings of the step's errors, in order
	}{
		{"the log ends on the notice that answered the prompt", []string{start, prompt, limit}, "error", []string{"Token limit reached"}},
		{"the model answered after the notice: a notice in passing", []string{start, prompt, limit, answer}, "ok", nil},
		{"the next prompt, answered", []string{start, prompt, limit, again, ok2}, "ok", []string{"Token limit reached"}},
		{"the turn's outcome names an error too", []string{start, prompt, limit, failed}, "error", []string{"Token limit reached", "provider_error"}},
		{"a notice after the answer is a warning only", []string{start, prompt, answer, passing}, "ok", nil},
		{"a Droid that writes outcomes, its next turn refused", []string{start, prompt, answer, done, again, limit}, "error", []string{"Token limit reached"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := sdktest.Run(context.Background(), droid.Plugin, "droid", []byte(strings.Join(tt.lines, "\n")+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			res := r.Step
			if res.Status != tt.status {
				t.Errorf("status %q (%s), want %q", res.Status, res.Error, tt.status)
			}
			var got []string
			for _, e := range res.Errors {
				got = append(got, e.Message+" "+e.Code)
			}
			ok := len(got) == len(tt.errors)
			for i := 0; ok && i < len(got); i++ {
				ok = strings.Contains(got[i], tt.errors[i])
			}
			if !ok {
				t.Errorf("errors %q, want ones holding %q", got, tt.errors)
			}
			warned := slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "droid told the user:") })
			if !warned {
				t.Errorf("warnings %q, want the notice", res.Warnings)
			}
			for _, e := range r.Events {
				if m := e.Event.Message(); m != nil {
					for _, b := range m.Blocks {
						if strings.Contains(b.Text, "Token limit reached") || strings.Contains(b.Text, "Switched to the next model") {
							t.Errorf("the notice is in a %s message (%s): %q", m.Role, b.Origin, b.Text)
						}
					}
				}
			}
		})
	}
}

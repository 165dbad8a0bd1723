//go:build !wasip1

package opencode_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/opencode"
)

// sessionRow is the session row of OpenCode's v2 runtime as the host
// hands it, with the columns its projector sets when an execution
// settles (anomalyco/opencode packages/core/src/session/projector.ts,
// projectIdle: idle_outcome "succeeded", "failed" or "interrupted" and
// time_idle, its time; later builds add idle_error_type and
// idle_error_message, the failure's), extra its further columns.
func sessionRow(extra string) string {
	return `{"$twasm":"row","table":"session","key":"ses_1","version":1762077605000,"row":{"id":"ses_1","project_id":"global","parent_id":null,"slug":"s","directory":"/w","title":"t","version":"2.0.0","time_created":1762077599000,"time_updated":1762077605000` + extra + `}}`
}

// TestV2IdleAndRetry: what the v2 runtime's stored rows say of an
// execution's end and of a retry is read (core session/projector.ts and
// message-updater.ts):
//   - the session row's idle_outcome settles the status when it is the
//     newest message's execution's (time_idle at or after it): failed is
//     an error, listed once (the message's own error when it states one,
//     else idle_error_message or the outcome), also when it failed
//     before any step began or left its message unfinished; interrupted
//     is incomplete; succeeded leaves the messages to say; an outcome
//     older than the newest message (a prompt sent since) is not its;
//   - an assistant message's retry {attempt, at, error}, set while the
//     runtime retries the step's provider call and cleared when the step
//     ends, is a warning; the step's outcome decides the status.
//
// Before, idle_outcome and time_idle were not read (an execution that
// failed before its first step, or whose message was left unfinished,
// read incomplete with no error; an interrupted one whose answer was
// done read ok), and a retry was not said at all.
func TestV2IdleAndRetry(t *testing.T) {
	facts := `{"$twasm":"source","store":"OpenCode","path":"opencode.db","name":"opencode.db","size":1,"mtime":"2026-01-01T00:00:00Z","session":"ses_1"}`
	user := v2Row("msg_u1", "user", 1, `{"text":"Fix the parser","time":{"created":1762077600000}}`)
	done := v2Row("msg_a1", "assistant", 2, `{"agent":"build","model":{"id":"m","providerID":"p"},"content":[{"type":"text","id":"t1","text":"Fixed."}],"finish":"stop","time":{"created":1762077601000,"completed":1762077604000}}`)
	open := v2Row("msg_a1", "assistant", 2, `{"agent":"build","model":{"id":"m","providerID":"p"},"content":[{"type":"text","id":"t1","text":"Let me"}],"time":{"created":1762077601000}}`)
	failedMsg := v2Row("msg_a1", "assistant", 2, `{"agent":"build","model":{"id":"m","providerID":"p"},"content":[],"finish":"error","error":{"type":"provider.unknown","message":"Overloaded"},"time":{"created":1762077601000,"completed":1762077602000}}`)
	retrying := v2Row("msg_a1", "assistant", 2, `{"agent":"build","model":{"id":"m","providerID":"p"},"content":[],"retry":{"attempt":2,"at":1762077603000,"error":{"type":"provider.rate_limit","message":"Rate limit reached"}},"time":{"created":1762077601000}}`)
	later := v2Row("msg_u2", "user", 3, `{"text":"And the lexer","time":{"created":1762077606000}}`)
	idle := func(outcome string, more string) string {
		return sessionRow(`,"time_idle":1762077605000,"idle_outcome":"` + outcome + `"` + more)
	}
	tests := []struct {
		name             string
		lines            []string
		status, errText  string
		errors, warnings []string
	}{
		{"failed before any step", []string{facts, idle("failed", ""), user}, "error", "last execution failed", []string{"the session's last execution failed (OpenCode: idle_outcome failed)"}, nil},
		{"failed before any step, its error stated", []string{facts, idle("failed", `,"idle_error_type":"provider.auth","idle_error_message":"Invalid API key"`), user}, "error", "Invalid API key", []string{"Invalid API key"}, nil},
		{"failed, its message left unfinished", []string{facts, idle("failed", ""), user, open}, "error", "last execution failed", []string{"the session's last execution failed (OpenCode: idle_outcome failed)"}, nil},
		{"failed, the message's error listed once", []string{facts, idle("failed", ""), user, failedMsg}, "error", "Overloaded", []string{"Overloaded"}, nil},
		{"interrupted after the answer", []string{facts, idle("interrupted", ""), user, done}, "incomplete", "interrupted", nil, nil},
		{"succeeded", []string{facts, idle("succeeded", ""), user, done}, "ok", "", nil, nil},
		{"an outcome older than the newest prompt", []string{facts, idle("failed", ""), user, done, later}, "incomplete", "", nil, nil},
		{"no outcome", []string{facts, sessionRow(`,"time_idle":null,"idle_outcome":null`), user, done}, "ok", "", nil, nil},
		{"retrying when read", []string{facts, sessionRow(""), user, retrying}, "incomplete", "", nil, []string{"retrying the provider call (attempt 2) when the store was read: Rate limit reached"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := []byte(strings.Join(tt.lines, "\n") + "\n")
			o := plugintest.Run(t, opencode.Plugin, raw, normalize.Options{Provider: "opencode"})
			r := o.Result
			if string(r.Status) != tt.status || !strings.Contains(r.Error, tt.errText) {
				t.Errorf("status %q (%q); want %q holding %q", r.Status, r.Error, tt.status, tt.errText)
			}
			var errs []string
			for _, e := range r.Errors {
				errs = append(errs, e.Message)
			}
			if strings.Join(errs, "|") != strings.Join(tt.errors, "|") {
				t.Errorf("errors %q; want %q", errs, tt.errors)
			}
			for _, w := range tt.warnings {
				found := false
				for _, s := range r.Warnings {
					found = found || strings.Contains(s, w)
				}
				if !found {
					t.Errorf("warnings %q; want one holding %q", r.Warnings, w)
				}
			}
			if len(r.Unmapped) != 0 {
				t.Errorf("unmapped %v", r.Unmapped)
			}
			if n, first := silent(t, raw); n != 0 {
				t.Errorf("%d line(s) without a record (spec 6.8): %v", n, first)
			}
		})
	}
}

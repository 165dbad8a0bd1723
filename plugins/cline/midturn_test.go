//go:build !wasip1

package cline_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/cline"
	"github.com/twasm/twasm/transcript"
)

// TestFailedRequestOnce: a request that failed while streaming is
// written twice by Cline (cline/cline src/core/task/index.ts): its
// api_req_started gets cancelReason streaming_failed and the
// streamingFailedMessage, then Cline asks api_req_failed (retry?) with
// the same error. One failure, one error; an error text the UI keeps as
// a JSON object ({"message": ...}) is its message. And a task read while
// its last API request is still running (no figures, no cancelReason
// yet) is a turn not finished: incomplete; the same task read again once
// the request completed is ok.
func TestFailedRequestOnce(t *testing.T) {
	const file = `{"$twasm":"file","path":"ui_messages.json","size":1,"mtime":"2026-03-01T10:00:10Z","document":true}`
	const hist = `{"$twasm":"file","path":"api_conversation_history.json","size":1,"mtime":"2026-03-01T10:00:10Z","document":true}`
	doc := func(els ...string) string { return file + "\n[" + strings.Join(els, ",") + "]" }
	task := clineSay("1772359200050", "task", "Fix the parser")
	done := clineSay("1772359200100", "api_req_started", clineInfo(100, 10, 0, 0, "0.01"))
	said := clineSay("1772359200150", "text", "Fixed.")
	failed := clineSay("1772359200300", "api_req_started", `{\"request\":\"x\",\"tokensIn\":9,\"tokensOut\":0,\"cost\":0.002,\"cancelReason\":\"streaming_failed\",\"streamingFailedMessage\":\"529 Overloaded\"}`)
	asked := `{"ts":1772359200400,"type":"ask","ask":"api_req_failed","text":"529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"}`
	wrapped := `{"ts":1772359200400,"type":"ask","ask":"api_req_failed","text":"{\"message\":\"terminated\",\"code\":\"ECONNRESET\"}"}`
	sayErr := `{"ts":1772359200400,"type":"say","say":"error","text":"{\"message\":\"terminated\"}"}`
	running := clineSay("1772359200500", "api_req_started", `{\"request\":\"y\"}`)
	retried := clineSay("1772359200450", "api_req_retried", "")
	firstChunk := clineSay("1772359200300", "api_req_started", `{\"request\":\"x\"}`)
	autoRetry := clineSay("1772359200350", "error_retry", `{\"attempt\":1,\"maxAttempts\":3,\"delaySeconds\":2,\"errorMessage\":\"529 Overloaded\"}`)
	// Cline clears the request's message once error_retry states it.
	cleared := clineSay("1772359200300", "api_req_started", `{\"request\":\"x\",\"tokensIn\":0,\"tokensOut\":0,\"cost\":0,\"cancelReason\":\"streaming_failed\"}`)
	rooCountdown := clineSay("1772359200350", "api_req_retry_delayed", `429\nRate limit exceeded\n<retry_timer>3</retry_timer>`)
	rooRetried := clineSay("1772359200350", "api_req_retry_delayed", `429\nRate limit exceeded\n`)
	// The retry's outcome completes the failed request's own element.
	recovered := clineSay("1772359200300", "api_req_started", `{\"request\":\"x\",\"tokensIn\":20,\"tokensOut\":5,\"cost\":0.003}`)
	spent := clineSay("1772359200350", "error_retry", `{\"attempt\":3,\"maxAttempts\":3,\"delaySeconds\":0,\"failed\":true,\"errorMessage\":\"529 Overloaded\"}`)
	completed := clineSay("1772359200500", "api_req_started", `{\"request\":\"y\",\"tokensIn\":20,\"tokensOut\":5,\"cost\":0.003}`)
	cancelled := clineSay("1772359200200", "api_req_started", `{\"request\":\"y\",\"tokensIn\":20,\"tokensOut\":1,\"cost\":0.001,\"cancelReason\":\"user_cancelled\"}`)
	said2 := clineSay("1772359200600", "text", "Fixed again.")
	history := func(answers ...string) string {
		h := `[{"role":"user","content":[{"type":"text","text":"<task>\nFix the parser\n</task>"}]}`
		for _, a := range answers {
			h += `,{"role":"assistant","content":[{"type":"text","text":"` + a + `"}]}`
		}
		return hist + "\n" + h + "]"
	}
	stream := func(msgs ...string) string {
		return `{"type":"task_started","taskId":"1772359200000"}` + "\n" + strings.Join(msgs, "\n")
	}
	type wantErr struct{ msg, code string }
	for _, tc := range []struct {
		name   string
		in     string
		errs   []wantErr
		status string
	}{
		{"streaming_failed then the ask: one error, the request's message",
			doc(task, done, said, failed, asked), []wantErr{{"529 Overloaded", "streaming_failed"}}, transcript.StatusError},
		{"the same, with the conversation file",
			doc(task, done, said, failed, asked) + "\n" + history("Fixed."), []wantErr{{"529 Overloaded", "streaming_failed"}}, transcript.StatusError},
		{"read before the ask, then with it: still one",
			doc(task, done, said, failed) + "\n" + doc(task, done, said, failed, asked), []wantErr{{"529 Overloaded", "streaming_failed"}}, transcript.StatusError},
		{"an ask after a request that did not fail while streaming is its own error, unwrapped",
			doc(task, done, said, wrapped), []wantErr{{"terminated", "api_req_failed"}}, transcript.StatusError},
		{"a say error kept as JSON is its message",
			doc(task, done, said, sayErr), []wantErr{{"terminated", "error"}}, transcript.StatusError},
		{"the CLI's stream: streaming_failed then the ask, one error",
			stream(task, done, said, failed, asked), []wantErr{{"529 Overloaded", "streaming_failed"}}, transcript.StatusError},
		{"mid-turn: the last request still running",
			doc(task, done, said, running) + "\n" + history("Fixed."), nil, transcript.StatusIncomplete},
		// A failed request retried (Cline's attemptApiRequest retries in
		// the same api_req_started, cline/cline src/core/task/index.ts):
		// the turn goes on, incomplete, the failure listed. Retries
		// spent and the ask waiting for the user: the failure is what
		// the task ended on.
		{"a failure, then a request still running: incomplete",
			doc(task, done, said, failed, asked, retried, running) + "\n" + history("Fixed."), []wantErr{{"529 Overloaded", "streaming_failed"}}, transcript.StatusIncomplete},
		{"older Cline: a request failed at its first chunk, the user's retry running",
			doc(task, done, said, firstChunk, asked, retried) + "\n" + history("Fixed."), []wantErr{{`529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "api_req_failed"}}, transcript.StatusIncomplete},
		{"retries spent, the user's retry running",
			doc(task, done, said, failed, spent, asked, retried) + "\n" + history("Fixed."), []wantErr{{"529 Overloaded", "streaming_failed"}}, transcript.StatusIncomplete},
		{"Cline retrying by itself",
			doc(task, done, said, failed, autoRetry) + "\n" + history("Fixed."), []wantErr{{"529 Overloaded", "streaming_failed"}}, transcript.StatusIncomplete},
		{"Cline retrying by itself, the request's message cleared: the retry's error, once",
			doc(task, done, said, cleared, autoRetry) + "\n" + history("Fixed."), []wantErr{{"529 Overloaded", "error_retry"}}, transcript.StatusIncomplete},
		// Roo Code retries by itself until the user stops it, saying
		// api_req_retry_delayed (the error, then a countdown) before
		// each retry (Task.backoffAndAnnounce).
		{"Roo Code retrying by itself: incomplete, its error listed",
			doc(task, done, said, firstChunk, rooCountdown) + "\n" + history("Fixed."), []wantErr{{"429 Rate limit exceeded", "api_req_retry_delayed"}}, transcript.StatusIncomplete},
		{"Roo Code's retry answered: ok, its error listed",
			doc(task, done, said, recovered, rooRetried, said2) + "\n" + history("Fixed.", "Fixed again."), []wantErr{{"429 Rate limit exceeded", "api_req_retry_delayed"}}, transcript.StatusOK},
		{"retries spent, the ask waiting for the user: the error",
			doc(task, done, said, failed, spent, asked) + "\n" + history("Fixed."), []wantErr{{"529 Overloaded", "streaming_failed"}}, transcript.StatusError},
		{"a retry that succeeded, then the answer: ok, the failure listed",
			doc(task, done, said, recovered, autoRetry, said2) + "\n" + history("Fixed.", "Fixed again."), []wantErr{{"529 Overloaded", "error_retry"}}, transcript.StatusOK},
		{"the last request cancelled by the user: cut",
			doc(task, done, said, cancelled) + "\n" + history("Fixed."), nil, transcript.StatusIncomplete},
		{"a request cancelled, then the task went on",
			doc(task, cancelled, completed, said2) + "\n" + history("Fixed again."), nil, transcript.StatusOK},
		// A version equal to the one read before is not scanned again:
		// it says what it said; a shorter one (a rewind) is.
		{"read mid-turn twice, the same version",
			doc(task, done, said, running) + "\n" + doc(task, done, said, running) + "\n" + history("Fixed."), nil, transcript.StatusIncomplete},
		{"read mid-turn, then rewound to before the request",
			doc(task, done, said, running) + "\n" + doc(task, done, said) + "\n" + history("Fixed."), nil, transcript.StatusOK},
		{"read mid-turn, then again once the request completed",
			doc(task, done, said, running) + "\n" + history("Fixed.") + "\n" + doc(task, done, said, completed, said2) + "\n" + history("Fixed.", "Fixed again."), nil, transcript.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := plugintest.Run(t, cline.Plugin, []byte(tc.in+"\n"), normalize.Options{Provider: "cline"})
			var got []wantErr
			for _, e := range o.Result.Errors {
				got = append(got, wantErr{e.Message, e.Code})
			}
			if len(got) != len(tc.errs) || (len(got) > 0 && got[0] != tc.errs[0]) {
				t.Errorf("errors %+v, want %+v", got, tc.errs)
			}
			if o.Result.Status != tc.status {
				t.Errorf("status %s (%q), want %s", o.Result.Status, o.Result.Error, tc.status)
			}
		})
	}
}

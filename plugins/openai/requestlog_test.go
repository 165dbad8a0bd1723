//go:build !wasip1

package openai_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/openai"
	"github.com/twasm/twasm/transcript"
)

// TestRequestLogEnd: a log of request and response bodies whose last
// request got no response ends cut, whatever an earlier response's
// finish said (spec 6.7: the same situation as a session log that ends
// on an unanswered prompt); a response, or an error body, after it
// settles it again.
func TestRequestLogEnd(t *testing.T) {
	const (
		user  = `{"role":"user","content":"Fix the test"}`
		a1    = `{"role":"assistant","content":"Fixed."}`
		user2 = `{"role":"user","content":"Now the docs"}`
	)
	req := func(msgs ...string) string { return `{"model":"m","messages":[` + strings.Join(msgs, ",") + `]}` }
	resp := func(msg string) string {
		return `{"id":"chatcmpl-1","object":"chat.completion","created":1760004000,"model":"m","choices":[{"index":0,"message":` + msg + `,"finish_reason":"stop"}]}`
	}
	const rateLimited = `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`
	for _, tc := range []struct {
		name   string
		lines  []string
		status string
	}{
		{"answered", []string{req(user), resp(a1)}, transcript.StatusOK},
		{"the last request unanswered", []string{req(user), resp(a1), req(user, a1, user2)}, transcript.StatusIncomplete},
		{"the last request failed", []string{req(user), resp(a1), req(user, a1, user2), rateLimited}, transcript.StatusError},
		{"the last request answered", []string{req(user), resp(a1), req(user, a1, user2), resp(`{"role":"assistant","content":"Done."}`)}, transcript.StatusOK},
		{"a request alone", []string{req(user)}, transcript.StatusIncomplete},
		{"a request and its response on one line", []string{`{"request":` + req(user) + `,"response":` + resp(a1) + `}`}, transcript.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := plugintest.Run(t, openai.Plugin, []byte(strings.Join(tc.lines, "\n")+"\n"), normalize.Options{Provider: "openai"})
			if o.Result.Status != tc.status {
				t.Errorf("status %s (%q), want %s", o.Result.Status, o.Result.Error, tc.status)
			}
		})
	}
}

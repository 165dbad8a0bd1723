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

// TestRooReasoning: the shapes in which Roo Code (and Kilo Code, its
// fork) kept a model's reasoning in api_conversation_history.json
// (src/core/task/Task.ts, RooCodeInc/Roo-Code): an encrypted reasoning
// item of its own before the answer (3.31.2, 0fdbd392e8); a reasoning
// block {summary, encrypted_content} (3.32.1, 4a9ff8f4ef) or {text,
// summary} (3.33.3, 7715158d51) first in the answer's content; a
// thoughtSignature block (3.33.0, f7c2e8d164); reasoning_details on the
// message (3.34.2, b531075626). Each is the answer's thinking (withheld
// when encrypted), never a warning that a block is not mapped.
func TestRooReasoning(t *testing.T) {
	prompt := `{"role":"user","content":[{"type":"text","text":"<task>\nFix it\n</task>"}],"ts":1772359200000}`
	tests := []struct {
		name     string
		msgs     []string
		thinking string // the answer's thinking blocks, "[redacted]" for a withheld one, joined by |
	}{
		{"an encrypted reasoning item before the answer", []string{prompt,
			`{"type":"reasoning","encrypted_content":"gAAAAB...","id":"rs_1"}`,
			`{"role":"assistant","content":[{"type":"text","text":"Fixed."}],"ts":1772359203000}`}, "[redacted]"},
		{"an encrypted reasoning block", []string{prompt,
			`{"role":"assistant","content":[{"type":"reasoning","summary":[],"encrypted_content":"gAAAAB..."},{"type":"text","text":"Fixed."}],"ts":1772359203000}`}, "[redacted]"},
		{"a reasoning block with its text", []string{prompt,
			`{"role":"assistant","content":[{"type":"reasoning","text":"The loop is off by one.","summary":[]},{"type":"text","text":"Fixed."}],"ts":1772359203000}`}, "The loop is off by one."},
		{"a thought signature: no block", []string{prompt,
			`{"role":"assistant","content":[{"type":"text","text":"Fixed."},{"type":"thoughtSignature","thoughtSignature":"CiQB..."}],"ts":1772359203000}`}, ""},
		{"reasoning_details", []string{prompt,
			`{"role":"assistant","content":"Fixed.","reasoning_details":[{"type":"reasoning.summary","summary":"The loop is off by one.","format":"xai-responses-v1","index":0},{"type":"reasoning.encrypted","data":"enc","id":"rs_abc","format":"xai-responses-v1","index":0}],"ts":1772359203000}`}, "The loop is off by one.|[redacted]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := `{"$twasm":"source","store":"Roo Code tasks (Code)","path":"t1","name":"t1","size":1,"mtime":"2026-03-01T10:00:10Z"}` + "\n" +
				`{"$twasm":"file","path":"api_conversation_history.json","size":1,"mtime":"2026-03-01T10:00:10Z","document":true}` + "\n" +
				"[" + strings.Join(tt.msgs, ",") + "]\n"
			o := plugintest.Run(t, cline.Plugin, []byte(raw), normalize.Options{Provider: "roo"})
			var got []string
			text := ""
			for _, it := range o.Sink.Items {
				m := (*transcript.MessagePayload)(nil)
				if it.Event != nil && it.Event.Type == transcript.MessageAssistant {
					m = it.Event.Message()
				}
				if m == nil {
					continue
				}
				for _, b := range m.Blocks {
					switch {
					case b.Type == transcript.BlockThinking && b.Redacted:
						got = append(got, "[redacted]")
					case b.Type == transcript.BlockThinking:
						got = append(got, b.Thinking)
					case b.Type == transcript.BlockText:
						text += b.Text
					}
				}
			}
			if strings.Join(got, "|") != tt.thinking || text != "Fixed." {
				t.Errorf("thinking %q, text %q; want %q, %q", got, text, tt.thinking, "Fixed.")
			}
			for _, w := range o.Result.Warnings {
				if strings.Contains(w, "not mapped") {
					t.Errorf("warning %q", w)
				}
			}
		})
	}
}

// TestRetriedRequest: Cline's and Roo Code's older say "api_req_retried"
// (ClineSay until Cline's 01617f9a05) says a request failed and was
// retried, without the error: a warning, as error_retry is.
func TestRetriedRequest(t *testing.T) {
	raw := `{"$twasm":"source","store":"Cline tasks (Code)","path":"t1","name":"t1","size":1,"mtime":"2025-03-01T10:00:10Z"}` + "\n" +
		`{"$twasm":"file","path":"ui_messages.json","size":1,"mtime":"2025-03-01T10:00:10Z","document":true}` + "\n" +
		`[{"ts":1740823200000,"type":"say","say":"text","text":"Fix it"},{"ts":1740823200100,"type":"say","say":"api_req_started","text":"{\"request\":\"Fix it\",\"tokensIn\":10,\"tokensOut\":5,\"cacheWrites\":0,\"cacheReads\":0,\"cost\":0.001}"},{"ts":1740823201000,"type":"say","say":"api_req_retried"},{"ts":1740823202000,"type":"say","say":"text","text":"Fixed."}]` + "\n"
	o := plugintest.Run(t, cline.Plugin, []byte(raw), normalize.Options{Provider: "cline"})
	if w := strings.Join(o.Result.Warnings, "|"); !strings.Contains(w, "the API request failed and was retried") {
		t.Errorf("warnings %q, want the retry", w)
	}
}

//go:build !wasip1

package opencode_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/opencode"
	"github.com/twasm/twasm/transcript"
)

// v2Row is a row of session_message, the message projection of
// OpenCode's v2 runtime (packages/core/src/session/sql.ts
// SessionMessageTable at 02ce4a330f33fee005fb5a18c0e3ec6e1143caee; data
// the message of message.ts at 08e3e1f96710fd498f6b1f428ad0f250e9af96c4
// without its id and type), as the host hands it.
func v2Row(id, typ string, version int, data string) string {
	return `{"$twasm":"row","table":"session_message","key":"` + id + `","version":` + itoa(version) + `,"row":{"id":"` + id + `","session_id":"ses_1","type":"` + typ + `","seq":` + itoa(version) + `,"time_created":1762077600000,"time_updated":` + itoa(1762077600000+version) + `,"data":` + data + `}}`
}

func itoa(n int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
		if n == 0 {
			return string(b)
		}
	}
}

// TestV2Store: the message rows of OpenCode's v2 runtime read as the
// turns they hold.
func TestV2Store(t *testing.T) {
	facts := `{"$twasm":"source","store":"OpenCode","path":"opencode.db","name":"opencode.db","size":1,"mtime":"2026-01-01T00:00:00Z","session":"ses_1"}`
	user := v2Row("msg_u1", "user", 1, `{"text":"Fix the parser","time":{"created":1762077600000}}`)
	shellFailed := `{"type":"tool","id":"call_1","name":"shell","state":{"status":"completed","input":{"command":"go test ./..."},"content":[{"type":"text","text":"FAIL"},{"type":"text","text":"Command exited with code 1."}],"structured":{"exit":1,"truncated":false},"outputPaths":[]},"time":{"created":1762077601000,"ran":1762077601100,"completed":1762077602000}}`
	aborted := `{"type":"tool","id":"call_2","name":"shell","state":{"status":"error","input":{"command":"sleep 99"},"content":[],"structured":{},"error":{"type":"aborted","message":"Tool execution interrupted: shell"}},"time":{"created":1762077603000}}`
	step := func(content, extra string) string {
		return `{"agent":"build","model":{"id":"claude-sonnet-4","providerID":"anthropic"},"content":[` + content + `]` + extra + `,"time":{"created":1762077601000,"completed":1762077604000}}`
	}
	for _, tc := range []struct {
		name  string
		lines []string
		check func(t *testing.T, o *plugintest.Outcome)
	}{
		{"a prompt and a step: texts, calls, usage", []string{facts, user,
			v2Row("msg_a1", "assistant", 2, step(`{"type":"reasoning","id":"r1","text":"Run the tests."},{"type":"text","id":"t1","text":"Running them."},`+shellFailed,
				`,"finish":"tool-calls","cost":0.01,"tokens":{"input":100,"output":20,"reasoning":5,"cache":{"read":1000,"write":10}}`)),
		}, func(t *testing.T, o *plugintest.Outcome) {
			plugintest.CheckTexts(t, o.Texts(plugintest.Assistant), []string{"Running them."}, false)
			if st, _ := o.ResultStatus("call_1"); st != "error" {
				t.Errorf("call_1 %q, want error", st)
			}
			u := o.Result.Usage
			if u == nil || u.InputTokens == nil || *u.InputTokens != 1110 || u.OutputTokens == nil || *u.OutputTokens != 25 {
				t.Errorf("usage %+v, want 1110 input, 25 output (reasoning in it)", u)
			}
			if o.Result.CostUSD == nil || *o.Result.CostUSD != 0.01 {
				t.Errorf("cost %v, want 0.01", o.Result.CostUSD)
			}
			if o.Result.Status != transcript.StatusOK {
				t.Errorf("status %s, want ok", o.Result.Status)
			}
		}},
		{"a call the interruption failed is cancelled", []string{facts, user,
			v2Row("msg_a1", "assistant", 2, step(aborted, `,"finish":"tool-calls"`)),
		}, func(t *testing.T, o *plugintest.Outcome) {
			if st, _ := o.ResultStatus("call_2"); st != "cancelled" {
				t.Errorf("call_2 %q, want cancelled", st)
			}
		}},
		{"a step's error is a provider error", []string{facts, user,
			v2Row("msg_a1", "assistant", 2, step(`{"type":"text","id":"t1","text":"Let me"}`, `,"error":{"type":"provider.unknown","message":"Overloaded"}`)),
		}, func(t *testing.T, o *plugintest.Outcome) {
			if len(o.Result.Errors) != 1 || o.Result.Errors[0].Code != "provider.unknown" || o.Result.Errors[0].Message != "Overloaded" {
				t.Errorf("errors %+v, want the provider.unknown error", o.Result.Errors)
			}
			if o.Result.Status != transcript.StatusError {
				t.Errorf("status %s, want error", o.Result.Status)
			}
		}},
		{"a step not finished reads incomplete", []string{facts, user,
			v2Row("msg_a1", "assistant", 2, `{"agent":"build","model":{"id":"m","providerID":"p"},"content":[{"type":"text","id":"t1","text":"Look"}],"time":{"created":1762077601000}}`),
		}, func(t *testing.T, o *plugintest.Outcome) {
			if o.Result.Status != transcript.StatusIncomplete {
				t.Errorf("status %s, want incomplete", o.Result.Status)
			}
		}},
		{"a row rewritten in place replaces the message", []string{facts, user,
			v2Row("msg_a1", "assistant", 2, `{"agent":"build","model":{"id":"m","providerID":"p"},"content":[{"type":"text","id":"t1","text":"Look"}],"time":{"created":1762077601000}}`),
			facts,
			v2Row("msg_a1", "assistant", 3, step(`{"type":"text","id":"t1","text":"Looked: all good."}`, `,"finish":"stop"`)),
		}, func(t *testing.T, o *plugintest.Outcome) {
			plugintest.CheckTexts(t, o.Texts(plugintest.Assistant), []string{"Looked: all good."}, false)
			if strings.Contains(strings.Join(o.Texts(nil), "|"), "Look|") {
				t.Errorf("the old text is kept: %q", o.Texts(nil))
			}
			if o.Result.Status != transcript.StatusOK {
				t.Errorf("status %s, want ok", o.Result.Status)
			}
		}},
		{"a user's shell command and the session's settings", []string{facts, user,
			v2Row("msg_s1", "shell", 2, `{"callID":"c9","command":"ls","output":"a.go\n","time":{"created":1762077600500,"completed":1762077600600}}`),
			v2Row("msg_m1", "model-switched", 3, `{"model":{"id":"m2","providerID":"p"},"time":{"created":1762077600700}}`),
		}, func(t *testing.T, o *plugintest.Outcome) {
			if texts := strings.Join(o.Texts(nil), "|"); !strings.Contains(texts, "$ ls\na.go") {
				t.Errorf("texts %q, want the command and its output", texts)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := []byte(strings.Join(tc.lines, "\n") + "\n")
			o := plugintest.Run(t, opencode.Plugin, raw, normalize.Options{Provider: "opencode"})
			if o.Result.FailedLines != 0 {
				t.Fatalf("failed lines %d", o.Result.FailedLines)
			}
			if len(o.Result.Unmapped) != 0 {
				t.Errorf("unmapped %v", o.Result.Unmapped)
			}
			tc.check(t, o)
			if n, first := silent(t, raw); n != 0 {
				t.Errorf("%d line(s) without a record (spec 6.8): %v", n, first)
			}
		})
	}
}

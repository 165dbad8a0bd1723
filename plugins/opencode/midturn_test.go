//go:build !wasip1

package opencode_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/opencode"
	"github.com/twasm/twasm/transcript"
)

// rowWith is a row line whose message info is info (the message row's
// data as OpenCode wrote it when the host read it).
func rowWith(msg, info, part, data string) string {
	return fmt.Sprintf(`{"$twasm":"row","table":"part","key":%q,"version":1,"row":{"message_id":%q,"message_time_created":1762077600000,"message":%s,"id":%q,"data":%s}}`,
		part, msg, info, part, data)
}

// TestMidTurn: `twasm sync` reads a store OpenCode is still writing.
// OpenCode's processor sets an assistant message's time.completed when
// it stops working on it (answered, failed or aborted) and its finish at
// a step's end: a session whose newest message is an assistant's with
// neither (and no error) is in the middle of a turn, incomplete (spec
// 6.7, a cut turn); the same session read again after the turn finished
// (its rows handed again with time.completed) is ok.
func TestMidTurn(t *testing.T) {
	facts := `{"$twasm":"source","store":"OpenCode","path":"opencode.db","name":"opencode.db","size":1,"mtime":"2026-01-01T00:00:00Z","session":"ses_1"}`
	const (
		user       = `{"role":"user","time":{"created":1762077600000},"modelID":"m1","providerID":"p"}`
		running    = `{"role":"assistant","time":{"created":1762077601000},"modelID":"m1","providerID":"p"}`
		finished   = `{"role":"assistant","time":{"created":1762077601000,"completed":1762077609000},"modelID":"m1","providerID":"p","finish":"stop"}`
		finishOnly = `{"role":"assistant","time":{"created":1762077601000},"modelID":"m1","providerID":"p","finish":"stop"}`
		aborted    = `{"role":"assistant","time":{"created":1762077601000,"completed":1762077603000},"modelID":"m1","providerID":"p","error":{"name":"MessageAbortedError","data":{"message":"The operation was aborted."}}}`
		failed     = `{"role":"assistant","time":{"created":1762077601000},"modelID":"m1","providerID":"p","error":{"name":"APIError","data":{"message":"Overloaded"}}}`
		prompt     = `{"type":"text","text":"List the files."}`
		text       = `{"type":"text","text":"Listing them."}`
		done       = `{"type":"tool","tool":"bash","callID":"c1","state":{"status":"completed","input":{"command":"ls"},"output":"a\n","metadata":{"exit":0}}}`
		step       = `{"type":"step-finish","reason":"stop","cost":0,"tokens":{"input":10,"output":2,"reasoning":0,"cache":{"read":0,"write":0}}}`
	)
	for _, tc := range []struct {
		name   string
		lines  []string
		status string
	}{
		{"the newest answer has no time.completed: mid-turn", []string{facts,
			rowWith("msg_1", user, "prt_1", prompt),
			rowWith("msg_2", running, "prt_2", text),
		}, transcript.StatusIncomplete},
		{"mid-turn after a call's result", []string{facts,
			rowWith("msg_1", user, "prt_1", prompt),
			rowWith("msg_2", running, "prt_2", text),
			rowWith("msg_2", running, "prt_3", done),
		}, transcript.StatusIncomplete},
		{"the answer completed", []string{facts,
			rowWith("msg_1", user, "prt_1", prompt),
			rowWith("msg_2", finished, "prt_2", text),
			rowWith("msg_2", finished, "prt_3", step),
		}, transcript.StatusOK},
		{"a finish reason without time.completed is finished", []string{facts,
			rowWith("msg_1", user, "prt_1", prompt),
			rowWith("msg_2", finishOnly, "prt_2", text),
		}, transcript.StatusOK},
		{"an earlier unfinished message, a later finished one", []string{facts,
			rowWith("msg_1", user, "prt_1", prompt),
			rowWith("msg_2", running, "prt_2", text),
			rowWith("msg_3", finished, "prt_4", text),
		}, transcript.StatusOK},
		{"a later sync hands the turn's rows again, finished", []string{facts,
			rowWith("msg_1", user, "prt_1", prompt),
			rowWith("msg_2", running, "prt_2", text),
			rowWith("msg_2", finished, "prt_2", text),
			rowWith("msg_2", finished, "prt_3", step),
		}, transcript.StatusOK},
		{"a later sync hands an old message's part, the newest still running", []string{facts,
			rowWith("msg_1", user, "prt_1", prompt),
			rowWith("msg_2", finished, "prt_2", text),
			rowWith("msg_3", running, "prt_4", text),
			rowWith("msg_2", finished, "prt_3", step),
		}, transcript.StatusIncomplete},
		{"the last answer aborted by the user: cut", []string{facts,
			rowWith("msg_1", user, "prt_1", prompt),
			rowWith("msg_2", aborted, "prt_2", text),
			rowWith("msg_2", aborted, "prt_3", done),
		}, transcript.StatusIncomplete},
		{"an answer aborted, then asked and answered", []string{facts,
			rowWith("msg_1", user, "prt_1", prompt),
			rowWith("msg_2", aborted, "prt_2", text),
			rowWith("msg_3", user, "prt_4", prompt),
			rowWith("msg_4", finished, "prt_5", text),
		}, transcript.StatusOK},
		{"a failed answer is an error, not mid-turn", []string{facts,
			rowWith("msg_1", user, "prt_1", prompt),
			rowWith("msg_2", failed, "prt_2", text),
		}, transcript.StatusError},
		{"the older file tree: a message document without time.completed", []string{
			`{"$twasm":"file","path":"session/prj/ses_1.json"}`,
			`{"id":"ses_1","projectID":"prj","directory":"/p","version":"1.1.0","time":{"created":1762077500000,"updated":1762077600000}}`,
			`{"$twasm":"file","path":"message/ses_1/msg_1.json"}`,
			`{"id":"msg_1","sessionID":"ses_1","role":"user","time":{"created":1762077600000}}`,
			`{"$twasm":"file","path":"part/msg_1/prt_1.json"}`,
			`{"id":"prt_1","messageID":"msg_1","sessionID":"ses_1","type":"text","text":"List the files."}`,
			`{"$twasm":"file","path":"message/ses_1/msg_2.json"}`,
			`{"id":"msg_2","sessionID":"ses_1","role":"assistant","time":{"created":1762077601000},"modelID":"m1"}`,
			`{"$twasm":"file","path":"part/msg_2/prt_2.json"}`,
			`{"id":"prt_2","messageID":"msg_2","sessionID":"ses_1","type":"text","text":"Listing them."}`,
		}, transcript.StatusIncomplete},
		// run --format json prints the parts alone, no message info: a
		// run cut after a step and one that ended there print the same;
		// one cut inside a step (step_start, no step_finish) is not done.
		{"run --format json after a step's finish", []string{
			`{"type":"step_start","timestamp":1762077600400,"sessionID":"ses_1","part":{"id":"prt_1","messageID":"msg_2","sessionID":"ses_1","type":"step-start"}}`,
			`{"type":"text","timestamp":1762077601000,"sessionID":"ses_1","part":{"id":"prt_2","messageID":"msg_2","sessionID":"ses_1","type":"text","text":"Listing them.","time":{"start":1762077600500,"end":1762077601000}}}`,
			`{"type":"step_finish","timestamp":1762077601100,"sessionID":"ses_1","part":{"id":"prt_3","messageID":"msg_2","sessionID":"ses_1","type":"step-finish","reason":"stop","cost":0,"tokens":{"input":10,"output":2,"reasoning":0,"cache":{"read":0,"write":0}}}}`,
		}, transcript.StatusOK},
		{"run --format json cut inside a step", []string{
			`{"type":"step_start","timestamp":1762077600400,"sessionID":"ses_1","part":{"id":"prt_1","messageID":"msg_2","sessionID":"ses_1","type":"step-start"}}`,
			`{"type":"text","timestamp":1762077601000,"sessionID":"ses_1","part":{"id":"prt_2","messageID":"msg_2","sessionID":"ses_1","type":"text","text":"Listing them.","time":{"start":1762077600500,"end":1762077601000}}}`,
		}, transcript.StatusIncomplete},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := []byte(strings.Join(tc.lines, "\n") + "\n")
			o := plugintest.Run(t, opencode.Plugin, raw, normalize.Options{Provider: "opencode"})
			if o.Result.FailedLines != 0 {
				t.Fatalf("failed lines %d", o.Result.FailedLines)
			}
			if o.Result.Status != tc.status {
				t.Errorf("status %s (%q), want %s", o.Result.Status, o.Result.Error, tc.status)
			}
			if tc.status == transcript.StatusIncomplete && !strings.Contains(o.Result.Error, "not finished") && !strings.Contains(o.Result.Error, "aborted") {
				t.Errorf("error %q, want the unfinished turn named", o.Result.Error)
			}
			if n, first := silent(t, raw); n != 0 {
				t.Errorf("%d line(s) without a record (spec 6.8): %v", n, first)
			}
		})
	}
}

//go:build !wasip1

package codex_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/codex"
	"github.com/twasm/twasm/transcript"
)

// TestLegacyCollabEvents: the legacy event stream ({"id","msg"}, the app
// server's codex/event) reports the multi-agent tools only by their
// protocol events (protocol/src/protocol.rs: Collab*BeginEvent,
// Collab*EndEvent; AgentStatus a string or {"completed": ...},
// {"errored": ...}). Each begin or end was counted unmapped and no call
// was recorded. Now: the call (named as the model calls the tool), its
// result from the end event (a spawn without a new thread and a
// receiver not found errors), the spawned thread a scope linked to the
// spawn call holding its prompt, the input send_input sent it and the
// final message or error a wait or close reported, closed with that
// outcome (a close of a running one cancelled; one never reported
// incomplete at the turn's end).
func TestLegacyCollabEvents(t *testing.T) {
	ev := func(msg string) string { return `{"id":"1","msg":` + msg + `}` }
	const (
		a = "019c3000-0000-7000-8000-0000000000a1"
		b = "019c3000-0000-7000-8000-0000000000b1"
		c = "019c3000-0000-7000-8000-0000000000c1"
	)
	var (
		start      = ev(`{"type":"task_started","model_context_window":272000}`)
		spawnBegin = ev(`{"type":"collab_agent_spawn_begin","call_id":"call_sp1","sender_thread_id":"` + a + `","prompt":"review parser.go"}`)
		spawnEnd   = ev(`{"type":"collab_agent_spawn_end","call_id":"call_sp1","sender_thread_id":"` + a + `","new_thread_id":"` + b + `","new_agent_nickname":"Noether","prompt":"review parser.go","status":"pending_init"}`)
		spawnNone  = ev(`{"type":"collab_agent_spawn_end","call_id":"call_sp2","sender_thread_id":"` + a + `","new_thread_id":null,"prompt":"review lexer.go","status":"not_found"}`)
		sendEnd    = ev(`{"type":"collab_agent_interaction_end","call_id":"call_si1","sender_thread_id":"` + a + `","receiver_thread_id":"` + b + `","prompt":"also the tests","status":"running"}`)
		waitBegin  = ev(`{"type":"collab_waiting_begin","sender_thread_id":"` + a + `","receiver_thread_ids":["` + b + `"],"call_id":"call_wa1"}`)
		waitDone   = ev(`{"type":"collab_waiting_end","sender_thread_id":"` + a + `","call_id":"call_wa1","statuses":{"` + b + `":{"completed":"No bugs in parser.go."}}}`)
		waitErr    = ev(`{"type":"collab_waiting_end","sender_thread_id":"` + a + `","call_id":"call_wa1","statuses":{"` + b + `":{"errored":"stream disconnected before completion"}}}`)
		closeRun   = ev(`{"type":"collab_close_end","call_id":"call_ca1","sender_thread_id":"` + a + `","receiver_thread_id":"` + b + `","status":"running"}`)
		closeGone  = ev(`{"type":"collab_close_end","call_id":"call_ca2","sender_thread_id":"` + a + `","receiver_thread_id":"` + c + `","status":"not_found"}`)
		answer     = ev(`{"type":"agent_message","message":"Done."}`)
		done       = ev(`{"type":"task_complete","last_agent_message":"Done."}`)
	)
	tests := []struct {
		name   string
		lines  []string
		trace  []string
		scoped []string // texts of the sub-agent's messages, in order
		status string
		errors int
		failed []string // the calls whose result is an error
	}{
		{name: "spawn, send, wait: the sub-agent's final message",
			lines: []string{start, spawnBegin, spawnEnd, sendEnd, waitBegin, waitDone, answer, done},
			trace: []string{"main: call spawn_agent call_sp1",
				`main: result spawn_agent call_sp1: {"new_thread_id":"` + b + `","new_agent_nickname":"Noether","status":"pending_init"}`,
				"open " + b + " by call_sp1",
				"main: call send_input call_si1", `main: result send_input call_si1: {"receiver_thread_id":"` + b + `","status":"running"}`,
				"main: call wait call_wa1", `main: result wait call_wa1: {"` + b + `":{"completed":"No bugs in parser.go."}}`,
				"close " + b + " ok"},
			scoped: []string{"review parser.go", "also the tests", "No bugs in parser.go."}, status: "ok"},
		{name: "a sub-agent that errored: the wait is ok, the child run an error",
			lines: []string{start, spawnBegin, spawnEnd, waitBegin, waitErr, answer, done},
			trace: []string{"main: call spawn_agent call_sp1",
				`main: result spawn_agent call_sp1: {"new_thread_id":"` + b + `","new_agent_nickname":"Noether","status":"pending_init"}`,
				"open " + b + " by call_sp1",
				"main: call wait call_wa1", `main: result wait call_wa1: {"` + b + `":{"errored":"stream disconnected before completion"}}`,
				"close " + b + " error"},
			scoped: []string{"review parser.go"}, status: "ok", errors: 1},
		{name: "closed while running: cancelled; a close of one not found and a spawn refused: errors",
			lines: []string{start, spawnBegin, spawnEnd, closeRun, closeGone, spawnNone, answer, done},
			trace: []string{"main: call spawn_agent call_sp1",
				`main: result spawn_agent call_sp1: {"new_thread_id":"` + b + `","new_agent_nickname":"Noether","status":"pending_init"}`,
				"open " + b + " by call_sp1",
				"main: call close_agent call_ca1", `main: result close_agent call_ca1: {"receiver_thread_id":"` + b + `","status":"running"}`,
				"close " + b + " cancelled",
				"main: call close_agent call_ca2", `main: result close_agent call_ca2: {"receiver_thread_id":"` + c + `","status":"not_found"}`,
				"main: call spawn_agent call_sp2", `main: result spawn_agent call_sp2: {"new_thread_id":null,"status":"not_found"}`},
			scoped: []string{"review parser.go"}, status: "ok", failed: []string{"call_ca2", "call_sp2"}},
		{name: "never reported: incomplete at the turn's end",
			lines: []string{start, spawnBegin, spawnEnd, answer, done},
			trace: []string{"main: call spawn_agent call_sp1",
				`main: result spawn_agent call_sp1: {"new_thread_id":"` + b + `","new_agent_nickname":"Noether","status":"pending_init"}`,
				"open " + b + " by call_sp1", "close " + b + " incomplete"},
			scoped: []string{"review parser.go"}, status: "ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := plugintest.Run(t, codex.Plugin, []byte(strings.Join(tt.lines, "\n")+"\n"), normalize.Options{Provider: "codex"})
			r := o.Result
			if len(r.Unmapped) != 0 {
				t.Errorf("unmapped %v; want none", r.Unmapped)
			}
			if r.Status != tt.status || len(r.Errors) != tt.errors {
				t.Errorf("status %q, errors %v; want %q and %d", r.Status, r.Errors, tt.status, tt.errors)
			}
			if got := o.ToolTrace(); !slices.Equal(got, tt.trace) {
				t.Errorf("trace\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.trace, "\n"))
			}
			var scoped []string
			for _, it := range o.Sink.Items {
				if it.Event == nil || it.Scope == "" {
					continue
				}
				if m := it.Event.Message(); m != nil && (it.Event.Type == transcript.MessageUser || it.Event.Type == transcript.MessageAssistant) {
					scoped = append(scoped, m.Blocks[0].Text)
				}
			}
			if !slices.Equal(scoped, tt.scoped) {
				t.Errorf("sub-agent messages %q; want %q", scoped, tt.scoped)
			}
			_, results := o.Tools()
			for _, res := range results {
				want := "ok"
				if slices.Contains(tt.failed, res.CallID) {
					want = "error"
				}
				if res.Status != want || want == "error" && res.Error == "" {
					t.Errorf("result %s: %q %q; want %s with its error", res.CallID, res.Status, res.Error, want)
				}
			}
		})
	}
}

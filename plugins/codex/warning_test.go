//go:build !wasip1

package codex_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/twasm/twasm/transcript"
)

// TestWarningsNotErrors: what Codex itself calls a warning is a warning,
// never an error of the run. codex exec --json writes its warnings as
// item.completed items of type "error" ("Describes a non-fatal error
// surfaced as an item", openai/codex codex-rs/exec/src/exec_events.rs):
// EventMsg::Warning in the builds that read core events
// (event_processor_with_jsonl_output.rs at c669eb5), and the app server's
// ConfigWarning, DeprecationNotice, ModelRerouted and the CLI's own
// warnings since (at 029bf4d); its errors are the top-level "error"
// event and turn.failed. A rollout's and the legacy stream's "warning"
// event is EventMsg::Warning. A warning is listed among the step's
// warnings; the run's status is what its terminal event says, and a run
// without one (an exec run interrupted: TurnStatus::Interrupted writes
// no turn event) is incomplete, not an error whose text is a
// deprecation notice. Errors stay errors: a stream_error, an error
// event.
//
// Before, each was reported as a provider error: an interrupted exec run
// that had printed a config warning read "error" with the warning as its
// error, and so did a rollout whose last line after its answer was a
// warning.
func TestWarningsNotErrors(t *testing.T) {
	const (
		reroute = "model rerouted: gpt-5.5 -> gpt-5.4 (HighRiskCyberActivity)"
		deprec  = "`[features].web_search_request` is deprecated. Use `web_search` instead."
		budget  = "Exceeded skills context budget. All skill descriptions were removed."
	)
	var (
		thread = `{"type":"thread.started","thread_id":"019b1a2c-bbbb-7aaa-9bbb-0123456789ab"}`
		turn   = `{"type":"turn.started"}`
		warn   = func(id, m string) string {
			return `{"type":"item.completed","item":{"id":"` + id + `","type":"error","message":"` + m + `"}}`
		}
		cmd    = `{"type":"item.started","item":{"id":"item_2","type":"command_execution","command":"make","aggregated_output":"","exit_code":null,"status":"in_progress"}}`
		answer = `{"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"Built."}}`
		done   = `{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":5}}`
		errEv  = `{"type":"error","message":"stream disconnected before completion"}`
		failed = `{"type":"turn.failed","error":{"message":"stream disconnected before completion"}}`
		meta   = `{"timestamp":"t","type":"session_meta","payload":{"id":"s1","cli_version":"0.158.0"}}`
		start  = rolloutEvent(`{"type":"task_started","turn_id":"u1"}`)
		prompt = rolloutItem(`{"type":"message","role":"user","content":[{"type":"input_text","text":"build it"}]}`)
		reply  = rolloutItem(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Built."}]}`)
		rWarn  = rolloutEvent(`{"type":"warning","message":"` + budget + `"}`)
		rDone  = rolloutEvent(`{"type":"task_complete","turn_id":"u1","last_agent_message":"Built."}`)
		legacy = func(msg string) string { return `{"id":"1","msg":` + msg + `}` }
	)
	tests := []struct {
		name             string
		lines            []string
		status, errText  string
		errors, warnings []string // the step's, in order (warnings: a substring each)
	}{
		{"exec: a config warning, then interrupted", []string{thread, warn("item_0", deprec), turn, cmd}, "incomplete", "", nil, []string{deprec}},
		{"exec: a reroute, answered, interrupted", []string{thread, turn, warn("item_1", reroute), answer}, "incomplete", "", nil, []string{reroute}},
		{"exec: a reroute, then completed", []string{thread, turn, warn("item_1", reroute), answer, done}, "ok", "", nil, []string{reroute}},
		{"exec: a warning, then the turn failed", []string{thread, turn, warn("item_1", budget), errEv, failed}, "error", "stream disconnected", []string{"stream disconnected before completion"}, []string{budget}},
		{"exec: an error event, interrupted", []string{thread, turn, errEv}, "error", "stream disconnected", []string{"stream disconnected before completion"}, nil},
		{"rollout: a warning after the answer", []string{meta, start, prompt, reply, rWarn, rDone}, "ok", "", nil, []string{budget}},
		{"rollout: a warning, then interrupted", []string{meta, start, prompt, rWarn, rolloutEvent(`{"type":"turn_aborted","reason":"interrupted"}`)}, "incomplete", "interrupted", nil, []string{budget}},
		{"legacy stream: a warning, then the task's end", []string{legacy(`{"type":"task_started"}`), legacy(`{"type":"warning","message":"` + budget + `"}`), legacy(`{"type":"agent_message","message":"Built."}`), legacy(`{"type":"task_complete","last_agent_message":"Built."}`)}, "ok", "", nil, []string{budget}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkOutcome(t, runRollout(t, tt.lines).Result, tt.status, tt.errText, tt.errors, tt.warnings)
		})
	}
}

// TestLegacyNotices: the legacy {"id","msg"} stream's background_event
// (BackgroundEventEvent {message}) and deprecation_notice
// (DeprecationNoticeEvent {summary, details}; openai/codex
// codex-rs/protocol/src/protocol.rs) are Codex's notices: warnings,
// never the run's error, the status what the task's end says. An early
// build's retry of the model stream, sent as a background event
// ("stream error: <error>; retrying N/M in <delay>…",
// codex-rs/core/src/codex.rs with OPENAI_STREAM_MAX_RETRIES), is an error
// the provider reported, as the later stream_error is. Before, both
// types were counted unmapped and their text lost.
func TestLegacyNotices(t *testing.T) {
	const retry = "stream error: stream disconnected before completion: Transport error: error decoding response body; retrying 1/10 in 211ms…"
	var (
		legacy = func(msg string) string { return `{"id":"1","msg":` + msg + `}` }
		start  = legacy(`{"type":"task_started"}`)
		answer = legacy(`{"type":"agent_message","message":"Built."}`)
		done   = legacy(`{"type":"task_complete","last_agent_message":"Built."}`)
		bg     = legacy(`{"type":"background_event","message":"Connecting to MCP server docs…"}`)
		dep    = legacy(`{"type":"deprecation_notice","summary":"` + "`[features].web_search_request` is deprecated." + `","details":"Use web_search instead."}`)
		depBar = legacy(`{"type":"deprecation_notice","summary":"codex proto is deprecated","details":null}`)
		bgErr  = legacy(`{"type":"background_event","message":"` + retry + `"}`)
	)
	tests := []struct {
		name             string
		lines            []string
		status           string
		errors, warnings []string
	}{
		{"a background event, then the task's end", []string{start, bg, answer, done}, "ok", nil, []string{"codex: Connecting to MCP server docs…"}},
		{"a background event, then interrupted", []string{start, bg}, "incomplete", nil, []string{"Connecting to MCP server docs"}},
		{"a deprecation notice with details", []string{dep, start, answer, done}, "ok", nil, []string{"codex deprecation notice: `[features].web_search_request` is deprecated. (Use web_search instead.)"}},
		{"a deprecation notice without details", []string{depBar, start, answer, done}, "ok", nil, []string{"codex deprecation notice: codex proto is deprecated"}},
		{"a retry as a background event, then the task's end", []string{start, bgErr, answer, done}, "ok", []string{retry}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkOutcome(t, runRollout(t, tt.lines).Result, tt.status, "", tt.errors, tt.warnings)
		})
	}
}

// checkOutcome checks a step's result: its status, that its error holds
// errText, its errors' messages in order, a warning holding each of
// warnings, and nothing unmapped.
func checkOutcome(t *testing.T, r *transcript.AgentResult, status, errText string, errors, warnings []string) {
	t.Helper()
	if r.Status != status || !strings.Contains(r.Error, errText) {
		t.Errorf("status %q (%q); want %q holding %q", r.Status, r.Error, status, errText)
	}
	var errs []string
	for _, e := range r.Errors {
		errs = append(errs, e.Message)
	}
	if !slices.Equal(errs, errors) {
		t.Errorf("errors %q; want %q", errs, errors)
	}
	for _, w := range warnings {
		if !slices.ContainsFunc(r.Warnings, func(s string) bool { return strings.Contains(s, w) }) {
			t.Errorf("warnings %q; want one holding %q", r.Warnings, w)
		}
	}
	if len(r.Unmapped) != 0 {
		t.Errorf("unmapped %v; want none", r.Unmapped)
	}
}

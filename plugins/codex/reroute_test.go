//go:build !wasip1

package codex_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/codex"
	"github.com/twasm/twasm/transcript"
)

// TestModelReroute: when the server answers with another model than the
// one requested (its OpenAI-Model header; openai/codex protocol.rs
// ModelRerouteEvent {from_model, to_model, reason}, reason
// high_risk_cyber_activity), Codex sends model_reroute, which rollouts of
// newer builds keep and the app server's legacy stream carries: the
// turn's answers from there on are to_model's, so the messages after it
// and the step name to_model, and a warning says so. A model_verification
// (the account's verifications, ModelVerificationEvent) and a hook_started
// (the start of a hook whose hook_completed is read) are state, declared
// ignored. Before, the three were counted unmapped and the step named the
// model requested.
func TestModelReroute(t *testing.T) {
	ev, item := rolloutEvent, rolloutItem
	legacy := func(msg string) string { return `{"id":"1","msg":` + msg + `}` }
	const reroute = `{"type":"model_reroute","from_model":"gpt-5.5","to_model":"gpt-5.2","reason":"high_risk_cyber_activity"}`
	const verified = `{"type":"model_verification","verifications":["trusted_access_for_cyber"]}`
	const hookStarted = `{"type":"hook_started","turn_id":"u1","run":{"id":"hook-1","event_name":"stop","handler_type":"command","execution_mode":"sync","scope":"turn","source_path":"/w/.codex/hooks.json","display_order":0,"status":"running","status_message":null,"started_at":100,"completed_at":null,"duration_ms":null,"entries":[]}}`
	tests := []struct {
		name, model, answerModel string
		lines                    []string
	}{
		{"rollout: rerouted", "gpt-5.2", "gpt-5.2", []string{
			`{"timestamp":"t","type":"session_meta","payload":{"id":"s1","cli_version":"0.160.0"}}`,
			`{"timestamp":"t","type":"turn_context","payload":{"turn_id":"u1","cwd":"/w","model":"gpt-5.5"}}`,
			ev(`{"type":"task_started","turn_id":"u1"}`),
			item(`{"type":"message","role":"user","content":[{"type":"input_text","text":"scan this host for open ports"}]}`),
			ev(verified), ev(reroute), ev(hookStarted),
			item(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Ports 22 and 443 are open."}]}`),
			ev(`{"type":"task_complete","turn_id":"u1","last_agent_message":"Ports 22 and 443 are open."}`),
		}},
		{"rollout: not rerouted", "gpt-5.5", "gpt-5.5", []string{
			`{"timestamp":"t","type":"session_meta","payload":{"id":"s1","cli_version":"0.160.0"}}`,
			`{"timestamp":"t","type":"turn_context","payload":{"turn_id":"u1","cwd":"/w","model":"gpt-5.5"}}`,
			ev(`{"type":"task_started","turn_id":"u1"}`),
			item(`{"type":"message","role":"user","content":[{"type":"input_text","text":"list the files"}]}`),
			item(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Ports 22 and 443 are open."}]}`),
			ev(`{"type":"task_complete","turn_id":"u1","last_agent_message":"Ports 22 and 443 are open."}`),
		}},
		{"legacy stream: rerouted", "gpt-5.2", "", []string{
			legacy(`{"type":"session_configured","session_id":"s1","model":"gpt-5.5","history_log_id":0,"history_entry_count":0}`),
			legacy(`{"type":"task_started","model_context_window":258400}`),
			legacy(verified), legacy(reroute), legacy(hookStarted),
			legacy(`{"type":"agent_message","message":"Ports 22 and 443 are open."}`),
			legacy(`{"type":"task_complete","last_agent_message":"Ports 22 and 443 are open."}`),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := plugintest.Run(t, codex.Plugin, []byte(strings.Join(tt.lines, "\n")+"\n"), normalize.Options{Provider: "codex"})
			r := o.Result
			if r.Model != tt.model {
				t.Errorf("step model %q; want %q", r.Model, tt.model)
			}
			if len(r.Unmapped) != 0 {
				t.Errorf("unmapped %v; want none", r.Unmapped)
			}
			rerouted := 0
			for _, w := range r.Warnings {
				if strings.Contains(w, "from gpt-5.5 to gpt-5.2") {
					rerouted++
				}
			}
			if want := map[bool]int{true: 1}[tt.model == "gpt-5.2"]; rerouted != want {
				t.Errorf("warnings %q; want %d naming the reroute", r.Warnings, want)
			}
			for _, it := range o.Sink.Items {
				if ev := it.Event; ev != nil && ev.Type == transcript.MessageAssistant && ev.Message().Model != tt.answerModel {
					t.Errorf("answer's model %q; want %q", ev.Message().Model, tt.answerModel)
				}
			}
		})
	}
}

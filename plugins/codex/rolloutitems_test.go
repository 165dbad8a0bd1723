//go:build !wasip1

package codex_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/twasm/twasm/transcript"
)

// TestRolloutNewerItems: the records newer Codex rollouts persist
// (codex-rs/rollout/src/policy.rs) are mapped, none counted unmapped:
//   - a sub-agent's activity repeats the calls that started it; an
//     interruption is said;
//   - compactions are warned of once per turn (a summary, when there is
//     one, is injected context);
//   - a review's findings (exited_review_mode) are its result, once, and
//     answer its turn;
//   - a generated image is a tool call with its result;
//   - a client's dynamic tool that failed (dynamic_tool_call_response,
//     persisted by builds of early 2026 with extended history) is an
//     error, though its function_call_output holds only content items;
//   - a multi-agent tool's refusal ("collab spawn failed: ...") is an
//     error, though the rollout keeps only its text; the tools' end
//     events (collab_*_end) echo their results;
//   - a call the auto-reviewer (guardian) denied is denied, by its
//     guardian_assessment or by the rejection its output gives the
//     model; one whose review timed out did not run (cancelled);
//   - a thread's new name is state; an /undo (undo_completed) is a
//     warning, its turn ok.
func TestRolloutNewerItems(t *testing.T) {
	ev, item := rolloutEvent, rolloutItem
	var (
		meta     = `{"timestamp":"t","type":"session_meta","payload":{"id":"s1","cli_version":"0.158.0"}}`
		start    = ev(`{"type":"task_started","turn_id":"u1"}`)
		prompt   = item(`{"type":"message","role":"user","content":[{"type":"input_text","text":"draw a cat"}]}`)
		answer   = item(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Done."}]}`)
		noAnswer = ev(`{"type":"task_complete","turn_id":"u1","last_agent_message":null}`)
		done     = ev(`{"type":"task_complete","turn_id":"u1","last_agent_message":"Done."}`)

		compacted     = `{"timestamp":"t","type":"compacted","payload":{"message":"","replacement_history":[{"type":"message","role":"user","content":[{"type":"input_text","text":"draw a cat"}]},{"type":"compaction","encrypted_content":"gAAA"}]}}`
		summary       = `{"timestamp":"t","type":"compacted","payload":{"message":"The user asked for a cat."}}`
		compactItem   = item(`{"type":"compaction","encrypted_content":"gAAA"}`)
		contextItem   = item(`{"type":"context_compaction","encrypted_content":"gAAA"}`)
		compactedEv   = ev(`{"type":"context_compacted"}`)
		reviewPrompt  = item(`{"type":"message","role":"user","content":[{"type":"input_text","text":"review my changes"}]}`)
		entered       = ev(`{"type":"entered_review_mode","target":{"type":"uncommittedChanges"}}`)
		reviewUser    = item(`{"type":"message","id":"review_rollout_user","role":"user","content":[{"type":"input_text","text":"<user_action>\n  <context>User initiated a review task.</context>\n  <action>review</action>\n  <results>\n  The patch is mostly fine.\n  </results>\n</user_action>"}]}`)
		exited        = ev(`{"type":"exited_review_mode","review_output":{"findings":[{"title":"[P1] Off-by-one in loop","body":"The loop skips the last item.","confidence_score":0.8,"priority":1,"code_location":{"absolute_file_path":"/w/main.go","line_range":{"start":10,"end":12}}}],"overall_correctness":"patch is incorrect","overall_explanation":"The patch is mostly fine.","overall_confidence_score":0.7}}`)
		reviewEcho    = item(`{"type":"message","id":"review_rollout_assistant","role":"assistant","content":[{"type":"output_text","text":"The patch is mostly fine.\n\nReview comment:\n\n- [P1] Off-by-one in loop — /w/main.go:10-12"}]}`)
		reviewEchoEv  = ev(`{"type":"agent_message","message":"The patch is mostly fine.\n\nReview comment:\n\n- [P1] Off-by-one in loop — /w/main.go:10-12"}`)
		exitedNone    = ev(`{"type":"exited_review_mode","review_output":null}`)
		aborted       = ev(`{"type":"turn_aborted","reason":"interrupted"}`)
		image         = item(`{"type":"image_generation_call","id":"ig_1","status":"completed","revised_prompt":"A gray tabby cat","result":"iVBORw0KGgo="}`)
		imageEnd      = ev(`{"type":"image_generation_end","call_id":"ig_1","status":"completed","revised_prompt":"A gray tabby cat","result":"iVBORw0KGgo=","saved_path":"/w/cat.png"}`)
		imageFailed   = item(`{"type":"image_generation_call","id":"ig_2","status":"failed","result":""}`)
		subStarted    = ev(`{"type":"sub_agent_activity","event_id":"e1","occurred_at_ms":1,"agent_thread_id":"c1","agent_path":"/root/worker","kind":"started"}`)
		subInteracted = ev(`{"type":"sub_agent_activity","event_id":"e2","occurred_at_ms":2,"agent_thread_id":"c1","agent_path":"/root/worker","kind":"interacted"}`)
		dynCall       = item(`{"type":"function_call","name":"lookup_ticket","arguments":"{\"id\":\"T-1\"}","call_id":"call_d1"}`)
		dynReq        = ev(`{"type":"dynamic_tool_call_request","call_id":"call_d1","turn_id":"u1","tool":"lookup_ticket","arguments":{"id":"T-1"}}`)
		dynFailed     = ev(`{"type":"dynamic_tool_call_response","call_id":"call_d1","turn_id":"u1","tool":"lookup_ticket","arguments":{"id":"T-1"},"content_items":[{"type":"inputText","text":"ticket service unavailable"}],"success":false,"error":null,"duration":{"secs":1,"nanos":0}}`)
		dynOK         = ev(`{"type":"dynamic_tool_call_response","call_id":"call_d1","turn_id":"u1","tool":"lookup_ticket","arguments":{"id":"T-1"},"content_items":[{"type":"inputText","text":"open"}],"success":true,"error":null,"duration":{"secs":1,"nanos":0}}`)
		dynOutput     = item(`{"type":"function_call_output","call_id":"call_d1","output":"ticket service unavailable"}`)
		viewImage     = ev(`{"type":"view_image_tool_call","call_id":"call_v1","path":"/w/a.png"}`)
		named         = ev(`{"type":"thread_name_updated","thread_id":"s1","thread_name":"cat"}`)
		undone        = ev(`{"type":"undo_completed","success":true,"message":"Undo restored snapshot abc1234."}`)
		undoFailed    = ev(`{"type":"undo_completed","success":false,"message":"No ghost snapshot available to undo."}`)
		spawnCall     = item(`{"type":"function_call","name":"spawn_agent","arguments":"{\"message\":\"review\"}","call_id":"call_s1"}`)
		spawnLimit    = item(`{"type":"function_call_output","call_id":"call_s1","output":"collab spawn failed: agent thread limit reached"}`)
		spawnOK       = item(`{"type":"function_call_output","call_id":"call_s1","output":"{\"agent_id\":\"019b0000-0000-7000-8000-0000000000e1\",\"nickname\":\"Euler\"}"}`)
		waitCall      = item(`{"type":"function_call","name":"wait","arguments":"{\"ids\":[\"019b0000-0000-7000-8000-0000000000e9\"]}","call_id":"call_w1"}`)
		waitMissing   = item(`{"type":"function_call_output","call_id":"call_w1","output":"agent with id 019b0000-0000-7000-8000-0000000000e9 not found"}`)
		guardCall     = item(`{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"rm -rf /srv/data\"}","call_id":"call_g1"}`)
		guardPending  = ev(`{"type":"guardian_assessment","id":"r1","target_item_id":"call_g1","turn_id":"u1","started_at_ms":1,"status":"in_progress","action":{"type":"command","source":"shell","command":"rm -rf /srv/data","cwd":"/w"}}`)
		guardDenied   = ev(`{"type":"guardian_assessment","id":"r1","target_item_id":"call_g1","turn_id":"u1","started_at_ms":1,"completed_at_ms":2,"status":"denied","risk_level":"high","user_authorization":"low","rationale":"Deletes data outside the workspace.","decision_source":"agent","action":{"type":"command","source":"shell","command":"rm -rf /srv/data","cwd":"/w"}}`)
		guardApproved = ev(`{"type":"guardian_assessment","id":"r1","target_item_id":"call_g1","turn_id":"u1","started_at_ms":1,"completed_at_ms":2,"status":"approved","risk_level":"low","rationale":"The user asked for it.","action":{"type":"command","source":"shell","command":"rm -rf /srv/data","cwd":"/w"}}`)
		guardRejected = item(`{"type":"function_call_output","call_id":"call_g1","output":"This action was rejected due to unacceptable risk.\nReason: Deletes data outside the workspace.\nThe agent must not attempt to achieve the same outcome via workaround, indirect execution, or policy circumvention. Proceed only with a materially safer alternative, or if the user explicitly approves the action after being informed of the risk. Otherwise, stop and request user input."}`)
		guardTimedOut = item(`{"type":"function_call_output","call_id":"call_g1","output":"The automatic permission approval review did not finish before its deadline. Do not assume the action is unsafe based on the timeout alone. You may retry once, or ask the user for guidance or explicit approval."}`)
		guardPlain    = item(`{"type":"function_call_output","call_id":"call_g1","output":"not run"}`)
		guardRan      = item(`{"type":"function_call_output","call_id":"call_g1","output":"Exit code: 0\nWall time: 0.1 seconds\nOutput:\n"}`)
		spawnEnd      = ev(`{"type":"collab_agent_spawn_end","call_id":"call_s1","sender_thread_id":"019b0000-0000-7000-8000-0000000000a1","new_thread_id":"019b0000-0000-7000-8000-0000000000e1","new_agent_nickname":"Euler","prompt":"review","status":"pending_init"}`)
		spawnEndNone  = ev(`{"type":"collab_agent_spawn_end","call_id":"call_s1","sender_thread_id":"019b0000-0000-7000-8000-0000000000a1","new_thread_id":null,"prompt":"review","status":"not_found"}`)
		sendCall      = item(`{"type":"function_call","name":"send_input","arguments":"{\"id\":\"019b0000-0000-7000-8000-0000000000e1\",\"message\":\"also the tests\"}","call_id":"call_i1"}`)
		sendEnd       = ev(`{"type":"collab_agent_interaction_end","call_id":"call_i1","sender_thread_id":"019b0000-0000-7000-8000-0000000000a1","receiver_thread_id":"019b0000-0000-7000-8000-0000000000e1","prompt":"also the tests","status":{"errored":"stream disconnected"}}`)
		sendOK        = item(`{"type":"function_call_output","call_id":"call_i1","output":"{\"submission_id\":\"sub-1\"}"}`)
		waitEnd       = ev(`{"type":"collab_waiting_end","sender_thread_id":"019b0000-0000-7000-8000-0000000000a1","call_id":"call_w1","statuses":{"019b0000-0000-7000-8000-0000000000e9":{"completed":"All tests pass."}}}`)
		waitOK        = item(`{"type":"function_call_output","call_id":"call_w1","output":"{\"status\":{\"019b0000-0000-7000-8000-0000000000e9\":{\"completed\":\"All tests pass.\"}},\"timed_out\":false}"}`)
		closeCall     = item(`{"type":"function_call","name":"close_agent","arguments":"{\"id\":\"019b0000-0000-7000-8000-0000000000e9\"}","call_id":"call_c1"}`)
		closeEndGone  = ev(`{"type":"collab_close_end","call_id":"call_c1","sender_thread_id":"019b0000-0000-7000-8000-0000000000a1","receiver_thread_id":"019b0000-0000-7000-8000-0000000000e9","status":"not_found"}`)
		closeGone     = item(`{"type":"function_call_output","call_id":"call_c1","output":"{\"status\":\"not_found\"}"}`)
		closeEndDone  = ev(`{"type":"collab_close_end","call_id":"call_c1","sender_thread_id":"019b0000-0000-7000-8000-0000000000a1","receiver_thread_id":"019b0000-0000-7000-8000-0000000000e9","status":{"completed":null}}`)
		closeOK       = item(`{"type":"function_call_output","call_id":"call_c1","output":"{\"status\":{\"completed\":null}}"}`)
		eSpawnEnd     = ev(`{"type":"collab_agent_spawn_end","call_id":"call_s1","sender_thread_id":"s1","new_thread_id":"019b0000-0000-7000-8000-0000000000e1","new_agent_nickname":"Euler","new_agent_role":"explorer","prompt":"review","model":"gpt-5.4","reasoning_effort":"medium","status":"running"}`)
		eSendCall     = item(`{"type":"function_call","name":"send_input","arguments":"{\"id\":\"019b0000-0000-7000-8000-0000000000e1\",\"message\":\"also the tests\"}","call_id":"call_i1"}`)
		eSendOut      = item(`{"type":"function_call_output","call_id":"call_i1","output":"{\"submission_id\":\"x1\"}"}`)
		eSendEnd      = ev(`{"type":"collab_agent_interaction_end","call_id":"call_i1","sender_thread_id":"s1","receiver_thread_id":"019b0000-0000-7000-8000-0000000000e1","prompt":"also the tests","status":"running"}`)
		eWaitAll      = item(`{"type":"function_call","name":"wait","arguments":"{\"ids\":[\"019b0000-0000-7000-8000-0000000000e1\"]}","call_id":"call_w2"}`)
		eWaitOut      = item(`{"type":"function_call_output","call_id":"call_w2","output":"{\"status\":{\"019b0000-0000-7000-8000-0000000000e1\":{\"completed\":\"LGTM\"}},\"timed_out\":false}"}`)
		eWaitEnd      = ev(`{"type":"collab_waiting_end","sender_thread_id":"s1","call_id":"call_w2","agent_statuses":[{"thread_id":"019b0000-0000-7000-8000-0000000000e1","agent_nickname":"Euler","status":{"completed":"LGTM"}}],"statuses":{"019b0000-0000-7000-8000-0000000000e1":{"completed":"LGTM"}}}`)
		eCloseCall    = item(`{"type":"function_call","name":"close_agent","arguments":"{\"id\":\"019b0000-0000-7000-8000-0000000000e1\"}","call_id":"call_c1"}`)
		eCloseOut     = item(`{"type":"function_call_output","call_id":"call_c1","output":"{\"status\":{\"completed\":\"LGTM\"}}"}`)
		eCloseEnd     = ev(`{"type":"collab_close_end","call_id":"call_c1","sender_thread_id":"s1","receiver_thread_id":"019b0000-0000-7000-8000-0000000000e1","status":{"completed":"LGTM"}}`)
		eResumeEnd    = ev(`{"type":"collab_resume_end","call_id":"call_r1","sender_thread_id":"s1","receiver_thread_id":"019b0000-0000-7000-8000-0000000000e1","status":"running"}`)
		subStopped    = ev(`{"type":"sub_agent_activity","event_id":"e3","occurred_at_ms":3,"agent_thread_id":"c1","agent_path":"/root/worker","kind":"interrupted"}`)
	)
	// Codex's guardian_rejection_message (core/src/guardian/review.rs).
	const rejection = "This action was rejected due to unacceptable risk.\nReason: Deletes data outside the workspace.\nThe agent must not attempt to achieve the same outcome via workaround, indirect execution, or policy circumvention. Proceed only with a materially safer alternative, or if the user explicitly approves the action after being informed of the risk. Otherwise, stop and request user input."
	type toolWant struct{ name, status, output string }
	tests := []struct {
		name      string
		lines     []string
		status    string
		warnings  []string // substrings, one warning each
		assistant []string // texts of the assistant messages, in order
		injected  []string // texts of the injected context blocks
		tools     []toolWant
	}{
		{name: "a /compact turn without a summary", lines: []string{meta, start, prompt, answer, done, start, compacted, compactedEv, noAnswer},
			status: "ok", warnings: []string{"codex compaction"}, assistant: []string{"Done."}},
		{name: "a compaction's summary is injected context", lines: []string{meta, start, summary, compactedEv, noAnswer},
			status: "ok", warnings: []string{"codex compaction"}, injected: []string{"The user asked for a cat."}},
		{name: "compaction items of one turn, warned once", lines: []string{meta, start, prompt, compactItem, contextItem, answer, done},
			status: "ok", warnings: []string{"codex compaction"}, assistant: []string{"Done."}},
		{name: "a compaction in each of two turns", lines: []string{meta, start, prompt, compactItem, answer, done, start, prompt, contextItem, answer, done},
			status: "ok", warnings: []string{"codex compaction", "codex compaction"}, assistant: []string{"Done.", "Done."}},
		{name: "a review's findings are its result, once", lines: []string{meta, start, reviewPrompt, entered, reviewUser, exited, reviewEcho, reviewEchoEv, noAnswer},
			status: "ok", assistant: []string{"The patch is mostly fine.\n\n[P1] Off-by-one in loop\n/w/main.go:10-12\nThe loop skips the last item.\n\nOverall correctness: patch is incorrect"},
			injected: []string{"<user_action>\n  <context>User initiated a review task.</context>\n  <action>review</action>\n  <results>\n  The patch is mostly fine.\n  </results>\n</user_action>"}},
		{name: "a review's findings answer its turn without the echo", lines: []string{meta, start, reviewPrompt, entered, exited, noAnswer},
			status: "ok", assistant: []string{"The patch is mostly fine.\n\n[P1] Off-by-one in loop\n/w/main.go:10-12\nThe loop skips the last item.\n\nOverall correctness: patch is incorrect"}},
		{name: "an interrupted review", lines: []string{meta, start, reviewPrompt, entered, exitedNone, aborted},
			status: "incomplete", warnings: []string{"review ended without findings"}},
		{name: "an image generated", lines: []string{meta, start, prompt, image, imageEnd, noAnswer},
			status: "ok", tools: []toolWant{{"image_generation", "ok", "iVBORw0KGgo="}}},
		{name: "an image generated, then answered", lines: []string{meta, start, prompt, image, imageEnd, answer, done},
			status: "ok", assistant: []string{"Done."}, tools: []toolWant{{"image_generation", "ok", "iVBORw0KGgo="}}},
		{name: "an image generation that failed", lines: []string{meta, start, prompt, imageFailed, noAnswer},
			status: "error", tools: []toolWant{{"image_generation", "error", ""}}},
		{name: "a sub-agent's activity", lines: []string{meta, start, prompt, subStarted, subInteracted, answer, subStopped, done},
			status: "ok", warnings: []string{"sub-agent /root/worker was interrupted"}, assistant: []string{"Done."}},
		{name: "a dynamic tool that failed", lines: []string{meta, start, prompt, dynCall, dynReq, dynFailed, dynOutput, answer, done},
			status: "ok", assistant: []string{"Done."}, tools: []toolWant{{"lookup_ticket", "error", "ticket service unavailable"}}},
		{name: "a dynamic tool that succeeded", lines: []string{meta, start, prompt, dynCall, dynReq, dynOK, dynOutput, answer, done},
			status: "ok", assistant: []string{"Done."}, tools: []toolWant{{"lookup_ticket", "ok", "ticket service unavailable"}}},
		{name: "a view_image echo and a new thread name", lines: []string{meta, start, prompt, viewImage, answer, done, named},
			status: "ok", assistant: []string{"Done."}},
		{name: "multi-agent tools refused", lines: []string{meta, start, prompt, spawnCall, spawnLimit, waitCall, waitMissing, answer, done},
			status: "ok", assistant: []string{"Done."}, tools: []toolWant{
				{"spawn_agent", "error", "collab spawn failed: agent thread limit reached"},
				{"wait", "error", "agent with id 019b0000-0000-7000-8000-0000000000e9 not found"}}},
		{name: "multi-agent v1's collab_*_end echoes of its calls", lines: []string{meta, start, prompt, spawnCall, spawnOK, eSpawnEnd, eSendCall, eSendOut, eSendEnd, eWaitAll, eWaitOut, eWaitEnd, eCloseCall, eCloseOut, eCloseEnd, eResumeEnd, answer, done},
			status: "ok", assistant: []string{"Done."}, tools: []toolWant{
				{"spawn_agent", "ok", `{"agent_id":"019b0000-0000-7000-8000-0000000000e1","nickname":"Euler"}`},
				{"send_input", "ok", `{"submission_id":"x1"}`},
				{"wait", "ok", `{"status":{"019b0000-0000-7000-8000-0000000000e1":{"completed":"LGTM"}},"timed_out":false}`},
				{"close_agent", "ok", `{"status":{"completed":"LGTM"}}`}}},
		{name: "a sub-agent spawned", lines: []string{meta, start, prompt, spawnCall, spawnOK, answer, done},
			status: "ok", assistant: []string{"Done."}, tools: []toolWant{
				{"spawn_agent", "ok", `{"agent_id":"019b0000-0000-7000-8000-0000000000e1","nickname":"Euler"}`}}},
		// The multi-agent tools' end events (extended history, early
		// 2026; CollabAgentSpawnEndEvent and the others in Codex's
		// protocol.rs) echo the call's result: none is unmapped, none
		// is a call or result of its own; a spawn without a new thread
		// and a receiver not found fail the call, a receiver's own
		// error (its outcome, in its own rollout) does not.
		{name: "multi-agent end events echo their calls' results", lines: []string{meta, start, prompt, spawnCall, spawnEnd, spawnOK, sendCall, sendEnd, sendOK, waitCall, waitEnd, waitOK, closeCall, closeEndDone, closeOK, answer, done},
			status: "ok", assistant: []string{"Done."}, tools: []toolWant{
				{"spawn_agent", "ok", `{"agent_id":"019b0000-0000-7000-8000-0000000000e1","nickname":"Euler"}`},
				{"send_input", "ok", `{"submission_id":"sub-1"}`},
				{"wait", "ok", `{"status":{"019b0000-0000-7000-8000-0000000000e9":{"completed":"All tests pass."}},"timed_out":false}`},
				{"close_agent", "ok", `{"status":{"completed":null}}`}}},
		{name: "multi-agent end events that say the call failed", lines: []string{meta, start, prompt, spawnCall, spawnEndNone, spawnLimit, closeCall, closeEndGone, closeGone, answer, done},
			status: "ok", assistant: []string{"Done."}, tools: []toolWant{
				{"spawn_agent", "error", "collab spawn failed: agent thread limit reached"},
				{"close_agent", "error", `{"status":"not_found"}`}}},
		{name: "the auto-reviewer denied a call: denied, with its reason", lines: []string{meta, start, prompt, guardCall, guardPending, guardDenied, guardRejected, answer, done},
			status: "ok", assistant: []string{"Done."}, tools: []toolWant{{"exec_command", "denied", rejection}}},
		{name: "a guardian denial the rollout did not keep: its output says so", lines: []string{meta, start, prompt, guardCall, guardRejected, answer, done},
			status: "ok", assistant: []string{"Done."}, tools: []toolWant{{"exec_command", "denied", rejection}}},
		{name: "a guardian denial whatever the output says", lines: []string{meta, start, prompt, guardCall, guardDenied, guardPlain, answer, done},
			status: "ok", assistant: []string{"Done."}, tools: []toolWant{{"exec_command", "denied", "not run"}}},
		{name: "an auto-review that timed out: the call did not run", lines: []string{meta, start, prompt, guardCall, guardTimedOut, answer, done},
			status: "ok", assistant: []string{"Done."}, tools: []toolWant{{"exec_command", "cancelled", "The automatic permission approval review did not finish before its deadline. Do not assume the action is unsafe based on the timeout alone. You may retry once, or ask the user for guidance or explicit approval."}}},
		{name: "an approved call ran", lines: []string{meta, start, prompt, guardCall, guardPending, guardApproved, guardRan, answer, done},
			status: "ok", assistant: []string{"Done."}, tools: []toolWant{{"exec_command", "ok", "Exit code: 0\nWall time: 0.1 seconds\nOutput:\n"}}},
		{name: "an undo, then one that failed", lines: []string{meta, start, prompt, answer, done, start, undone, noAnswer, start, undoFailed, noAnswer},
			status: "ok", assistant: []string{"Done."}, warnings: []string{"undo restored the working tree", "undo failed, the working tree was not restored: No ghost snapshot"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := runRollout(t, tt.lines)
			r := o.Result
			if r.Status != tt.status {
				t.Errorf("status %q (%q); want %q", r.Status, r.Error, tt.status)
			}
			if len(r.Unmapped) != 0 {
				t.Errorf("unmapped %v; want none", r.Unmapped)
			}
			if len(r.Warnings) != len(tt.warnings) {
				t.Errorf("warnings %q; want %d", r.Warnings, len(tt.warnings))
			}
			for i, w := range tt.warnings {
				if i < len(r.Warnings) && !strings.Contains(r.Warnings[i], w) {
					t.Errorf("warning %d %q; want it to say %q", i, r.Warnings[i], w)
				}
			}
			var assistant, injected []string
			for _, it := range o.Sink.Items {
				if it.Event == nil {
					continue
				}
				mp := it.Event.Message()
				if mp == nil {
					continue
				}
				for _, b := range mp.Blocks {
					switch {
					case it.Event.Type == transcript.MessageAssistant && b.Type == transcript.BlockText:
						assistant = append(assistant, b.Text)
					case b.Origin == transcript.OriginInjected:
						injected = append(injected, b.Text)
					}
				}
			}
			if !slices.Equal(assistant, tt.assistant) {
				t.Errorf("assistant texts %q; want %q", assistant, tt.assistant)
			}
			if !slices.Equal(injected, tt.injected) {
				t.Errorf("injected %q; want %q", injected, tt.injected)
			}
			calls, results := o.Tools()
			if len(calls) != len(tt.tools) || len(results) != len(tt.tools) {
				t.Fatalf("%d calls, %d results; want %d each", len(calls), len(results), len(tt.tools))
			}
			for i, w := range tt.tools {
				if calls[i].Name != w.name || results[i].Status != w.status || results[i].Output != w.output {
					t.Errorf("tool %d: %q %q %q; want %q %q %q", i, calls[i].Name, results[i].Status, results[i].Output, w.name, w.status, w.output)
				}
			}
		})
	}
}

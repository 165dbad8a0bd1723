//go:build !wasip1

package codex_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/twasm/twasm/transcript"
)

// TestForkedSubAgent: a sub-agent spawned with its parent's history
// (fork_context, fork_turns) writes that history after its own
// session_meta, then its own first turn; Codex starts its running token
// total from the parent's last. The copy is the parent's (its run holds
// it): none of its messages is the sub-agent's, and the sub-agent's
// usage is what its own counts add, whether its first count continues
// the parent's total or (a build that did not carry it over) restarts.
// The step's session is the sub-agent's, not the copied parent's (its
// copied lines are declared ignored: the golden case checks that every
// line is accounted for). A sub-agent
// spawned without the history, or a rollout forked by no thread, is read
// as before.
func TestForkedSubAgent(t *testing.T) {
	ev, item := rolloutEvent, rolloutItem
	meta := func(id, extra string) string {
		return `{"timestamp":"t","type":"session_meta","payload":{"id":"` + id + `",` + extra + `"timestamp":"t0","cwd":"/w","originator":"codex_cli_rs","cli_version":"0.158.0","source":{"subagent":{"thread_spawn":{"parent_thread_id":"p1","depth":1,"agent_path":"/root/worker"}}}}}`
	}
	count := func(total, last int) string {
		return ev(fmt.Sprintf(`{"type":"token_count","info":{"total_token_usage":{"input_tokens":%d,"output_tokens":%d,"total_tokens":%d},"last_token_usage":{"input_tokens":%d,"output_tokens":%d,"total_tokens":%d}}}`,
			total, total/10, total+total/10, last, last/10, last+last/10))
	}
	var (
		forked     = meta("c1", `"forked_from_id":"p1",`)
		unforked   = meta("c1", "")
		parentMeta = `{"timestamp":"t","type":"session_meta","payload":{"id":"p1","timestamp":"t-1","cwd":"/w","originator":"codex_cli_rs","cli_version":"0.158.0","source":"cli"}}`
		userFork   = `{"timestamp":"t","type":"session_meta","payload":{"id":"c1","forked_from_id":"p1","timestamp":"t0","cwd":"/w","originator":"codex_cli_rs","cli_version":"0.158.0","source":"cli"}}`
		ctx        = `{"timestamp":"t","type":"turn_context","payload":{"cwd":"/w","model":"gpt-5.5"}}`
		pStart1    = ev(`{"type":"task_started","turn_id":"pt1"}`)
		pPrompt1   = item(`{"type":"message","role":"user","content":[{"type":"input_text","text":"parent prompt one"}]}`)
		pAnswer1   = item(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"parent answer one"}],"phase":"final_answer"}`)
		pDone1     = ev(`{"type":"task_complete","turn_id":"pt1","last_agent_message":"parent answer one"}`)
		pStart2    = ev(`{"type":"task_started","turn_id":"pt2"}`)
		pPrompt2   = item(`{"type":"message","role":"user","content":[{"type":"input_text","text":"parent prompt two"}]}`)
		pEcho2     = ev(`{"type":"user_message","message":"parent prompt two"}`)
		cStart     = ev(`{"type":"task_started","turn_id":"ct1"}`)
		cTask      = item(`{"type":"message","role":"user","content":[{"type":"input_text","text":"child task"}]}`)
		cAnswer    = item(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"child answer"}],"phase":"final_answer"}`)
		cDone      = ev(`{"type":"task_complete","turn_id":"ct1","last_agent_message":"child answer"}`)
		full       = []string{parentMeta, pStart1, ctx, pPrompt1, count(1000, 1000), pAnswer1, pDone1, pStart2, ctx, pPrompt2, pEcho2, count(2500, 1500)}
		lastTurn   = []string{pPrompt2, pEcho2, count(2500, 1500)}
		own        = []string{cStart, ctx, cTask, count(2800, 300), cAnswer, count(3200, 400), cDone}
		join       = func(parts ...[]string) []string {
			var all []string
			for _, p := range parts {
				all = append(all, p...)
			}
			return all
		}
	)
	tests := []struct {
		name   string
		lines  []string
		texts  string // the step's message texts, in order, joined by "|"
		input  int64  // the step's input tokens, -1 for no usage
		status string
	}{
		{"fork_context: the whole history", join([]string{forked}, full, own), "child task|child answer", 700, "ok"},
		{"fork_turns N: from the current turn's input", join([]string{forked}, lastTurn, own), "child task|child answer", 700, "ok"},
		{"fork of a fork: an ancestor's session_meta", join([]string{forked, parentMeta}, full, own), "child task|child answer", 700, "ok"},
		{"own counts restart from 0", join([]string{forked}, full, []string{cStart, ctx, cTask, count(300, 300), cAnswer, count(700, 400), cDone}), "child task|child answer", 700, "ok"},
		{"cut before its own first turn", join([]string{forked}, full), "", -1, ""},
		{"spawned without the history", join([]string{unforked}, own), "child task|child answer", 3200, "ok"},
		{"a user's fork: no thread spawned it", join([]string{userFork}, []string{pStart1, pPrompt1, count(1000, 1000), pAnswer1, pDone1}), "parent prompt one|parent answer one", 1000, "ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := runRollout(t, tt.lines)
			var texts []string
			for _, it := range o.Sink.Items {
				if it.Event == nil || (it.Event.Type != transcript.MessageUser && it.Event.Type != transcript.MessageAssistant) {
					continue
				}
				for _, b := range it.Event.Message().Blocks {
					if b.Origin != transcript.OriginSystemPrompt && b.Text != "" {
						texts = append(texts, b.Text)
					}
				}
			}
			if got := strings.Join(texts, "|"); got != tt.texts {
				t.Errorf("messages %q; want %q", got, tt.texts)
			}
			var input int64 = -1
			if u := o.Result.Usage; u != nil && u.InputTokens != nil {
				input = *u.InputTokens
			}
			if input != tt.input {
				t.Errorf("input tokens %d; want %d", input, tt.input)
			}
			if tt.input >= 0 {
				u := o.Result.Usage
				if u.OutputTokens == nil || *u.OutputTokens != tt.input/10 || u.TotalTokens == nil || *u.TotalTokens != tt.input+tt.input/10 {
					t.Errorf("usage %+v; want output %d, total %d", u, tt.input/10, tt.input+tt.input/10)
				}
			}
			if o.Result.SessionID != "c1" {
				t.Errorf("session %q; want c1", o.Result.SessionID)
			}
			if len(o.Result.Unmapped) != 0 {
				t.Errorf("unmapped %v", o.Result.Unmapped)
			}
			if tt.status != "" && o.Result.Status != tt.status {
				t.Errorf("status %q (%s); want %q", o.Result.Status, o.Result.Error, tt.status)
			}
		})
	}
}

// TestUserFork: a thread a user forked (codex fork, the app-server's
// thread/fork) starts its running token total from its parent's last
// (last_token_info_from_rollout): 0.158+ forks reference the parent's
// history (history_base, forked_from_ordinal_exclusive) instead of
// copying it, so the fork's rollout holds only its own turns, yet its
// first count's total_token_usage holds the parent's tokens too. The
// fork's usage is what its own counts add (the first count's total less
// its last_token_usage is what it inherited), whether the total was
// carried over or (a fork that did not carry it) starts from 0; a thread
// that is not a fork is read as before. thread_settings_applied (the
// thread's settings, written when it starts and at every change) is
// state, declared ignored.
func TestUserFork(t *testing.T) {
	ev, item := rolloutEvent, rolloutItem
	count := func(total, last int) string {
		return ev(fmt.Sprintf(`{"type":"token_count","info":{"total_token_usage":{"input_tokens":%d,"output_tokens":%d,"total_tokens":%d},"last_token_usage":{"input_tokens":%d,"output_tokens":%d,"total_tokens":%d}}}`,
			total, total/10, total+total/10, last, last/10, last+last/10))
	}
	meta := func(extra string) string {
		return `{"timestamp":"t","ordinal":0,"type":"session_meta","payload":{"id":"f1","session_id":"f1",` + extra + `"timestamp":"t0","cwd":"/w","originator":"codex-tui","cli_version":"0.158.0","source":"cli","history_mode":"paginated"}}`
	}
	var (
		fork     = meta(`"forked_from_id":"p1","forked_from_ordinal_exclusive":15,"history_base":{"thread_id":"p1","end_ordinal_exclusive":15,"end_byte_offset":9000},`)
		own      = meta("")
		settings = ev(`{"type":"thread_settings_applied","thread_settings":{"model":"gpt-5.5","service_tier":"default"}}`)
		turn     = func(first, second string) []string {
			return []string{
				ev(`{"type":"task_started","turn_id":"ft1"}`),
				`{"timestamp":"t","type":"turn_context","payload":{"turn_id":"ft1","cwd":"/w","model":"gpt-5.5"}}`,
				item(`{"type":"message","role":"user","content":[{"type":"input_text","text":"fork prompt"}]}`),
				first,
				item(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"fork answer"}],"phase":"final_answer"}`),
				second,
				ev(`{"type":"task_complete","turn_id":"ft1","last_agent_message":"fork answer"}`),
			}
		}
	)
	tests := []struct {
		name  string
		lines []string
		input int64
	}{
		{"0.158+ fork: the parent's total carried over", append([]string{fork, settings}, turn(count(2800, 300), count(3200, 400))...), 700},
		{"a fork whose counts start from 0", append([]string{fork, settings}, turn(count(300, 300), count(700, 400))...), 700},
		{"not a fork", append([]string{own, settings}, turn(count(300, 300), count(700, 400))...), 700},
		{"not a fork, a resumed total", append([]string{own, settings}, turn(count(2800, 300), count(3200, 400))...), 3200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := runRollout(t, tt.lines)
			in, out := int64(-1), int64(-1)
			if u := o.Result.Usage; u != nil && u.InputTokens != nil && u.OutputTokens != nil {
				in, out = *u.InputTokens, *u.OutputTokens
			}
			if in != tt.input || out != tt.input/10 {
				t.Errorf("usage in %d out %d; want %d, %d", in, out, tt.input, tt.input/10)
			}
			if len(o.Result.Unmapped) != 0 {
				t.Errorf("unmapped %v", o.Result.Unmapped)
			}
			if o.Result.Status != "ok" || o.Result.SessionID != "f1" {
				t.Errorf("status %q session %q; want ok, f1", o.Result.Status, o.Result.SessionID)
			}
		})
	}
}

// TestUserForkCopyWarned: a fork that copied its parent's history (every
// build before 0.158's referenced forks, and Codex's copying path since)
// writes it after its own session_meta, the parent's session_meta first,
// and marks no end to it: the rollout is read whole, and a warning says
// that the parent's turns and tokens are counted in this run too. A
// referenced fork, a rollout that is no fork and a forked sub-agent
// (whose copy is read as forked history) warn nothing of the kind.
func TestUserForkCopyWarned(t *testing.T) {
	ev := rolloutEvent
	meta := func(id, extra string) string {
		return `{"timestamp":"t","type":"session_meta","payload":{"id":"` + id + `",` + extra + `"timestamp":"t0","cwd":"/w","originator":"codex_cli_rs","cli_version":"0.120.0","source":"cli"}}`
	}
	turn := []string{
		ev(`{"type":"task_started","turn_id":"t1"}`),
		rolloutItem(`{"type":"message","role":"user","content":[{"type":"input_text","text":"a prompt"}]}`),
		rolloutItem(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"an answer"}],"phase":"final_answer"}`),
		ev(`{"type":"task_complete","turn_id":"t1","last_agent_message":"an answer"}`),
	}
	spawned := `{"timestamp":"t","type":"session_meta","payload":{"id":"c1","forked_from_id":"p1","timestamp":"t0","cwd":"/w","originator":"codex_cli_rs","cli_version":"0.158.0","source":{"subagent":{"thread_spawn":{"parent_thread_id":"p1","depth":1,"agent_path":"/root/worker"}}}}}`
	tests := []struct {
		name  string
		lines []string
		want  bool
	}{
		{"a copying fork", append([]string{meta("f1", `"forked_from_id":"p1",`), meta("p1", "")}, turn...), true},
		{"a referenced fork", append([]string{meta("f1", `"forked_from_id":"p1","forked_from_ordinal_exclusive":3,`)}, turn...), false},
		{"no fork, its session_meta again", append([]string{meta("p1", ""), meta("p1", "")}, turn...), false},
		{"a forked sub-agent", append([]string{spawned, meta("p1", "")}, turn...), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := runRollout(t, tt.lines)
			warned := false
			for _, w := range o.Result.Warnings {
				warned = warned || strings.Contains(w, "holds a copy of the history of thread p1")
			}
			if warned != tt.want {
				t.Errorf("warnings %q; want the copy's: %v", o.Result.Warnings, tt.want)
			}
		})
	}
}

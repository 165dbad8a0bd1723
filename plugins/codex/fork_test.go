//go:build !wasip1

package codex_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
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
	count := tokenCount
	var (
		forked     = meta("c1", `"forked_from_id":"p1",`)
		unforked   = meta("c1", "")
		parentMeta = `{"timestamp":"t","type":"session_meta","payload":{"id":"p1","timestamp":"t-1","cwd":"/w","originator":"codex_cli_rs","cli_version":"0.158.0","source":"cli"}}`
		userFork   = `{"timestamp":"t","type":"session_meta","payload":{"id":"c1","forked_from_id":"p1","timestamp":"t0","cwd":"/w","originator":"codex_cli_rs","cli_version":"0.158.0","source":"cli"}}`
		ctx        = `{"timestamp":"t","type":"turn_context","payload":{"cwd":"/w","model":"gpt-5.5"}}`
		pStart1    = ev(`{"type":"task_started","turn_id":"pt1"}`)
		pDone1     = ev(`{"type":"task_complete","turn_id":"pt1","last_agent_message":"parent answer one"}`)
		pStart2    = ev(`{"type":"task_started","turn_id":"pt2"}`)
		pEcho2     = ev(`{"type":"user_message","message":"parent prompt two"}`)
		cStart     = ev(`{"type":"task_started","turn_id":"ct1"}`)
		cTask      = item(`{"type":"message","role":"user","content":[{"type":"input_text","text":"child task"}]}`)
		cAnswer    = item(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"child answer"}],"phase":"final_answer"}`)
		cDone      = ev(`{"type":"task_complete","turn_id":"ct1","last_agent_message":"child answer"}`)
		full       = []string{parentMeta, pStart1, ctx, pPrompt1, count(1000, 1000), pAnswer1, pDone1, pStart2, ctx, pPrompt2, pEcho2, count(2500, 1500)}
		lastTurn   = []string{pPrompt2, pEcho2, count(2500, 1500)}
		own        = []string{cStart, ctx, cTask, count(2800, 300), cAnswer, count(3200, 400), cDone}
		join       = slices.Concat[[]string]
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
			checkForkRun(t, o, tt.texts, tt.input)
			if u := o.Result.Usage; tt.input >= 0 && (u.TotalTokens == nil || *u.TotalTokens != tt.input+tt.input/10) {
				t.Errorf("usage %+v; want total %d", u, tt.input+tt.input/10)
			}
			if o.Result.SessionID != "c1" {
				t.Errorf("session %q; want c1", o.Result.SessionID)
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
	count := tokenCount
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
// and marks no end to it. Written by a build before 0.125, which is not
// known to stamp its turns (TestUserForkCopied), the rollout is read
// whole, and a warning says that the parent's turns and tokens are
// counted in this run too. A
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

// TestUserForkCopied: a fork that copied its parent's history (every
// build before 0.158's referenced forks, and Codex's copying path since)
// writes it after its own session_meta, the parent's session_meta first,
// every line stamped again, and marks no end to it. A build that stamps
// every turn it starts (0.125+: a UUIDv7 turn id, started_at) tells the
// fork's own turns from the copied ones: those started before the fork's
// own id was made are the parent's. The copy is the parent's (its run
// holds it): none of its messages is the fork's, and the fork's usage is
// what its own counts add to the copy's last total (or, a build that
// did not carry it over, its own counts). Before, the copy was read as
// the fork's: the parent's prompts were the fork's and the input tokens
// 3,200 (the whole running total) instead of 700. A fork written by an
// older build is read whole, as before, and warned.
func TestUserForkCopied(t *testing.T) {
	ev, item := rolloutEvent, rolloutItem
	const (
		forkID  = "019a6b40-7d2e-7f31-8a42-1b2c3d4e5f60" // made at 1762735979822 ms
		ownTurn = "019a6b40-9e01-7a10-b001-000000000001" // 1762735988225 ms: after the fork
		oldTurn = "019a6b2e-9e01-7a10-b001-000000000001" // 1762734808577 ms: before it
		oldTur2 = "019a6b30-0000-7a10-b001-000000000002"
	)
	meta := func(id, version, extra string) string {
		return `{"timestamp":"t","type":"session_meta","payload":{"id":"` + id + `",` + extra + `"timestamp":"t0","cwd":"/w","originator":"codex_cli_rs","cli_version":"` + version + `","source":"cli"}}`
	}
	count := tokenCount
	started := func(id, extra string) string {
		return ev(`{"type":"task_started","turn_id":"` + id + `"` + extra + `,"model_context_window":258400}`)
	}
	turnCtx := func(id string) string {
		return `{"timestamp":"t","type":"turn_context","payload":{"turn_id":"` + id + `","cwd":"/w","model":"gpt-5.5"}}`
	}
	var (
		fork        = meta(forkID, "0.147.0", `"forked_from_id":"p1",`)
		oldFork     = meta(forkID, "0.120.0", `"forked_from_id":"p1",`)
		parentMeta  = meta("p1", "0.147.0", "")
		grandMeta   = meta("g1", "0.147.0", "")
		pAnswer2    = item(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"parent answer two"}],"phase":"final_answer"}`)
		parentTurns = func(first, second, extra string) []string {
			return []string{
				started(first, extra), turnCtx(first), pPrompt1, count(1000, 1000), pAnswer1, ev(`{"type":"task_complete","turn_id":"` + first + `","last_agent_message":"parent answer one"}`),
				started(second, extra), turnCtx(second), pPrompt2, count(2500, 1500), pAnswer2, ev(`{"type":"task_complete","turn_id":"` + second + `","last_agent_message":"parent answer two"}`),
			}
		}
		parent = parentTurns(oldTurn, oldTur2, `,"started_at":1762734808`)
		// The fork's startup context (builds that append it after the
		// copy) and the TUI's settings record.
		startup = []string{
			item(`{"type":"message","role":"developer","content":[{"type":"input_text","text":"<permissions instructions>workspace-write</permissions instructions>"}]}`),
			item(`{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context><cwd>/w</cwd></environment_context>"}]}`),
		}
		own = func(id, extra string, first, second string) []string {
			return []string{
				started(id, extra), turnCtx(id),
				item(`{"type":"message","role":"user","content":[{"type":"input_text","text":"fork prompt"}]}`),
				first,
				item(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"fork answer"}],"phase":"final_answer"}`),
				second,
				ev(`{"type":"task_complete","turn_id":"` + id + `","last_agent_message":"fork answer"}`),
			}
		}
		carried = own(ownTurn, `,"started_at":1762735988`, count(2800, 300), count(3200, 400))
		join    = slices.Concat[[]string]
	)
	tests := []struct {
		name   string
		lines  []string
		texts  string // the step's message texts, in order, joined by "|"
		input  int64  // the step's input tokens, -1 for no usage
		warned bool   // the copy is read whole, and warned
	}{
		{"the whole history, then the fork's turn", join([]string{fork, parentMeta}, parent, carried), "fork prompt|fork answer", 700, false},
		{"the fork's startup context after the copy", join([]string{fork, parentMeta}, parent, startup, carried), "fork prompt|fork answer", 700, false},
		{"own counts restart from 0", join([]string{fork, parentMeta}, parent, own(ownTurn, `,"started_at":1762735988`, count(300, 300), count(700, 400))), "fork prompt|fork answer", 700, false},
		{"cut before the second prompt (a backtrack)", join([]string{fork, parentMeta}, parent[:6], parent[6:8], own(ownTurn, `,"started_at":1762735988`, count(1300, 300), count(1700, 400))), "fork prompt|fork answer", 700, false},
		{"a fork of a fork: an ancestor's session_meta", join([]string{fork, parentMeta, grandMeta}, parent, carried), "fork prompt|fork answer", 700, false},
		{"copied turns of an older build: no UUIDv7, no started_at", join([]string{fork, parentMeta}, parentTurns("0", "1", ""), carried), "fork prompt|fork answer", 700, false},
		{"turn ids of another form: started_at decides", join([]string{fork, parentMeta}, parentTurns("pt1", "pt2", `,"started_at":1762734808`), own("ft1", `,"started_at":1762735988`, count(2800, 300), count(3200, 400))), "fork prompt|fork answer", 700, false},
		{"no turn of its own yet", join([]string{fork, parentMeta}, parent), "", -1, false},
		{"a build that does not stamp its turns: read whole", join([]string{oldFork, parentMeta}, parent, carried), "parent prompt one|parent answer one|parent prompt two|parent answer two|fork prompt|fork answer", 3200, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := runRollout(t, tt.lines)
			checkForkRun(t, o, tt.texts, tt.input)
			if o.Result.SessionID != forkID {
				t.Errorf("session %q; want the fork's", o.Result.SessionID)
			}
			warned := false
			for _, w := range o.Result.Warnings {
				warned = warned || strings.Contains(w, "holds a copy of the history of thread p1")
			}
			if warned != tt.warned {
				t.Errorf("warnings %q; want the copy's: %v", o.Result.Warnings, tt.warned)
			}
			if tt.input >= 0 && o.Result.Status != "ok" {
				t.Errorf("status %q (%s); want ok", o.Result.Status, o.Result.Error)
			}
		})
	}
}

// The parent's messages a fork's rollout copies (TestForkedSubAgent,
// TestUserForkCopied).
var (
	pPrompt1 = rolloutItem(`{"type":"message","role":"user","content":[{"type":"input_text","text":"parent prompt one"}]}`)
	pAnswer1 = rolloutItem(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"parent answer one"}],"phase":"final_answer"}`)
	pPrompt2 = rolloutItem(`{"type":"message","role":"user","content":[{"type":"input_text","text":"parent prompt two"}]}`)
)

// tokenCount is a token_count event whose running total is total input
// tokens and whose last request's is last, each with a tenth as many
// output tokens.
func tokenCount(total, last int) string {
	return rolloutEvent(fmt.Sprintf(`{"type":"token_count","info":{"total_token_usage":{"input_tokens":%d,"output_tokens":%d,"total_tokens":%d},"last_token_usage":{"input_tokens":%d,"output_tokens":%d,"total_tokens":%d}}}`,
		total, total/10, total+total/10, last, last/10, last+last/10))
}

// checkForkRun checks a fork's run: its message texts (joined by "|"),
// its input tokens (-1: no usage) with a tenth as many output tokens,
// and nothing unmapped.
func checkForkRun(t *testing.T, o *plugintest.Outcome, texts string, input int64) {
	t.Helper()
	if got := messageTexts(o); got != texts {
		t.Errorf("messages %q; want %q", got, texts)
	}
	var got int64 = -1
	u := o.Result.Usage
	if u != nil && u.InputTokens != nil {
		got = *u.InputTokens
	}
	if got != input {
		t.Errorf("input tokens %d; want %d", got, input)
	}
	if input >= 0 && got == input && (u.OutputTokens == nil || *u.OutputTokens != input/10) {
		t.Errorf("usage %+v; want output %d", u, input/10)
	}
	if len(o.Result.Unmapped) != 0 {
		t.Errorf("unmapped %v", o.Result.Unmapped)
	}
}

// messageTexts is the texts of a run's user and assistant messages (the
// system prompt left out), in order, joined by "|".
func messageTexts(o *plugintest.Outcome) string {
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
	return strings.Join(texts, "|")
}

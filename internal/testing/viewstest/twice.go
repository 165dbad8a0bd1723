package viewstest

import (
	"encoding/json"
	"testing"

	"github.com/twasm/twasm/transcript"
)

// ClaudeTwice is run id's transcript of claude session session, one
// prompt ("tune the xylophone module") and its answer in project
// /work/app, a day after T0's runs: archived says it was synced from
// claude's store (run.started names its source; it holds one turn more,
// as the store does, and 150 input tokens to the recorded 100), else it
// was recorded from claude -p's output (twasm record). The two are the
// same session twice, which views.Superseded counts once.
func ClaudeTwice(t testing.TB, id, session string, archived bool) *Builder {
	t.Helper()
	b := NewBuilder(id, "")
	st := Started("")
	if archived {
		st.Step().Extra = map[string]json.RawMessage{"source": json.RawMessage(`{"provider":"claude","path":"/home/me/.claude/projects/-work-app/` + session + `.jsonl"}`)}
	}
	b.Add(st)
	b.Add(Step(transcript.StepStarted, "agent", 0, &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent}))
	b.Add(Msg(transcript.MessageUser, "agent", transcript.TextBlock("tune the xylophone module")))
	b.Add(Msg(transcript.MessageAssistant, "agent", transcript.TextBlock("Tuned.")))
	tokens := int64(100)
	if archived {
		b.Add(Msg(transcript.MessageUser, "agent", transcript.TextBlock("thanks")))
		tokens = 150
	}
	b.Add(AgentDone(t, "agent", &transcript.AgentResult{Provider: "claude", Model: "claude-sonnet-4", SessionID: session, Status: transcript.StatusOK,
		Project: "/work/app", Usage: &transcript.Usage{InputTokens: &tokens, OutputTokens: new(int64(10))}}))
	b.Add(Completed("", transcript.StatusOK, ""))
	for _, ev := range b.Events() {
		ev.Timestamp = ev.Timestamp.Add(96 * 3600e9)
	}
	return b
}

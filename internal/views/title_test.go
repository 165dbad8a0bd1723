package views

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/viewstest"
	"github.com/twasm/twasm/transcript"
)

// A run is called by the name a person gave it, else by its first
// prompt, else by the name twasm made up, else by its id.
func TestDisplayName(t *testing.T) {
	injected := transcript.Block{Type: transcript.BlockText, Fidelity: transcript.FidelityAgentEmitted, Text: "<environment_context>cwd</environment_context>", Origin: transcript.OriginInjected}
	prompt := func(s string) transcript.Block {
		return transcript.Block{Type: transcript.BlockText, Fidelity: transcript.FidelityAgentEmitted, Text: s, Origin: transcript.OriginPrompt}
	}
	long := strings.Repeat("word ", 60)
	for _, c := range []struct {
		name     string
		runName  string
		archived bool
		msgs     [][]transcript.Block
		want     string
		auto     bool
	}{
		{name: "archived session", runName: "claude session 0f3e", archived: true, msgs: [][]transcript.Block{{injected}, {prompt("fix the flaky\n  test in auth")}, {prompt("and then docs")}}, want: "fix the flaky test in auth", auto: true},
		{name: "record default", runName: "record codex", msgs: [][]transcript.Block{{prompt("add a --json flag")}}, want: "add a --json flag", auto: true},
		{name: "given name wins", runName: "nightly", msgs: [][]transcript.Block{{prompt("run the suite")}}, want: "nightly"},
		{name: "no prompt", runName: "claude session 0f3e", archived: true, msgs: [][]transcript.Block{{injected}}, want: "claude session 0f3e", auto: true},
		{name: "nothing", want: "00000001", auto: true},
		{name: "long prompt cut", runName: "record claude", msgs: [][]transcript.Block{{prompt(long)}}, want: Clip(long, TitleRunes), auto: true},
		{name: "escapes gone", runName: "record claude", msgs: [][]transcript.Block{{prompt("\x1b[31mred\x1b[0m alert")}}, want: "red alert", auto: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := viewstest.NewBuilder(viewstest.RunID(1), "")
			ev := viewstest.Started(c.runName)
			if c.archived {
				ev.Step().Extra = map[string]json.RawMessage{SessionSourceField: json.RawMessage(`{"provider":"claude"}`)}
			}
			b.Add(ev)
			for _, m := range c.msgs {
				b.Add(viewstest.Msg(transcript.MessageUser, "", m...))
			}
			dir := t.TempDir()
			writeRun(t, dir, b)
			n := loadTree(t, dir, b.RunID)
			eq(t, n.AutoName, c.auto, "auto name")
			eq(t, DisplayName(headOf(n)), c.want, "display name")
			if len([]rune(n.Title)) > TitleRunes {
				t.Fatalf("title of %d runes", len([]rune(n.Title)))
			}
		})
	}
}

// The view of a saved log recorded later says which times are the
// recording's and which the log's, dates a time when the day changes, and
// heads an agent step at "agent" once.
func TestViewTimesAndHeaders(t *testing.T) {
	logDay := time.Date(2026, 2, 1, 10, 0, 0, 0, time.UTC)
	b := viewstest.NewBuilder(viewstest.RunID(2), "")
	st := viewstest.Started("record claude")
	st.Timestamp = time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC)
	b.Add(st)
	b.Add(viewstest.Step(transcript.StepStarted, "agent", 0, &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent}))
	for i, at := range []time.Time{logDay, logDay.Add(time.Minute), logDay.Add(25 * time.Hour)} {
		m := viewstest.Msg(transcript.MessageUser, "agent", transcript.TextBlock(fmt.Sprintf("prompt %d", i)))
		m.Timestamp = at
		b.Add(m)
	}
	done := viewstest.AgentDone(t, "agent", &transcript.AgentResult{Provider: "claude", Status: "ok"})
	done.Timestamp = st.Timestamp.Add(time.Second)
	b.Add(done)
	end := viewstest.Completed("record claude", "ok", "")
	end.Timestamp = done.Timestamp
	b.Add(end)
	dir := t.TempDir()
	writeRun(t, dir, b)
	var buf bytes.Buffer
	if err := WriteView(&buf, loadTree(t, dir, b.RunID), ViewOptions{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	contains(t, out, "| Recorded | 2026-11-29 06:00:00.000Z |", "| Session | 2026-02-01 10:00:00.000Z to 2026-02-02 11:00:00.000Z",
		"2026-02-01 10:00:00", "· 10:01:00", "2026-02-02 11:00:00", "## agent · ok")
	lacks(t, out, "agent · agent", "| Started |")
}

package views

import (
	"encoding/json"
	"strings"
	"testing"

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

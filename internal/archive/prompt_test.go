package archive

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/twasm/twasm/abi"
)

// TestFilePrompt: the prompt a sub-agent's file starts with
// (abi.Store.SubAgentPrompt) is the string the declared pointer names in
// the first of its first 16 lines that holds one: the Kimi CLI's
// checkpoint lines (no content) and, for an agent with the SendDMail
// tool, its checkpoint user message (content an array) come first and
// are skipped; a line that is no JSON, or a string past the 16th line,
// names none.
func TestFilePrompt(t *testing.T) {
	kimi := &abi.PromptMatch{Record: "/content", Input: "/prompt", Name: "Task"}
	const prompt = "Find the loader.\n\"Quote\" it."
	user, _ := json.Marshal(map[string]string{"role": "user", "content": prompt})
	checkpoint := `{"role": "_checkpoint", "id": 0}`
	dmail := `{"role":"user","content":[{"type":"text","text":"<system>CHECKPOINT 0</system>"}]}`
	for _, c := range []struct {
		name  string
		lines []string
		pm    *abi.PromptMatch
		want  string
	}{
		{"after a checkpoint", []string{checkpoint, string(user)}, kimi, prompt},
		{"after a checkpoint's user message", []string{checkpoint, dmail, string(user)}, kimi, prompt},
		{"a line that is no JSON first", []string{"not json", string(user)}, kimi, prompt},
		{"past the 16th line", append(strings.Split(strings.Repeat(checkpoint+"\n", 16), "\n")[:16], string(user)), kimi, ""},
		{"no store declaration", []string{string(user)}, nil, ""},
		{"none", []string{checkpoint}, kimi, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "s_sub_1.jsonl")
			writeAged(t, p, []byte(strings.Join(c.lines, "\n")+"\n"), time.Hour)
			assert.Equal(t, c.want, filePrompt(p, c.pm))
		})
	}
}

// TestPromptCall: a prompt is the one call's of the session's run whose
// input states it under the declared pointer, of the declared tool; two
// calls stating it name none (and say how many), as does a call of
// another tool or one whose input states another prompt.
func TestPromptCall(t *testing.T) {
	pm := &abi.PromptMatch{Record: "/content", Input: "/prompt", Name: "Task"}
	type call struct{ name, input string }
	for _, c := range []struct {
		name        string
		calls       []call
		call, count int
	}{
		{"one call", []call{{"Shell", `{"command":"ls"}`}, {"Task", `{"description":"d","prompt":"p"}`}}, 1, 1},
		{"two calls", []call{{"Task", `{"prompt":"p"}`}, {"Task", `{"prompt":"p"}`}}, -1, 2},
		{"another tool", []call{{"CreateSubagent", `{"prompt":"p"}`}}, -1, 0},
		{"another prompt", []call{{"Task", `{"prompt":"q"}`}}, -1, 0},
		{"no prompt", []call{{"Task", `{"description":"p"}`}}, -1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := sessionLinks{prompts: map[[32]byte][]int{}}
			for i, cl := range c.calls {
				in.addPrompt(pm, cl.name, json.RawMessage(cl.input), i)
			}
			n, count := in.promptCall("p")
			assert.Equal(t, []int{c.call, c.count}, []int{n, count})
		})
	}
}

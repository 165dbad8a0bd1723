package archive

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"

	"github.com/twasm/twasm/abi"
)

// A sub-agent's file may name the call that started it nowhere, while
// it starts with the prompt that call gave (abi.Store.SubAgentPrompt,
// ABI 1.11: the Kimi CLI before 0.59 runs a Task call's sub-agent on
// its prompt argument, as the first user message of <uuid>_sub_N.jsonl,
// tools/multiagent/task.py; its result is the sub-agent's last answer).
// filePrompt reads that prompt from the file's first records, and
// sessionLinks.prompts holds the prompts the session run's calls state
// (by their sha256: a prompt may be long), so subAgentLink links the run
// at the one call stating it. Two calls stating the same prompt tell
// nothing of which started which file: the run is then linked at the
// session's latest part, and the outcome says why.

// maxPromptLines bounds the records filePrompt looks at.
const maxPromptLines = 16

// maxPromptHead bounds the bytes filePrompt reads.
const maxPromptHead = 1 << 20

// filePrompt is the prompt a sub-agent's file starts with: the string
// pm.Record names in the first of the file's first maxPromptLines lines
// (within maxPromptHead bytes) in which it names a string (a value of
// another kind is skipped: the Kimi CLI's checkpoint user message, an
// array); "" when none does, or pm is nil.
func filePrompt(path string, pm *abi.PromptMatch) string {
	if pm == nil {
		return ""
	}
	b, err := readHeadBytes(path, maxPromptHead)
	if err != nil {
		return ""
	}
	for i, line := range bytes.SplitN(b, []byte("\n"), maxPromptLines+1) {
		if i == maxPromptLines {
			break
		}
		v := pointerAt(bytes.TrimSpace(line), pm.Record)
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s
		}
	}
	return ""
}

// promptKey is what sessionLinks.prompts keys a prompt by.
func promptKey(s string) [32]byte { return sha256.Sum256([]byte(s)) }

// addPrompt notes the prompt call n (of tool name, input input) states,
// when the store declares one (pm).
func (in *sessionLinks) addPrompt(pm *abi.PromptMatch, name string, input json.RawMessage, n int) {
	if pm == nil || pm.Name != "" && name != pm.Name {
		return
	}
	if s := pointerString(input, pm.Input); s != "" {
		k := promptKey(s)
		in.prompts[k] = append(in.prompts[k], n)
	}
}

// promptCall is the number of the one call of the session's run whose
// input states prompt (-1 when none does, or several: n says how many).
func (in sessionLinks) promptCall(prompt string) (call, n int) {
	if prompt == "" {
		return -1, 0
	}
	ns := in.prompts[promptKey(prompt)]
	if len(ns) != 1 {
		return -1, len(ns)
	}
	return ns[0], 1
}

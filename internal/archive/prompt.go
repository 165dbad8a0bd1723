package archive

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"

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

// promptKey is what sessionLinks.prompts keys a prompt by: white space
// at either end does not count (Roo Code trims an XML parameter,
// parseAssistantMessage.ts, where its plugin keeps the value as written).
func promptKey(s string) [32]byte { return sha256.Sum256([]byte(strings.TrimSpace(s))) }

// addPrompt notes the prompt call n (of tool name, input input) states,
// when the store declares one (pm).
func (in *sessionLinks) addPrompt(pm *abi.PromptMatch, name string, input json.RawMessage, n int) {
	if pm == nil || pm.Name != "" && name != pm.Name {
		return
	}
	if s := pointerString(input, pm.Input); strings.TrimSpace(s) != "" {
		k := promptKey(s)
		in.prompts[k] = append(in.prompts[k], n)
	}
}

// promptCall is the number of the one call of the session's run whose
// input states prompt (-1 when none does, or several: n says how many).
func (in sessionLinks) promptCall(prompt string) (call, n int) {
	if strings.TrimSpace(prompt) == "" {
		return -1, 0
	}
	ns := in.prompts[promptKey(prompt)]
	if len(ns) != 1 {
		return -1, len(ns)
	}
	return ns[0], 1
}

// A folder store's session may be tied to the call that started it by
// its first prompt alone (abi.StoreParent.Prompt, ABI 1.12): Roo Code
// before 3.35 (Kilo Code before 4.135) starts a sub-task on its parent's
// new_task call's message (NewTaskTool.execute, startSubtask), the
// sub-task's first message (Task.startTask: say "text", the first of
// ui_messages.json; RooCodeInc/Roo-Code v3.34.8, b022f58), while neither
// folder names the other. linkNamed links such a session (promptKeys)
// only when the namer's run holds one call stating the prompt that did
// not fail (a denied call the model made again states it twice: neither
// is told from the other, unless the first failed) and one session of
// the store that names no parent states it (a task the user started with
// the same words as another's sub-task: neither is linked).

// folderPrompt is the prompt the session folder dir starts with: the
// string pm.Record names in the first JSON value of the first file pm.File
// matches there (the value read as far as the walk needs, within
// maxPromptHead bytes); "" when none.
func folderPrompt(dir string, pm *abi.PromptMatch) string {
	if pm == nil || !strings.HasPrefix(pm.Record, "/") {
		return ""
	}
	fs, err := folderFiles(dir, []string{pm.File})
	if err != nil || len(fs) == 0 {
		return ""
	}
	var v []byte
	for _, n := range []int64{linePrefix, maxPromptHead} {
		head, err := readHeadBytes(fs[0].abs, n)
		if err != nil {
			return ""
		}
		var done bool
		if v, done = walkPointer(head, pm.Record); done || int64(len(head)) < n {
			break
		}
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return ""
	}
	return s
}

// storePrompts are the sessions of a folder store that name no parent,
// by the prompt they start with (folderPrompt), read once per store
// directory by a linkNamed.
type storePrompts map[[32]byte][]string

// readStorePrompts reads the prompts of the sessions of store loc in
// directory dir (the directory of its session folders) that name no
// parent.
func readStorePrompts(loc *Location, dir string) storePrompts {
	out := storePrompts{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return out
	}
	for _, e := range ents {
		if !e.IsDir() || !plainKey(e.Name()) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if rel, err := filepath.Rel(loc.Dir, path); loc.Match != nil && (err != nil || !loc.Match(filepath.ToSlash(rel))) {
			continue
		}
		s := folderPrompt(path, loc.Parent.Prompt)
		if strings.TrimSpace(s) == "" || parentKey(loc, path) != "" {
			continue
		}
		k := promptKey(s)
		out[k] = append(out[k], e.Name())
	}
	return out
}

// promptKeys are the sessions (by key) beside session folder self whose
// first prompt one call of its run (in) states, each with that call's
// number: a prompt one call only states, that did not fail, and one
// session only (not self) starts with.
func promptKeys(self string, in sessionLinks, sp storePrompts) map[string]int {
	keys := map[string]int{}
	for k, ns := range in.prompts {
		live := slices.DeleteFunc(slices.Clone(ns), func(n int) bool { return in.failed[n] })
		if names := sp[k]; len(live) == 1 && len(names) == 1 && names[0] != filepath.Base(self) {
			keys[names[0]] = live[0]
		}
	}
	return keys
}

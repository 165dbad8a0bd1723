package archive

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/twasm/twasm/abi"
)

// rooPrompt is Roo Code's declaration (abi.StoreParent.Prompt): a
// task's first message, the first of ui_messages.json, and the
// new_task call's message.
var rooPrompt = &abi.PromptMatch{File: "ui_messages.json", Record: "/0/text", Input: "/message", Name: "new_task"}

// rooUI is a ui_messages.json whose first message says text, as
// Task.startTask writes it, then n api_req_started messages of pad
// bytes each.
func rooUI(text string, n, pad int) []byte {
	q, _ := json.Marshal(text)
	msgs := []string{`{"ts":1767225600000,"type":"say","say":"text","text":` + string(q) + `}`}
	for range n {
		msgs = append(msgs, `{"ts":1767225600100,"type":"say","say":"api_req_started","text":"`+strings.Repeat("x", pad)+`"}`)
	}
	return []byte("[" + strings.Join(msgs, ",") + "]")
}

// TestFolderPrompt: a folder session's first prompt
// (abi.StoreParent.Prompt) is the string the pointer names, an array's
// element by its index, in the first JSON value of the declared file,
// read only as far as the walk needs: a ui_messages.json of megabytes
// (Roo Code writes it on one line) gives its first message; the file
// missing, cut before the prompt ends, or the first message no text
// give none. Before, a pointer could walk objects only.
func TestFolderPrompt(t *testing.T) {
	const prompt = "Write the changelog.\n\"Quoted\" \\@file."
	for _, c := range []struct {
		name string
		ui   []byte // nil: no file
		want string
	}{
		{"the first message", rooUI(prompt, 2, 10), prompt},
		{"a file of megabytes", rooUI(prompt, 3000, 1000), prompt},
		{"spaces around the array", append([]byte(" \n"), rooUI(prompt, 1, 1)...), prompt},
		{"no file", nil, ""},
		{"an empty array", []byte("[]"), ""},
		{"the first message no text", []byte(`[{"ts":1,"type":"say","say":"text"},{"text":"b"}]`), ""},
		{"the text a number", []byte(`[{"text":12}]`), ""},
		{"cut in the first message", rooUI(prompt, 0, 0)[:30], ""},
		{"an object, not an array", []byte(`{"text":"a"}`), ""},
		{"an object's member \"0\" (RFC 6901)", []byte(`{"0":{"text":"a"}}`), "a"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "c2000000")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if c.ui != nil {
				writeAged(t, filepath.Join(dir, "ui_messages.json"), c.ui, time.Hour)
			}
			assert.Equal(t, c.want, folderPrompt(dir, rooPrompt))
		})
	}
}

// TestWalkPointerArray: a JSON Pointer's token walks an array by its
// index (RFC 6901: decimal, no leading zero, "-" none); an index past
// the array's end names nothing, decided; text cut before the element
// is not decided, nor is a name at an array root (left to the caller,
// as a first line that is no object is).
func TestWalkPointerArray(t *testing.T) {
	for _, c := range []struct {
		doc, ptr, want string
		done           bool
	}{
		{`[{"a":1},{"a":2}]`, "/1/a", "2", true},
		{`[ {"a":1} , {"a":"x"} ]`, "/1/a", `"x"`, true},
		{`[[1,2],[3,[4,5]]]`, "/1/1/0", "4", true},
		{`[1,2]`, "/2", "", true},
		{`[]`, "/0", "", true},
		{`{"a":[1,2]}`, "/a/01", "", true},
		{`{"a":[1,2]}`, "/a/-", "", true},
		{`[1,2]`, "/-", "", false}, // at the root: left to the caller, as a line that is no object
		{`[1,`, "/1", "", false},
		{`[{"a":1},`, "/1/a", "", false},
		{`{"a":[{"b":"c"}]}`, "/a/0/b", `"c"`, true},
	} {
		v, done := walkPointer([]byte(c.doc), c.ptr)
		assert.Equal(t, c.want, string(v), "%s %s", c.doc, c.ptr)
		assert.Equal(t, c.done, done, "%s %s: done", c.doc, c.ptr)
	}
}

// TestPromptKeys: a session beside the parent's is tied to a call of
// the parent's run by the prompt (white space at either end not
// counting, as Roo Code trims an XML parameter) only when one call of
// the run that did not fail states it and one session naming no parent
// starts with it: two calls (a retried call whose first try was not
// denied), two sessions (a task the user started with the same words),
// none, or the parent itself tie nothing.
func TestPromptKeys(t *testing.T) {
	type call struct {
		input  string
		failed bool
	}
	for _, c := range []struct {
		name     string
		calls    []call
		sessions map[string]string // key -> first prompt
		want     map[string]int
	}{
		{"unique", []call{{input: `{"message":"Write the changelog."}`}}, map[string]string{"c2": "Write the changelog.", "d4": "Other."}, map[string]int{"c2": 0}},
		{"white space at either end", []call{{input: `{"message":"\n  Write the changelog.\n"}`}}, map[string]string{"c2": "Write the changelog."}, map[string]int{"c2": 0}},
		{"inner white space counts", []call{{input: `{"message":"Write  the changelog."}`}}, map[string]string{"c2": "Write the changelog."}, map[string]int{}},
		{"cut short", []call{{input: `{"message":"Write the change"}`}}, map[string]string{"c2": "Write the changelog."}, map[string]int{}},
		{"two calls", []call{{input: `{"message":"A."}`}, {input: `{"message":"A."}`}}, map[string]string{"c2": "A."}, map[string]int{}},
		{"a denied call, then again", []call{{input: `{"message":"A."}`, failed: true}, {input: `{"message":"A."}`}}, map[string]string{"c2": "A."}, map[string]int{"c2": 1}},
		{"two sessions", []call{{input: `{"message":"A."}`}}, map[string]string{"c2": "A.", "d4": "A."}, map[string]int{}},
		{"none", []call{{input: `{"message":"A."}`}}, map[string]string{"c2": "B."}, map[string]int{}},
		{"the parent itself", []call{{input: `{"message":"A."}`}}, map[string]string{"p1": "A."}, map[string]int{}},
		{"two calls, two sessions, one each", []call{{input: `{"message":"A."}`}, {input: `{"message":"B."}`}}, map[string]string{"c2": "B.", "d4": "A."}, map[string]int{"c2": 1, "d4": 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := sessionLinks{prompts: map[[32]byte][]int{}, failed: map[int]bool{}}
			for n, cl := range c.calls {
				in.addPrompt(rooPrompt, "new_task", json.RawMessage(cl.input), n)
				if cl.failed {
					in.failed[n] = true
				}
			}
			sp := storePrompts{}
			for key, p := range c.sessions {
				k := promptKey(p)
				sp[k] = append(sp[k], key)
			}
			assert.Equal(t, c.want, promptKeys(filepath.Join("tasks", "p1"), in, sp))
		})
	}
}

// TestReadStorePrompts: the store's sessions are read by their first
// prompt, those naming their parent (history_item.json's parentTaskId,
// Roo Code 3.49 and later) and those with none left out.
func TestReadStorePrompts(t *testing.T) {
	store := t.TempDir()
	put := func(key, ui, history string) {
		dir := filepath.Join(store, key)
		if ui != "" {
			writeAged(t, filepath.Join(dir, "ui_messages.json"), []byte(ui), time.Hour)
		}
		if history != "" {
			writeAged(t, filepath.Join(dir, "history_item.json"), []byte(history), time.Hour)
		}
	}
	put("c2", string(rooUI("A.", 1, 1)), "")
	put("d4", string(rooUI("A.", 1, 1)), `{"id":"d4","parentTaskId":"p1"}`)
	put("e5", `[]`, "")
	loc := &Location{Kind: KindFolder, Dir: store, Pattern: "*", Files: []string{"ui_messages.json", "history_item.json"},
		Parent: &abi.StoreParent{File: "history_item.json", Member: "parentTaskId", Prompt: rooPrompt}}
	assert.Equal(t, storePrompts{promptKey("A."): {"c2"}}, readStorePrompts(loc, store))
}

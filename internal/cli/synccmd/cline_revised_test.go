package synccmd_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
	"github.com/twasm/twasm/transcript"
)

// TestSyncClineCallChangedInPlace: a Cline task folder whose
// conversation changes a tool call's message, or its result's, in place
// between two syncs (Cline rewrites api_conversation_history.json whole;
// the plugin reads the changed element under a new message key and
// reports its call and result again, marked revised, ABI 1.13). The
// run's second part holds the new version, and every reader
// (transcript.Pairer) counts the call once, with its latest input and
// output, none dangling, in the step results either. Before, a call
// changed after its result was a second call reusing the id, left
// dangling, and one changed before its result kept its first input.
func TestSyncClineCallChangedInPlace(t *testing.T) {
	t.Parallel()
	ui, api := clineTask(t)
	const (
		id      = "toolu_04" // api[7]'s call, answered by api[8]'s text
		oldCmd  = `{"command":"go test ./...","requires_approval":false}`
		newCmd  = `{"command":"go test -count=1 ./...","requires_approval":false}`
		oldOut  = "Command executed.\nOutput:\nok  \tproj\t0.01s"
		newOut  = "Command executed.\nOutput:\nok  \tproj\t0.02s"
		callMsg = 7
	)
	// changed is api[:n] with the call's input (and, with out, its
	// result's text) changed in place, each message's ts kept.
	changed := func(n int, out bool) []json.RawMessage {
		msgs := append([]json.RawMessage(nil), api[:n]...)
		msgs[callMsg] = json.RawMessage(strings.Replace(string(api[callMsg]), `"go test ./..."`, `"go test -count=1 ./..."`, 1))
		if out && n > callMsg+1 {
			msgs[callMsg+1] = json.RawMessage(strings.Replace(strings.Replace(string(api[callMsg+1]), `0.01s`, `0.02s`, 1), `'go test ./...'`, `'go test -count=1 ./...'`, 1))
		}
		return msgs
	}
	for _, c := range []struct {
		name          string
		first, second []json.RawMessage
		input, output string
		calls         int // all the calls the run holds, once each
	}{
		{"the call changed after its result", api[:callMsg+2], changed(callMsg+2, false), newCmd, oldOut, 4},
		{"the call and its result changed", api[:callMsg+2], changed(callMsg+3, true), newCmd, newOut, 5},
		{"the call changed before its result", api[:callMsg+1], changed(callMsg+2, false), newCmd, oldOut, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := clitest.NewHome(t)
			task := filepath.Join(".cline", "data", "tasks", "1767225600000")
			dir := filepath.Join(h.Dir, task)
			write := func(api []json.RawMessage, age time.Duration) {
				u, _ := json.Marshal(ui)
				a, _ := json.Marshal(api)
				h.Put(filepath.Join(task, "ui_messages.json"), u, age)
				h.Put(filepath.Join(task, "api_conversation_history.json"), a, age)
			}
			write(c.first, time.Hour)
			run := got0(t, syncWant(t, h, dir, "first sync", map[string]int{"new": 1})["new"])
			write(c.second, 30*time.Minute)
			syncGrown(t, h, dir, "sync after the change", run)

			r := readPaired(t, clitest.TranscriptPath(h.Stor, run))
			var numbers []int // the numbers of the call id's calls
			for n, c := range r.Calls {
				if c.ID == id {
					numbers = append(numbers, n)
				}
			}
			if len(numbers) != 1 {
				t.Fatalf("calls of %s counted: %d, want 1", id, len(numbers))
			}
			if call := r.Calls[numbers[0]]; call.Input != c.input || call.Output != c.output {
				t.Errorf("call %s: input %s, output %q; want %s, %q", id, call.Input, call.Output, c.input, c.output)
			}
			if r.PairerDangling != 0 {
				t.Errorf("calls dangling by the Pairer: %d", r.PairerDangling)
			}
			if len(r.Dangling) != 0 {
				t.Errorf("the last part's step result lists dangling calls %v", r.Dangling)
			}
			if len(r.Calls) != c.calls {
				t.Errorf("calls counted: %d, want %d", len(r.Calls), c.calls)
			}
		})
	}
}

// TestSyncClineUIChangedInPlace: a Cline task folder holding only
// ui_messages.json whose command message and its output change in place
// between two syncs (golden task_ui_only_command_cancelled: Cline marks
// the command commandCompleted and, the user having cancelled it,
// appends "Command(s) cancelled by user." to its last output, each
// message keeping its ts). The plugin writes the command's call and
// result again, revised (ABI 1.13): the run counts one call, its result
// the whole output, cancelled, none dangling. Before, the second sync
// wrote neither: the result stayed the first output, without a status.
func TestSyncClineUIChangedInPlace(t *testing.T) {
	t.Parallel()
	lines := strings.Split(string(clitest.ReadFile(t, clitest.Golden("cline", "task_ui_only_command_cancelled.jsonl"))), "\n")
	first, second := []byte(lines[2]), []byte(lines[5])
	h := clitest.NewHome(t)
	task := filepath.Join(".cline", "data", "tasks", "1767225600000")
	dir := filepath.Join(h.Dir, task)
	h.Put(filepath.Join(task, "ui_messages.json"), first, time.Hour)
	run := got0(t, syncWant(t, h, dir, "first sync", map[string]int{"new": 1})["new"])
	h.Put(filepath.Join(task, "ui_messages.json"), second, 30*time.Minute)
	syncGrown(t, h, dir, "sync after the change", run)

	var pairs transcript.Pairer
	var results []*transcript.ToolPayload // by call number, the latest
	var dangling []string
	for _, ev := range clitest.ReadRun(t, clitest.TranscriptPath(h.Stor, run)) {
		if ev.Type == transcript.StepCompleted {
			if r, err := ev.Step().AgentResult(); err == nil && r != nil {
				dangling = r.Dangling // the last part's
			}
		}
		n, again, ok := pairs.Feed(ev)
		switch {
		case !ok:
		case ev.Type == transcript.ToolCall && !again:
			results = append(results, nil)
		case ev.Type == transcript.ToolResult:
			results[n] = ev.Tool()
		}
	}
	if pairs.Calls() != 1 {
		t.Fatalf("calls counted: %d, want 1", pairs.Calls())
	}
	const output = "> test:integration\nPASS db.test.js\n\nCommand(s) cancelled by user."
	if r := results[0]; r == nil || r.Output != output || r.Status != "cancelled" {
		t.Errorf("the command's result %+v; want output %q, cancelled", r, output)
	}
	if d := pairs.Dangling(); len(d) != 0 || len(dangling) != 0 {
		t.Errorf("calls dangling: by the Pairer %v, in the step result %v", d, dangling)
	}
}

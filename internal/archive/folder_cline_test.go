package archive

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/capture"
	goldenpkg "github.com/twasm/twasm/golden"
	"github.com/twasm/twasm/internal/rawfile"
	"github.com/twasm/twasm/internal/testing/goldensrc"
	"github.com/twasm/twasm/plugins/cline"
	"github.com/twasm/twasm/transcript"
)

// clineDocs are the ui_messages and api_conversation_history documents
// of the golden case task_native_tools (a task of five requests).
func clineDocs(t *testing.T) (ui, api []json.RawMessage) {
	t.Helper()
	src := goldensrc.Split(t, fixture(t, "testdata/golden/cline/task_native_tools.jsonl"))
	require.NoError(t, json.Unmarshal(src.File(t, "ui_messages.json"), &ui))
	require.NoError(t, json.Unmarshal(src.File(t, "api_conversation_history.json"), &api))
	require.NotEmpty(t, ui)
	require.NotEmpty(t, api)
	return ui, api
}

// TestClineTaskFolder: a Cline task folder in its default store, synced
// with the cline plugin as Cline writes it: both arrays rewritten whole
// at every turn, without ids. A second sync archives nothing; a turn
// added archives only the new messages, calls and results, and the
// parts' usage and cost add up to the task's (each request once, the
// one that completed between the syncs included); the raw capture read
// whole writes the same events; the store's bytes never change.
func TestClineTaskFolder(t *testing.T) {
	ctx := context.Background()
	ui, api := clineDocs(t)
	root, home := t.TempDir(), t.TempDir()
	a := newArchiver(t, root, nil)
	locs := Discover(func(k string) string { return map[string]string{"HOME": home}[k] }, "linux", DeclaredOf(cline.Plugin.Manifest), nil)
	var loc []Location
	for _, l := range locs {
		if l.Name == "Cline tasks" {
			loc = append(loc, l)
		}
	}
	require.Len(t, loc, 1)
	task := filepath.Join(home, ".cline", "data", "tasks", "1767225600000")
	write := func(ui, api []json.RawMessage, age time.Duration) {
		u, err := json.Marshal(ui)
		require.NoError(t, err)
		p, err := json.Marshal(api)
		require.NoError(t, err)
		writeAged(t, filepath.Join(task, "ui_messages.json"), u, age)
		writeAged(t, filepath.Join(task, "api_conversation_history.json"), p, age)
	}
	sync := func(want string) Outcome {
		t.Helper()
		before := hashTree(t, task)
		rep := a.SyncStores(ctx, loc, time.Time{}, nil)
		require.Equal(t, before, hashTree(t, task), "the task folder's bytes are unchanged")
		require.Len(t, rep.Outcomes, 1)
		require.Equal(t, want, rep.Outcomes[0].Action, "%+v", rep.Outcomes[0])
		return rep.Outcomes[0]
	}
	// The first turns: the third request still running (its
	// api_req_started without figures yet).
	first := slices.Clone(ui[:9])
	first[8] = json.RawMessage(`{"ts":1767225611200,"type":"say","say":"api_req_started","text":"{\"request\":\"...\"}"}`)
	write(first, api[:5], time.Hour)
	runID := sync(ActionNew).RunID
	sync(ActionUnchanged)
	write(ui, api, 30*time.Minute)
	_, found := Scan(loc, time.Time{})
	require.Len(t, found, 1)
	assert.False(t, Archived(a.Ledger(), found[0]), "a turn not yet synced")
	sync(ActionGrown)
	sync(ActionUnchanged)
	_, found = Scan(loc, time.Time{})
	assert.True(t, Archived(a.Ledger(), found[0]), "doctor: the task is archived")

	v := readRun(t, root, runID)
	require.Len(t, v.parts, 2)
	for id, n := range v.calls {
		assert.Equal(t, 1, n, "call %s once", id)
		assert.Equal(t, 1, v.results[id], "result of %s once", id)
	}
	assert.Len(t, v.calls, 5)
	var msgs int
	for _, ev := range v.events {
		if ev.Type == transcript.MessageAssistant {
			msgs++
		}
	}
	assert.Equal(t, 5, msgs, "each response once")
	assert.Equal(t, int64(260), v.output, "each request's output tokens once")
	var cost float64
	for _, p := range v.parts {
		if p.CostUSD != nil {
			cost += *p.CostUSD
		}
	}
	assert.InDelta(t, 0.0448, cost, 1e-9)
	assert.Equal(t, "1767225600000", v.parts[0].SessionID)

	// The raw capture alone (renormalize's input) writes the same
	// calls, results and responses.
	e := a.Ledger().ByPath(task)
	require.NotNil(t, e)
	raw, err := rawfile.ReadFile(filepath.Join(root, e.Raw))
	require.NoError(t, err)
	out, err := goldenpkg.Normalize(ctx, capture.NativePlugin(cline.Plugin), raw, goldenpkg.Options{Provider: "cline"})
	require.NoError(t, err)
	assert.Equal(t, 5, strings.Count(string(out), `"type":"tool.call"`))
	assert.Equal(t, 5, strings.Count(string(out), `"type":"tool.result"`))
	assert.Equal(t, 5, strings.Count(string(out), `"type":"message.assistant"`))
}

// TestRooSubTask: a Roo Code sub-task (history_item.json names its
// parentTaskId) is archived as a child run of its parent task's run,
// whichever order the folders' names put them in, linked at path
// "subagent"; both validate, a second sync archives nothing, and a
// second sub-task gets a link of its own.
func TestRooSubTask(t *testing.T) {
	ctx := context.Background()
	root, home := t.TempDir(), t.TempDir()
	a := newArchiver(t, root, nil)
	var loc []Location
	for _, l := range Discover(func(k string) string { return map[string]string{"HOME": home}[k] }, "linux", DeclaredOf(cline.Plugin.Manifest), nil) {
		if l.Name == "Roo Code tasks (Code)" {
			loc = append(loc, l)
		}
	}
	require.Len(t, loc, 1)
	task := func(id, parent, text string) {
		dir := filepath.Join(loc[0].Dir, id)
		hist := `{"id":"` + id + `","number":1,"ts":1767225600000,"task":"` + text + `","tokensIn":0,"tokensOut":0,"totalCost":0}`
		if parent != "" {
			hist = `{"id":"` + id + `","parentTaskId":"` + parent + `","rootTaskId":"` + parent + `","number":2,"ts":1767225600000,"task":"` + text + `","tokensIn":0,"tokensOut":0,"totalCost":0}`
		}
		writeAged(t, filepath.Join(dir, "history_item.json"), []byte(hist), time.Hour)
		writeAged(t, filepath.Join(dir, "api_conversation_history.json"), []byte(`[{"role":"user","content":[{"type":"text","text":"<task>`+text+`</task>"}],"ts":1767225600000}]`), time.Hour)
	}
	// The parent's name sorts after its sub-tasks'.
	task("f0000000-0000-4000-8000-000000000000", "", "Plan the release.")
	task("a0000000-0000-4000-8000-000000000000", "f0000000-0000-4000-8000-000000000000", "Write the changelog.")
	sync := func() map[string]Outcome {
		t.Helper()
		before := hashTree(t, loc[0].Dir)
		rep := a.SyncStores(ctx, loc, time.Time{}, nil)
		require.Equal(t, before, hashTree(t, loc[0].Dir), "the tasks' bytes are unchanged")
		got := map[string]Outcome{}
		for _, o := range rep.Outcomes {
			require.NotEqual(t, ActionFailed, o.Action, "%+v", o)
			got[filepath.Base(o.Path)[:1]] = o
		}
		return got
	}
	check := func(parent string, children ...string) {
		t.Helper()
		fsys := os.DirFS(filepath.Join(root, "transcripts"))
		rep, err := transcript.ValidateFile(fsys, parent+".jsonl", transcript.ValidateOptions{})
		require.NoError(t, err)
		assert.True(t, rep.OK(), "%+v", rep.Errors)
		assert.ElementsMatch(t, children, rep.Children)
		for _, c := range children {
			rep, err := transcript.ValidateFile(fsys, c+".jsonl", transcript.ValidateOptions{})
			require.NoError(t, err)
			assert.True(t, rep.OK(), "%+v", rep.Errors)
			assert.Equal(t, parent, rep.ParentRunID)
		}
	}
	first := sync()
	require.Equal(t, ActionNew, first["f"].Action)
	require.Equal(t, ActionNew, first["a"].Action)
	check(first["f"].RunID, first["a"].RunID)
	for k, o := range sync() {
		assert.Equal(t, ActionUnchanged, o.Action, k)
	}
	task("b0000000-0000-4000-8000-000000000000", "f0000000-0000-4000-8000-000000000000", "Tag the release.")
	third := sync()
	require.Equal(t, ActionNew, third["b"].Action)
	check(first["f"].RunID, first["a"].RunID, third["b"].RunID)
}

// TestClineTaskWithoutTimes: a task of an older Cline, whose
// conversation's messages have no ts (and no ui_messages.json to date
// it), is archived whole: every message and call, nothing unmapped or
// lost, the run dated by the files' mtime; a second sync archives
// nothing.
func TestClineTaskWithoutTimes(t *testing.T) {
	ctx := context.Background()
	b := fixture(t, "testdata/golden/cline/task_xml_tools.jsonl")
	var api []byte
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		if strings.Contains(l, `"path":"api_conversation_history.json"`) {
			api = []byte(lines[i+1])
		}
	}
	require.NotEmpty(t, api)
	require.NotContains(t, string(api), `"ts"`)
	root, home := t.TempDir(), t.TempDir()
	a := newArchiver(t, root, nil)
	var loc []Location
	for _, l := range Discover(func(k string) string { return map[string]string{"HOME": home}[k] }, "linux", DeclaredOf(cline.Plugin.Manifest), nil) {
		if l.Name == "Cline tasks" {
			loc = append(loc, l)
		}
	}
	require.Len(t, loc, 1)
	path := filepath.Join(loc[0].Dir, "1730000000000", "api_conversation_history.json")
	writeAged(t, path, api, 2*time.Hour)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	rep := a.SyncStores(ctx, loc, time.Time{}, nil)
	require.Len(t, rep.Outcomes, 1)
	o := rep.Outcomes[0]
	require.Equal(t, ActionNew, o.Action, "%+v", o)
	assert.Zero(t, o.Unmapped)
	require.NotNil(t, o.Result)
	assert.Zero(t, o.Result.FailedLines)
	v := readRun(t, root, o.RunID)
	assert.Equal(t, fi.ModTime().UTC().Truncate(time.Millisecond), v.events[0].Timestamp.UTC().Truncate(time.Millisecond), "dated by the file")
	var msgs int
	for _, ev := range v.events {
		if ev.Message() != nil {
			msgs++
		}
	}
	// Six messages: the task, three answers and two tool results (user
	// text "[name for 'x'] Result:"), as the golden case has them.
	assert.Equal(t, 4, msgs, "the task and each answer")
	assert.Len(t, v.calls, 3)
	assert.Len(t, v.results, 2)
	for id, n := range v.calls {
		assert.Equal(t, 1, n, id)
	}
	rep = a.SyncStores(ctx, loc, time.Time{}, nil)
	require.Len(t, rep.Outcomes, 1)
	assert.Equal(t, ActionUnchanged, rep.Outcomes[0].Action)
}

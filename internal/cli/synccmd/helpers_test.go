package synccmd_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
	"github.com/twasm/twasm/internal/tools/wasmbuild"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/transcript"
)

// doctorStore is one store of `twasm doctor --json`.
type doctorStore = clitest.DoctorStore

// doctorStores runs `twasm doctor --json`, which must leave the agent's
// files under dir as they were, and returns its stores by name.
func doctorStores(t *testing.T, h *clitest.Home, dir string) map[string]doctorStore {
	t.Helper()
	var r clitest.Result
	clitest.Unchanged(t, dir, "doctor", func() { r = h.OK("doctor", "--json") })
	return clitest.DoctorStores(t, r.Out)
}

// doctorCounts are a store's counts in `twasm doctor --json`.
type doctorCounts struct {
	Sessions, Archived int
	NotArchived        int `json:"not_archived"`
	Elsewhere          int `json:"archived_elsewhere"`
}

// doctorCountsOf runs `twasm doctor --json` and returns its stores'
// counts by name, and its output.
func doctorCountsOf(t *testing.T, h *clitest.Home) (map[string]doctorCounts, string) {
	t.Helper()
	r := h.OK("doctor", "--json")
	var doc struct {
		Stores []struct {
			Name string
			doctorCounts
		}
	}
	if err := json.Unmarshal([]byte(r.Out), &doc); err != nil {
		t.Fatal(err)
	}
	m := map[string]doctorCounts{}
	for _, s := range doc.Stores {
		m[s.Name] = s.doctorCounts
	}
	return m, r.Out
}

// got0 is the first of ids, failing the test when there is none.
func got0(t *testing.T, ids []string) string {
	t.Helper()
	if len(ids) == 0 {
		t.Fatal("no run")
	}
	return ids[0]
}

// runTally is what a synced session's run holds, counted for the sync
// tests: calls by id, each call's one result, assistant messages, the
// agent step results (one per part) and their output tokens.
type runTally struct {
	calls     map[string]int
	results   map[string]*transcript.ToolPayload
	responses int
	parts     []*transcript.AgentResult
	output    int64
}

// tallyRun validates the run at path and counts it; a second result for
// a call, and a call without exactly one call and one result, fail t.
func tallyRun(t *testing.T, path string) runTally {
	t.Helper()
	clitest.Validate(t, path)
	r := runTally{calls: map[string]int{}, results: map[string]*transcript.ToolPayload{}}
	for _, ev := range clitest.ReadRun(t, path) {
		switch ev.Type {
		case transcript.ToolCall:
			r.calls[ev.Tool().CallID]++
		case transcript.ToolResult:
			if r.results[ev.Tool().CallID] != nil {
				t.Errorf("call %s: a second result", ev.Tool().CallID)
			}
			r.results[ev.Tool().CallID] = ev.Tool()
		case transcript.MessageAssistant:
			r.responses++
		case transcript.StepCompleted:
			if res, err := ev.Step().AgentResult(); err == nil && res != nil {
				r.parts = append(r.parts, res)
				if res.Usage != nil && res.Usage.OutputTokens != nil {
					r.output += *res.Usage.OutputTokens
				}
			}
		}
	}
	for id, n := range r.calls {
		if n != 1 || r.results[id] == nil {
			t.Errorf("call %s: %d calls, result %v (want one each)", id, n, r.results[id])
		}
	}
	return r
}

// runProjects are the runs `twasm ls --json` lists, each with its
// project as ls shows it ("" for none).
func runProjects(t *testing.T, h *clitest.Home) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(h.OK("ls", "--json").Out), "\n") {
		var row struct {
			RunID   string `json:"run_id"`
			Project string `json:"project"`
		}
		if err := json.Unmarshal([]byte(line), &row); err != nil || row.RunID == "" {
			t.Fatalf("ls --json line %q: %v", line, err)
		}
		out[row.RunID] = row.Project
	}
	return out
}

// usageByProject is `twasm usage --by project --json`: the sessions of
// each project ("(no project)" for those that state none).
func usageByProject(t *testing.T, h *clitest.Home) map[string]int {
	t.Helper()
	r := h.OK("usage", "--by", "project", "--json")
	var rep struct {
		Groups []struct {
			Key      string
			Sessions int
		}
	}
	if err := json.Unmarshal([]byte(r.Out), &rep); err != nil {
		t.Fatalf("usage --by project --json: %v\n%s", err, r.Out)
	}
	out := map[string]int{}
	for _, g := range rep.Groups {
		out[g.Key] += g.Sessions
	}
	return out
}

// dropPlugin builds the test plugin in dir and drops it into the user's
// plugin directory of h ($XDG_CONFIG_HOME/twasm/plugins).
func dropPlugin(t *testing.T, h *clitest.Home, dir, name string) {
	t.Helper()
	h.Put(filepath.Join(".config", "twasm", "plugins", name+".wasm"), wasmbuild.ForTest(t, dir), time.Hour)
}

// syncWant runs `twasm sync`, which must leave the agent's files under
// dir as they were, and fails the test (what names the sync) unless its
// outcomes are want's, action by action and nothing else (a sync that
// archives nothing also says "0 new"); it returns the outcomes. The
// store tests' sequence is: its sessions new, nothing, one run grown,
// nothing.
func syncWant(t *testing.T, h *clitest.Home, dir, what string, want map[string]int) map[string][]string {
	t.Helper()
	var r clitest.Result
	clitest.Unchanged(t, dir, "sync", func() { r = h.OK("sync") })
	got := clitest.Outcomes(r.Out)
	ok := len(got) == len(want)
	for action, n := range want {
		ok = ok && len(got[action]) == n
	}
	if len(want) == 0 {
		ok = ok && strings.Contains(r.ErrOut, "0 new")
	}
	if !ok {
		t.Fatalf("%s: want %v: %v", what, want, r)
	}
	return got
}

// nothing is what a sync with nothing new archives (syncWant).
var nothing = map[string]int(nil)

// syncGrown runs `twasm sync` (syncWant: the agent's files under dir
// unchanged) and fails the test (what names the sync) unless it grows run
// and nothing else; it returns the run's transcript, validated.
func syncGrown(t *testing.T, h *clitest.Home, dir, what, run string) string {
	t.Helper()
	if got := syncWant(t, h, dir, what, map[string]int{"grown": 1}); got["grown"][0] != run {
		t.Fatalf("%s: want run %s grown: %v", what, run, got)
	}
	return runText(t, h, run)
}

// runText is the transcript of run id, which must be valid.
func runText(t *testing.T, h *clitest.Home, id string) string {
	t.Helper()
	tr := clitest.TranscriptPath(h.Stor, id)
	clitest.Validate(t, tr)
	return string(clitest.ReadFile(t, tr))
}

// wantChildOf checks that run child's transcript names parent as its
// parent run; what names the child in the error.
func wantChildOf(t *testing.T, h *clitest.Home, child, parent, what string) {
	t.Helper()
	if !strings.Contains(string(clitest.ReadFile(t, clitest.TranscriptPath(h.Stor, child))), `"parent_run_id":"`+parent+`"`) {
		t.Errorf("%s's run %s is not a child of %s", what, child, parent)
	}
}

// lsRowOf is a row of `twasm ls --json`.
type lsRowOf struct {
	RunID       string      `json:"run_id"`
	Name        string      `json:"name"`
	SubRunUsage tokenCounts `json:"sub_run_usage"`
	UsageInAll  tokenCounts `json:"usage_in_all"`
}

// tokenCounts are the token counts of a usage object, its other members
// (a service tier) left out.
type tokenCounts map[string]int64

func (c *tokenCounts) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*c = tokenCounts{}
	for k, v := range m {
		var n int64
		if json.Unmarshal(v, &n) == nil {
			(*c)[k] = n
		}
	}
	return nil
}

// lsRow runs `twasm ls --json` and fails unless it lists run id alone.
func lsRow(t *testing.T, h *clitest.Home, id string) lsRowOf {
	t.Helper()
	ls := strings.Split(strings.TrimSpace(h.OK("ls", "--json").Out), "\n")
	var row lsRowOf
	if len(ls) != 1 || json.Unmarshal([]byte(ls[0]), &row) != nil || row.RunID != id {
		t.Fatalf("ls --json: want run %s alone:\n%s", id, strings.Join(ls, "\n"))
	}
	return row
}

// wantSubAgentTotals checks a session's run with its sub-agents' child
// runs: `twasm ls --json` lists it alone, its sub-runs' tokens sub
// (uncached input, output), counted once in all; `twasm tree --json`
// counts runs sub-runs and their tools calls, as does the rebuild
// `twasm renormalize` makes.
func wantSubAgentTotals(t *testing.T, h *clitest.Home, id string, sub, all [2]int64, runs, tools int) {
	t.Helper()
	row := lsRow(t, h, id)
	if row.SubRunUsage["uncached_input_tokens"] != sub[0] || row.SubRunUsage["output_tokens"] != sub[1] ||
		row.UsageInAll["uncached_input_tokens"] != all[0] || row.UsageInAll["output_tokens"] != all[1] {
		t.Errorf("ls --json: sub_run_usage %v, usage_in_all %v; want the sub-runs' %d uncached input and %d output, in all %d and %d", row.SubRunUsage, row.UsageInAll, sub[0], sub[1], all[0], all[1])
	}
	wantSubRuns(t, h, id, runs, tools)
	if rebuilt := wantRenormalized(t, h, id); rebuilt != "" {
		wantSubRuns(t, h, rebuilt, runs, tools)
	}
}

// wantSubRuns checks `twasm tree --json` of run id: its sub-runs runs
// and their tools calls.
func wantSubRuns(t *testing.T, h *clitest.Home, id string, runs, tools int) {
	t.Helper()
	var tree struct {
		SubRuns struct {
			Runs  int `json:"runs"`
			Tools int `json:"tools"`
		} `json:"sub_runs"`
	}
	if tr := h.OK("tree", id, "--json"); json.Unmarshal([]byte(tr.Out), &tree) != nil || tree.SubRuns.Runs != runs || tree.SubRuns.Tools != tools {
		t.Errorf("tree --json %s: sub-runs %+v, want %d runs, %d calls\n%s", id, tree.SubRuns, runs, tools, tr.Out)
	}
}

// wantLinkedAt checks that run child is a child run of run parent,
// linked once, at path, in the agent step (part) holding call callID,
// the first part, the link named title; both runs valid.
func wantLinkedAt(t *testing.T, h *clitest.Home, parent, child, callID, path, title string) {
	t.Helper()
	if got := clitest.ReadRun(t, clitest.TranscriptPath(h.Stor, child))[0].ParentRunID; got != parent {
		t.Errorf("the child's run has parent %q, want %s", got, parent)
	}
	callAt, linked := -1, 0
	for _, ev := range clitest.ReadRun(t, clitest.TranscriptPath(h.Stor, parent)) {
		switch {
		case ev.Type == transcript.ToolCall && ev.Tool() != nil && ev.Tool().CallID == callID:
			callAt = ev.Iteration
		case ev.Type == transcript.StepCallWorkflowStarted && ev.ChildRunID != "":
			linked++
			if ev.ChildRunID != child || ev.Path != path || ev.Iteration != callAt || ev.Step() == nil || ev.Step().Name != title {
				t.Errorf("link %s at %s#%d named %+v, want %s at %s#%d (the call's part) named %q", ev.ChildRunID, ev.Path, ev.Iteration, ev.Step(), child, path, callAt, title)
			}
		}
	}
	if linked != 1 || callAt != 0 {
		t.Errorf("the parent's run: %d child runs linked, call %s at iteration %d: want one, at the call in the first part", linked, callID, callAt)
	}
	for _, id := range []string{parent, child} {
		h.OK("validate", id)
	}
}

// wantRenormalized runs `twasm renormalize` of run id, which must leave
// nothing out, and returns the rebuild's run id.
func wantRenormalized(t *testing.T, h *clitest.Home, id string) string {
	t.Helper()
	var sum struct {
		New     string   `json:"new"`
		LeftOut []string `json:"left_out"`
	}
	if r := h.OK("renormalize", "--json", id); json.Unmarshal([]byte(r.Out), &sum) != nil || sum.New == "" || len(sum.LeftOut) != 0 {
		t.Errorf("renormalize: %+v, want a rebuild that leaves nothing out\n%v", sum, r)
	}
	return sum.New
}

// validLinked counts the child runs the run at path links (a
// step.call_workflow.started naming one), each checked valid.
func validLinked(t *testing.T, h *clitest.Home, path string) int {
	t.Helper()
	linked := 0
	for _, ev := range clitest.ReadRun(t, path) {
		if ev.Type == transcript.StepCallWorkflowStarted && ev.ChildRunID != "" {
			linked++
			clitest.Validate(t, clitest.TranscriptPath(h.Stor, ev.ChildRunID))
		}
	}
	return linked
}

// wantLinkedIn checks that run child is a child run of run parent, its
// only one, linked at path in part iteration; both runs valid.
func wantLinkedIn(t *testing.T, h *clitest.Home, parent, child, path string, iteration int) {
	t.Helper()
	if got := clitest.ReadRun(t, clitest.TranscriptPath(h.Stor, child))[0].ParentRunID; got != parent {
		t.Errorf("the child's run has parent %q, want %s", got, parent)
	}
	linked := 0
	for _, ev := range clitest.ReadRun(t, clitest.TranscriptPath(h.Stor, parent)) {
		if ev.Type == transcript.StepCallWorkflowStarted && ev.ChildRunID != "" {
			linked++
			if ev.ChildRunID != child || ev.Path != path || ev.Iteration != iteration {
				t.Errorf("link %s at %s#%d, want %s at %s#%d", ev.ChildRunID, ev.Path, ev.Iteration, child, path, iteration)
			}
		}
	}
	if linked != 1 {
		t.Errorf("the parent's run: %d child runs linked, want one", linked)
	}
	for _, id := range []string{parent, child} {
		h.OK("validate", id)
	}
}

// supersededBy is the run that run id's run.completed says supersedes it
// (lifecycle.SupersededByField), "" when its last line says none.
func supersededBy(t *testing.T, h *clitest.Home, id string) string {
	t.Helper()
	evs := clitest.ReadRun(t, clitest.TranscriptPath(h.Stor, id))
	var by string
	if last := evs[len(evs)-1]; last.Type == transcript.RunCompleted && last.Step() != nil {
		_ = json.Unmarshal(last.Step().Extra[lifecycle.SupersededByField], &by)
	}
	return by
}

package synccmd_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/transcript"
)

// TestSyncClaudeSubAgents: `twasm sync` (the bundled wasm plugin) on a
// home holding a real Claude Code session and the files Claude Code kept
// its sub-agents' conversations in (subagents/agent-*.jsonl: a Task
// call's sub-agent and a compaction) archives the files as child runs of
// the session's run, linked in it: ls lists one session, and stats,
// tree and view count every token and call once, the session's with its
// sub-agents'. The figures are the raw files' own, computed apart from
// twasm (the capture's expectations; the sub-agent files' messages by
// message id). Before, ls listed three sessions, stats counted the Task's
// sub-agent twice (its file's run and the run the session's
// agent_progress records make), and the session's view gave its
// sub-runs only the copy the log carried.
func TestSyncClaudeSubAgents(t *testing.T) {
	t.Parallel()
	h, session := spotterHome(t)
	sub := h.Put(spotterSubAgents+"agent-aac57f5.jsonl", readSpotter(t, "spotter_subagent_transcript_v2.1.39_websearch.jsonl"), time.Hour)
	compact := h.Put(spotterSubAgents+"agent-acompact-946d2b.jsonl", readSpotter(t, "spotter_subagent_compaction_v2.1.39.jsonl"), time.Hour)

	// doctor counts one session and its two sub-agent files apart (it
	// said 3 sessions before), not archived, then archived.
	doctor := func(stage string, want [4]int) {
		t.Helper()
		var d struct {
			Stores []struct {
				Provider             string
				Sessions             int
				SubAgents            int `json:"sub_agents"`
				NotArchived          int `json:"not_archived"`
				SubAgentsNotArchived int `json:"sub_agents_not_archived"`
			}
		}
		r := h.OK("doctor", "--json")
		if err := json.Unmarshal([]byte(r.Out), &d); err != nil {
			t.Fatalf("doctor %s: %v\n%s", stage, err, r.Out)
		}
		for _, st := range d.Stores {
			if st.Provider == "claude" {
				if got := [4]int{st.Sessions, st.SubAgents, st.NotArchived, st.SubAgentsNotArchived}; got != want {
					t.Errorf("doctor %s: sessions, sub-agent files, not archived, sub-agent files not archived %v, want %v\n%s", stage, got, want, r.Out)
				}
			}
		}
	}
	doctor("before the sync", [4]int{1, 2, 1, 2})

	r := h.OK("sync")
	doctor("after it", [4]int{1, 2, 0, 0})
	runs := map[string]string{} // path -> run id
	for _, l := range strings.Split(strings.TrimSpace(r.Out), "\n") {
		f := strings.Split(l, "\t")
		if len(f) >= 4 && f[0] == "new" {
			runs[f[3]] = f[1]
		}
	}
	if len(runs) != 3 || runs[session] == "" || runs[sub] == "" || runs[compact] == "" {
		t.Fatalf("sync: want the session and its two sub-agent files new: %v", r)
	}

	ls := strings.Split(strings.TrimSpace(h.OK("ls", "--json").Out), "\n")
	if len(ls) != 1 || !strings.Contains(ls[0], runs[session]) {
		t.Errorf("ls: want the session alone, got %d lines:\n%s", len(ls), strings.Join(ls, "\n"))
	}

	// The session's own figures (the capture's expectations) and its
	// sub-agent files' (3 and 1 messages).
	wantIn := int64(16790991) + (2408 + 18814 + 29274) + (3 + 121689 + 17842)
	wantOut := int64(49467) + 7 + 8
	var st struct {
		UsageInAll struct {
			InputTokens  int64 `json:"input_tokens"`
			OutputTokens int64 `json:"output_tokens"`
		} `json:"usage_in_all"`
		SubRuns int `json:"sub_runs"`
	}
	if err := json.Unmarshal([]byte(h.OK("stats", "--all", "--json").Out), &st); err != nil {
		t.Fatal(err)
	}
	if st.UsageInAll.InputTokens != wantIn || st.UsageInAll.OutputTokens != wantOut {
		t.Errorf("stats --all: usage in all input %d output %d, want %d and %d", st.UsageInAll.InputTokens, st.UsageInAll.OutputTokens, wantIn, wantOut)
	}

	type usage struct {
		InputTokens int64 `json:"input_tokens"`
	}
	var tree struct {
		Usage   usage `json:"usage"`
		SubRuns struct {
			Runs  int   `json:"runs"`
			Tools int   `json:"tools"`
			Usage usage `json:"usage"`
		} `json:"sub_runs"`
	}
	tr := h.OK("tree", runs[session], "--json")
	if err := json.Unmarshal([]byte(tr.Out), &tree); err != nil {
		t.Fatalf("tree --json: %v\n%s", err, tr.Out)
	}
	if got := tree.Usage.InputTokens + tree.SubRuns.Usage.InputTokens; got != wantIn || tree.SubRuns.Tools != 12 {
		t.Errorf("tree: input %d (own %d, sub-runs %d), sub-runs' calls %d; want %d and 12",
			got, tree.Usage.InputTokens, tree.SubRuns.Usage.InputTokens, tree.SubRuns.Tools, wantIn)
	}
	// The Task's sub-agent made 12 calls (WebSearch), the compaction none.
	if v := h.OK("view", runs[session]).Out; !strings.Contains(v, "(sub-runs 12, in all ") {
		t.Errorf("view: the tool calls line does not count the sub-agent's 12 calls:\n%s", headOf(v, 40))
	}
	for _, id := range runs {
		h.OK("validate", id)
	}
	// Nothing new the second time.
	if r := h.OK("sync"); len(clitest.Outcomes(r.Out)) != 0 || !strings.Contains(r.ErrOut, "0 new") {
		t.Errorf("second sync: %v", r)
	}
	renormalizeSubAgents(t, h, runs[session], tr.Out)

	// A sub-agent's run that cannot be read is left out of a rebuild,
	// and the summary says which and why; the rest is rebuilt.
	if err := os.Remove(clitest.TranscriptPath(h.Stor, runs[compact])); err != nil {
		t.Fatal(err)
	}
	var sum struct {
		New     string   `json:"new"`
		LeftOut []string `json:"left_out"`
	}
	if r := h.OK("renormalize", "--json", runs[session]); json.Unmarshal([]byte(r.Out), &sum) != nil ||
		len(sum.LeftOut) != 1 || !strings.Contains(sum.LeftOut[0], runs[compact]) || !strings.Contains(sum.LeftOut[0], "no such file") {
		t.Errorf("renormalize without the compaction's run: left out %q, want it, unreadable\n%v", sum.LeftOut, r)
	}
	h.OK("validate", sum.New)
}

// renormalizeSubAgents: renormalize of the session rebuilds its
// sub-agent files' child runs too, each from its own raw capture, so
// stats --all, the session's ls line and its tree count the same tokens
// and calls before and after, once. Before, the rebuild left them out
// ("left out: sub-run ... at agent.agent-..."): stats --all, ls and tree
// counted only the log's agent_progress copy of the Task's sub-agent.
func renormalizeSubAgents(t *testing.T, h *clitest.Home, session, treeBefore string) {
	t.Helper()
	type totals struct {
		UsageInAll json.RawMessage `json:"usage_in_all"`
	}
	stats := func() totals {
		var st totals
		if err := json.Unmarshal([]byte(h.OK("stats", "--all", "--json").Out), &st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	lsLine := func(id string) totals {
		for _, l := range strings.Split(strings.TrimSpace(h.OK("ls", "--json").Out), "\n") {
			var line struct {
				RunID string `json:"run_id"`
				totals
			}
			if err := json.Unmarshal([]byte(l), &line); err != nil {
				t.Fatalf("ls --json: %v\n%s", err, l)
			}
			if line.RunID == id {
				return line.totals
			}
		}
		t.Fatalf("ls --json: no line for run %s", id)
		return totals{}
	}
	treeTotals := func(out string) string {
		var tr struct {
			Usage   json.RawMessage `json:"usage"`
			SubRuns json.RawMessage `json:"sub_runs"`
		}
		if err := json.Unmarshal([]byte(out), &tr); err != nil {
			t.Fatalf("tree --json: %v\n%s", err, out)
		}
		return string(tr.Usage) + " " + string(tr.SubRuns)
	}
	statsBefore, lsBefore := stats(), lsLine(session)

	r := h.OK("renormalize", "--json", session)
	var sum struct {
		New     string   `json:"new"`
		LeftOut []string `json:"left_out"`
	}
	if err := json.Unmarshal([]byte(r.Out), &sum); err != nil || sum.New == "" {
		t.Fatalf("renormalize --json: %v\n%v", err, r)
	}
	if len(sum.LeftOut) != 0 {
		t.Errorf("renormalize left out %q", sum.LeftOut)
	}
	if after := stats(); string(after.UsageInAll) != string(statsBefore.UsageInAll) {
		t.Errorf("stats --all usage in all: after renormalize %s, before %s", after.UsageInAll, statsBefore.UsageInAll)
	}
	if after := lsLine(sum.New); string(after.UsageInAll) != string(lsBefore.UsageInAll) {
		t.Errorf("ls: the rebuild's usage in all %s, the session's %s", after.UsageInAll, lsBefore.UsageInAll)
	}
	if got, want := treeTotals(h.OK("tree", sum.New, "--json").Out), treeTotals(treeBefore); got != want {
		t.Errorf("tree: the rebuild's %s, the session's %s", got, want)
	}
	h.OK("validate", sum.New)
}

// spotterSubAgents is where spotter's session keeps its sub-agents'
// files in a fake home (spotterHome).
const spotterSubAgents = ".claude/projects/-home-USER-projects-spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04/subagents/"

// spotterHome is a fake home holding spotter's real session log (of
// which the capture's sub-agent files are), and the log's path.
func spotterHome(t *testing.T) (*clitest.Home, string) {
	t.Helper()
	h := clitest.NewHome(t)
	return h, h.Put(".claude/projects/-home-USER-projects-spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl",
		readSpotter(t, "spotter_session_log_v2.1.39_interleaved_message.jsonl"), time.Hour)
}

// readSpotter reads one of the claude captures.
func readSpotter(t *testing.T, name string) []byte {
	t.Helper()
	return clitest.ReadFile(t, filepath.Join(clitest.Root, "testdata", "captures", "claude", name))
}

// headOf is the first n lines of s.
func headOf(s string, n int) string {
	l := strings.SplitN(s, "\n", n+1)
	return strings.Join(l[:min(n, len(l))], "\n")
}

// TestSyncClaudeSubAgentGrownAfterRenormalize: a sub-agent's file that
// grows after its session was renormalized is archived into the
// original's tree (sync keeps archiving into the original), so stats
// --all counts the original, the growth with it, as it does when the
// session's own file grows: the original's tree was written after the
// rebuild. Before, only the original run's own file was compared, so
// the rebuild stood and the growth was counted nowhere.
func TestSyncClaudeSubAgentGrownAfterRenormalize(t *testing.T) {
	t.Parallel()
	h, session := spotterHome(t)
	whole := readSpotter(t, "spotter_subagent_transcript_v2.1.39_websearch.jsonl")
	lines := bytes.SplitAfter(whole, []byte("\n"))
	subPath := spotterSubAgents + "agent-aac57f5.jsonl"
	h.Put(subPath, bytes.Join(lines[:len(lines)/2], nil), 2*time.Hour)

	r := h.OK("sync")
	var sessionRun string
	for _, l := range strings.Split(strings.TrimSpace(r.Out), "\n") {
		if f := strings.Split(l, "\t"); len(f) >= 4 && f[0] == "new" && f[3] == session {
			sessionRun = f[1]
		}
	}
	if sessionRun == "" {
		t.Fatalf("sync: the session is not new: %v", r)
	}
	h.OK("renormalize", sessionRun)
	h.Put(subPath, whole, time.Hour)
	if got := clitest.Outcomes(h.OK("sync").Out); len(got["grown"]) != 1 {
		t.Fatalf("sync after the sub-agent's file grew: %v", got)
	}
	var st struct {
		UsageInAll struct {
			InputTokens int64 `json:"input_tokens"`
		} `json:"usage_in_all"`
	}
	if err := json.Unmarshal([]byte(h.OK("stats", "--all", "--json").Out), &st); err != nil {
		t.Fatal(err)
	}
	// The session's own figures and the whole sub-agent file's (as in
	// TestSyncClaudeSubAgents, without the compaction's file).
	if want := int64(16790991) + (2408 + 18814 + 29274); st.UsageInAll.InputTokens != want {
		t.Errorf("stats --all: input in all %d, want %d", st.UsageInAll.InputTokens, want)
	}
}

// irrlichtSession is Irrlicht's real Claude Code 2.1.101 session (the
// capture irrlicht_session_log_v2.1.101_foreground_agents: six Agent
// calls run in the foreground) as a fake home keeps it, and
// irrlichtAgents three of its sub-agents' files (the captures
// irrlicht_subagent_v2.1.101_*), each with the call that started it:
// the session's log names each only in its call's result record
// (toolUseResult.agentId).
const irrlichtSession = ".claude/projects/-Users-ingo-projects-irrlicht/8a525d27-37a4-4a12-8523-a3ea345290cf"

var irrlichtAgents = []struct{ capture, id, call, description string }{
	{"irrlicht_subagent_v2.1.101_ae04f393.jsonl", "ae04f393030f3393b", "toolu_016ZpMJmP4JAoMdAS9eed9pB", "Count Go files in core"},
	{"irrlicht_subagent_v2.1.101_ad5ac77d.jsonl", "ad5ac77d703f22b9f", "toolu_01K16pt8bnJDz9SBMbbUZ5Yk", "List e2e test files"},
	{"irrlicht_subagent_v2.1.101_abb99351.jsonl", "abb993514b4da5e14", "toolu_01QQRDRxgAbNtUwk6Yn2VqqF", "Exported funcs in session.go"},
}

// TestSyncClaudeSubAgentsAtTheirCalls: `twasm sync` links each Claude
// Code sub-agent file's child run at the Agent call that started it (in
// the part of the session's run holding the call, path
// agent.agent-<agentId>_<call id>, named by the call's description),
// whether a meta.json beside the file names the call (toolUseId), says
// nothing of it (many versions' meta), or is not there (Irrlicht's
// 2.1.101 files): the session's record of the call's result names the
// sub-agent (toolUseResult.agentId). Also when the files are written
// after the session's run grew a second part: the link is at the calls'
// part, not the latest. ls lists the session alone, its sub_run_usage
// the three sub-agents' tokens (24 uncached input, 589 output: the
// captures' raw usage), counted once in usage_in_all (the session's own
// 12 and 851 with them); a second sync
// changes nothing. Synced while their calls ran (the session's log
// holds the calls, not yet their results), the files are linked at the
// latest part without a call, then archived again at their calls by the
// sync that finds the results, superseding the first runs (archive's
// loose links), the totals counted once. Before, without a toolUseId every sub-agent was
// linked at the session's latest part, away from its call (path
// agent.agent-<agentId>, no call).
func TestSyncClaudeSubAgentsAtTheirCalls(t *testing.T) {
	t.Parallel()
	session := readSpotter(t, "irrlicht_session_log_v2.1.101_foreground_agents.jsonl")
	for _, c := range []struct {
		name string
		meta func(call string) string // the agent-*.meta.json, "" for none
		// grown: the session is synced at its first 16 lines (the
		// first wave's calls and results), then whole (a second
		// part), then the sub-agents' files are written.
		grown bool
		// running: the sub-agents' files are synced while their calls
		// ran (the session's first 12 lines: the three calls, no
		// result yet), then the session whole.
		running bool
	}{
		{name: "no meta"},
		{name: "meta naming the call", meta: func(call string) string { return `{"agentType":"Explore","toolUseId":"` + call + `"}` }},
		{name: "meta without the call", meta: func(string) string { return `{"agentType":"Explore"}` }},
		{name: "written after the session grew", grown: true},
		{name: "synced while the calls ran", running: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := clitest.NewHome(t)
			store := filepath.Join(h.Dir, ".claude", "projects")
			runs := map[string]string{} // path -> run id
			syncNew := func(what string, want int) {
				t.Helper()
				for p, id := range syncNewRuns(t, h, store, what, want) {
					runs[p] = id
				}
			}
			putAgents := func() {
				for _, a := range irrlichtAgents {
					p := irrlichtSession + "/subagents/agent-" + a.id
					h.Put(p+".jsonl", readSpotter(t, a.capture), 30*time.Minute)
					if c.meta != nil {
						h.Put(p+".meta.json", []byte(c.meta(a.call)), 30*time.Minute)
					}
				}
			}
			loose := map[string]string{} // path -> the run first linked at the latest part
			switch {
			case c.running:
				lines := bytes.SplitAfter(session, []byte("\n"))
				h.Put(irrlichtSession+".jsonl", bytes.Join(lines[:12], nil), 2*time.Hour)
				putAgents()
				syncNew("sync while the calls ran", 1+len(irrlichtAgents))
				h.Put(irrlichtSession+".jsonl", session, time.Hour)
				syncWant(t, h, store, "sync of the session whole", map[string]int{"grown": 1, "new": len(irrlichtAgents)})
				for p, id := range runs {
					if strings.Contains(p, "/subagents/") {
						loose[p], runs[p] = id, "" // the run at the call is found by its link
					}
				}
			case c.grown:
				lines := bytes.SplitAfter(session, []byte("\n"))
				h.Put(irrlichtSession+".jsonl", bytes.Join(lines[:16], nil), 2*time.Hour)
				syncNew("sync of the session's first 16 lines", 1)
				h.Put(irrlichtSession+".jsonl", session, time.Hour)
				syncWant(t, h, store, "sync of the session whole", map[string]int{"grown": 1})
				putAgents()
				syncNew("sync of the sub-agents' files", len(irrlichtAgents))
			default:
				h.Put(irrlichtSession+".jsonl", session, time.Hour)
				putAgents()
				syncNew("sync", 1+len(irrlichtAgents))
			}
			parentRun := runs[filepath.Join(h.Dir, irrlichtSession+".jsonl")]
			callAt := map[string]int{}
			links := map[string]*transcript.Event{} // child run -> its link
			for _, ev := range clitest.ReadRun(t, clitest.TranscriptPath(h.Stor, parentRun)) {
				switch {
				case ev.Type == transcript.ToolCall && ev.Tool() != nil:
					callAt[ev.Tool().CallID] = ev.Iteration
				case ev.Type == transcript.StepCallWorkflowStarted && ev.ChildRunID != "":
					links[ev.ChildRunID] = ev
				}
			}
			if want := len(irrlichtAgents) + len(loose); len(links) != want {
				t.Errorf("the session's run links %d child runs, want %d", len(links), want)
			}
			for _, a := range irrlichtAgents {
				file := filepath.Join(h.Dir, irrlichtSession+"/subagents/agent-"+a.id+".jsonl")
				if first := loose[file]; first != "" {
					// Linked first at the latest part, without its
					// call; then archived again at the call, the new
					// link superseding the first.
					if l := links[first]; l == nil || l.Path != "agent.agent-"+a.id || l.Iteration != 0 {
						t.Errorf("agent-%s: the first run %s linked %+v, want at agent.agent-%s#0", a.id, first, l, a.id)
					}
					for id, l := range links {
						var sup string
						if sp := l.Step(); sp != nil {
							_ = json.Unmarshal(sp.Extra[lifecycle.SupersedesField], &sup)
						}
						if sup == first {
							runs[file] = id
						}
					}
				}
				child := runs[file]
				l, ok := links[child]
				switch {
				case child == "" || !ok:
					t.Errorf("agent-%s: run %q, not linked in the session's run %s", a.id, child, parentRun)
				case l.Path != "agent.agent-"+a.id+"_"+a.call || l.Iteration != callAt[a.call] || l.Iteration != 0 || l.Step() == nil || l.Step().Name != a.description:
					t.Errorf("agent-%s linked at %s#%d named %+v, want agent.agent-%s_%s#0 (its call's part) named %q", a.id, l.Path, l.Iteration, l.Step(), a.id, a.call, a.description)
				}
				if got := clitest.ReadRun(t, clitest.TranscriptPath(h.Stor, child))[0].ParentRunID; got != parentRun {
					t.Errorf("agent-%s: the child's run has parent %q, want %s", a.id, got, parentRun)
				}
				h.OK("validate", child)
			}
			h.OK("validate", parentRun)
			syncWant(t, h, store, "sync with nothing new", nothing)
			// tree: each file's run holds its sidechain's run (the
			// plugin's sub-agent scope), which made the one call.
			wantSubAgentTotals(t, h, parentRun, [2]int64{24, 589}, [2]int64{12 + 24, 851 + 589}, 2*len(irrlichtAgents), len(irrlichtAgents))
		})
	}
}

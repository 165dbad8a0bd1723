package synccmd_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// codexParentID and codexChildID are the threads of goldens
// rollout_v0158_subagent_spawn_parent.jsonl and
// rollout_v0158_subagent_spawned_child.jsonl (written by hand from
// Codex's source: testdata/golden/codex/README.md): the parent's
// spawn_agent call call_spawnA, whose result names the child by its
// path (task_name "/root/tests"), started the child, whose
// session_meta names the parent's thread id.
const (
	codexParentID = "019e0000-0000-7000-8000-00000000a001"
	codexChildID  = "019e0000-0000-7000-8000-00000000a002"
	codexParent   = ".codex/sessions/2026/11/20/rollout-2026-11-20T23-59-00-" + codexParentID + ".jsonl"
	codexSpawn    = "call_spawnA"
)

// codexLines reads a codex golden input's lines.
func codexLines(t *testing.T, golden string) [][]byte {
	t.Helper()
	return goldenLines(t, "codex", golden)
}

// goldenLines reads the lines of plugin's golden input name, each with
// its line end.
func goldenLines(t *testing.T, plugin, name string) [][]byte {
	t.Helper()
	return bytes.SplitAfter(bytes.TrimSuffix(clitest.ReadFile(t, clitest.Golden(plugin, name)), []byte("\n")), []byte("\n"))
}

// TestSyncCodexSubAgent: a Codex rollout of a spawned sub-agent (a
// thread of its own, whose session_meta names its parent thread:
// source.subagent.thread_spawn.parent_thread_id) is archived by `twasm
// sync` as a child run of its parent rollout's run, linked in the agent
// step at the spawn_agent call whose result names it (path
// agent.<the child's file stem>_call_spawnA, in the part that holds the
// call), the parent's file found by the thread id ending its name in
// another day's directory; whether the store lists the child after its
// parent (the next day's directory), before it, or the child is written
// after two parts of the parent were synced, the call in the first. ls
// lists the parent alone, its sub_run_usage the child's tokens, counted
// once in usage_in_all; tree counts the child run and its call;
// renormalize rebuilds the parent's run with it. Before, the child was a
// session of its own and its tokens in no session's totals.
func TestSyncCodexSubAgent(t *testing.T) {
	t.Parallel()
	parent := codexLines(t, "rollout_v0158_subagent_spawn_parent.jsonl")
	child := bytes.Join(codexLines(t, "rollout_v0158_subagent_spawned_child.jsonl"), nil)
	for _, c := range []struct {
		name, childRel string
		// later: the parent is synced in two parts (the first turn,
		// the spawn call and its result in it, then the rest) before
		// the child's rollout is written.
		later bool
	}{
		{name: "child listed after its parent, in the next day's directory",
			childRel: ".codex/sessions/2026/11/21/rollout-2026-11-21T00-00-01-" + codexChildID + ".jsonl"},
		{name: "child listed before its parent",
			childRel: ".codex/sessions/2026/11/19/rollout-2026-11-19T00-00-01-" + codexChildID + ".jsonl"},
		{name: "child written after two parts of its parent", later: true,
			childRel: ".codex/sessions/2026/11/21/rollout-2026-11-21T00-00-01-" + codexChildID + ".jsonl"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := clitest.NewHome(t)
			store := filepath.Join(h.Dir, ".codex", "sessions")
			runs := map[string]string{} // path -> run id
			syncNew := func(what string, want int) {
				t.Helper()
				for p, id := range syncNewRuns(t, h, store, what, want) {
					runs[p] = id
				}
			}
			parentPath := filepath.Join(h.Dir, codexParent)
			if c.later {
				h.Put(codexParent, bytes.Join(parent[:12], nil), time.Hour) // the first turn, up to its task_complete
				syncNew("sync of the parent alone", 1)
				h.Put(codexParent, bytes.Join(parent, nil), 30*time.Minute)
				syncWant(t, h, store, "sync of the parent's second part", map[string]int{"grown": 1})
				h.Put(c.childRel, child, 20*time.Minute)
				syncNew("sync after the child was written", 1)
			} else {
				h.Put(codexParent, bytes.Join(parent, nil), time.Hour)
				h.Put(c.childRel, child, time.Hour)
				syncNew("sync", 2)
			}
			parentRun, childRun := runs[parentPath], runs[filepath.Join(h.Dir, c.childRel)]
			if parentRun == "" || childRun == "" {
				t.Fatalf("runs %v: want the parent's and the child's", runs)
			}
			stem := strings.TrimSuffix(filepath.Base(c.childRel), ".jsonl")
			// Named by the child's file: the call states no description.
			wantLinkedAt(t, h, parentRun, childRun, codexSpawn, "agent."+stem+"_"+codexSpawn, stem)
			syncWant(t, h, store, "sync with nothing new", nothing)

			// ls: the parent alone, the child's tokens (900 uncached
			// input, 120 output) its sub-runs', counted once in all.
			wantSubAgentTotals(t, h, parentRun, [2]int64{900, 120}, [2]int64{3400 + 900, 260 + 120}, 1, 1)
		})
	}
}

// TestSyncCodexSubAgentAlone: a sub-agent's rollout whose parent's
// rollout is not in the store (deleted, or archived elsewhere) is
// archived as a session of its own, named as that session's sub-agent,
// and the sync says why; its tokens are its own run's.
func TestSyncCodexSubAgentAlone(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	store := filepath.Join(h.Dir, ".codex", "sessions")
	h.Put(".codex/sessions/2026/11/21/rollout-2026-11-21T00-00-01-"+codexChildID+".jsonl",
		bytes.Join(codexLines(t, "rollout_v0158_subagent_spawned_child.jsonl"), nil), time.Hour)
	var r clitest.Result
	clitest.Unchanged(t, store, "sync", func() { r = h.OK("sync") })
	got := clitest.Outcomes(r.Out)
	if len(got["new"]) != 1 || !strings.Contains(r.Out, codexParentID) || !strings.Contains(r.Out, "is not in the store: archived as a run of its own") {
		t.Fatalf("sync: want one new run said to be a missing session's sub-agent, a run of its own: %v", r)
	}
	row := lsRow(t, h, got["new"][0])
	if row.Name == "" || !strings.Contains(row.Name, "sub-agent") || !strings.Contains(row.Name, codexParentID) || row.UsageInAll["output_tokens"] != 120 {
		t.Errorf("ls --json: %+v, want the run named as the sub-agent of session %s, its 120 output tokens its own", row, codexParentID)
	}
}

// TestDoctorCodexSubAgent: `twasm doctor` counts a Codex sub-agent's
// rollout (its session_meta names its parent thread, whose rollout is in
// the store) as sync archives it: a sub-agent file of its session, a
// child run, not a session of the store; before the sync (the session
// and its sub-agent not archived) and after (all archived, with their
// sub-agent file). A sub-agent's rollout whose parent's is not in the
// store is a session: sync archives it as a run of its own. Before, the
// child was counted as a second session.
func TestDoctorCodexSubAgent(t *testing.T) {
	t.Parallel()
	const name = "Codex sessions"
	childRel := ".codex/sessions/2026/11/21/rollout-2026-11-21T00-00-01-" + codexChildID + ".jsonl"
	child := bytes.Join(codexLines(t, "rollout_v0158_subagent_spawned_child.jsonl"), nil)
	type counts struct {
		Sessions    int `json:"sessions"`
		SubAgents   int `json:"sub_agents"`
		Archived    int `json:"archived"`
		NotArchived int `json:"not_archived"`
		SubNot      int `json:"sub_agents_not_archived"`
	}
	doctor := func(h *clitest.Home, want counts, msg string) {
		t.Helper()
		var r clitest.Result
		clitest.Unchanged(t, filepath.Join(h.Dir, ".codex"), "doctor", func() { r = h.OK("doctor", "--json") })
		var doc struct {
			Stores []struct {
				Name string `json:"name"`
				counts
			} `json:"stores"`
			Checks []struct{ Subject, Message string } `json:"checks"`
		}
		if err := json.Unmarshal([]byte(r.Out), &doc); err != nil {
			t.Fatal(err)
		}
		for _, st := range doc.Stores {
			if st.Name == name && st.counts != want {
				t.Errorf("doctor: %s %+v, want %+v", name, st.counts, want)
			}
		}
		if !slices.ContainsFunc(doc.Checks, func(c struct{ Subject, Message string }) bool { return c.Subject == name && c.Message == msg }) {
			t.Errorf("doctor: no check %q of %s: %+v", msg, name, doc.Checks)
		}
	}

	h := clitest.NewHome(t)
	h.Put(codexParent, bytes.Join(codexLines(t, "rollout_v0158_subagent_spawn_parent.jsonl"), nil), time.Hour)
	h.Put(childRel, child, time.Hour)
	doctor(h, counts{Sessions: 1, SubAgents: 1, NotArchived: 1, SubNot: 1}, "1 of 1 session(s) not archived yet, 1 of 1 sub-agent file(s): run `twasm sync`")
	syncNewRuns(t, h, filepath.Join(h.Dir, ".codex", "sessions"), "sync", 2)
	doctor(h, counts{Sessions: 1, SubAgents: 1, Archived: 1}, "all 1 session(s) archived, with their 1 sub-agent file(s)")

	alone := clitest.NewHome(t)
	alone.Put(childRel, child, time.Hour)
	doctor(alone, counts{Sessions: 1, NotArchived: 1}, "1 of 1 session(s) not archived yet: run `twasm sync`")
}

// syncNewRuns runs `twasm sync` (the files under dir unchanged) and
// fails the test (what names the sync) unless it archives want new runs
// and nothing else; it returns them by session file.
func syncNewRuns(t *testing.T, h *clitest.Home, dir, what string, want int) map[string]string {
	t.Helper()
	var r clitest.Result
	clitest.Unchanged(t, dir, "sync", func() { r = h.OK("sync") })
	runs := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(r.Out), "\n") {
		if f := strings.Split(l, "\t"); len(f) >= 4 && f[0] == "new" {
			runs[f[3]] = f[1]
		}
	}
	if len(runs) != want || len(clitest.Outcomes(r.Out)) != 1 {
		t.Fatalf("%s: want %d new runs and nothing else: %v", what, want, r)
	}
	return runs
}

// TestSyncCodexForkedSubAgent: a sub-agent spawned with its parent's
// history (fork_context, fork_turns) writes, after its own session_meta,
// the parent's rollout up to the spawn (its session_meta, turn, prompt
// and token count), then its own turn, its running total continuing the
// parent's (Codex's last_token_info_from_rollout). Synced beside its
// parent, it is still a child run linked at the spawn call, and its
// tokens in the parent's totals are its own only: the copied count is the
// parent's, counted once. Before, the child run counted the parent's
// 1000 input and 20 output tokens a second time.
func TestSyncCodexForkedSubAgent(t *testing.T) {
	t.Parallel()
	parent := codexLines(t, "rollout_v0158_subagent_spawn_parent.jsonl")
	child := codexLines(t, "rollout_v0158_subagent_spawned_child.jsonl")
	// A count of a response before the spawn call, in the parent's
	// rollout and so in the copy.
	before := []byte(`{"timestamp":"2026-11-20T23:59:00.800Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":1000,"cached_input_tokens":0,"output_tokens":20,"reasoning_output_tokens":0,"total_tokens":1020},"last_token_usage":{"input_tokens":1000,"cached_input_tokens":0,"output_tokens":20,"reasoning_output_tokens":0,"total_tokens":1020},"model_context_window":258400},"rate_limits":null}}` + "\n")
	parent = append(parent[:5:5], append([][]byte{before}, parent[5:]...)...)
	// The count after it states the rest as its response's.
	parent[11] = bytes.Replace(parent[11], []byte(`"last_token_usage":{"input_tokens":3000,"cached_input_tokens":1000,"output_tokens":200,"reasoning_output_tokens":50,"total_tokens":3200}`),
		[]byte(`"last_token_usage":{"input_tokens":2000,"cached_input_tokens":1000,"output_tokens":180,"reasoning_output_tokens":50,"total_tokens":2180}`), 1)
	meta := bytes.Replace(child[0], []byte(`"payload":{"id":"`+codexChildID+`",`), []byte(`"payload":{"id":"`+codexChildID+`","forked_from_id":"`+codexParentID+`",`), 1)
	// The copy: the parent's lines up to its spawn_agent call, which
	// the fork leaves out (keep_forked_rollout_item), as Codex writes
	// them (task_started before turn_context, spawn.rs at 0ae3083).
	forked := [][]byte{meta, parent[0], parent[2], parent[1], parent[3], parent[4], parent[5]}
	// The child's own turn (task_started first), its total the
	// parent's 1000 input and 20 output more than its own.
	forked = append(forked, child[2], child[1])
	for _, l := range child[3:] {
		forked = append(forked, bytes.Replace(l, []byte(`"total_token_usage":{"input_tokens":1100,"cached_input_tokens":200,"output_tokens":120,"reasoning_output_tokens":30,"total_tokens":1220}`),
			[]byte(`"total_token_usage":{"input_tokens":2100,"cached_input_tokens":200,"output_tokens":140,"reasoning_output_tokens":30,"total_tokens":2240}`), 1))
	}
	h := clitest.NewHome(t)
	store := filepath.Join(h.Dir, ".codex", "sessions")
	childRel := ".codex/sessions/2026/11/21/rollout-2026-11-21T00-00-01-" + codexChildID + ".jsonl"
	h.Put(codexParent, bytes.Join(parent, nil), time.Hour)
	h.Put(childRel, bytes.Join(forked, nil), time.Hour)
	runs := syncNewRuns(t, h, store, "sync", 2)
	parentRun, childRun := runs[filepath.Join(h.Dir, codexParent)], runs[filepath.Join(h.Dir, childRel)]
	if parentRun == "" || childRun == "" {
		t.Fatalf("runs %v: want the parent's and the child's", runs)
	}
	stem := strings.TrimSuffix(filepath.Base(childRel), ".jsonl")
	wantLinkedAt(t, h, parentRun, childRun, codexSpawn, "agent."+stem+"_"+codexSpawn, stem)
	row := lsRow(t, h, parentRun)
	if row.SubRunUsage["uncached_input_tokens"] != 900 || row.SubRunUsage["output_tokens"] != 120 ||
		row.UsageInAll["uncached_input_tokens"] != 3400+900 || row.UsageInAll["output_tokens"] != 260+120 {
		t.Errorf("ls --json: sub_run_usage %v, usage_in_all %v; want the child's own 900 uncached input and 120 output, in all 4300 and 380", row.SubRunUsage, row.UsageInAll)
	}
}

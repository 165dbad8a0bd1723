package archive

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/internal/views"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/transcript"
)

// subAgentHome is a made-up home with a real Claude Code session
// (2.1.39, which carries its sub-agent's conversation in agent_progress
// records too) and the two sub-agent files Claude Code wrote beside it:
// the Task call's and a compaction's.
type subAgentHome struct {
	home, session, sub, compact string
	sessionBytes                []byte
}

func newSubAgentHome(t *testing.T) subAgentHome {
	t.Helper()
	session := fixture(t, "testdata/captures/claude/spotter_session_log_v2.1.39_interleaved_message.jsonl")
	sub := fixture(t, "testdata/captures/claude/spotter_subagent_transcript_v2.1.39_websearch.jsonl")
	compact := fixture(t, "testdata/captures/claude/spotter_subagent_compaction_v2.1.39.jsonl")
	h := subAgentHome{home: t.TempDir(), sessionBytes: session}
	dir := filepath.Join(h.home, ".claude", "projects", "-home-USER-projects-spotter")
	id := "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
	h.session = filepath.Join(dir, id+".jsonl")
	h.sub = filepath.Join(dir, id, "subagents", "agent-aac57f5.jsonl")
	h.compact = filepath.Join(dir, id, "subagents", "agent-acompact-946d2b.jsonl")
	writeAged(t, h.session, session, time.Hour)
	writeAged(t, h.sub, sub, time.Hour)
	writeAged(t, h.compact, compact, time.Hour)
	return h
}

func (h subAgentHome) locs(t *testing.T, withSubAgents bool) []Location {
	t.Helper()
	env := func(k string) string { return map[string]string{"HOME": h.home}[k] }
	var out []Location
	for _, l := range Discover(env, "linux", bundledDeclared(), nil) {
		if l.Provider != "claude" {
			continue
		}
		if !withSubAgents { // as a twasm before sub-agent files were declared
			l.SubAgents, l.subAgents, l.SubAgentCall = "", nil, nil
		}
		out = append(out, l)
	}
	require.Len(t, out, 1)
	return out
}

// byPath is a sync's outcomes by file.
func byPath(rep Report) map[string]Outcome {
	out := map[string]Outcome{}
	for _, o := range rep.Outcomes {
		out[o.Path] = o
	}
	return out
}

// storageFigures are what ls and stats --all count over a storage, as
// the commands do: the top-level runs (ls) and every token of them and
// their child runs, leaving out the runs another stands for
// (views.Superseded) with theirs.
type storageFigures struct {
	listed []string
	all    transcript.Usage
}

func figures(t *testing.T, root string) storageFigures {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(root, "transcripts", "*.jsonl"))
	require.NoError(t, err)
	l := views.Loader{Dir: filepath.Join(root, "transcripts")}
	var roots []*views.RunNode
	heads := map[string]views.RunHead{}
	var f storageFigures
	for _, p := range paths {
		run, err := views.LoadFile(p)
		require.NoError(t, err)
		if views.BuildRun(run).ParentRunID != "" {
			continue
		}
		n := views.BuildTree(l, run)
		roots = append(roots, n)
		f.listed = append(f.listed, n.RunID)
		heads[n.RunID] = views.RunHead{RunID: n.RunID, RenormalizedFrom: n.RenormalizedFrom, SupersededBy: n.SupersededBy}
	}
	gone := views.Superseded(heads, func(string) time.Time { return time.Time{} })
	st := views.NewStats()
	for _, r := range roots {
		if gone[r.RunID] {
			continue
		}
		for _, n := range r.Runs() {
			st.Add(n.Source())
		}
	}
	if st.UsageInAll != nil {
		f.all = *st.UsageInAll
	}
	return f
}

// TestSyncSubAgentFiles: a Claude Code session's sub-agent files
// (subagents/agent-*.jsonl) are child runs of the session's run, linked
// in its agent step, whatever order the syncs find them in; their tokens
// are counted once in the session's figures (the Task call's sub-agent
// the log carried too, as agent_progress records, superseded by its
// file's run, which holds the whole conversation), and ls lists one
// session. Before, each file was a session of its own: ls listed three,
// and the Task's sub-agent was counted twice.
func TestSyncSubAgentFiles(t *testing.T) {
	ctx := context.Background()
	h := newSubAgentHome(t)
	root := t.TempDir()
	a := newArchiver(t, root, nil)
	rep := a.SyncStores(ctx, h.locs(t, true), time.Time{}, nil)
	outs := byPath(rep)
	require.Len(t, outs, 3)
	for _, p := range []string{h.session, h.sub, h.compact} {
		require.Equal(t, ActionNew, outs[p].Action, "%s: %s", p, outs[p].Reason)
		validRun(t, root, outs[p].RunID)
	}
	parent := outs[h.session].RunID
	pv := readRun(t, root, parent)
	links := map[string]*transcript.Event{}
	for _, ev := range pv.events {
		if ev.Type == transcript.StepCallWorkflowStarted {
			links[ev.ChildRunID] = ev
		}
	}
	var carried string // the sub-agent run the session's log made of its agent_progress records
	for id, ev := range links {
		if id != outs[h.sub].RunID && id != outs[h.compact].RunID {
			require.Empty(t, carried, "one sub-agent in the log")
			carried = id
			assert.Equal(t, "Check OTEL hex package versions", ev.Step().Name)
		}
	}
	require.NotEmpty(t, carried)
	for _, p := range []string{h.sub, h.compact} {
		child := readRun(t, root, outs[p].RunID)
		assert.Equal(t, parent, child.events[0].ParentRunID, "%s: a child run of the session's", p)
		link := links[outs[p].RunID]
		require.NotNil(t, link, "%s: linked in the session's run", p)
		assert.Equal(t, 0, link.Iteration)
	}
	sub := links[outs[h.sub].RunID]
	// Linked at the Task call whose result names the sub-agent
	// (toolUseResult.agentId: abi.RecordCalls.AgentIn), its path the
	// file's stem and the call's id, as every call-linked sub-agent's.
	assert.Equal(t, "agent.agent-aac57f5_toolu_01Hf8v1Za7y4af8VUwSR4CXU", sub.Path)
	assert.Equal(t, "Check OTEL hex package versions", sub.Step().Name, "named as the call's sub-agent")
	var sup string
	require.NoError(t, json.Unmarshal(sub.Step().Extra[lifecycle.SupersedesField], &sup))
	assert.Equal(t, carried, sup, "the file's run supersedes the one made of agent_progress")
	assert.Equal(t, "agent.agent-acompact-946d2b", links[outs[h.compact].RunID].Path)
	assert.Nil(t, links[outs[h.compact].RunID].Step().Extra[lifecycle.SupersedesField])

	// Every token once: the session's own, and each sub-agent file's
	// (the raw files' figures, computed apart from twasm: the websearch
	// agent's 3 messages and the compaction's one).
	f := figures(t, root)
	assert.Equal(t, []string{parent}, f.listed, "ls lists the session once")
	session := int64(16790991)
	subIn, compactIn := int64(2408+18814+29274), int64(3+121689+17842)
	require.NotNil(t, f.all.InputTokens)
	assert.Equal(t, session+subIn+compactIn, *f.all.InputTokens)
	assert.Equal(t, int64(49467+7+8), *f.all.OutputTokens)
	tot := treeTotals(t, root, parent)
	assert.Equal(t, session+subIn+compactIn, *tot.Usage.InputTokens, "the session's tree totals")

	// Nothing new: nothing archived again.
	rep = a.SyncStores(ctx, h.locs(t, true), time.Time{}, nil)
	assert.Equal(t, 3, rep.Counts[ActionUnchanged], "%+v", rep.Outcomes)
}

// fresh is the figures of the same home synced whole, once, into a new
// storage: what any order of syncs must end with.
func (h subAgentHome) fresh(t *testing.T) storageFigures {
	t.Helper()
	root := t.TempDir()
	a := newArchiver(t, root, nil)
	a.SyncStores(context.Background(), h.locs(t, true), time.Time{}, nil)
	require.NoError(t, a.Close())
	return figures(t, root)
}

// linkedTo checks that the run of a sub-agent file is a child run of
// parent, linked in it, and every run of the storage is valid.
func linkedTo(t *testing.T, root, parent, child string) {
	t.Helper()
	assert.Equal(t, parent, readRun(t, root, child).events[0].ParentRunID)
	n := 0
	for _, ev := range readRun(t, root, parent).events {
		if ev.Type == transcript.StepCallWorkflowStarted && ev.ChildRunID == child {
			n++
		}
	}
	assert.Equal(t, 1, n, "one link to %s in %s", child, parent)
	paths, err := filepath.Glob(filepath.Join(root, "transcripts", "*.jsonl"))
	require.NoError(t, err)
	for _, p := range paths {
		validRun(t, root, strings.TrimSuffix(filepath.Base(p), ".jsonl"))
	}
}

// TestSyncSubAgentOrders: whatever the order the syncs find a session
// and its sub-agents' files in, each sub-agent file ends a child run of
// the session's run, counted once, as one sync of the whole home does:
// a sub-agent found before its session (the session's last line not
// written yet) waits for it; a session found again after it grew keeps
// its sub-agents; a sub-agent file that grew grows its child run; a
// session --since leaves out is archived first for its new sub-agent;
// and the runs an older twasm made of the sub-agent files (sessions of
// their own, a sub-agent counted twice) are superseded by child runs.
func TestSyncSubAgentOrders(t *testing.T) {
	ctx := context.Background()
	h := newSubAgentHome(t)
	want := h.fresh(t)
	require.NotNil(t, want.all.InputTokens)
	sub := fixture(t, "testdata/captures/claude/spotter_subagent_transcript_v2.1.39_websearch.jsonl")
	lines := bytes.SplitAfter(h.sessionBytes, []byte("\n"))

	for _, tc := range []struct {
		name  string
		steps []func(t *testing.T, h subAgentHome) // file changes, each followed by a sync
		since time.Duration                        // the syncs' --since (0: none)
		check func(t *testing.T, h subAgentHome, syncs []Report)
	}{{
		name: "sub-agent before its session",
		steps: []func(t *testing.T, h subAgentHome){
			func(t *testing.T, h subAgentHome) { writeAged(t, h.session, lines[0][:len(lines[0])-1], 0) }, // no complete line yet
			func(t *testing.T, h subAgentHome) { writeAged(t, h.session, h.sessionBytes, time.Hour) },
		},
		check: func(t *testing.T, h subAgentHome, syncs []Report) {
			first := byPath(syncs[0])
			assert.Equal(t, ActionPending, first[h.session].Action)
			assert.Equal(t, ActionPending, first[h.sub].Action)
			assert.Contains(t, first[h.sub].Reason, "not archived yet")
			assert.Empty(t, first[h.sub].RunID)
		},
	}, {
		name: "session grows after its sub-agent",
		steps: []func(t *testing.T, h subAgentHome){
			func(t *testing.T, h subAgentHome) { writeAged(t, h.session, bytes.Join(lines[:120], nil), time.Hour) },
			func(t *testing.T, h subAgentHome) { writeAged(t, h.session, h.sessionBytes, time.Hour) },
		},
		check: func(t *testing.T, h subAgentHome, syncs []Report) {
			assert.Equal(t, ActionGrown, byPath(syncs[1])[h.session].Action)
			assert.Equal(t, ActionUnchanged, byPath(syncs[1])[h.sub].Action)
		},
	}, {
		name: "sub-agent file grows",
		steps: []func(t *testing.T, h subAgentHome){
			func(t *testing.T, h subAgentHome) {
				writeAged(t, h.sub, bytes.Join(bytes.SplitAfter(sub, []byte("\n"))[:5], nil), time.Hour) // in its first message
			},
			func(t *testing.T, h subAgentHome) { writeAged(t, h.sub, sub, time.Hour) },
		},
		check: func(t *testing.T, h subAgentHome, syncs []Report) {
			assert.Equal(t, ActionGrown, byPath(syncs[1])[h.sub].Action)
		},
	}, {
		name:  "session left out by --since",
		since: 24 * time.Hour,
		steps: []func(t *testing.T, h subAgentHome){
			func(t *testing.T, h subAgentHome) {
				writeAged(t, h.session, h.sessionBytes, 40*24*time.Hour)
				writeAged(t, h.sub, sub, time.Minute)
			},
		},
		check: func(t *testing.T, h subAgentHome, syncs []Report) {
			assert.Equal(t, ActionNew, byPath(syncs[0])[h.session].Action)
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newSubAgentHome(t)
			root := t.TempDir()
			var syncs []Report
			for _, step := range tc.steps {
				step(t, h)
				a := newArchiver(t, root, nil)
				var since time.Time
				if tc.since > 0 {
					since = time.Now().Add(-tc.since)
				}
				syncs = append(syncs, a.SyncStores(ctx, h.locs(t, true), since, nil))
				require.NoError(t, a.Close())
			}
			tc.check(t, h, syncs)
			got := figures(t, root)
			assert.Len(t, got.listed, 1, "ls lists the session once")
			assert.Equal(t, *want.all.InputTokens, *got.all.InputTokens)
			assert.Equal(t, *want.all.OutputTokens, *got.all.OutputTokens)
			a := newArchiver(t, root, nil)
			last := byPath(a.SyncStores(ctx, h.locs(t, true), time.Time{}, nil))
			require.NoError(t, a.Close())
			for _, p := range []string{h.sub, h.compact} {
				linkedTo(t, root, last[h.session].RunID, last[p].RunID)
			}
		})
	}

	// An older twasm archived each sub-agent file as a session of its
	// own: three sessions listed, the Task's sub-agent counted twice
	// (its file's run and the run made of the log's agent_progress).
	t.Run("archived by an older twasm", func(t *testing.T) {
		h := newSubAgentHome(t)
		root := t.TempDir()
		a := newArchiver(t, root, nil)
		old := byPath(a.SyncStores(ctx, h.locs(t, false), time.Time{}, nil))
		require.NoError(t, a.Close())
		before := figures(t, root)
		assert.Len(t, before.listed, 3)
		assert.Greater(t, *before.all.InputTokens, *want.all.InputTokens, "the sub-agent counted twice")

		a = newArchiver(t, root, nil)
		rep := byPath(a.SyncStores(ctx, h.locs(t, true), time.Time{}, nil))
		require.NoError(t, a.Close())
		for _, p := range []string{h.sub, h.compact} {
			assert.Equal(t, ActionNew, rep[p].Action, rep[p].Reason)
			assert.Contains(t, rep[p].Reason, old[p].RunID, "says which run it supersedes")
			linkedTo(t, root, old[h.session].RunID, rep[p].RunID)
			evs := readRun(t, root, old[p].RunID).events
			end := evs[len(evs)-1]
			require.Equal(t, transcript.RunCompleted, end.Type)
			assert.Contains(t, string(end.Step().Extra[lifecycle.SupersededByField]), rep[p].RunID)
		}
		after := figures(t, root)
		assert.Len(t, after.listed, 3, "ls lists the old runs, ended, superseded by the child runs")
		l, _, err := OpenLedger(root, true)
		require.NoError(t, err)
		for _, p := range []string{h.sub, h.compact} {
			e := l.byRun(old[p].RunID)
			require.NotNil(t, e)
			assert.Equal(t, rep[p].RunID, e.SupersededBy, "%s: never matched to its file again, whatever the order of the run ids", p)
		}
		require.NoError(t, l.Close())

		// The sub-agent's file grows: its child run grows, never the
		// old run it superseded.
		sb, err := os.ReadFile(h.sub)
		require.NoError(t, err)
		lines := bytes.SplitAfter(bytes.TrimSpace(sb), []byte("\n"))
		writeAged(t, h.sub, append(append(sb, lines[len(lines)-1]...), '\n'), time.Hour)
		a = newArchiver(t, root, nil)
		grown := byPath(a.SyncStores(ctx, h.locs(t, true), time.Time{}, nil))[h.sub]
		require.NoError(t, a.Close())
		assert.Equal(t, ActionGrown, grown.Action, grown.Reason)
		assert.Equal(t, rep[h.sub].RunID, grown.RunID)
		assert.Equal(t, *want.all.InputTokens, *after.all.InputTokens, "every token once")
		assert.Equal(t, *want.all.OutputTokens, *after.all.OutputTokens)

		// Once: a later sync, and one with the ledger rebuilt from the
		// transcripts, archive nothing again.
		for _, rebuild := range []bool{false, true} {
			if rebuild {
				require.NoError(t, os.Remove(LedgerFile(root)))
			}
			a = newArchiver(t, root, nil)
			assert.Empty(t, a.Ledger().Interrupted(), "an open link to a sub-agent's run is not an interrupted part")
			again := a.SyncStores(ctx, h.locs(t, true), time.Time{}, nil)
			require.NoError(t, a.Close())
			assert.Equal(t, 3, again.Counts[ActionUnchanged], "%+v", again.Outcomes)
		}
	})
}

// TestSyncSubAgentSidecar: from Claude Code 2.1.68 the session's log no
// longer carries its sub-agents' conversations (no agent_progress
// records) and a sidecar beside each sub-agent's file names the Task call
// that started it (agent-<id>.meta.json, toolUseId): the file's run is
// linked at that call, in the part holding it, named by its description,
// and superseding nothing. The session is the real 2.1.39 one without
// its agent_progress records, as a later Claude Code writes it.
func TestSyncSubAgentSidecar(t *testing.T) {
	ctx := context.Background()
	h := newSubAgentHome(t)
	var kept [][]byte
	for _, l := range bytes.SplitAfter(h.sessionBytes, []byte("\n")) {
		if !bytes.Contains(l, []byte(`"type":"agent_progress"`)) {
			kept = append(kept, l)
		}
	}
	writeAged(t, h.session, bytes.Join(kept, nil), time.Hour)
	writeAged(t, strings.TrimSuffix(h.sub, ".jsonl")+".meta.json",
		[]byte(`{"agentType":"general-purpose","description":"Check OTEL hex package versions","toolUseId":"toolu_01Hf8v1Za7y4af8VUwSR4CXU"}`), time.Hour)
	root := t.TempDir()
	a := newArchiver(t, root, nil)
	outs := byPath(a.SyncStores(ctx, h.locs(t, true), time.Time{}, nil))
	require.NoError(t, a.Close())
	parent := outs[h.session].RunID
	var links []*transcript.Event
	for _, ev := range readRun(t, root, parent).events {
		if ev.Type == transcript.StepCallWorkflowStarted {
			links = append(links, ev)
		}
	}
	require.Len(t, links, 2, "the two sub-agent files, nothing carried in the log")
	var sub *transcript.Event
	for _, l := range links {
		if l.ChildRunID == outs[h.sub].RunID {
			sub = l
		}
	}
	require.NotNil(t, sub)
	assert.Equal(t, "agent.agent-aac57f5_toolu_01Hf8v1Za7y4af8VUwSR4CXU", sub.Path, "linked at the call the sidecar names")
	assert.Equal(t, "Check OTEL hex package versions", sub.Step().Name)
	assert.Nil(t, sub.Step().Extra[lifecycle.SupersedesField])
	linkedTo(t, root, parent, outs[h.sub].RunID)
	f := figures(t, root)
	assert.Len(t, f.listed, 1)
	assert.Equal(t, int64(16790991+2408+18814+29274+3+121689+17842), *f.all.InputTokens, "the session's, the sub-agent's and the compaction's tokens, each once")
}

// TestSyncSubAgentSiblings: Kimi Code keeps each agent's journal in a
// directory of its own (<session>/agents/main/wire.jsonl, a sub-agent's
// in agents/agent-N/), so the store's sub-agent glob climbs
// ("../agent-*/wire.jsonl"): the sub-agent's file is a child run of the
// main agent's run, a session without sub-agents beside it stays alone,
// and ls lists the two sessions. Before, the host refused a glob with
// "..", and each agent's journal was a session of its own.
func TestSyncSubAgentSiblings(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	sessions := filepath.Join(home, ".kimi-code", "sessions", "wd_project_ac3bb318f98e")
	main := filepath.Join(sessions, "session_1bcbe023", "agents", "main", "wire.jsonl")
	sub := filepath.Join(sessions, "session_1bcbe023", "agents", "agent-0", "wire.jsonl")
	other := filepath.Join(sessions, "session_77aa0c11", "agents", "main", "wire.jsonl")
	writeAged(t, main, fixture(t, "testdata/captures/kimi/as_code_tools_subagent_main.jsonl"), time.Hour)
	writeAged(t, sub, fixture(t, "testdata/captures/kimi/as_code_subagent_agent0.jsonl"), time.Hour)
	writeAged(t, filepath.Join(sessions, "session_1bcbe023", "agents", "main", "plans", "plan.md"), []byte("# a plan\n"), time.Hour)
	writeAged(t, other, fixture(t, "testdata/captures/kimi/kimicode_sample_main.jsonl"), time.Hour)

	env := func(k string) string { return map[string]string{"HOME": home}[k] }
	var locs []Location
	for _, l := range Discover(env, "linux", bundledDeclared(), nil) {
		if l.Name == "Kimi Code sessions" {
			locs = append(locs, l)
		}
	}
	require.Len(t, locs, 1)
	require.Empty(t, locs[0].Unusable)
	root := t.TempDir()
	a := newArchiver(t, root, nil)
	outs := byPath(a.SyncStores(ctx, locs, time.Time{}, nil))
	require.Len(t, outs, 3)
	for _, p := range []string{main, sub, other} {
		require.Equal(t, ActionNew, outs[p].Action, "%s: %s", p, outs[p].Reason)
	}
	linkedTo(t, root, outs[main].RunID, outs[sub].RunID)
	assert.Empty(t, readRun(t, root, outs[other].RunID).events[0].ParentRunID)
	f := figures(t, root)
	assert.ElementsMatch(t, []string{outs[main].RunID, outs[other].RunID}, f.listed, "ls lists the two sessions")
	// Every token once: the main journal's usage records, the
	// sub-agent's and the other session's (the raw files' own figures).
	require.NotNil(t, f.all.OutputTokens)
	assert.Equal(t, int64(5515+330+5), *f.all.OutputTokens)
	assert.Equal(t, int64(691678+41321+10), *f.all.InputTokens)
	require.NoError(t, a.Close())
}

// Scan counts a store's sub-agent files apart from its sessions, each
// with its session as Parent (doctor said a Claude session with two
// sub-agent files was 3 sessions); a store that declares no sub-agent
// files counts every file a session, as before.
func TestScanCountsSubAgentsApart(t *testing.T) {
	h := newSubAgentHome(t)
	for _, c := range []struct {
		declared           bool
		sessions, subFiles int
	}{{true, 1, 2}, {false, 3, 0}} {
		stores, sessions := Scan(h.locs(t, c.declared), time.Time{})
		require.Len(t, stores, 1)
		assert.Equal(t, [2]int{c.sessions, c.subFiles}, [2]int{stores[0].Sessions, stores[0].SubAgents}, "declared %v", c.declared)
		parents := map[string]string{}
		for _, s := range sessions {
			parents[s.Path] = s.Parent
		}
		want := map[string]string{h.session: "", h.sub: h.session, h.compact: h.session}
		if !c.declared {
			want = map[string]string{h.session: "", h.sub: "", h.compact: ""}
		}
		assert.Equal(t, want, parents, "declared %v", c.declared)
	}
}

// TestSyncSubAgentLinkedAtCall: a sub-agent's journal that no sidecar
// names the call of is linked at the tool call whose result names it
// (abi.Store.SubAgentResult; Kimi Code: the Agent call's result starts
// "agent_id: agent-0" for agents/agent-0/wire.jsonl): in the part that
// holds the call, named by the call's description, not at the
// session's latest part. The real main journal is archived in two parts
// (up to just after the Agent call's result, then the rest) before the
// sub-agent's journal appears.
func TestSyncSubAgentLinkedAtCall(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	dir := filepath.Join(home, ".kimi-code", "sessions", "wd_project_ac3bb318f98e", "session_1bcbe023", "agents")
	main, sub := filepath.Join(dir, "main", "wire.jsonl"), filepath.Join(dir, "agent-0", "wire.jsonl")
	journal := fixture(t, "testdata/captures/kimi/as_code_tools_subagent_main.jsonl")
	lines := bytes.SplitAfter(journal, []byte("\n"))
	cut := 0
	for i, l := range lines {
		if bytes.Contains(l, []byte(`"type":"tool.result"`)) && bytes.Contains(l, []byte(`"toolCallId":"Agent_3"`)) {
			cut = i + 1
		}
	}
	require.Positive(t, cut, "the capture holds the Agent call's result")
	var locs []Location
	for _, l := range Discover(func(k string) string { return map[string]string{"HOME": home}[k] }, "linux", bundledDeclared(), nil) {
		if l.Name == "Kimi Code sessions" {
			locs = append(locs, l)
		}
	}
	require.Len(t, locs, 1)
	root := t.TempDir()
	a := newArchiver(t, root, nil)
	for _, step := range []struct {
		content []byte
		want    string
	}{{bytes.Join(lines[:cut], nil), ActionNew}, {journal, ActionGrown}} {
		writeAged(t, main, step.content, time.Hour)
		outs := byPath(a.SyncStores(ctx, locs, time.Time{}, nil))
		require.Equal(t, step.want, outs[main].Action, outs[main].Reason)
	}
	writeAged(t, sub, fixture(t, "testdata/captures/kimi/as_code_subagent_agent0.jsonl"), time.Hour)
	outs := byPath(a.SyncStores(ctx, locs, time.Time{}, nil))
	require.Equal(t, ActionNew, outs[sub].Action, outs[sub].Reason)
	parent := outs[main].RunID
	linkedTo(t, root, parent, outs[sub].RunID)
	var link *transcript.Event
	for _, ev := range readRun(t, root, parent).events {
		if ev.Type == transcript.StepCallWorkflowStarted && ev.ChildRunID == outs[sub].RunID {
			link = ev
		}
	}
	require.NotNil(t, link)
	assert.Equal(t, []any{"agent.wire_Agent_3", 0, "Count Swift files in repo"}, []any{link.Path, link.Iteration, link.Step().Name},
		"linked at the Agent call, in the part that holds it, named by its description")
	require.NoError(t, a.Close())
}

// TestSyncSubAgentReusedCallID: a session whose model server reused a
// call id (ids unique per response, not per session) started two
// sub-agents with two calls of one id, each sub-agent's file naming that
// id; each file's run is linked at its own call (the part holding it,
// named by its description), not both at the id's last call. Claude Code
// names the call in the file's sidecar (toolUseId): the call is the
// latest of the id made before the sub-agent's first record; Kimi Code's
// Agent result names the sub-agent's directory: the call is the one
// that result answers (transcript.Pairer); a Factory Droid sub-session
// names the call in its first line (callingToolUseId), picked as Claude's
// sidecar's is. The session is archived in two parts, the first holding
// the first call and its result.
func TestSyncSubAgentReusedCallID(t *testing.T) {
	ctx := context.Background()
	type file struct {
		path string
		body []byte
	}
	type want struct {
		file      int // index in subs
		iteration int
		title     string
	}
	claudeRec := func(uuid string, side bool, sec int, typ, content string) string {
		m := `{"role":"user","content":` + content + `}`
		if typ == "assistant" {
			m = `{"id":"msg_` + uuid + `","type":"message","role":"assistant","model":"qwen3-coder-30b","content":` + content + `,"usage":{"input_tokens":10,"output_tokens":5}}`
		}
		return fmt.Sprintf(`{"type":%q,"uuid":%q,"parentUuid":null,"isSidechain":%t,"sessionId":"c0ffee00-0000-4000-8000-000000000028","cwd":"/home/me/proj","version":"2.1.70","timestamp":"2026-01-06T11:00:%02d.000Z","message":%s}`+"\n", typ, uuid, side, sec, m)
	}
	task := func(desc string) string {
		return `[{"type":"tool_use","id":"call_1","name":"Task","input":{"description":"` + desc + `","prompt":"` + desc + `.","subagent_type":"Explore"}}]`
	}
	taskResult := `[{"type":"tool_result","tool_use_id":"call_1","content":"done"}]`
	claudeDir := func(home string) string {
		return filepath.Join(home, ".claude", "projects", "-home-me-proj")
	}
	sid := "c0ffee00-0000-4000-8000-000000000028"
	kimiDir := func(home string) string {
		return filepath.Join(home, ".kimi-code", "sessions", "wd_project_ac3bb318f98e", "session_1bcbe023", "agents")
	}
	droidDir := func(home string) string { return filepath.Join(home, ".factory", "sessions", "-home-me-proj") }
	const droidP = "3f1c2b7e-6a4d-4f0e-9b8a-000000000028"
	droidRec := func(line string) string { return line + "\n" }
	droidMsg := func(id string, sec int, role, content string) string {
		return fmt.Sprintf(`{"type":"message","id":%q,"timestamp":"2026-01-01T10:00:%02d.000Z","message":{"role":%q,"content":%s}}`+"\n", id, sec, role, content)
	}
	droidTask := func(desc string) string {
		return `[{"type":"tool_use","id":"call_1","name":"Task","input":{"subagent_type":"worker","description":"` + desc + `","prompt":"` + desc + `."}}]`
	}
	tests := []struct {
		name  string
		store string // the Location's name
		// parts are the session file's content at each sync, the last
		// its whole; subs the sub-agents' files, written after.
		session func(home string) (path string, parts [][]byte)
		subs    func(home string) []file
		want    []want
	}{
		{"claude sidecar", "Claude Code projects", func(home string) (string, [][]byte) {
			first := claudeRec("u1", false, 0, "user", `"Survey."`) +
				claudeRec("a1", false, 2, "assistant", task("List files")) +
				claudeRec("u2", false, 8, "user", taskResult)
			whole := first + claudeRec("a2", false, 9, "assistant", task("Read main")) +
				claudeRec("u3", false, 15, "user", taskResult) +
				claudeRec("a3", false, 16, "assistant", `[{"type":"text","text":"Done."}]`)
			return filepath.Join(claudeDir(home), sid+".jsonl"), [][]byte{[]byte(first), []byte(whole)}
		}, func(home string) []file {
			dir := filepath.Join(claudeDir(home), sid, "subagents")
			side := func(sec int, prompt string) []byte {
				return []byte(claudeRec("s"+fmt.Sprint(sec), true, sec, "user", `"`+prompt+`"`) +
					claudeRec("t"+fmt.Sprint(sec), true, sec+1, "assistant", `[{"type":"text","text":"ok"}]`))
			}
			meta := func(desc string) []byte {
				return []byte(`{"agentType":"Explore","description":"` + desc + `","toolUseId":"call_1"}`)
			}
			// Named so that path order is not the calls' order.
			return []file{
				{filepath.Join(dir, "agent-b1.jsonl"), side(3, "List files.")},
				{filepath.Join(dir, "agent-b1.meta.json"), meta("List files")},
				{filepath.Join(dir, "agent-a2.jsonl"), side(10, "Read main.")},
				{filepath.Join(dir, "agent-a2.meta.json"), meta("Read main")},
			}
		}, []want{{0, 0, "List files"}, {2, 1, "Read main"}}},
		{"droid sub-session", "Factory Droid sessions", func(home string) (string, [][]byte) {
			first := droidRec(`{"type":"session_start","id":"`+droidP+`","version":2,"cwd":"/home/me/proj"}`) +
				droidMsg("u1", 0, "user", `[{"type":"text","text":"Check the fixtures."}]`) +
				droidMsg("a1", 2, "assistant", droidTask("inspect the fixture")) +
				droidMsg("r1", 8, "user", `[{"type":"tool_result","tool_use_id":"call_1","content":"a trailing tab"}]`)
			whole := first + droidMsg("a2", 9, "assistant", droidTask("fix the fixture")) +
				droidMsg("r2", 15, "user", `[{"type":"tool_result","tool_use_id":"call_1","content":"fixed"}]`) +
				droidMsg("a3", 16, "assistant", `[{"type":"text","text":"Done."}]`)
			return filepath.Join(droidDir(home), droidP+".jsonl"), [][]byte{[]byte(first), []byte(whole)}
		}, func(home string) []file {
			sub := func(id string, sec int) []byte {
				return []byte(droidRec(`{"type":"session_start","id":"`+id+`","callingSessionId":"`+droidP+`","callingToolUseId":"call_1","version":2,"cwd":"/home/me/proj"}`) +
					droidMsg("s1", sec, "user", `[{"type":"text","text":"Do the task."}]`) +
					droidMsg("s2", sec+1, "assistant", `[{"type":"text","text":"ok"}]`))
			}
			// Named so that path order is not the calls' order.
			return []file{
				{filepath.Join(droidDir(home), "f1b7c2d0-0000-4000-8000-000000000028.jsonl"), sub("f1b7c2d0-0000-4000-8000-000000000028", 3)},
				{filepath.Join(droidDir(home), "0e5a9b11-0000-4000-8000-000000000028.jsonl"), sub("0e5a9b11-0000-4000-8000-000000000028", 10)},
			}
		}, []want{{0, 0, "inspect the fixture"}, {1, 1, "fix the fixture"}}},
		{"kimi result", "Kimi Code sessions", func(home string) (string, [][]byte) {
			journal := fixture(t, "testdata/captures/kimi/as_code_tools_subagent_main.jsonl")
			var call, res []byte
			for _, l := range bytes.SplitAfter(journal, []byte("\n")) {
				if bytes.Contains(l, []byte(`"toolCallId":"Agent_3"`)) {
					if bytes.Contains(l, []byte(`"type":"tool.call"`)) {
						call = l
					} else {
						res = l
					}
				}
			}
			require.NotNil(t, call, "the capture holds the Agent call")
			require.NotNil(t, res, "the capture holds the Agent call's result")
			// A later step whose model server names its Agent call
			// Agent_3 again; its sub-agent is agent-1.
			const step = "5e0c2a11-0000-4000-8000-000000000028"
			call = bytes.ReplaceAll(call, []byte("8269bbc6-3029-4934-9be0-53831cf7285c"), []byte(step))
			call = bytes.ReplaceAll(call, []byte("Count Swift files in repo"), []byte("Count Go files in repo"))
			res = bytes.Replace(res, []byte("agent_id: agent-0"), []byte("agent_id: agent-1"), 1)
			later := slices.Concat(journal,
				[]byte(`{"type":"context.append_loop_event","event":{"type":"step.begin","uuid":"`+step+`","turnId":"6","step":1},"time":1785615400000}`+"\n"),
				call, res,
				[]byte(`{"type":"context.append_loop_event","event":{"type":"step.end","uuid":"`+step+`","turnId":"6","step":1,"finishReason":"tool_use"},"time":1785615401000}`+"\n"))
			return filepath.Join(kimiDir(home), "main", "wire.jsonl"), [][]byte{journal, later}
		}, func(home string) []file {
			sub := fixture(t, "testdata/captures/kimi/as_code_subagent_agent0.jsonl")
			return []file{
				{filepath.Join(kimiDir(home), "agent-1", "wire.jsonl"), bytes.ReplaceAll(sub, []byte("Swift"), []byte("Go"))},
				{filepath.Join(kimiDir(home), "agent-0", "wire.jsonl"), sub},
			}
		}, []want{{1, 0, "Count Swift files in repo"}, {0, 1, "Count Go files in repo"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			var locs []Location
			for _, l := range Discover(func(k string) string { return map[string]string{"HOME": home}[k] }, "linux", bundledDeclared(), nil) {
				if l.Name == tt.store {
					locs = append(locs, l)
				}
			}
			require.Len(t, locs, 1)
			root := t.TempDir()
			a := newArchiver(t, root, nil)
			session, parts := tt.session(home)
			for i, p := range parts {
				writeAged(t, session, p, time.Hour)
				outs := byPath(a.SyncStores(ctx, locs, time.Time{}, nil))
				require.Equal(t, []string{ActionNew, ActionGrown}[i], outs[session].Action, outs[session].Reason)
			}
			subs := tt.subs(home)
			for _, f := range subs {
				writeAged(t, f.path, f.body, time.Hour)
			}
			outs := byPath(a.SyncStores(ctx, locs, time.Time{}, nil))
			require.NoError(t, a.Close())
			parent := outs[session].RunID
			for _, w := range tt.want {
				sub := outs[subs[w.file].path]
				require.Equal(t, ActionNew, sub.Action, sub.Reason)
				linkedTo(t, root, parent, sub.RunID)
				var link *transcript.Event
				for _, ev := range readRun(t, root, parent).events {
					if ev.Type == transcript.StepCallWorkflowStarted && ev.ChildRunID == sub.RunID {
						link = ev
					}
				}
				require.NotNil(t, link)
				assert.Equal(t, []any{w.iteration, w.title}, []any{link.Iteration, link.Step().Name}, "%s: linked at its own call", subs[w.file].path)
			}
		})
	}
}

// TestLinkedAt: a carried sub-agent's link path names its call by id,
// with the number capture adds when a call that reused the id took the
// name already.
func TestLinkedAt(t *testing.T) {
	for _, tc := range []struct {
		path, callID string
		want         bool
	}{
		{"agent.Survey_call_1", "call_1", true},
		{"agent.Survey_call_1_2", "call_1", true},
		{"agent.Survey_call_1_12", "call_1", true},
		{"agent.Survey_call_12", "call_1", false},
		{"agent.Survey_call_1_x", "call_1", false},
		{"agent.Survey_call_1_", "call_1", false},
		{"agent.Survey_toolu_01", "call_1", false},
	} {
		assert.Equal(t, tc.want, linkedAt(tc.path, tc.callID), "%s %s", tc.path, tc.callID)
	}
}

// TestRelinkLedgerLost: a sync that archives again, as child runs of
// their session's run, the sub-agent files an older twasm archived as
// sessions of their own (legacyOf: a Claude Code session before 2.1.68,
// whose log carried the Task's sub-agent too, so that the new run's link
// names the run made of the log's copy, not the older run) is killed
// after the new runs' parts were written and before it ended the older
// runs, and the ledger is lost (or unreadable): the next sync rebuilds
// it from the transcripts, where each new run's run.started "source"
// names the run it supersedes (SourceRef.Supersedes), and ends that run
// once, superseded by the new one. Every token is counted once, nothing
// is archived again, and later syncs (one with the ledger rebuilt once
// more) end nothing twice. Before, both runs stayed live: the
// sub-agents' tokens counted twice.
func TestRelinkLedgerLost(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		lose func(t *testing.T, ledger string)
	}{
		{"ledger lost", func(t *testing.T, ledger string) { require.NoError(t, os.Remove(ledger)) }},
		{"ledger unreadable", func(t *testing.T, ledger string) {
			require.NoError(t, os.WriteFile(ledger, []byte("{\"run_id\":\n"), 0o600))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newSubAgentHome(t)
			want := h.fresh(t)
			root := t.TempDir()
			sync := func(withSubAgents bool) map[string]Outcome {
				a := newArchiver(t, root, nil)
				rep := byPath(a.SyncStores(ctx, h.locs(t, withSubAgents), time.Time{}, nil))
				require.NoError(t, a.Close())
				return rep
			}
			old := sync(false) // an older twasm: each sub-agent file a session of its own
			tp := func(id string) string { return filepath.Join(root, "transcripts", id+".jsonl") }
			before := map[string][]byte{}
			for _, p := range []string{h.sub, h.compact} {
				b, err := os.ReadFile(tp(old[p].RunID))
				require.NoError(t, err)
				before[p] = b
			}
			relinked := sync(true)
			for _, p := range []string{h.sub, h.compact} {
				require.Equal(t, ActionNew, relinked[p].Action, relinked[p].Reason)
				// The kill came before the older run's end was written:
				// its transcript as it was; the ledger is lost with it.
				require.NoError(t, os.WriteFile(tp(old[p].RunID), before[p], 0o600))
			}
			tc.lose(t, LedgerFile(root))

			rep := sync(true)
			for _, p := range []string{h.sub, h.compact} {
				assert.NotEqual(t, ActionNew, rep[p].Action, "%s archived again: %s", p, rep[p].Reason)
				endedOnceBy(t, root, old[p].RunID, relinked[p].RunID)
				linkedTo(t, root, old[h.session].RunID, relinked[p].RunID)
			}
			got := figures(t, root)
			assert.Len(t, got.listed, 3, "ls lists the older runs, ended, superseded by the child runs")
			assert.Equal(t, *want.all.InputTokens, *got.all.InputTokens, "every token once")
			assert.Equal(t, *want.all.OutputTokens, *got.all.OutputTokens)

			// Later syncs, one with the ledger rebuilt again, archive
			// nothing and end nothing twice.
			for _, rebuild := range []bool{false, true} {
				if rebuild {
					require.NoError(t, os.Remove(LedgerFile(root)))
				}
				a := newArchiver(t, root, nil)
				assert.Empty(t, a.Ledger().Superseding(), "rebuild %v: a run still to end", rebuild)
				again := a.SyncStores(ctx, h.locs(t, true), time.Time{}, nil)
				require.NoError(t, a.Close())
				assert.Equal(t, 3, again.Counts[ActionUnchanged], "rebuild %v: %+v", rebuild, again.Outcomes)
				for _, p := range []string{h.sub, h.compact} {
					endedOnceBy(t, root, old[p].RunID, relinked[p].RunID)
				}
			}
		})
	}
}

// endedOnceBy checks that run id's transcript ends with its one
// run.completed, which says run by supersedes it.
func endedOnceBy(t *testing.T, root, id, by string) {
	t.Helper()
	evs := readRun(t, root, id).events
	n := 0
	for _, ev := range evs {
		if ev.Type == transcript.RunCompleted {
			n++
		}
	}
	last := evs[len(evs)-1]
	if !assert.Equal(t, 1, n, "run %s ended %d times", id, n) || last.Type != transcript.RunCompleted {
		return
	}
	assert.True(t, bytes.Contains(last.Step().Extra[lifecycle.SupersededByField], []byte(by)), "run %s ends superseded by %s: %s", id, by, last.Step().Extra[lifecycle.SupersededByField])
	validRun(t, root, id)
}

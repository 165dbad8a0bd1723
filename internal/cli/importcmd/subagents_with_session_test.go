package importcmd_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/transcript"
)

// subAgentSet is a session's file and its sub-agents' files, where the
// agent keeps them in a home directory, and the session's tokens with
// its sub-agents', counted from the raw files apart from twasm, in how
// many sessions usage reports (none for files that state no usage).
type subAgentSet struct {
	files []capturedFile // the session's first
	// sidecars are files of the sessions put beside them, not given to
	// import (Droid's settings documents).
	sidecars        []capturedFile
	wantIn, wantOut int64
	sessions        int
	// wantLinks, when set, is what the session's links must be (sorted),
	// sync's and import's alike.
	wantLinks string
}

// capturedFile is a file of a set: a capture of the project's, or, where
// the project holds none, data written in the agent's format, or the
// session's lines of a golden input (plugin/case.jsonl, as the host
// hands a tree store's session to the plugin: its file lines and the
// documents after the first file left out).
type capturedFile struct {
	rel, capture string
	data         string
	golden       string
	// nth is which file of the golden input's (0: the first).
	nth int
}

var (
	// Claude Code: spotter's session log and the files its sub-agents'
	// conversations are in (a Task's, whose conversation the log also
	// carries in agent_progress records, and a compaction's). The
	// figures are those TestSyncClaudeSubAgents checks sync's by: the
	// session capture's expectations, and the sub-agent files' messages
	// by message id (3 and 1 messages).
	claudeSet = func() subAgentSet {
		const dir = ".claude/projects/-home-USER-projects-spotter/"
		const subs = dir + "ae4a77f8-aedd-4bc1-888f-c94edc91af04/subagents/"
		return subAgentSet{
			files: []capturedFile{
				{rel: dir + "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl", capture: "claude/spotter_session_log_v2.1.39_interleaved_message.jsonl"},
				{rel: subs + "agent-aac57f5.jsonl", capture: "claude/spotter_subagent_transcript_v2.1.39_websearch.jsonl"},
				{rel: subs + "agent-acompact-946d2b.jsonl", capture: "claude/spotter_subagent_compaction_v2.1.39.jsonl"},
			},
			wantIn:  16790991 + (2408 + 18814 + 29274) + (3 + 121689 + 17842),
			wantOut: 49467 + 7 + 8, sessions: 1,
		}
	}()
	// Kimi Code: a real session's main agent's journal and its
	// sub-agent's (agents/agent-0/wire.jsonl beside it), the figures the
	// two captures' expectations.
	kimiSet = func() subAgentSet {
		const agents = ".kimi-code/sessions/wd_proj_3f2a1b0c9d8e/session_5c1e0d1a/agents/"
		return subAgentSet{
			files: []capturedFile{
				{rel: agents + "main/wire.jsonl", capture: "kimi/as_code_tools_subagent_main.jsonl"},
				{rel: agents + "agent-0/wire.jsonl", capture: "kimi/as_code_subagent_agent0.jsonl"},
			},
			wantIn:  691678 + 41321,
			wantOut: 5515 + 330, sessions: 1,
		}
	}()
	// Cursor's agent transcripts: no licensed capture holds a
	// conversation with a sub-agent, so these lines are written in the
	// transcripts' format (the cursor plugin's doc). They state no usage.
	cursorSet = func() subAgentSet {
		const conv = ".cursor/projects/home-me-shop/agent-transcripts/0d5c1a2b-3e4f-4a5b-8c6d-7e8f9a0b1c2d/"
		return subAgentSet{files: []capturedFile{
			{rel: conv + "0d5c1a2b-3e4f-4a5b-8c6d-7e8f9a0b1c2d.jsonl", data: `{"role":"user","message":{"content":[{"type":"text","text":"<user_query>\nwhy is checkout slow\n</user_query>"}]}}
{"role":"assistant","message":{"content":[{"type":"tool_use","name":"Subagent","input":{"description":"Profile the checkout handler","prompt":"Find the slowest call in checkout."}}]}}
{"role":"assistant","message":{"content":[{"type":"text","text":"The tax lookup runs once per item."}]}}
{"type":"turn_ended","status":"success"}
`},
			{rel: conv + "subagents/5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9.jsonl", data: `{"role":"user","message":{"content":[{"type":"text","text":"Find the slowest call in checkout."}]}}
{"role":"assistant","message":{"content":[{"type":"text","text":"taxFor() is called in the item loop."}]}}
`},
		}}
	}()
	// Factory Droid: a session whose Task call (toolu_03) started a
	// sub-session, a session file beside it whose session_start names
	// the session and the call (callingSessionId, callingToolUseId).
	// No licensed capture holds a sub-session: the droid goldens'
	// lines, written in Droid's format (testdata/golden/droid/README.md).
	// Without their settings documents (which an import reads, as sync
	// does: TestImportDroidSettings): they state no usage.
	droidSet = func() subAgentSet {
		const dir = ".factory/sessions/-home-me-proj/"
		return subAgentSet{files: []capturedFile{
			{rel: dir + "3f1c2b7e-6a4d-4f0e-9b8a-1c2d3e4f5a6b.jsonl", golden: "droid/session_settings_tools.jsonl"},
			{rel: dir + "9d2e4c61-7b8a-4f35-a0c2-5e6f7a8b9c0d.jsonl", golden: "droid/session_task_subsession.jsonl"},
		}}
	}()
	// Codex CLI: a parent rollout whose spawn_agent call started a
	// sub-agent, whose own rollout's session_meta names the parent's
	// thread: the codex goldens' lines, written from Codex's source
	// (testdata/golden/codex/README.md). The child was started after
	// midnight: its rollout is in the next day's directory
	// (codexSameDaySet: in the parent's). The raw files' tokens: 6400
	// and 1100 input, 260 and 120 output.
	// Factory Droid with the settings documents (<id>.settings.json)
	// beside the session's and the sub-session's files, which sync
	// reads for their usage (tokenUsage): the session's 4210 uncached
	// input, 18034 cache write, 52410 cache read, 612 output and 128
	// thinking; the sub-session's 900, 3000, 4000, 120 and 0.
	droidSettingsSet = func() subAgentSet {
		const dir = ".factory/sessions/-home-me-proj/"
		set := droidSet
		set.sidecars = []capturedFile{
			{rel: dir + "3f1c2b7e-6a4d-4f0e-9b8a-1c2d3e4f5a6b.settings.json", golden: "droid/session_settings_tools.jsonl", nth: 1},
			{rel: dir + "9d2e4c61-7b8a-4f35-a0c2-5e6f7a8b9c0d.settings.json", golden: "droid/session_task_subsession.jsonl", nth: 1},
		}
		set.wantIn = (4210 + 18034 + 52410) + (900 + 3000 + 4000)
		set.wantOut = (612 + 128) + 120
		set.sessions = 1
		return set
	}()
	// The session's file copied without its settings (imported as a
	// file of its own), the sub-session's with its settings: the
	// sub-session's 900, 3000, 4000 input and 120 output.
	droidSubSettingsSet = func() subAgentSet {
		set := droidSettingsSet
		set.sidecars = set.sidecars[1:]
		set.wantIn, set.wantOut = 900+3000+4000, 120
		return set
	}()
	codexSet        = codexSetIn("2026/11/21")
	codexSameDaySet = codexSetIn("2026/11/20")
	// Gemini CLI: a session's chat whose invoke_agent call started a
	// sub-agent, whose chat is in chats/<the session's full id>/, the
	// call's record naming it by its agentId: the gemini goldens' lines,
	// written from the CLI's source (testdata/golden/gemini/README.md).
	// The raw files' tokens: 6400 and 3900 input, 150 and 215 output
	// (thoughts counted as output).
	geminiSet = func() subAgentSet {
		const chats = ".gemini/tmp/4f3e2d1c0b0a09080706050403020100ffeeddccbbaa99887766554433221100/chats/"
		return subAgentSet{files: []capturedFile{
			{rel: chats + "session-2026-11-20T10-00-5a1d2c3e.jsonl", golden: "gemini/session_jsonl_subagent_parent.jsonl"},
			{rel: chats + "5a1d2c3e-0f4b-4c6d-8e9f-0a1b2c3d4e5f/9c8b7a6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d.jsonl", golden: "gemini/session_jsonl_subagent_child.jsonl"},
		}, wantIn: 6400 + 3900, wantOut: 150 + 215, sessions: 1}
	}()
	// The Kimi CLI before 0.59: a session's context file and its Task
	// call's sub-agent's (<uuid>_sub_1.jsonl beside it, starting with the
	// call's prompt: the kimi goldens' lines). They state no usage.
	kimiContextSet = func() subAgentSet {
		const dir = ".kimi/sessions/0d8f0b6c1e2a3b4c5d6e7f8091a2b3c4/7b1e4c2a-5d3f-4e6a-8b9c-0a1b2c3d4e5f"
		return subAgentSet{files: []capturedFile{
			{rel: dir + ".jsonl", golden: "kimi/context_v058_subagent_parent.jsonl"},
			{rel: dir + "_sub_1.jsonl", golden: "kimi/context_v058_subagent_child.jsonl"},
		},
			// At the Task call stating the sub-agent's prompt, in the
			// first part, named by the call's description.
			wantLinks: link{path: "agent." + "7b1e4c2a-5d3f-4e6a-8b9c-0a1b2c3d4e5f_sub_1_Task_0", title: "Find config parsing",
				child: "kimi session 7b1e4c2a-5d3f-4e6a-8b9c-0a1b2c3d4e5f_sub_1"}.String()}
	}()
)

// codexSetIn is the codex set, the child's rollout in day directory day.
func codexSetIn(day string) subAgentSet {
	const parent = "019e0000-0000-7000-8000-00000000a001"
	const child = "019e0000-0000-7000-8000-00000000a002"
	return subAgentSet{files: []capturedFile{
		{rel: ".codex/sessions/2026/11/20/rollout-2026-11-20T23-59-00-" + parent + ".jsonl", golden: "codex/rollout_v0158_subagent_spawn_parent.jsonl"},
		{rel: ".codex/sessions/" + day + "/rollout-2026-11-21T00-00-01-" + child + ".jsonl", golden: "codex/rollout_v0158_subagent_spawned_child.jsonl"},
	}, wantIn: 6400 + 1100, wantOut: 260 + 120, sessions: 1}
}

// put writes the set's files into h, and returns their paths.
func (s subAgentSet) put(t *testing.T, h *clitest.Home) []string {
	t.Helper()
	paths := make([]string, len(s.files))
	for i, f := range append(slices.Clone(s.files), s.sidecars...) {
		b := []byte(f.data)
		if f.capture != "" {
			b = clitest.ReadFile(t, filepath.Join(clitest.Root, "testdata", "captures", filepath.FromSlash(f.capture)))
		}
		if plugin, name, ok := strings.Cut(f.golden, "/"); ok {
			b = nthFileOf(clitest.ReadFile(t, clitest.Golden(plugin, name)), f.nth)
		}
		p := h.Put(f.rel, b, time.Hour)
		if i < len(paths) {
			paths[i] = p
		}
	}
	return paths
}

// nthFileOf is file n's lines (0: the first) of a golden input of a
// tree store's session: the lines after its file line, before the next
// (a golden input of one file, without file lines: its lines).
func nthFileOf(stream []byte, n int) []byte {
	var out []byte
	files := 0
	for _, l := range strings.SplitAfter(string(stream), "\n") {
		if strings.HasPrefix(l, `{"$twasm":"source"`) {
			continue // the facts line, the host's
		}
		if strings.HasPrefix(l, `{"$twasm":"file"`) {
			files++
			continue
		}
		if files > n+1 {
			break
		}
		if files == n+1 || n == 0 && files == 0 {
			out = append(out, l...)
		}
	}
	return out
}

// link is a step.call_workflow.started of a session's run, as comparable
// between two archives: the step's path, iteration and title, the child
// run's name, and whether it supersedes a run.
type link struct {
	path, title, child string
	iteration          int
	supersedes         bool
}

func (l link) String() string {
	return fmt.Sprintf("%s#%d %q -> %q (supersedes %v)", l.path, l.iteration, l.title, l.child, l.supersedes)
}

// linksOf are the child runs a run links, by child run id.
func linksOf(t *testing.T, stor, runID string) map[string]link {
	t.Helper()
	out := map[string]link{}
	for _, ev := range clitest.ReadRun(t, clitest.TranscriptPath(stor, runID)) {
		if ev.Type != transcript.StepCallWorkflowStarted || ev.ChildRunID == "" {
			continue
		}
		child := clitest.ReadRun(t, clitest.TranscriptPath(stor, ev.ChildRunID))
		_, sup := ev.Step().Extra[lifecycle.SupersedesField]
		out[ev.ChildRunID] = link{path: ev.Path, iteration: ev.Iteration, title: ev.Step().Name, child: child[0].Step().Name, supersedes: sup}
	}
	return out
}

// sorted lists links in a comparable order.
func sorted(ls map[string]link) string {
	var s []string
	for _, l := range ls {
		s = append(s, l.String())
	}
	slices.Sort(s)
	return strings.Join(s, "\n")
}

// totals are the tokens stats and usage count for every run of a
// storage, sub-runs included, and how many sessions usage counts.
type totals struct {
	statsIn, statsOut, usageIn, usageOut int64
	sessions, groups                     int
}

func totalsOf(t *testing.T, h *clitest.Home) totals {
	t.Helper()
	var st struct {
		UsageInAll struct {
			InputTokens  int64 `json:"input_tokens"`
			OutputTokens int64 `json:"output_tokens"`
		} `json:"usage_in_all"`
	}
	if r := h.OK("stats", "--all", "--json"); json.Unmarshal([]byte(r.Out), &st) != nil {
		t.Fatalf("stats --all --json: %s", r.Out)
	}
	var rep struct {
		Groups []json.RawMessage `json:"groups"`
		Total  struct {
			Sessions int `json:"sessions"`
			Usage    struct {
				InputTokens  int64 `json:"input_tokens"`
				OutputTokens int64 `json:"output_tokens"`
			} `json:"usage"`
		} `json:"total"`
	}
	if r := h.OK("usage", "--by", "session", "--json"); json.Unmarshal([]byte(r.Out), &rep) != nil {
		t.Fatalf("usage --by session --json: %s", r.Out)
	}
	return totals{statsIn: st.UsageInAll.InputTokens, statsOut: st.UsageInAll.OutputTokens,
		usageIn: rep.Total.Usage.InputTokens, usageOut: rep.Total.Usage.OutputTokens, sessions: rep.Total.Sessions, groups: len(rep.Groups)}
}

// synced is what `twasm sync` makes of a set in a home of its own: the
// session's run's links, the session id it states, and the totals.
type synced struct {
	links, sessionID string
	totals           totals
}

// sessionIDOf is the session id a run's agent step states.
func sessionIDOf(t *testing.T, stor, runID string) string {
	t.Helper()
	_, res := clitest.AgentResult(t, clitest.ReadRun(t, clitest.TranscriptPath(stor, runID)))
	return res.SessionID
}

func syncedOf(t *testing.T, s subAgentSet) synced {
	t.Helper()
	h := clitest.NewHome(t)
	paths := s.put(t, h)
	runs := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(h.OK("sync").Out), "\n") {
		if f := strings.Split(l, "\t"); len(f) >= 4 && f[0] == "new" {
			runs[f[3]] = f[1]
		}
	}
	if len(runs) != len(paths) || runs[paths[0]] == "" {
		t.Fatalf("sync: %v, want every file new", runs)
	}
	return synced{links: sorted(linksOf(t, h.Stor, runs[paths[0]])), sessionID: sessionIDOf(t, h.Stor, runs[paths[0]]), totals: totalsOf(t, h)}
}

// TestImportSessionWithSubAgents: one `twasm import` given a session's
// file and its sub-agents' files, in any order, links them as `twasm
// sync` does: each sub-agent's run a child run of the session's
// (parent_run_id on its lines), linked in the session's run by the same
// steps as sync's (at the call that started it where the files tell,
// superseding the copy the session's log carried), each link completed
// with its child run's status, and the session's run ended after them
// with its own status. ls lists one session, and stats and usage count
// every token once: the raw files' figures, and sync's; the session's
// run states the session id sync's does. For Claude Code
// and Kimi Code (real captures), Cursor's agent transcripts (lines
// written in their format) and Factory Droid's Task sub-sessions (a
// session file beside its session's that names it: the droid goldens'
// lines), and Codex CLI's spawned sub-agents (a rollout whose
// session_meta names its parent thread, in the next day's directory:
// the codex goldens' lines), and Gemini CLI's sub-agents' chats (in a
// directory named by the session's full id, the call's record naming
// each by its agentId: the gemini goldens' lines; before, sync did not
// find them, and a sub-agent's chat imported was a session of its own).
// Before, the session's run was ended at once,
// so each sub-agent's file became a run of its own (its session's run
// "has ended"), and a Kimi Code or Cursor sub-agent's file, or any file
// given with --provider auto, passed as a session of its own.
func TestImportSessionWithSubAgents(t *testing.T) {
	t.Parallel()
	sets := map[string]subAgentSet{"claude": claudeSet, "kimi": kimiSet, "cursor": cursorSet, "droid": droidSet, "droid settings": droidSettingsSet,
		"droid sub-session settings": droidSubSettingsSet, "codex": codexSet, "gemini": geminiSet, "kimi context": kimiContextSet}
	ref := map[string]synced{} // what sync makes of each
	for name, s := range sets {
		ref[name] = syncedOf(t, s)
	}
	for _, c := range []struct {
		name, set, provider string
		order               []int // of the set's files, as given to import
	}{
		{name: "claude, session first", set: "claude", provider: "claude", order: []int{0, 1, 2}},
		{name: "claude, sub-agents first", set: "claude", provider: "claude", order: []int{2, 1, 0}},
		{name: "claude, session between, auto", set: "claude", provider: "auto", order: []int{1, 0, 2}},
		{name: "kimi code, session first", set: "kimi", provider: "kimi", order: []int{0, 1}},
		{name: "kimi code, sub-agent first, auto", set: "kimi", provider: "auto", order: []int{1, 0}},
		{name: "cursor, sub-agent first", set: "cursor", provider: "cursor", order: []int{1, 0}},
		{name: "droid, session first", set: "droid", provider: "droid", order: []int{0, 1}},
		{name: "droid, sub-session first, auto", set: "droid", provider: "auto", order: []int{1, 0}},
		{name: "droid with settings, session first", set: "droid settings", provider: "droid", order: []int{0, 1}},
		{name: "droid with settings, sub-session first, auto", set: "droid settings", provider: "auto", order: []int{1, 0}},
		{name: "droid, the sub-session's settings alone", set: "droid sub-session settings", provider: "droid", order: []int{0, 1}},
		{name: "codex, parent first", set: "codex", provider: "codex", order: []int{0, 1}},
		{name: "codex, sub-agent first, auto", set: "codex", provider: "auto", order: []int{1, 0}},
		{name: "gemini, session first", set: "gemini", provider: "gemini", order: []int{0, 1}},
		{name: "gemini, sub-agent first, auto", set: "gemini", provider: "auto", order: []int{1, 0}},
		{name: "kimi cli context, session first", set: "kimi context", provider: "kimi", order: []int{0, 1}},
		{name: "kimi cli context, sub-agent first, auto", set: "kimi context", provider: "auto", order: []int{1, 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := sets[c.set]
			h := clitest.NewHome(t)
			paths := s.put(t, h)
			args := []string{"import", "--provider", c.provider, "--json"}
			for _, i := range c.order {
				args = append(args, paths[i])
			}
			r := h.OK(args...)
			runs := map[string]string{} // path -> run id
			for _, l := range strings.Split(strings.TrimSpace(r.Out), "\n") {
				var im struct {
					File, Action, Reason, Error string
					RunID                       string `json:"run_id"`
				}
				if err := json.Unmarshal([]byte(l), &im); err != nil || im.Action != "new" || im.Error != "" || im.Reason != "" {
					t.Fatalf("import: %q (%v), want each file new, nothing to say\n%s", l, err, r.ErrOut)
				}
				runs[im.File] = im.RunID
			}
			if len(runs) != len(paths) {
				t.Fatalf("import: %d runs of %d files\n%s", len(runs), len(paths), r.Out)
			}
			session := runs[paths[0]]
			evs := clitest.ReadRun(t, clitest.TranscriptPath(h.Stor, session))
			if evs[0].ParentRunID != "" {
				t.Fatalf("the session's run %s has parent %s", session, evs[0].ParentRunID)
			}
			// Ended with its own status, after its sub-agents.
			if _, res := clitest.AgentResult(t, evs); clitest.RunEnd(t, evs).Status != res.Status {
				t.Errorf("the session's run ended %s, its agent step says %s", clitest.RunEnd(t, evs).Status, res.Status)
			}
			links := linksOf(t, h.Stor, session)
			completed := map[string]string{} // link path#iteration -> status
			for _, ev := range evs {
				if ev.Type == transcript.StepCallWorkflowCompleted {
					completed[fmt.Sprintf("%s#%d", ev.Path, ev.Iteration)] = ev.Step().Status
				}
			}
			for _, p := range paths[1:] {
				child := runs[p]
				cevs := clitest.ReadRun(t, clitest.TranscriptPath(h.Stor, child))
				if cevs[0].ParentRunID != session {
					t.Errorf("%s: run %s has parent %q, want the session's run %s", filepath.Base(p), child, cevs[0].ParentRunID, session)
				}
				l, ok := links[child]
				if !ok {
					t.Errorf("%s: run %s is not linked in the session's run", filepath.Base(p), child)
					continue
				}
				if got, want := completed[fmt.Sprintf("%s#%d", l.path, l.iteration)], clitest.RunEnd(t, cevs).Status; got != want {
					t.Errorf("%s: its link %s completed %q, want its run's status %q", filepath.Base(p), l.path, got, want)
				}
			}
			if want := s.wantLinks; want != "" && sorted(links) != want {
				t.Errorf("the session's links:\n%s\nwant:\n%s", sorted(links), want)
			}
			if got, want := sorted(links), ref[c.set].links; got != want {
				t.Errorf("the session's links:\n%s\nsync's:\n%s", got, want)
			}
			// The facts of its source as sync gives them (Kimi's session
			// id is a directory of its path in the store).
			if got, want := sessionIDOf(t, h.Stor, session), ref[c.set].sessionID; got != want || want == "" {
				t.Errorf("the session's run states session %q, sync's %q", got, want)
			}
			for _, id := range runs {
				h.OK("validate", id)
			}
			if top := strings.Split(strings.TrimSpace(h.OK("ls").Out), "\n"); len(top) != 1 || !strings.Contains(top[0], session) {
				t.Errorf("ls: want the session alone:\n%s", strings.Join(top, "\n"))
			}
			got := totalsOf(t, h)
			want := totals{statsIn: s.wantIn, statsOut: s.wantOut, usageIn: s.wantIn, usageOut: s.wantOut, sessions: s.sessions, groups: s.sessions}
			if got != want {
				t.Errorf("stats and usage count %+v, want %+v (the raw files')", got, want)
			}
			if ref := ref[c.set].totals; got != ref {
				t.Errorf("stats and usage count %+v, sync's %+v", got, ref)
			}
		})
	}
}

// TestImportSessionAndSubAgentsApart: a session's file and its
// sub-agents' files given to separate imports, in either order, make the
// runs one import of them all makes (and sync makes): a session imported
// alone takes its sub-agents' files on disk with it, linked into its run
// before the run ends, and a sub-agent's file imported alone takes its
// session's file (not archived yet) with it, so the import of the other
// files later finds them archived ("unchanged"). Before, the session's
// run ended at once and a sub-agent's file imported later became a run of
// its own ("its session's run ... has ended"), or, imported first, a run
// of its own that the session's run never linked.
func TestImportSessionAndSubAgentsApart(t *testing.T) {
	t.Parallel()
	sets := map[string]subAgentSet{"claude": claudeSet, "kimi": kimiSet, "cursor": cursorSet, "droid": droidSet,
		"droid settings": droidSettingsSet, "codex": codexSet, "codex same day": codexSameDaySet, "gemini": geminiSet, "kimi context": kimiContextSet}
	for _, c := range []struct {
		name, set string
		imports   [][]int // the set's files given to each import, in turn
	}{
		{name: "claude, session then sub-agents", set: "claude", imports: [][]int{{0}, {1}, {2}}},
		{name: "claude, a sub-agent then the rest", set: "claude", imports: [][]int{{2}, {0, 1}}},
		{name: "kimi code, session then sub-agent", set: "kimi", imports: [][]int{{0}, {1}}},
		{name: "kimi code, sub-agent then session", set: "kimi", imports: [][]int{{1}, {0}}},
		{name: "cursor, session then sub-agent", set: "cursor", imports: [][]int{{0}, {1}}},
		{name: "cursor, sub-agent then session", set: "cursor", imports: [][]int{{1}, {0}}},
		{name: "droid, session then sub-session", set: "droid", imports: [][]int{{0}, {1}}},
		{name: "droid, sub-session then session", set: "droid", imports: [][]int{{1}, {0}}},
		{name: "droid with settings, session then sub-session", set: "droid settings", imports: [][]int{{0}, {1}}},
		{name: "droid with settings, sub-session then session", set: "droid settings", imports: [][]int{{1}, {0}}},
		// A parent's sub-agents are looked for in its own directory:
		// the child started the next day is linked when given, or by
		// sync.
		{name: "codex, parent then sub-agent", set: "codex same day", imports: [][]int{{0}, {1}}},
		{name: "codex, sub-agent then parent (another day's)", set: "codex", imports: [][]int{{1}, {0}}},
		{name: "gemini, session then sub-agent", set: "gemini", imports: [][]int{{0}, {1}}},
		{name: "gemini, sub-agent then session", set: "gemini", imports: [][]int{{1}, {0}}},
		{name: "kimi cli context, session then sub-agent", set: "kimi context", imports: [][]int{{0}, {1}}},
		{name: "kimi cli context, sub-agent then session", set: "kimi context", imports: [][]int{{1}, {0}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := sets[c.set]
			ref := syncedOf(t, s)
			h := clitest.NewHome(t)
			paths := s.put(t, h)
			runs := map[string]string{} // path -> run id
			for n, files := range c.imports {
				args := []string{"import", "--provider", s.provider(), "--json"}
				for _, i := range files {
					args = append(args, paths[i])
				}
				r := h.OK(args...)
				for _, l := range strings.Split(strings.TrimSpace(r.Out), "\n") {
					var im struct {
						File, Action, Reason, Error string
						RunID                       string `json:"run_id"`
					}
					if err := json.Unmarshal([]byte(l), &im); err != nil || im.Error != "" {
						t.Fatalf("import %d: %q (%v)\n%s", n, l, err, r.ErrOut)
					}
					switch {
					case n == 0 && (im.Action != "new" || im.Reason != ""):
						t.Errorf("import %d: %s %s (%s), want new, nothing to say", n, im.File, im.Action, im.Reason)
					case n > 0 && im.Action != "unchanged":
						t.Errorf("import %d: %s %s (%s), want unchanged: archived by the first import", n, im.File, im.Action, im.Reason)
					}
					if prev, ok := runs[im.File]; ok && prev != im.RunID {
						t.Errorf("%s: run %s, then %s", im.File, prev, im.RunID)
					}
					runs[im.File] = im.RunID
				}
			}
			if len(runs) != len(paths) {
				t.Fatalf("%d runs of %d files: %v", len(runs), len(paths), runs)
			}
			session := runs[paths[0]]
			for _, p := range paths[1:] {
				if evs := clitest.ReadRun(t, clitest.TranscriptPath(h.Stor, runs[p])); evs[0].ParentRunID != session {
					t.Errorf("%s: run %s has parent %q, want the session's run %s", filepath.Base(p), runs[p], evs[0].ParentRunID, session)
				}
			}
			if want := s.wantLinks; want != "" && ref.links != want {
				t.Errorf("sync's links:\n%s\nwant:\n%s", ref.links, want)
			}
			if got := sorted(linksOf(t, h.Stor, session)); got != ref.links {
				t.Errorf("the session's links:\n%s\nsync's:\n%s", got, ref.links)
			}
			evs := clitest.ReadRun(t, clitest.TranscriptPath(h.Stor, session))
			if _, res := clitest.AgentResult(t, evs); clitest.RunEnd(t, evs).Status != res.Status {
				t.Errorf("the session's run ended %s, its agent step says %s", clitest.RunEnd(t, evs).Status, res.Status)
			}
			if top := strings.Split(strings.TrimSpace(h.OK("ls").Out), "\n"); len(top) != 1 || !strings.Contains(top[0], session) {
				t.Errorf("ls: want the session alone:\n%s", strings.Join(top, "\n"))
			}
			if got := totalsOf(t, h); got != ref.totals {
				t.Errorf("stats and usage count %+v, sync's %+v", got, ref.totals)
			}
		})
	}
}

// provider is the provider the set's files are given as.
func (s subAgentSet) provider() string {
	switch {
	case strings.HasPrefix(s.files[0].rel, ".kimi-code/"), strings.HasPrefix(s.files[0].rel, ".kimi/"):
		return "kimi"
	case strings.HasPrefix(s.files[0].rel, ".cursor/"):
		return "cursor"
	case strings.HasPrefix(s.files[0].rel, ".factory/"):
		return "droid"
	case strings.HasPrefix(s.files[0].rel, ".codex/"):
		return "codex"
	case strings.HasPrefix(s.files[0].rel, ".gemini/"):
		return "gemini"
	}
	return "claude"
}

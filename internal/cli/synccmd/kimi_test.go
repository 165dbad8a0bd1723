package synccmd_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// TestSyncKimi: a home directory with a Kimi Code session in its default
// store (~/.kimi-code/sessions/<work dir>/<session>/agents/main/wire.jsonl)
// and a Kimi CLI session in the older one
// (~/.kimi/sessions/<work dir hash>/<session>/wire.jsonl). `twasm doctor`
// lists both stores with their session not archived; `twasm sync`
// archives both, with the session id the path gives, and the Kimi Code
// sub-agent's journal (agents/agent-0/wire.jsonl, beside the main
// agent's) as a child run of the session's; a second sync archives
// nothing; the Kimi Code journal grown by the rest of its turn adds one
// part to the same run; doctor then says archived.
func TestSyncKimi(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	journal := clitest.ReadFile(t, clitest.Golden("kimi", "code_tools_failed_turn.jsonl"))
	lines := bytes.SplitAfter(journal, []byte("\n"))
	rel := filepath.Join(".kimi-code", "sessions", "wd_proj_3f2a1b0c9d8e", "session_5c1e0d1a", "agents", "main", "wire.jsonl")
	h.Put(rel, bytes.Join(lines[:13], nil), time.Hour) // up to the failed test run's result
	sub := filepath.Join(filepath.Dir(filepath.Dir(rel)), "agent-0", "wire.jsonl")
	h.Put(sub, clitest.ReadFile(t, filepath.Join(clitest.Root, "testdata", "captures", "kimi", "as_code_subagent_agent0.jsonl")), time.Hour)
	h.Put(filepath.Join(".kimi", "sessions", "0cc175b9c0f1b6a831c399e269772661", "9b2e7c4d-1f3a-4e5b-8c6d-7a8b9c0d1e2f", "wire.jsonl"),
		clitest.ReadFile(t, clitest.Golden("kimi", "legacy_subagent_denied.jsonl")), 48*time.Hour)

	doctor := func() map[string]doctorStore { t.Helper(); return doctorStores(t, h, h.Dir) }
	sync := func(what string, want map[string]int) map[string][]string {
		t.Helper()
		return syncWant(t, h, h.Dir, what, want)
	}
	stores := doctor()
	for name, dir := range map[string]string{
		"Kimi Code sessions": filepath.Join(h.Dir, ".kimi-code", "sessions"),
		"Kimi CLI sessions":  filepath.Join(h.Dir, ".kimi", "sessions"),
	} {
		s := stores[name]
		if !s.Found || s.Sessions < 1 || s.NotArchived != s.Sessions || s.Provider != "kimi" || s.Dir != dir {
			t.Fatalf("doctor before sync, %s: %+v", name, s)
		}
	}
	got := sync("first sync", map[string]int{"new": 3})
	first := got["new"]
	var top []string
	for _, id := range first {
		if clitest.ReadRun(t, clitest.TranscriptPath(h.Stor, id))[0].ParentRunID == "" {
			top = append(top, id)
		}
	}
	if len(top) != 2 {
		t.Fatalf("first sync: %d top-level runs of %v, want 2 (the sub-agent's journal a child run)", len(top), first)
	}
	sync("second sync with nothing new", nothing)
	h.Put(rel, journal, 30*time.Minute)
	got = sync("sync after the turn went on", map[string]int{"grown": 1})
	for name, s := range doctor() {
		if s.Provider == "kimi" && (s.Archived != s.Sessions || s.NotArchived != 0) {
			t.Errorf("doctor after sync, %s: %+v", name, s)
		}
	}

	// Kimi Code: two parts, the failed command an error with its exit
	// code, the missing file an error, the turn's failure the status.
	codeRun := clitest.TranscriptPath(h.Stor, got0(t, got["grown"]))
	code := tallyRun(t, codeRun)
	if linked := validLinked(t, h, codeRun); linked != 1 {
		t.Errorf("kimi code run: %d child runs linked, want the sub-agent's journal", linked)
	}
	if len(code.parts) != 2 || len(code.calls) != 2 || code.responses != 2 {
		t.Fatalf("kimi code run: %d parts, %d calls, %d responses (want 2, 2, 2)", len(code.parts), len(code.calls), code.responses)
	}
	if r := code.results["tool_run"]; r == nil || r.Status != "error" || r.ExitCode == nil || *r.ExitCode != 1 {
		t.Errorf("the failed test run: %+v", r)
	}
	if r := code.results["tool_read"]; r == nil || r.Status != "error" {
		t.Errorf("the missing file's read: %+v", r)
	}
	last := code.parts[len(code.parts)-1]
	if last.SessionID != "session_5c1e0d1a" || last.Status != "error" || code.output != 64 {
		t.Errorf("kimi code run: session %q, status %q, output tokens %d (want session_5c1e0d1a, error, 64)", last.SessionID, last.Status, code.output)
	}

	// Kimi CLI: the sub-agent a child run, the rejected edit denied.
	id := top[0]
	if id == got0(t, got["grown"]) {
		id = top[1]
	}
	cli := tallyRun(t, clitest.TranscriptPath(h.Stor, id))
	if r := cli.results["StrReplaceFile:1"]; r == nil || r.Status != "denied" {
		t.Errorf("the rejected edit: %+v", r)
	}
	if r := cli.results["Agent:0"]; r == nil || r.Status != "ok" {
		t.Errorf("the sub-agent's call: %+v", r)
	}
	children := validLinked(t, h, clitest.TranscriptPath(h.Stor, id))
	if p := cli.parts[0]; children != 1 || p.SessionID != "9b2e7c4d-1f3a-4e5b-8c6d-7a8b9c0d1e2f" || cli.output != 134 {
		t.Errorf("kimi cli run: %d child runs, session %q, output %d (want 1, the directory's name, 134)", children, p.SessionID, cli.output)
	}
}

// TestSyncKimiContextFiles: a home directory with a session of the Kimi
// CLI before 0.59, which kept only the model's context as
// ~/.kimi/sessions/<work dir hash>/<uuid4>.jsonl, beside a copy a
// compaction rotated to <uuid4>_1.jsonl. `twasm doctor` lists the store
// with the one session, `twasm sync` archives it as one run, its id the
// file's name, the rejected edit denied and the failed command an error;
// the rotated copy is not a session. (A sub-agent's <uuid4>_sub_N.jsonl:
// TestSyncKimiContextSubAgent.)
func TestSyncKimiContextFiles(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	const uuid = "3f6c2a1e-8b7d-4c5e-9a0f-1b2c3d4e5f60"
	raw := clitest.ReadFile(t, clitest.Golden("kimi", "context_v058.jsonl"))
	raw = raw[bytes.IndexByte(raw, '\n')+1:] // the golden's facts line is the host's
	dir := filepath.Join(".kimi", "sessions", "0d8f0b6c1e2a3b4c5d6e7f8091a2b3c4")
	h.Put(filepath.Join(dir, uuid+".jsonl"), raw, time.Hour)
	h.Put(filepath.Join(dir, uuid+"_1.jsonl"), raw, 2*time.Hour)

	s := doctorStores(t, h, h.Dir)["Kimi CLI context files (before 0.59)"]
	if !s.Found || s.Sessions != 1 || s.Provider != "kimi" || s.Dir != filepath.Join(h.Dir, ".kimi", "sessions") {
		t.Fatalf("doctor: %+v", s)
	}
	got := syncWant(t, h, h.Dir, "first sync", map[string]int{"new": 1})
	run := tallyRun(t, clitest.TranscriptPath(h.Stor, got0(t, got["new"])))
	if p := run.parts[0]; p.SessionID != uuid || p.Format != "context" || p.Status != "ok" {
		t.Errorf("run: session %q, format %q, status %q (want the file's name, context, ok)", p.SessionID, p.Format, p.Status)
	}
	if r := run.results["StrReplaceFile:1"]; r == nil || r.Status != "denied" {
		t.Errorf("the rejected edit: %+v", r)
	}
	if r := run.results["Shell:0"]; r == nil || r.Status != "error" || r.ExitCode == nil || *r.ExitCode != 1 {
		t.Errorf("the failed test run: %+v", r)
	}
}

// TestSyncKimiContextSubAgent: a Kimi CLI session before 0.59 whose Task
// call ran a sub-agent, which the CLI kept in a context file of its own
// beside the session's, <uuid4>_sub_1.jsonl (goldens
// context_v058_subagent_parent and _child, written from the 0.58
// source), is archived by `twasm sync` as the session's run with the
// sub-agent's as its child run, linked at the Task call whose prompt
// argument the sub-agent's file starts with (abi.Store.SubAgentPrompt:
// nothing else names the call, plugins/kimi/doc.go), in the part holding
// it and named by its description, in every order the files arrive:
// both at once; the sub-agent's after the session was synced; the
// sub-agent's synced while its Task call ran (the CLI writes the call to
// the session's file once the sub-agent answered: linked at the
// session's latest part, then, once a part of the session brings the
// call, archived again at the call, superseding the first); the
// sub-agent's file before its session's (a run of its own, archived
// again at the call once the session's file comes, the first ended,
// superseded). Two Task calls stating the same prompt say nothing of
// which started the file: it is linked at the session's latest part,
// and the sync says why. A copy a compaction rotated
// (<uuid4>_sub_1_1.jsonl) is neither. doctor counts one session; ls
// lists the session alone, tree its one sub-run with the sub-agent's two
// calls (and renormalize the same); a further sync changes nothing.
// Before, the run was linked at the session's latest part in every
// case, the part before the call's when the sub-agent was synced while
// it ran, and a sub-agent found before its session stayed a run of its
// own beside the session's: tree counted no sub-run.
func TestSyncKimiContextSubAgent(t *testing.T) {
	t.Parallel()
	const (
		uuid = "7b1e4c2a-5d3f-4e6a-8b9c-0a1b2c3d4e5f"
		call = "Task:0"
		desc = "Find config parsing"
	)
	body := func(golden string) []byte {
		raw := clitest.ReadFile(t, clitest.Golden("kimi", golden))
		return raw[bytes.IndexByte(raw, '\n')+1:] // the golden's facts line is the host's
	}
	parent, child := body("context_v058_subagent_parent.jsonl"), body("context_v058_subagent_child.jsonl")
	lines := bytes.SplitAfter(parent, []byte("\n"))
	// running: what the session's file holds while the Task call runs
	// (two checkpoints and the prompt: kimisoul.py appends the step's
	// message and its tool results once the tools returned).
	running := bytes.Join(lines[:3], nil)
	// twice: the Task call and its result made again as Task:1, with the
	// same prompt.
	again := bytes.ReplaceAll(bytes.Join(lines[3:5], nil), []byte(call), []byte("Task:1"))
	twice := bytes.Join([][]byte{bytes.Join(lines[:5], nil), again, bytes.Join(lines[5:], nil)}, nil)
	dir := filepath.Join(".kimi", "sessions", "0d8f0b6c1e2a3b4c5d6e7f8091a2b3c4")
	session, sub := filepath.Join(dir, uuid+".jsonl"), filepath.Join(dir, uuid+"_sub_1.jsonl")
	const (
		atOnce = iota
		later
		whileRunning
		subFirst
		samePrompt
	)
	for _, c := range []struct {
		name  string
		order int
	}{
		{"both at once", atOnce},
		{"the sub-agent's file after the session was synced", later},
		{"the sub-agent's file synced while its Task call ran", whileRunning},
		{"the sub-agent's file before its session's", subFirst},
		{"two Task calls stating the same prompt", samePrompt},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := clitest.NewHome(t)
			store := filepath.Join(h.Dir, ".kimi")
			h.Put(filepath.Join(dir, uuid+"_sub_1_1.jsonl"), child[:bytes.Index(child, []byte("\n"))+1], 2*time.Hour)
			runs := map[string]string{}
			syncNew := func(what string, want int) {
				t.Helper()
				for p, id := range syncNewRuns(t, h, store, what, want) {
					runs[p] = id
				}
			}
			first := "" // the sub-agent's run the last sync superseded
			switch c.order {
			case atOnce:
				h.Put(session, parent, time.Hour)
				h.Put(sub, child, time.Hour)
				syncNew("sync", 2)
			case later:
				h.Put(session, parent, time.Hour)
				syncNew("sync of the session", 1)
				h.Put(sub, child, time.Hour)
				syncNew("sync of the sub-agent", 1)
			case whileRunning:
				h.Put(session, running, time.Hour)
				h.Put(sub, child, time.Hour)
				syncNew("sync while the Task call ran", 2)
				h.Put(session, parent, 30*time.Minute)
				got := syncWant(t, h, store, "sync of the session's second part", map[string]int{"grown": 1, "new": 1})
				first = runs[filepath.Join(h.Dir, sub)]
				runs[filepath.Join(h.Dir, sub)] = got["new"][0]
			case subFirst:
				h.Put(sub, child, time.Hour)
				syncNew("sync of the sub-agent's file alone", 1)
				first = runs[filepath.Join(h.Dir, sub)]
				h.Put(session, parent, time.Hour)
				syncNew("sync after the session's file came", 2)
			case samePrompt:
				h.Put(session, twice, time.Hour)
				h.Put(sub, child, time.Hour)
				var r clitest.Result
				clitest.Unchanged(t, store, "sync", func() { r = h.OK("sync") })
				if !strings.Contains(r.Out, "2 calls of its session's run state the prompt its file starts with: linked at the session's latest part") {
					t.Errorf("sync: want the sub-agent's outcome to say why it is not linked at a call: %v", r)
				}
				for _, l := range strings.Split(strings.TrimSpace(r.Out), "\n") {
					if f := strings.Split(l, "\t"); len(f) >= 4 && f[0] == "new" {
						runs[f[3]] = f[1]
					}
				}
			}
			if s := doctorStores(t, h, h.Dir)["Kimi CLI context files (before 0.59)"]; !s.Found || s.Sessions != 1 {
				t.Errorf("doctor: %+v, want the one session", s)
			}
			parentRun, childRun := runs[filepath.Join(h.Dir, session)], runs[filepath.Join(h.Dir, sub)]
			if parentRun == "" || childRun == "" || childRun == first {
				t.Fatalf("runs %v: want the session's and a new one of the sub-agent's", runs)
			}
			switch c.order {
			case whileRunning:
				wantRelinked(t, h, parentRun, first, childRun, call, "agent."+uuid+"_sub_1", "agent."+uuid+"_sub_1_Task_0")
			case samePrompt:
				wantLinkedIn(t, h, parentRun, childRun, "agent."+uuid+"_sub_1", 0)
			default:
				wantLinkedAt(t, h, parentRun, childRun, call, "agent."+uuid+"_sub_1_Task_0", desc)
			}
			if c.order == subFirst {
				if by := supersededBy(t, h, first); by != childRun {
					t.Errorf("the sub-agent's first run %s ends superseded by %q, want superseded by %s", first, by, childRun)
				}
			}
			syncWant(t, h, store, "sync with nothing new", nothing)
			wantSubAgentTotals(t, h, parentRun, [2]int64{0, 0}, [2]int64{0, 0}, 1, 2)
		})
	}
}

// kimiCodeRelinked syncs, in a new home, a Kimi Code session's main
// journal (the real capture as_code_tools_subagent_main.jsonl) up to its
// Agent call, not written yet, with its sub-agent's journal
// (as_code_subagent_agent0.jsonl), then the whole main journal: the first
// sync links the sub-agent's run (loose) at the session's latest part,
// the second grows the session's run (parentRun) and archives the
// sub-agent again (child). store is the Kimi Code store.
func kimiCodeRelinked(t *testing.T) (h *clitest.Home, store, parentRun, loose, child string) {
	t.Helper()
	capture := func(name string) []byte {
		return clitest.ReadFile(t, filepath.Join(clitest.Root, "testdata", "captures", "kimi", name))
	}
	main := bytes.SplitAfter(capture("as_code_tools_subagent_main.jsonl"), []byte("\n"))
	agents := filepath.Join(".kimi-code", "sessions", "wd_proj_3f2a1b0c9d8e", "session_5c1e0d1a", "agents")
	session, sub := filepath.Join(agents, "main", "wire.jsonl"), filepath.Join(agents, "agent-0", "wire.jsonl")
	h = clitest.NewHome(t)
	store = filepath.Join(h.Dir, ".kimi-code")
	h.Put(session, bytes.Join(main[:65], nil), time.Hour) // up to the Agent call, not written yet
	h.Put(sub, capture("as_code_subagent_agent0.jsonl"), time.Hour)
	runs := syncNewRuns(t, h, store, "sync while the Agent call ran", 2)
	parentRun, loose = runs[filepath.Join(h.Dir, session)], runs[filepath.Join(h.Dir, sub)]
	if parentRun == "" || loose == "" {
		t.Fatalf("runs %v: want the session's and the sub-agent's", runs)
	}
	h.Put(session, bytes.Join(main, nil), 30*time.Minute)
	got := syncWant(t, h, store, "sync of the session's second part", map[string]int{"grown": 1, "new": 1})
	if got["grown"][0] != parentRun {
		t.Fatalf("sync: %v, want the session's run %s grown", got, parentRun)
	}
	return h, store, parentRun, loose, got["new"][0]
}

// TestSyncKimiCodeSubAgentRelinked: a Kimi Code sub-agent's journal
// (agents/agent-0/wire.jsonl, a real capture with its main agent's)
// synced while its foreground Agent call ran (the main journal holds no
// result naming "agent_id: agent-0" yet: Kimi Code writes it once the
// sub-agent answered, agentTool.ts formatForegroundAgentSuccess) is
// linked at the session's latest part; once the session's next part
// brings the call and its result, the next sync archives the journal
// again as a child run linked at the call (abi.Store.SubAgentResult),
// superseding the first, which ends saying so. ls lists the session
// alone and stats counts the sub-agent's 330 output tokens once, beside
// the main agent's 5515; a further sync changes nothing. Before, the
// first link stayed at the part before the call's for good.
func TestSyncKimiCodeSubAgentRelinked(t *testing.T) {
	t.Parallel()
	const call = "Agent_3"
	h, store, parentRun, loose, childRun := kimiCodeRelinked(t)
	wantRelinked(t, h, parentRun, loose, childRun, call, "agent.wire", "agent.wire_"+call)
	if row := lsRow(t, h, parentRun); row.SubRunUsage["output_tokens"] != 330 || row.UsageInAll["output_tokens"] != 5515+330 {
		t.Errorf("ls --json: %+v, want the sub-agent's 330 output tokens, once, beside the session's 5515", row)
	}
	var st struct {
		UsageInAll map[string]int64 `json:"usage_in_all"`
	}
	if err := json.Unmarshal([]byte(h.OK("stats", "--all", "--json").Out), &st); err != nil || st.UsageInAll["output_tokens"] != 5515+330 {
		t.Errorf("stats --all --json: usage_in_all %v (%v), want 5515 + 330 output tokens, once", st.UsageInAll, err)
	}
	syncWant(t, h, store, "sync with nothing new", nothing)
}

// TestSyncRelinkEndNotNoted: a sync that archived a Kimi Code
// sub-agent's journal again at its Agent call (as in
// TestSyncKimiCodeSubAgentRelinked) and ended the first child run,
// superseded by the new one, then was killed before the ledger noted
// that end (the ledger rewritten as it was then: the first run open, the
// new one noting the run it supersedes, archive.Resume.Supersedes).
// Doctor says so. The next sync settles it: the first run
// is noted ended, its transcript's end written once, the new run the
// one live copy, the sub-agent's tokens counted once; a further sync
// archives nothing. So too for a Roo Code sub-task before 3.35 synced
// alone, then linked at its parent's new_task call by its first message
// (abi.StoreParent.Prompt, rooLegacyRelinked).
func TestSyncRelinkEndNotNoted(t *testing.T) {
	t.Parallel()
	kimi := func(t *testing.T) (*clitest.Home, string, string, string, int64) {
		h, store, _, loose, child := kimiCodeRelinked(t)
		return h, store, loose, child, 5515 + 330
	}
	for _, tc := range []struct {
		name    string
		pending bool // the part whole in the transcript, the ledger not yet told
		setup   func(t *testing.T) (h *clitest.Home, store, loose, child string, output int64)
	}{
		{"part noted, first run not ended", false, kimi}, {"part whole, its entry still pending", true, kimi},
		{"roo prompt, part noted, first run not ended", false, rooLegacyRelinked}, {"roo prompt, part whole, its entry still pending", true, rooLegacyRelinked},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			relinkEndNotNoted(t, tc.pending, tc.setup)
		})
	}
}

// relinkEndNotNoted is TestSyncRelinkEndNotNoted's case: the ledger as a
// kill leaves it after the re-linked run's part, pending when the kill
// came before the ledger noted that part.
func relinkEndNotNoted(t *testing.T, pending bool, setup func(t *testing.T) (h *clitest.Home, store, loose, child string, output int64)) {
	h, store, loose, child, output := setup(t)
	if by := supersededBy(t, h, loose); by != child {
		t.Fatalf("run %s ends superseded by %q, want %s", loose, by, child)
	}
	// The ledger as the kill leaves it: the first run open, the new one
	// noting the run it supersedes (its last line before that end).
	ledger := filepath.Join(h.Stor, "archive", "ledger.jsonl")
	var kept [][]byte
	for _, l := range bytes.SplitAfter(clitest.ReadFile(t, ledger), []byte("\n")) {
		var e map[string]any
		if json.Unmarshal(l, &e) == nil {
			switch e["run_id"] {
			case loose:
				delete(e, "closed")
				delete(e, "superseded_by")
			case child:
				e["resume"] = map[string]any{"supersedes": loose}
				if pending {
					e["pending"] = true
				}
			}
			b, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			l = append(b, '\n')
		}
		kept = append(kept, l)
	}
	clitest.Put(t, ledger, bytes.Join(kept, nil), 0)
	if d := h.OK("doctor").Out; !strings.Contains(d, "run "+child+" archived") || !strings.Contains(d, "before it ended run "+loose) {
		t.Errorf("doctor before the sync: want it to say run %s is still to end run %s:\n%s", child, loose, d)
	}
	ended := func() int {
		return strings.Count(string(clitest.ReadFile(t, clitest.TranscriptPath(h.Stor, loose))), `"type":"run.completed"`)
	}
	got := syncWant(t, h, store, "sync after the kill", map[string]int{"settled": 1})
	if got["settled"][0] != child || ended() != 1 || supersededBy(t, h, loose) != child {
		t.Errorf("settled %v, run %s ended %d time(s) superseded by %q: want run %s settled, the first run ended once, by it", got, loose, ended(), supersededBy(t, h, loose), child)
	}
	for _, id := range []string{loose, child} {
		h.OK("validate", id)
	}
	var st struct {
		UsageInAll map[string]int64 `json:"usage_in_all"`
	}
	if err := json.Unmarshal([]byte(h.OK("stats", "--all", "--json").Out), &st); err != nil || st.UsageInAll["output_tokens"] != output {
		t.Errorf("stats --all --json: usage_in_all %v (%v), want %d output tokens, once", st.UsageInAll, err, output)
	}
	if strings.Contains(lastLineOf(t, ledger, child), `"supersedes"`) {
		t.Errorf("the ledger still notes run %s superseding another", child)
	}
	syncWant(t, h, store, "sync with nothing new", nothing)
}

// lastLineOf is the ledger's last line for run id.
func lastLineOf(t *testing.T, ledger, id string) string {
	t.Helper()
	out := ""
	for _, l := range strings.Split(string(clitest.ReadFile(t, ledger)), "\n") {
		if strings.Contains(l, `"run_id":"`+id+`"`) {
			out = l
		}
	}
	return out
}

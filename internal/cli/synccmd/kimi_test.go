package synccmd_test

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
	"github.com/twasm/twasm/transcript"
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
	linked := 0
	for _, ev := range clitest.ReadRun(t, codeRun) {
		if ev.Type == transcript.StepCallWorkflowStarted && ev.ChildRunID != "" {
			linked++
			clitest.Validate(t, clitest.TranscriptPath(h.Stor, ev.ChildRunID))
		}
	}
	if linked != 1 {
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
	children := 0
	for _, ev := range clitest.ReadRun(t, clitest.TranscriptPath(h.Stor, id)) {
		if ev.Type == transcript.StepCallWorkflowStarted && ev.ChildRunID != "" {
			children++
			clitest.Validate(t, clitest.TranscriptPath(h.Stor, ev.ChildRunID))
		}
	}
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
// sub-agent's as its child run, linked at the session's latest part
// (neither file names the other's call: see plugins/kimi/doc.go),
// whether both files are there at once or the sub-agent's is found
// after the session was synced; a copy a compaction rotated
// (<uuid4>_sub_1_1.jsonl) is neither. doctor counts one session; ls
// lists the session alone, tree its one sub-run with the sub-agent's two
// calls (and renormalize the same); a second sync changes nothing.
// Before, the store's glob left the sub-agent's file out: its turns were
// in no run.
func TestSyncKimiContextSubAgent(t *testing.T) {
	t.Parallel()
	const uuid = "7b1e4c2a-5d3f-4e6a-8b9c-0a1b2c3d4e5f"
	body := func(golden string) []byte {
		raw := clitest.ReadFile(t, clitest.Golden("kimi", golden))
		return raw[bytes.IndexByte(raw, '\n')+1:] // the golden's facts line is the host's
	}
	parent, child := body("context_v058_subagent_parent.jsonl"), body("context_v058_subagent_child.jsonl")
	dir := filepath.Join(".kimi", "sessions", "0d8f0b6c1e2a3b4c5d6e7f8091a2b3c4")
	session, sub := filepath.Join(dir, uuid+".jsonl"), filepath.Join(dir, uuid+"_sub_1.jsonl")
	for _, later := range []bool{false, true} {
		t.Run(map[bool]string{false: "both at once", true: "the sub-agent's file after the session was synced"}[later], func(t *testing.T) {
			t.Parallel()
			h := clitest.NewHome(t)
			store := filepath.Join(h.Dir, ".kimi")
			h.Put(session, parent, time.Hour)
			h.Put(filepath.Join(dir, uuid+"_sub_1_1.jsonl"), child[:bytes.Index(child, []byte("\n"))+1], 2*time.Hour)
			runs := map[string]string{}
			if later {
				for p, id := range syncNewRuns(t, h, store, "sync of the session", 1) {
					runs[p] = id
				}
			}
			h.Put(sub, child, time.Hour)
			if s := doctorStores(t, h, h.Dir)["Kimi CLI context files (before 0.59)"]; !s.Found || s.Sessions != 1 {
				t.Errorf("doctor: %+v, want the one session", s)
			}
			want := 2
			if later {
				want = 1
			}
			for p, id := range syncNewRuns(t, h, store, "sync", want) {
				runs[p] = id
			}
			parentRun, childRun := runs[filepath.Join(h.Dir, session)], runs[filepath.Join(h.Dir, sub)]
			if parentRun == "" || childRun == "" {
				t.Fatalf("runs %v: want the session's and the sub-agent's", runs)
			}
			wantLinkedIn(t, h, parentRun, childRun, "agent."+uuid+"_sub_1", 0)
			syncWant(t, h, store, "sync with nothing new", nothing)
			wantSubAgentTotals(t, h, parentRun, [2]int64{0, 0}, [2]int64{0, 0}, 1, 2)
		})
	}
}

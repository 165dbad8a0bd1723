package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/twasm/twasm/internal/testing/clitest"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/transcript"
)

// kimiRelinkFiles are a Kimi Code session's main journal (the real
// capture as_code_tools_subagent_main.jsonl) cut before its Agent call
// (first) and whole (second), and its sub-agent's journal (the capture
// as_code_subagent_agent0.jsonl with its second step repeated steps
// times, each copy's ids its own), with their paths under the home.
func kimiRelinkFiles(t *testing.T, steps int) (session string, first, whole []byte, sub string, agent []byte) {
	t.Helper()
	read := func(name string) [][]byte {
		b := readFile(t, filepath.Join(root, "testdata", "captures", "kimi", name))
		return bytes.SplitAfter(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
	}
	main := read("as_code_tools_subagent_main.jsonl")
	lines := read("as_code_subagent_agent0.jsonl")
	// Step 2: from its step.begin to the usage.record after its step.end.
	begin := -1
	for i, l := range lines {
		if bytes.Contains(l, []byte(`"type":"step.begin"`)) && bytes.Contains(l, []byte(`"step":2`)) {
			begin = i
			break
		}
	}
	end := begin
	for end < len(lines) && !bytes.Contains(lines[end], []byte(`"type":"usage.record"`)) {
		end++
	}
	if begin < 0 || end == len(lines) {
		t.Fatal("the sub-agent's capture has no second step")
	}
	var b bytes.Buffer
	for _, l := range lines[:end+1] {
		b.Write(l)
	}
	for i := range steps {
		r := strings.NewReplacer("Bash_1", fmt.Sprintf("Bash_1r%d", i),
			"8638feb4-be6d-4e1c-9196-d2109f717410", fmt.Sprintf("8638feb4-be6d-4e1c-9196-%012d", i),
			"438c8f7b-90a4-45fe-bc57-fa77267fd8fb", fmt.Sprintf("438c8f7b-90a4-45fe-bc57-%012d", i))
		for _, l := range lines[begin : end+1] {
			b.WriteString(r.Replace(string(l)))
		}
	}
	for _, l := range lines[end+1:] {
		b.Write(l)
	}
	agents := filepath.Join(".kimi-code", "sessions", "wd_proj_3f2a1b0c9d8e", "session_5c1e0d1a", "agents")
	return filepath.Join(agents, "main", "wire.jsonl"), bytes.Join(main[:65], nil), bytes.Join(main, nil),
		filepath.Join(agents, "agent-0", "wire.jsonl"), b.Bytes()
}

// relinkState is what the runs of a storage say of a sub-agent's file
// (or folder) after it was linked again at its call: the runs archived
// from it (all) and those of them that are live (neither ended
// superseded nor named superseded by a link), the live run's link (its
// path in its parent's run), what is not done (a step left open in any
// run, a superseded run not ended), and the output tokens stats counts
// in all.
type relinkState struct {
	live, all int
	liveAt    string
	notDone   []string
	output    int64
}

func relinkStateOf(t *testing.T, h *fakeHome, sub string) relinkState {
	t.Helper()
	var st relinkState
	runs := clitest.StorageRuns(t, h.stor)
	linkedAt, superseded := map[string]string{}, map[string]bool{}
	for _, evs := range runs {
		for _, ev := range evs {
			if ev.Type != transcript.StepCallWorkflowStarted || ev.ChildRunID == "" {
				continue
			}
			linkedAt[ev.ChildRunID] = ev.Path
			var old string
			if json.Unmarshal(ev.Step().Extra[lifecycle.SupersedesField], &old) == nil && old != "" {
				superseded[old] = true
			}
		}
	}
	for _, evs := range runs {
		id, last := evs[0].RunID, evs[len(evs)-1]
		if open := openSteps(evs); open != "" {
			st.notDone = append(st.notDone, id+" leaves "+open+" open")
		}
		var src struct {
			Path string `json:"path"`
		}
		if p := evs[0].Step(); p == nil || json.Unmarshal(p.Extra["source"], &src) != nil || src.Path != sub {
			continue
		}
		st.all++
		by := ""
		if last.Type == transcript.RunCompleted {
			_ = json.Unmarshal(last.Step().Extra[lifecycle.SupersededByField], &by)
		}
		switch {
		case by == "" && !superseded[id]:
			st.live++
			st.liveAt = linkedAt[id]
		case last.Type != transcript.RunCompleted:
			st.notDone = append(st.notDone, id+", superseded, is not ended")
		}
	}
	var stats struct {
		UsageInAll map[string]int64 `json:"usage_in_all"`
	}
	if err := json.Unmarshal([]byte(h.ok("stats", "--all", "--json").out), &stats); err != nil {
		t.Fatal(err)
	}
	st.output = stats.UsageInAll["output_tokens"]
	return st
}

// openSteps names the steps a run's transcript begins and does not
// complete ("" none): what a part cut short leaves.
func openSteps(evs []*transcript.Event) string {
	open := map[string]int{}
	for _, ev := range evs {
		k := fmt.Sprintf("%s#%d", ev.Path, ev.Iteration)
		switch ev.Type {
		case transcript.StepStarted:
			open[k]++
		case transcript.StepCompleted:
			open[k]--
		}
	}
	var out []string
	for k, n := range open {
		if n > 0 {
			out = append(out, k)
		}
	}
	return strings.Join(out, ", ")
}

// newTranscript watches for a transcript that none of the files known
// before holds, of a run archived from src (its run.started's source
// names that path), and counts its lines.
type newTranscript struct {
	stor, src string
	known     map[string]bool
	w         *lineWatch
}

func (n *newTranscript) count() int {
	if n.w == nil {
		q, _ := json.Marshal(n.src)
		paths, _ := filepath.Glob(filepath.Join(n.stor, "transcripts", "*.jsonl"))
		for _, p := range paths {
			if n.known[p] {
				continue
			}
			if b, err := os.ReadFile(p); err == nil {
				if first, _, _ := bytes.Cut(b, []byte("\n")); bytes.Contains(first, []byte(`"path":`+string(q))) {
					n.w = &lineWatch{stor: n.stor, file: p}
				}
			}
		}
		if n.w == nil {
			return 0
		}
	}
	return n.w.count()
}

// killAt runs twasm with args in h's home and storage and kills it with
// SIGKILL at a step: once the transcript of a new run archived from src
// (one that none of the files before it started is) holds lines lines,
// or, lines 0, once it waits for the transcript lock of locked. The test
// holds that transcript's lock ("": none) from before twasm starts until
// it is killed, and fails if twasm ends before the step or does not
// reach it within hangBound.
func killAt(t *testing.T, h *fakeHome, src string, lines int, locked string, args ...string) {
	t.Helper()
	known := map[string]bool{}
	paths, _ := filepath.Glob(filepath.Join(h.stor, "transcripts", "*.jsonl"))
	for _, p := range paths {
		known[p] = true
	}
	var f *os.File
	if locked != "" {
		var err error
		if f, err = os.OpenFile(locked, os.O_RDWR, 0); err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
			t.Fatal(err)
		}
	}
	p := start(t, nil, h.env, append([]string{"--storage", h.stor}, args...)...)
	exited := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(exited) }()
	w := &newTranscript{stor: h.stor, src: src, known: known}
	reached := func() bool {
		if lines > 0 {
			return w.count() >= lines
		}
		return lockWaited(t, f)
	}
	for deadline := time.Now().Add(hangBound); !reached(); {
		select {
		case <-exited:
			t.Fatalf("twasm %s ended before the step: %s%s", strings.Join(args, " "), p.out, p.errOut)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("twasm %s never reached the step (%d lines of the new run)", strings.Join(args, " "), w.count())
		}
		time.Sleep(time.Millisecond)
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-exited
	t.Logf("killed at %d lines of the new run", w.count())
}

// loseLedger removes h's archive ledger, as a storage that lost it
// (the next sync rebuilds it from the transcripts).
func loseLedger(t *testing.T, h *fakeHome) {
	t.Helper()
	if err := os.Remove(filepath.Join(h.stor, "archive", "ledger.jsonl")); err != nil {
		t.Fatal(err)
	}
}

// lockWaited reports whether a writer waits for the transcript lock of
// the file f names: the recorder signals its wait with an OFD read lock on
// one byte at 1<<62 (recorder/lease.go), which a write lock's test there
// finds.
func lockWaited(t *testing.T, f *os.File) bool {
	t.Helper()
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart, Start: 1 << 62, Len: 1}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_GETLK, &lk); err != nil {
		t.Fatal(err)
	}
	return lk.Type != unix.F_UNLCK
}

// rooRelinkFiles are a Roo Code 3.35-3.48 task that delegates (its
// new_task call, native tool protocol) and its sub-task, written by hand
// from RooCodeInc/Roo-Code v3.48.0 as synccmd's TestSyncRooDelegatedSubTask
// writes them: the parent's folder before the sub-task returned (first:
// nothing names the sub-task, whose folder names no parent) and after
// (the call's result "Subtask <id> completed.\n\nResult:\n...",
// abi.StoreParent.Result), the sub-task's folder, and the sub-task's
// folder's path. The call's message holds "\\@", which Roo makes "\@" in
// the sub-task's first message: not the same words, so the result alone
// ties them. legacy: a task of Roo Code before 3.35 (v3.34.8), its call's
// message the sub-task's first message (abi.StoreParent.Prompt), its
// result "[new_task completed] Result: ..." naming no task; first is the
// sub-task's folder alone (a run of its own), then the parent's.
func rooRelinkFiles(legacy bool) (first, then map[string][]byte, sub string) {
	const parent, child, ts = "f1000000-0000-4000-8000-000000000001", "c2000000-0000-4000-8000-000000000002", 1767225600000
	message, text, result := `Write the changelog of \\\\@/docs.`, `Write the changelog of \\@/docs.`, "Subtask "+child+" completed.\\n\\nResult:\\nDone." // JSON text
	if legacy {
		message, text, result = "Write the changelog.", "Write the changelog.", "[new_task completed] Result: Done."
	}
	tasks := filepath.Join(".config", "Code", "User", "globalStorage", "rooveterinaryinc.roo-cline", "tasks")
	req := func(ts, in, out int) string {
		return fmt.Sprintf(`{"ts":%d,"type":"say","say":"api_req_started","text":"{\"apiProtocol\":\"anthropic\",\"tokensIn\":%d,\"tokensOut\":%d,\"cacheWrites\":0,\"cacheReads\":0,\"cost\":0.001}"}`, ts, in, out)
	}
	ui := []string{fmt.Sprintf(`{"ts":%d,"type":"say","say":"text","text":"Plan the release."}`, ts), req(ts+100, 20, 150),
		fmt.Sprintf(`{"ts":%d,"type":"ask","ask":"tool","text":"{\"tool\":\"newTask\",\"mode\":\"code\",\"content\":\"Write the changelog.\"}"}`, ts+200)}
	api := []string{fmt.Sprintf(`{"role":"user","content":[{"type":"text","text":"<task>\nPlan the release.\n</task>"}],"ts":%d}`, ts),
		fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":"I'll delegate it."},{"type":"tool_use","id":"toolu_01NewTask","name":"new_task","input":{"mode":"code","message":"%s","todos":""}}],"ts":%d}`, message, ts+200)}
	doc := func(items []string) []byte { return []byte("[" + strings.Join(items, ",") + "]") }
	dir, sub := filepath.Join(tasks, parent), filepath.Join(tasks, child)
	childFiles := map[string][]byte{
		filepath.Join(sub, "ui_messages.json"): doc([]string{fmt.Sprintf(`{"ts":%d,"type":"say","say":"text","text":"%s"}`, ts+300, text),
			req(ts+400, 10, 60), fmt.Sprintf(`{"ts":%d,"type":"say","say":"completion_result","text":"Wrote CHANGELOG.md."}`, ts+500)}),
		filepath.Join(sub, "api_conversation_history.json"): doc([]string{fmt.Sprintf(`{"role":"user","content":[{"type":"text","text":"<task>\n%s\n</task>"}],"ts":%d}`, text, ts+300),
			fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":"Wrote CHANGELOG.md."}],"ts":%d}`, ts+500)}),
	}
	first, then = map[string][]byte{filepath.Join(dir, "ui_messages.json"): doc(ui), filepath.Join(dir, "api_conversation_history.json"): doc(api)}, map[string][]byte{}
	if legacy {
		first = map[string][]byte{}
	}
	maps.Copy(first, childFiles)
	then[filepath.Join(dir, "ui_messages.json")] = doc(append(ui, fmt.Sprintf(`{"ts":%d,"type":"say","say":"subtask_result","text":"Done."}`, ts+1000), req(ts+1100, 30, 40),
		fmt.Sprintf(`{"ts":%d,"type":"say","say":"completion_result","text":"The release is planned."}`, ts+1200)))
	then[filepath.Join(dir, "api_conversation_history.json")] = doc(append(api,
		fmt.Sprintf(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01NewTask","content":"%s"}],"ts":%d}`, result, ts+1000),
		fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":"The release is planned."}],"ts":%d}`, ts+1200)))
	return first, then, sub
}

// TestKilledSubAgentRelink: a sub-agent's file archived before its
// session named the call that started it is archived again, by the sync
// that finds the call named, as a child run linked at the call, and the
// first run is ended, superseded by it: a Kimi Code sub-agent's journal
// synced while its Agent call ran (linked at its session's latest part;
// archive's looseOf), the same journal synced before its session's
// file was there (a run of its own; legacyOf), a Roo Code 3.35-3.48
// sub-task synced before its parent's new_task result named it (a run
// of its own; linkNamed), and a Roo Code sub-task before 3.35 synced
// before its parent, whose new_task call's message is its first message
// (a run of its own; linkNamed, by the prompt).
// Killed with SIGKILL at each step of that re-link, then synced again,
// the storage holds what a sync never killed leaves: every run complete
// (no step left open, every run of the file but one ended), exactly one
// live run of the file, linked at the call, and the tokens stats --all
// counts as many; doctor finds nothing interrupted, every transcript is
// valid, and a further sync archives nothing. The steps: once the new
// run is begun (its transcript at a few lines; the test holds the first
// run's transcript lock, so the sync cannot end it first), while its
// part is written (at many lines, the Kimi journal made long), and once
// the part is written and the sync waits for that lock to end the first
// run (then with the ledger lost too, rebuilt by the next sync from the
// transcripts, where the new run's run.started says it supersedes the
// first: archive.SourceRef.Supersedes; so too once the new run is
// begun). Before, the last left the first run open and live beside the
// new one in the ledger, and the next sync archived the file a third
// time at the same call (a duplicate step.call_workflow.started,
// validate failing), its tokens counted twice; and so for the journal
// synced before its session (kimi_own_run), whose new run's link names
// no run, until its run.started named it.
func TestKilledSubAgentRelink(t *testing.T) {
	t.Parallel()
	session, cut, whole, kimiSub, agent := kimiRelinkFiles(t, 400)
	rooFirst, rooThen, rooSub := rooRelinkFiles(false)
	legacyFirst, legacyThen, _ := rooRelinkFiles(true)
	type kill struct {
		name  string
		lines int  // of the new run's transcript; 0: once the sync waits for the first run's lock
		lock  bool // the test holds the first run's transcript lock
		// lost: the ledger is lost after the kill (rebuilt from the
		// transcripts by the next sync).
		lost bool
	}
	for _, c := range []struct {
		name        string
		first, then map[string][]byte
		sub, at     string
		kills       []kill
	}{
		{"kimi", map[string][]byte{session: cut, kimiSub: agent}, map[string][]byte{session: whole}, kimiSub, "agent.wire_Agent_3",
			[]kill{{"begun", 2, true, false}, {"mid_part", 600, false, false}, {"ending_the_first_run", 0, true, false}, {"ending_the_first_run_ledger_lost", 0, true, true}}},
		// The journal synced with no session beside it: a run of its
		// own (as an older twasm archived it), which the sync that
		// finds the session archives again as its child (legacyOf).
		// With the ledger lost, the first run is named by the new run's
		// run.started alone (archive.SourceRef.Supersedes): its link
		// names none.
		{"kimi_own_run", map[string][]byte{kimiSub: agent}, map[string][]byte{session: whole}, kimiSub, "agent.wire_Agent_3",
			[]kill{{"begun", 2, true, false}, {"begun_ledger_lost", 2, true, true}, {"ending_the_first_run", 0, true, false}, {"ending_the_first_run_ledger_lost", 0, true, true}}},
		{"roo", rooFirst, rooThen, rooSub, "agent.c2000000-0000-4000-8000-000000000002_toolu_01NewTask",
			[]kill{{"begun", 1, true, false}, {"begun_ledger_lost", 1, true, true}, {"ending_the_first_run", 0, true, false}, {"ending_the_first_run_ledger_lost", 0, true, true}}},
		// Roo Code before 3.35: the sub-task synced alone (a run of its
		// own), then its parent, whose new_task call's message is the
		// sub-task's first message (linkNamed, promptKeys).
		{"roo_prompt", legacyFirst, legacyThen, rooSub, "agent.c2000000-0000-4000-8000-000000000002_toolu_01NewTask",
			[]kill{{"begun", 1, true, false}, {"ending_the_first_run", 0, true, false}, {"ending_the_first_run_ledger_lost", 0, true, true}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			// firstSync syncs the files before the call is named and
			// returns the transcript of the file's first run.
			firstSync := func(h *fakeHome) string {
				for rel, b := range c.first {
					h.put(rel, b, 2*time.Hour)
				}
				for _, l := range strings.Split(h.ok("sync").out, "\n") {
					if f := strings.Split(l, "\t"); len(f) >= 4 && f[0] == "new" && f[3] == filepath.Join(h.dir, c.sub) {
						return filepath.Join(h.stor, "transcripts", f[1]+".jsonl")
					}
				}
				t.Fatal("the first sync made no run of " + c.sub)
				return ""
			}
			then := func(h *fakeHome) {
				for rel, b := range c.then {
					h.put(rel, b, time.Hour)
				}
			}
			ref := newFakeHome(t)
			firstSync(ref)
			then(ref)
			ref.ok("sync")
			want := relinkStateOf(t, ref, filepath.Join(ref.dir, c.sub))
			if want.live != 1 || want.all != 2 || want.liveAt != c.at || len(want.notDone) > 0 {
				t.Fatalf("a sync never killed: %+v, want two runs of %s, one live, linked at %s", want, c.sub, c.at)
			}
			for _, k := range c.kills {
				t.Run(k.name, func(t *testing.T) {
					t.Parallel()
					h := newFakeHome(t)
					firstRun := firstSync(h)
					then(h)
					locked := ""
					if k.lock {
						locked = firstRun
					}
					killAt(t, h, filepath.Join(h.dir, c.sub), k.lines, locked, "sync")
					if k.lost {
						loseLedger(t, h)
					}
					r := h.ok("sync")
					t.Logf("then: %s%s", r.out, r.errOut)
					got := relinkStateOf(t, h, filepath.Join(h.dir, c.sub))
					if got.live != 1 || got.liveAt != want.liveAt || got.output != want.output || len(got.notDone) > 0 {
						t.Errorf("after the sync killed and another: %+v\nwant, as one never killed: one live run linked at %s, %d output tokens in all, every run complete", got, want.liveAt, want.output)
					}
					if d := h.ok("doctor", "--json"); strings.Contains(d.out, "interrupted") {
						t.Errorf("doctor still sees an interrupted archive: %s", d.out)
					}
					paths, _ := filepath.Glob(filepath.Join(h.stor, "transcripts", "*.jsonl"))
					if v := h.run(append([]string{"validate"}, paths...)...); v.code != 0 {
						t.Errorf("validate: %v", v)
					}
					if r := h.ok("sync"); !strings.Contains(r.errOut, "0 new") || strings.Contains(r.out, "new\t") || strings.Contains(r.out, "grown\t") {
						t.Errorf("a further sync: %s%s, want nothing archived", r.out, r.errOut)
					}
				})
			}
		})
	}
}

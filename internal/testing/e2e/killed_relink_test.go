package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
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

// relinkState is what the runs of a storage say of a Kimi Code session
// and its sub-agent after the sub-agent was linked again at its call:
// the child runs (all) and those of them that are live (neither ended
// superseded nor named superseded by a later link), what is not done
// (a step left open, a superseded run not ended), and the output tokens
// stats counts in all.
type relinkState struct {
	live, all int
	liveAt    string // the live run's link: path in its parent's run
	notDone   []string
	output    int64
}

func relinkStateOf(t *testing.T, h *fakeHome) relinkState {
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
		if evs[0].ParentRunID == "" {
			if open := openSteps(evs); open != "" {
				st.notDone = append(st.notDone, id+" (the session's) leaves "+open+" open")
			}
			continue
		}
		st.all++
		if open := openSteps(evs); open != "" {
			st.notDone = append(st.notDone, id+" leaves "+open+" open")
		}
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
// before holds and counts its lines.
type newTranscript struct {
	stor  string
	known map[string]bool
	w     *lineWatch
}

func (n *newTranscript) count() int {
	if n.w == nil {
		paths, _ := filepath.Glob(filepath.Join(n.stor, "transcripts", "*.jsonl"))
		for _, p := range paths {
			if !n.known[p] {
				n.w = &lineWatch{stor: n.stor, file: p}
			}
		}
		if n.w == nil {
			return 0
		}
	}
	return n.w.count()
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

// TestKilledSubAgentRelink: a Kimi Code sub-agent's journal synced while
// its Agent call ran is linked at its session's latest part; the sync
// after the session brought the call's result archives it again as a
// child run linked at the call and ends the first, superseded by it
// (archive's looseOf). Killed with SIGKILL at each step of that
// re-link, then synced again, the storage holds what a sync never
// killed leaves: every run complete (no step left open), exactly one
// live run of the sub-agent's file, linked at the call, and the
// sub-agent's tokens counted once in `stats --all`; doctor finds
// nothing interrupted, every transcript is valid, and a further sync
// archives nothing. The steps: while the new child run's part is
// written (its transcript at a few lines, and at many), and once it is
// written and the first run is being ended (the test holds that run's
// transcript lock, so the sync waits there, and kills it waiting).
// Before, the last left the first run open and live beside the new one
// for good (the ledger named only the new run for the file), counted
// twice by ls and search.
func TestKilledSubAgentRelink(t *testing.T) {
	t.Parallel()
	session, first, whole, sub, agent := kimiRelinkFiles(t, 400)
	ref := newFakeHome(t)
	ref.put(session, first, time.Hour)
	ref.put(sub, agent, time.Hour)
	ref.ok("sync")
	ref.put(session, whole, 30*time.Minute)
	ref.ok("sync")
	want := relinkStateOf(t, ref)
	if want.live != 1 || want.all != 2 || want.liveAt != "agent.wire_Agent_3" || len(want.notDone) > 0 {
		r := ref.ok("sync")
		t.Fatalf("a sync never killed: %+v, want two child runs, one live, linked at the call\n%s%s\n%s", want, r.out, r.errOut, ref.ok("tree", "latest").out)
	}
	for _, tc := range []struct {
		name string
		at   int // lines of the new child run's transcript; 0: at the end of the first run
	}{
		{"begun", 2},
		{"mid_part", 600},
		{"ending_the_first_run", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newFakeHome(t)
			h.put(session, first, time.Hour)
			h.put(sub, agent, time.Hour)
			h.ok("sync")
			h.put(session, whole, 30*time.Minute)
			known := map[string]bool{}
			paths, _ := filepath.Glob(filepath.Join(h.stor, "transcripts", "*.jsonl"))
			var looseRun string
			for _, p := range paths {
				known[p] = true
				if evs := clitest.ReadRun(t, p); evs[0].ParentRunID != "" {
					looseRun = p
				}
			}
			if looseRun == "" {
				t.Fatal("the first sync made no child run")
			}
			if tc.at > 0 {
				p := start(t, nil, h.env, "--storage", h.stor, "sync")
				w := &newTranscript{stor: h.stor, known: known}
				deadline := time.Now().Add(hangBound)
				for w.count() < tc.at && time.Now().Before(deadline) {
					time.Sleep(time.Millisecond)
				}
				_ = p.cmd.Process.Signal(syscall.SIGKILL)
				_ = p.cmd.Wait()
				t.Logf("killed at %d lines of the new child run", w.count())
			} else {
				f, err := os.OpenFile(looseRun, os.O_RDWR, 0)
				if err != nil {
					t.Fatal(err)
				}
				if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
					t.Fatal(err)
				}
				p := start(t, nil, h.env, "--storage", h.stor, "sync")
				exited := make(chan struct{})
				go func() { _ = p.cmd.Wait(); close(exited) }()
				deadline := time.Now().Add(hangBound)
			wait:
				for !lockWaited(t, f) {
					select {
					case <-exited:
						t.Fatalf("the sync ended without waiting for the first run's lock: %s%s", p.out, p.errOut)
					default:
					}
					if time.Now().After(deadline) {
						break wait
					}
					time.Sleep(time.Millisecond)
				}
				_ = p.cmd.Process.Signal(syscall.SIGKILL)
				<-exited
				f.Close()
			}
			r := h.ok("sync")
			t.Logf("then: %s%s", r.out, r.errOut)
			got := relinkStateOf(t, h)
			if got.live != 1 || got.liveAt != want.liveAt || got.output != want.output || len(got.notDone) > 0 {
				t.Errorf("after the sync killed and another: %+v\nwant, as one never killed: one live child run linked at %s, %d output tokens in all, every run complete", got, want.liveAt, want.output)
			}
			if d := h.ok("doctor", "--json"); strings.Contains(d.out, "interrupted") {
				t.Errorf("doctor still sees an interrupted archive: %s", d.out)
			}
			paths, _ = filepath.Glob(filepath.Join(h.stor, "transcripts", "*.jsonl"))
			if v := h.run(append([]string{"validate"}, paths...)...); v.code != 0 {
				t.Errorf("validate: %v", v)
			}
			if r := h.ok("sync"); !strings.Contains(r.errOut, "0 new") || strings.Contains(r.out, "new\t") || strings.Contains(r.out, "grown\t") {
				t.Errorf("a further sync: %s%s, want nothing archived", r.out, r.errOut)
			}
		})
	}
}

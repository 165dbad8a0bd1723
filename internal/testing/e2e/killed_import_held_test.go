package e2e

import (
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/transcript"
)

// sessionTrees describes the runs of a storage root as comparable between
// two storages: each top-level run by its source file's name, whether it
// ended and how, and the child runs it links in order (the link's path,
// iteration, title and how it completed), each child described the same
// way with its messages counted and hashed.
func sessionTrees(t *testing.T, stor string) string {
	t.Helper()
	runs := clitest.StorageRuns(t, stor)
	byID := map[string][]*transcript.Event{}
	for _, evs := range runs {
		byID[evs[0].RunID] = evs
	}
	// Each archived run's source file name and sorted messages.
	names, msgs := map[string]string{}, map[string][]string{}
	for name, rs := range clitest.ArchivedOf(t, runs) {
		for _, r := range rs {
			names[r.ID], msgs[r.ID] = name, r.Messages
		}
	}
	describe := func(evs []*transcript.Event) string {
		id := evs[0].RunID
		end := "open"
		if last := evs[len(evs)-1]; last.Type == transcript.RunCompleted {
			end = "ended " + last.Step().Status
		}
		return fmt.Sprintf("%s %s, %d messages %x", names[id], end, len(msgs[id]), sha256.Sum256([]byte(strings.Join(msgs[id], "\n"))))
	}
	var out []string
	for _, evs := range byID {
		if evs[0].ParentRunID != "" {
			continue
		}
		lines := []string{describe(evs)}
		done := map[string]string{}
		for _, ev := range evs {
			if ev.Type == transcript.StepCallWorkflowCompleted {
				done[fmt.Sprintf("%s#%d", ev.Path, ev.Iteration)] = ev.Step().Status
			}
		}
		for _, ev := range evs {
			if ev.Type != transcript.StepCallWorkflowStarted || ev.ChildRunID == "" {
				continue
			}
			_, sup := ev.Step().Extra[lifecycle.SupersedesField]
			key := fmt.Sprintf("%s#%d", ev.Path, ev.Iteration)
			child := "missing"
			if c := byID[ev.ChildRunID]; c != nil {
				child = describe(c)
			}
			lines = append(lines, fmt.Sprintf("  %s %q (supersedes %v, link %q) -> %s", key, ev.Step().Name, sup, done[key], child))
		}
		out = append(out, strings.Join(lines, "\n"))
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// TestKilledImportHeldRun: `twasm import` given a Claude Code session's
// file and its sub-agents' files holds the session's run open after the
// session's part while it archives the sub-agents' files into it as child
// runs (archive.Archiver.Hold), and ends it after them. Killed there
// (SIGKILL, or interrupted by SIGINT), once the transcript of a sub-agent's
// run holds a given number of lines, it left the session's run open for
// ever: nothing said the import meant to end it, and a sub-agent's file it
// had not reached became, when imported again, a run of its own. Now, while
// the run is open doctor says an import held it and never ended it, and the
// next import of the same files, or a sync, finishes it: each sub-agent's
// file linked into the session's run as an import never killed links it
// (the same links, completed alike, each child run holding the same
// messages), the session's run ended with its status, nothing left
// interrupted or running, every transcript valid.
func TestKilledImportHeldRun(t *testing.T) {
	t.Parallel()
	const dir = ".claude/projects/-w/"
	const stem = "5e55104e-aaaa-4000-8000-000000000001"
	session := clitest.ClaudeSession("main", 5)
	big := clitest.ClaudeSession("big", 3000) // its run: about 15,000 transcript lines
	small := clitest.ClaudeSession("small", 20)
	setup := func(h *fakeHome) []string {
		return []string{
			h.put(dir+stem+".jsonl", session, time.Hour),
			h.put(dir+stem+"/subagents/agent-big.jsonl", big, time.Hour),
			h.put(dir+stem+"/subagents/agent-small.jsonl", small, time.Hour),
		}
	}
	importArgs := func(files []string) []string { return append([]string{"import", "--provider", "claude"}, files...) }
	ref := newFakeHome(t)
	ref.ok(importArgs(setup(ref))...)
	want := sessionTrees(t, ref.stor)
	if strings.Count(want, "\n") != 2 || strings.Contains(want, "open") || strings.Contains(want, "missing") {
		t.Fatalf("an import never killed: want the session's run ended, its two sub-agents linked:\n%s", want)
	}
	for _, tc := range []struct {
		name string
		sig  syscall.Signal
		then []string // what runs next: import (nil: the same import) or sync
		at   []int    // lines of agent-big's transcript at which the signal is sent
	}{
		{"SIGKILL, imported again", syscall.SIGKILL, nil, []int{1, 2, 7000, 14900}},
		{"SIGKILL, synced", syscall.SIGKILL, []string{"sync"}, []int{2, 9000}},
		{"SIGINT, imported again", syscall.SIGINT, nil, []int{2, 9000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			held := 0
			for _, at := range tc.at {
				t.Run(fmt.Sprintf("at_line_%d", at), func(t *testing.T) {
					h := newFakeHome(t)
					files := setup(h)
					w := &lineWatch{stor: h.stor, name: "agent-big"}
					p := start(t, nil, h.env, append([]string{"--storage", h.stor}, importArgs(files)...)...)
					signalAt(t, p, w, at, tc.sig)
					t.Logf("signalled at %d lines of agent-big's run (exit %d)", w.count(), p.cmd.ProcessState.ExitCode())
					// The session's run is the one no run links.
					open := false
					for _, evs := range clitest.StorageRunsKilled(t, h.stor) {
						if evs[0].ParentRunID == "" && evs[len(evs)-1].Type != transcript.RunCompleted {
							open = true
						}
					}
					if open {
						held++
						if d := h.run("doctor", "--json"); !strings.Contains(d.out, "held the session's run open for its sub-agents' files") {
							t.Errorf("the session's run is open and doctor does not say an import held it: %s", d.out)
						}
					}
					then := tc.then
					if then == nil {
						then = importArgs(files)
					}
					r := h.ok(then...)
					t.Logf("then: %s%s", r.out, r.errOut)
					if got := sessionTrees(t, h.stor); got != want {
						t.Errorf("after %v:\n%s\nwant, as an import never killed:\n%s", then[0], got, want)
					}
					d := h.ok("doctor", "--json")
					if strings.Contains(d.out, "interrupted") {
						t.Errorf("doctor still sees an interrupted archive: %s", d.out)
					}
					paths, _ := filepath.Glob(filepath.Join(h.stor, "transcripts", "*.jsonl"))
					if v := h.run(append([]string{"validate"}, paths...)...); v.code != 0 {
						t.Errorf("validate: %v", v)
					}
					for _, l := range strings.Split(strings.TrimSpace(h.ok("ls", "--json").out), "\n") {
						if strings.Contains(l, `"status":"running"`) {
							t.Errorf("ls lists a run as running: %s", l)
						}
					}
				})
			}
			if held == 0 {
				t.Errorf("no signal landed while the session's run was held: nothing was checked")
			}
		})
	}
}

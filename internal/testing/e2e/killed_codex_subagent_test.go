package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
	"github.com/twasm/twasm/transcript"
)

// codexSubAgentFiles are a Codex parent rollout (golden
// rollout_v0158_subagent_spawn_parent.jsonl, whose spawn_agent call
// names the child by its path) and a big rollout of the sub-agent it
// spawned (golden rollout_v0158_subagent_spawned_child.jsonl, its
// exec_command call, output and answer repeated turns times: four
// transcript lines each), each where Codex keeps it: the parent in its
// start day's directory, the child in childDay's.
func codexSubAgentFiles(t *testing.T, turns int, childDay string) (parentRel string, parent []byte, childRel string, child []byte) {
	t.Helper()
	read := func(name string) [][]byte {
		b, err := os.ReadFile(filepath.Join(root, "testdata", "golden", "codex", name))
		if err != nil {
			t.Fatal(err)
		}
		return bytes.SplitAfter(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
	}
	parent = bytes.Join(read("rollout_v0158_subagent_spawn_parent.jsonl"), nil)
	lines := read("rollout_v0158_subagent_spawned_child.jsonl")
	var b bytes.Buffer
	for _, l := range lines[:5] { // session_meta to the task
		b.Write(l)
	}
	for i := range turns {
		for _, l := range lines[5:9] { // the call, its output, the answer twice
			b.Write(bytes.ReplaceAll(l, []byte("call_findA"), fmt.Appendf(nil, "call_find%d", i)))
		}
	}
	for _, l := range lines[9:] { // usage, task_complete
		b.Write(l)
	}
	const parentID, childID = "019e0000-0000-7000-8000-00000000a001", "019e0000-0000-7000-8000-00000000a002"
	return ".codex/sessions/2026/11/20/rollout-2026-11-20T23-59-00-" + parentID + ".jsonl", parent,
		".codex/sessions/" + childDay + "/rollout-2026-11-21T00-00-01-" + childID + ".jsonl", b.Bytes()
}

// TestKilledCodexSubAgent: `twasm sync` and `twasm import` killed with
// SIGKILL while they archive a Codex sub-agent's rollout into its
// parent's run (a child run, linked at the spawn_agent call), once the
// child's transcript holds a given number of lines, then run again
// (sync, or the same import): the parent's run links the child once, as
// a run never killed links it (the same link, the child run holding the
// same messages, ended alike), nothing is left interrupted or running,
// and every transcript is valid. So a kill keeps sync's promise for a
// sub-agent's rollout too: every run complete or absent.
func TestKilledCodexSubAgent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, cmd, childDay string
		at                  []int
	}{
		// The child in the next day's directory: sync finds its parent
		// by the thread id in the parent's file name.
		{"sync", "sync", "2026/11/21", []int{2, 3000}},
		// An import holds the parent's run for the child: killed, the
		// next import settles the held run, linking the child (found
		// beside the parent: the same day's directory) into it.
		{"import", "import", "2026/11/20", []int{2, 3000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			parentRel, parent, childRel, child := codexSubAgentFiles(t, 2000, tc.childDay)
			setup := func(h *fakeHome) []string {
				return []string{h.put(parentRel, parent, time.Hour), h.put(childRel, child, time.Hour)}
			}
			args := func(files []string) []string {
				if tc.cmd == "import" {
					return append([]string{"import", "--provider", "codex"}, files...)
				}
				return []string{"sync"}
			}
			ref := newFakeHome(t)
			ref.ok(args(setup(ref))...)
			want := sessionTrees(t, ref.stor)
			if strings.Count(want, "\n") != 1 || !strings.Contains(want, "_call_spawnA#0") || strings.Contains(want, "missing") {
				t.Fatalf("a %s never killed: want the parent's run, the child linked at call_spawnA:\n%s", tc.cmd, want)
			}
			childStem := strings.TrimSuffix(filepath.Base(childRel), ".jsonl")
			for _, at := range tc.at {
				t.Run(fmt.Sprintf("at_line_%d", at), func(t *testing.T) {
					h := newFakeHome(t)
					files := setup(h)
					w := &lineWatch{stor: h.stor, name: childStem, provider: "codex"}
					p := start(t, nil, h.env, append([]string{"--storage", h.stor}, args(files)...)...)
					signalAt(t, p, w, at, syscall.SIGKILL)
					t.Logf("killed at %d lines of the child's run (exit %d)", w.count(), p.cmd.ProcessState.ExitCode())
					r := h.ok(args(files)...)
					t.Logf("then: %s%s", r.out, r.errOut)
					if got := sessionTrees(t, h.stor); got != want {
						t.Errorf("after the %s killed and another:\n%s\nwant, as one never killed:\n%s", tc.cmd, got, want)
					}
					if d := h.ok("doctor", "--json"); strings.Contains(d.out, "interrupted") {
						t.Errorf("doctor still sees an interrupted archive: %s", d.out)
					}
					paths, _ := filepath.Glob(filepath.Join(h.stor, "transcripts", "*.jsonl"))
					if v := h.run(append([]string{"validate"}, paths...)...); v.code != 0 {
						t.Errorf("validate: %v", v)
					}
					for _, evs := range clitest.StorageRuns(t, h.stor) {
						if evs[0].ParentRunID != "" && evs[len(evs)-1].Type != transcript.RunCompleted && tc.cmd == "import" {
							t.Errorf("import: the child's run %s is not ended", evs[0].RunID)
						}
					}
					// An import ends its runs; a sync leaves a session's
					// run open, and its link to the child's open run
					// running, as a sync never killed leaves them.
					for _, l := range strings.Split(strings.TrimSpace(h.ok("ls", "--json").out), "\n") {
						if strings.Contains(l, `"status":"running"`) && tc.cmd == "import" {
							t.Errorf("ls lists a run as running: %s", l)
						}
					}
				})
			}
		})
	}
}

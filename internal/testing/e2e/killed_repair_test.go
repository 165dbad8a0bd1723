package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// TestKilledRepair: `twasm sync --repair` archives a Claude Code session
// whose run's raw capture is damaged again, whole, into a new run (its
// sub-agent's file into a child run of it), ends the damaged run's
// sub-agent run and then the damaged run, each superseded by the new
// one. Killed with SIGKILL at each step of that (while the new session
// run's part is written; once it is written, the sync waiting for the
// old sub-agent run's transcript lock to end it, the test holding that
// lock; once that run is ended, the sync waiting for the damaged run's
// lock; while the sub-agent file's new run is written), with the ledger
// kept or lost, then synced again by a plain `twasm sync`, the storage
// holds what a sync never killed leaves: one live run of each file (the
// new ones, or, when the kill cut the new session run's part short, the
// damaged ones, which a later repair archives again), every run
// complete, the tokens stats --all counts those of a fresh sync of the
// same home, doctor finds nothing interrupted, every transcript is valid,
// a further sync archives nothing, and a further repair leaves nothing
// damaged and the tokens as they were. Before, a kill after the new run
// was written left the damaged run live beside it (its tokens counted
// twice) until the next repair, and one after the old sub-agent run was
// ended left the sub-agent's file in no live run (its tokens counted
// nowhere) for good.
func TestKilledRepair(t *testing.T) {
	t.Parallel()
	const dir = ".claude/projects/-w/"
	const stem = "5e55104e-bbbb-4000-8000-000000000001"
	session := clitest.ClaudeSession("main", 2000)    // its run: about 10,000 transcript lines
	agent := clitest.ClaudeSession("sub-agent", 2000) // tags of other lengths: other session ids
	setup := func(h *fakeHome) (sess, sub string) {
		return h.put(dir+stem+".jsonl", session, time.Hour), h.put(dir+stem+"/subagents/agent-a1.jsonl", agent, time.Hour)
	}
	runOf := func(out, path string) string {
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Split(l, "\t"); len(f) >= 4 && f[0] == "new" && f[3] == path {
				return f[1]
			}
		}
		t.Fatalf("no new run of %s in\n%s", path, out)
		return ""
	}
	ref := newFakeHome(t)
	refSess, refSub := setup(ref)
	ref.ok("sync")
	wantSess, wantSub := relinkStateOf(t, ref, refSess), relinkStateOf(t, ref, refSub)
	wantUsage := usageOutput(t, ref)
	if wantSess.live != 1 || wantSub.live != 1 || wantSub.liveAt == "" || wantSess.output == 0 {
		t.Fatalf("a sync never killed: %+v %+v, want one live run of each file, the sub-agent's linked", wantSess, wantSub)
	}
	for _, k := range []struct {
		name string
		// lines of the new run of the session's file (watch: the
		// sub-agent's file's) at which the sync is killed; 0: once it
		// waits for the lock of the old run of lock (the session's file,
		// else the sub-agent's).
		lines        int
		watchSub     bool
		lockSession  bool
		lost         bool
		repairedLive bool // the new runs are the live ones after the next sync
	}{
		{"session_mid_part_ledger_lost", 5000, false, false, true, false},
		{"ending_the_sub_agent_run", 0, false, false, false, true},
		{"ending_the_sub_agent_run_ledger_lost", 0, false, false, true, true},
		{"ending_the_session_run", 0, false, true, false, true},
		{"ending_the_session_run_ledger_lost", 0, false, true, true, true},
		{"sub_agent_mid_part_ledger_lost", 5000, true, false, true, true},
	} {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			h := newFakeHome(t)
			sess, sub := setup(h)
			first := h.ok("sync").out
			oldSess, oldSub := runOf(first, sess), runOf(first, sub)
			clitest.DamageRaw(t, h.stor, oldSess, "main prompt 1:", "main prompt 1;")
			src, locked := sess, ""
			if k.watchSub {
				src = sub
			}
			if k.lines == 0 {
				locked = transcriptPath(h.stor, oldSub)
				if k.lockSession {
					locked = transcriptPath(h.stor, oldSess)
				}
			}
			killAt(t, h, src, k.lines, locked, "sync", "--repair")
			if k.lost {
				loseLedger(t, h)
			}
			r := h.ok("sync")
			t.Logf("then: %s%s", r.out, r.errOut)
			check := func(when string) {
				t.Helper()
				gotSess, gotSub := relinkStateOf(t, h, sess), relinkStateOf(t, h, sub)
				if gotSess.live != 1 || gotSub.live != 1 || gotSub.liveAt != wantSub.liveAt || gotSess.output != wantSess.output ||
					len(gotSess.notDone) > 0 || len(gotSub.notDone) > 0 {
					t.Errorf("%s: session %+v, sub-agent %+v\nwant, as a sync never killed: one live run of each file, the sub-agent's linked at %s, %d output tokens in all, every run complete",
						when, gotSess, gotSub, wantSub.liveAt, wantSess.output)
				}
				if ls := strings.Split(strings.TrimSpace(h.ok("ls", "--json").out), "\n"); len(ls) != 1 {
					t.Errorf("%s: ls lists %d runs, want the session's once: %s", when, len(ls), ls)
				}
				if got := usageOutput(t, h); got != wantUsage {
					t.Errorf("%s: usage counts %d output tokens, want %d", when, got, wantUsage)
				}
				if d := h.run("doctor", "--json"); strings.Contains(d.out, "interrupted") {
					t.Errorf("%s: doctor still sees an interrupted archive: %s", when, d.out)
				}
				paths, _ := filepath.Glob(filepath.Join(h.stor, "transcripts", "*.jsonl"))
				if v := h.run(append([]string{"validate"}, paths...)...); v.code != 0 {
					t.Errorf("%s: validate: %v", when, v)
				}
			}
			check("after the repair killed and a sync")
			var damaged struct {
				Damaged []json.RawMessage `json:"damaged"`
			}
			if err := json.Unmarshal([]byte(h.run("doctor", "--json").out), &damaged); err != nil {
				t.Fatal(err)
			}
			if want := map[bool]int{true: 0, false: 1}[k.repairedLive]; len(damaged.Damaged) != want {
				t.Errorf("doctor finds %d damaged run(s), want %d: %s", len(damaged.Damaged), want, damaged.Damaged)
			}
			if r := h.ok("sync"); !strings.Contains(r.errOut, "0 new") || strings.Contains(r.out, "new\t") || strings.Contains(r.out, "grown\t") {
				t.Errorf("a further sync: %s%s, want nothing archived", r.out, r.errOut)
			}
			h.ok("sync", "--repair")
			check("after a further repair")
			if err := json.Unmarshal([]byte(h.run("doctor", "--json").out), &damaged); err != nil || len(damaged.Damaged) != 0 {
				t.Errorf("doctor after a further repair: %s (%v), want nothing damaged", damaged.Damaged, err)
			}
		})
	}
}

// usageOutput is the output tokens `twasm usage` counts in all.
func usageOutput(t *testing.T, h *fakeHome) int64 {
	t.Helper()
	n, _ := clitest.UsageTotal(t, h.ok("usage", "--json").out)
	return n
}

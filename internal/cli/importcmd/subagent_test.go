package importcmd_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// A real Claude Code sub-agent transcript (subagents/agent-afc096d.jsonl of
// session 6c2214d7-..., whose sessionId every line states) and a real
// session log standing for its session's file (another session's content:
// what links the two is where the files sit, as Claude Code lays them out).
var (
	subAgentLog = filepath.Join(clitest.Root, "testdata", "captures", "claude", "spotter_subagent_transcript_v2.1.38.jsonl")
	sessionLog  = filepath.Join(clitest.Root, "testdata", "captures", "claude", "spotter_session_log_v2.1.38_short.jsonl")
)

const subAgentSession = "6c2214d7-b87e-4432-8e41-22ba294ea584"

// TestImportSubAgent: a Claude sub-agent's file imported by itself never
// passes as a session of its own. When its session's run is open (synced
// earlier) it becomes a child run of that run, in the session's totals;
// when its session's file is there and not archived, the import archives
// that file with it, and the sub-agent's run is a child run of the
// session's (before, it stood alone: import ends every run it writes at
// once, so the session's run could not take it later); when the session's
// file is gone, it is a run of its own named as the sub-agent of its
// session, with the reason.
func TestImportSubAgent(t *testing.T) {
	t.Parallel()
	sub, session := clitest.ReadFile(t, subAgentLog), clitest.ReadFile(t, sessionLog)
	const dir = ".claude/projects/-home-user-projects-spotter"
	subRel := dir + "/" + subAgentSession + "/subagents/agent-afc096d.jsonl"
	for _, c := range []struct {
		name string
		// session: the session file is there; synced: `twasm sync` read it
		// before the sub-agent's file was written.
		session, synced bool
		wantName        string // the sub-agent run's name; "" when it is a child run
		wantReason      string
		wantTopLevel    int
	}{
		{name: "session gone", wantName: "claude sub-agent agent-afc096d of session " + subAgentSession,
			wantReason: "is gone: archived as a run of its own", wantTopLevel: 1},
		{name: "session not archived: imported with it", session: true, wantTopLevel: 1},
		{name: "session synced, run open", session: true, synced: true, wantTopLevel: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := clitest.NewHome(t)
			var sessionRun string
			if c.session {
				h.Put(dir+"/"+subAgentSession+".jsonl", session, time.Hour)
			}
			if c.synced {
				got := clitest.Outcomes(h.OK("sync").Out)
				if len(got["new"]) != 1 {
					t.Fatalf("sync: %v, want the session's run", got)
				}
				sessionRun = got["new"][0]
			}
			file := h.Put(subRel, sub, time.Hour)
			r := h.OK("import", "--provider", "claude", "--json", file)
			type imported struct {
				File, Action, Reason, Transcript string
				RunID                            string `json:"run_id"`
			}
			var im imported
			for _, l := range strings.Split(strings.TrimSpace(r.Out), "\n") {
				var o imported
				if err := json.Unmarshal([]byte(l), &o); err != nil || o.Action != "new" {
					t.Fatalf("import: %v\n%s%s", err, r.Out, r.ErrOut)
				}
				switch o.File {
				case file:
					im = o
				case filepath.Join(h.Dir, dir, subAgentSession+".jsonl"):
					sessionRun = o.RunID // its session's file, archived with it
				default:
					t.Errorf("import archived %s", o.File)
				}
			}
			if !strings.Contains(im.Reason, c.wantReason) {
				t.Errorf("reason %q, want it to say %q", im.Reason, c.wantReason)
			}
			evs := clitest.ReadRun(t, im.Transcript)
			started := evs[0]
			name := clitest.RunEnd(t, evs).Name
			switch {
			case c.wantName != "":
				if name != c.wantName || started.ParentRunID != "" {
					t.Errorf("run %q (parent %q), want %q standing alone", name, started.ParentRunID, c.wantName)
				}
			default:
				if started.ParentRunID != sessionRun {
					t.Errorf("run %q has parent %q, want the session's run %s", name, started.ParentRunID, sessionRun)
				}
			}
			top := strings.Split(strings.TrimSpace(h.OK("ls").Out), "\n")
			if len(top) != c.wantTopLevel {
				t.Errorf("ls lists %d runs, want %d:\n%s", len(top), c.wantTopLevel, strings.Join(top, "\n"))
			}
			for _, l := range top {
				if c.wantName == "" && strings.Contains(l, "agent-afc096d") {
					t.Errorf("the sub-agent passes as a session: %s", l)
				}
			}
		})
	}
}

package runcmd_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/clitest"
	"github.com/twasm/twasm/transcript"
)

// TestSubRun: run begin --parent links both ways, and run end --error
// reports the failure in the child and in the parent's link.
func TestSubRun(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	parent := strings.TrimSpace(clitest.RunOK(t, env, "--storage", storage, "run", "begin", "--name", "release").Out)
	child := strings.TrimSpace(clitest.RunOK(t, env, "--storage", storage, "run", "begin", "--parent", parent, "--path", "fixes", "--name", "fixes").Out)
	clitest.RunOK(t, env, "--storage", storage, "record", "--run-id", child, "--path", "fix", "--provider", "codex",
		"--input", clitest.Golden("codex", "exec_command.jsonl"))
	clitest.RunOK(t, env, "--storage", storage, "run", "end", child, "--error", "tests still failing")
	clitest.RunOK(t, env, "--storage", storage, "run", "end", parent)

	pevs := clitest.ReadRun(t, clitest.TranscriptPath(storage, parent))
	cevs := clitest.ReadRun(t, clitest.TranscriptPath(storage, child))
	started := clitest.OfType(pevs, transcript.StepCallWorkflowStarted)
	done := clitest.OfType(pevs, transcript.StepCallWorkflowCompleted)
	if len(started) != 1 || len(done) != 1 || started[0].ChildRunID != child || done[0].ChildRunID != child ||
		started[0].Path != "fixes" || done[0].Path != "fixes" {
		t.Fatalf("parent links: %+v %+v", started, done)
	}
	if p := done[0].Step(); p.Status != transcript.StatusError || p.Error != "tests still failing" {
		t.Errorf("link completion %q %q", p.Status, p.Error)
	}
	for _, ev := range cevs {
		if ev.ParentRunID != parent {
			t.Fatalf("child line seq %d has parent_run_id %q", ev.Seq, ev.ParentRunID)
		}
	}
	if p := clitest.RunEnd(t, cevs); p.Status != transcript.StatusError || p.Error != "tests still failing" {
		t.Errorf("child end %q %q", p.Status, p.Error)
	}
	clitest.Validate(t, clitest.TranscriptPath(storage, parent), clitest.TranscriptPath(storage, child))
	r := clitest.RunOK(t, env, "--storage", storage, "tree", parent)
	if !strings.Contains(r.Out, "fixes") || !strings.Contains(r.Out, "fix") {
		t.Errorf("tree does not show the sub-run:\n%s", r.Out)
	}
	r = clitest.Run(t, env, "--storage", storage, "run", "end", child)
	if r.Code != 2 {
		t.Errorf("ending a run twice: %v", r)
	}
	r = clitest.Run(t, env, "--storage", storage, "run", "begin", "--parent", parent)
	if r.Code != 2 {
		t.Errorf("--parent without --path: %v", r)
	}
}

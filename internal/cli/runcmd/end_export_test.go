package runcmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// env is the whole environment of each command line of these tests.
var env = clitest.Plain()

// run end --export-dir writes the run folder of every run of the tree when
// the run finishes; export dir writes it for any run later.
func TestRunEndExportDir(t *testing.T) {
	storage, out := t.TempDir(), t.TempDir()
	run := strings.TrimSpace(clitest.RunOK(t, env, "--storage", storage, "run", "begin", "--name", "release").Out)
	clitest.RunOK(t, env, "--storage", storage, "record", "--run-id", run, "--path", "edit", "--provider", "claude",
		"--prompt", "tidy the demo files", "--input", filepath.Join(clitest.Root, "testdata/golden/claude/stream_json_tool_kinds.jsonl"))
	clitest.Run(t, env, "--storage", storage, "record", "--run-id", run, "--path", "fix", "--provider", "codex",
		"--input", filepath.Join(clitest.Root, "testdata/golden/codex/exec_command_failed.jsonl"))
	r := clitest.RunOK(t, env, "--storage", storage, "run", "end", run, "--export-dir", out)
	folder := filepath.Join(out, "runs", run)
	if !strings.Contains(r.Out, folder) {
		t.Fatalf("run end does not name the folder it wrote: %v", r)
	}
	for _, f := range []string{"events.jsonl", "transcript.md", "logs/tools.jsonl", "logs/errors.jsonl"} {
		if st, err := os.Stat(filepath.Join(folder, f)); err != nil || st.Size() == 0 {
			t.Fatalf("%s: %v", f, err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(folder, "transcript.md"))
	for _, w := range []string{"## Deliverables", "`/work/demo/a.txt`", "`/work/demo/b.txt`", "tidy the demo files", "| claude", "| codex",
		"## Errors and Warnings", "tool_error"} {
		if !strings.Contains(string(md), w) {
			t.Fatalf("transcript.md lacks %q:\n%s", w, md)
		}
	}
	tools, _ := os.ReadFile(filepath.Join(folder, "logs", "tools.jsonl"))
	if n := strings.Count(string(tools), "\n"); n < 10 {
		t.Fatalf("tools.jsonl has %d lines", n)
	}
	if !strings.Contains(string(tools), `"exit_code":1`) {
		t.Fatalf("the failed codex command's exit code is not in tools.jsonl:\n%s", tools)
	}
	// export dir of the same run, and a run that does not exist.
	again := t.TempDir()
	clitest.RunOK(t, env, "--storage", storage, "export", "dir", again, run[:8])
	b, _ := os.ReadFile(filepath.Join(again, "runs", run, "events.jsonl"))
	src, _ := os.ReadFile(clitest.TranscriptPath(storage, run))
	if string(b) != string(src) {
		t.Fatal("events.jsonl differs from the transcript")
	}
	if r := clitest.Run(t, env, "--storage", storage, "export", "dir", again, "/etc/passwd"); r.Code == 0 {
		t.Fatalf("a non-transcript exported: %v", r)
	}
}

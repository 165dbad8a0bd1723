package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/twasm/twasm/transcript"
)

// TestConcurrentRecordsOneRun: several record processes append steps to
// one run at once; seq stays 1..N in file order and the run validates.
func TestConcurrentRecordsOneRun(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	id := strings.TrimSpace(twasmOK(t, "--storage", storage, "run", "begin", "--name", "fanout").out)
	inputs := []string{
		example(),
		golden("claude", "stream_json_tool_kinds.jsonl"),
		golden("codex", "exec_command.jsonl"),
		golden("codex", "exec_file_change.jsonl"),
	}
	providers := []string{"claude", "claude", "codex", "codex"}
	var wg sync.WaitGroup
	results := make([]result, len(inputs))
	for i := range inputs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = twasm(t, "--storage", storage, "record", "--run-id", id, "--path", fmt.Sprintf("step%d", i),
				"--provider", providers[i], "--input", inputs[i], "--prompt", fmt.Sprintf("prompt %d", i))
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r.code != 0 {
			t.Fatalf("record %d: %v", i, r)
		}
	}
	twasmOK(t, "--storage", storage, "run", "end", id)
	file := transcriptPath(storage, id)
	evs := readRun(t, file)
	checkSeq(t, evs)
	if evs[0].Type != transcript.RunStarted || runEnd(t, evs).Status != transcript.StatusOK {
		t.Fatal("not bracketed")
	}
	if n := len(ofType(evs, transcript.StepCompleted)); n != len(inputs) {
		t.Errorf("%d steps, want %d", n, len(inputs))
	}
	if n := len(ofType(evs, transcript.MessageUser)); n < len(inputs) {
		t.Errorf("%d prompts, want %d", n, len(inputs))
	}
	validate(t, file)
	// Attaching to a finished run is refused.
	r := twasm(t, "--storage", storage, "record", "--run-id", id, "--provider", "claude", "--input", example())
	if r.code != 2 || !strings.Contains(r.errOut, "finished") {
		t.Errorf("record into a finished run: %v", r)
	}
	r = twasm(t, "--storage", storage, "record", "--run-id", "11111111-1111-4111-8111-111111111111", "--provider", "claude", "--input", example())
	if r.code != 2 || !strings.Contains(r.errOut, "11111111-1111-4111-8111-111111111111") {
		t.Errorf("record into a run that does not exist: %v", r)
	}
	r = twasm(t, "--storage", storage, "record", "--run-id", "../etc/passwd", "--provider", "claude", "--input", example())
	if r.code != 2 {
		t.Errorf("record with a bad run id: %v", r)
	}
}

// TestTailFollowsRecord: tail -f follows a run that a concurrent record
// writes, and ends at run.completed.
func TestTailFollowsRecord(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	id := strings.TrimSpace(twasmOK(t, "--storage", storage, "run", "begin", "--name", "followed").out)
	tail := start(t, nil, nil, "--storage", storage, "tail", "-f", "--interval", "10ms", id)
	rec := start(t, nil, fakeEnv(fakeInput, example(), fakeDelay, "20ms"),
		"--storage", storage, "record", "--run-id", id, "--provider", "claude", "-q", "--", fake)
	waitFor(t, "tail to show a tool call while record runs", hangBound, func() bool {
		return strings.Contains(tail.out.String(), "tool.call")
	})
	if r := rec.wait(t, hangBound); r.code != 0 {
		t.Fatalf("record: %v", r)
	}
	if strings.Contains(tail.out.String(), "run.completed") {
		t.Fatal("tail -f saw run.completed before run end")
	}
	twasmOK(t, "--storage", storage, "run", "end", id)
	r := tail.wait(t, hangBound)
	if r.code != 0 {
		t.Fatalf("tail -f: %v", r)
	}
	evs := readRun(t, transcriptPath(storage, id))
	if n := strings.Count(r.out, "\n"); n != len(evs) || !strings.Contains(r.out, "run.completed") {
		t.Errorf("tail printed %d lines for %d events:\n%s", n, len(evs), r.out)
	}
}

// TestImport: --provider auto picks the provider per file; a file it
// cannot place is reported with the reason and exit 2 while the others
// are imported; --provider codex reads a rollout.
func TestImport(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	odd := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(odd, []byte("just some notes\nnot an agent log\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	files := []string{
		example(),
		golden("claude", "session_log.jsonl"),
		golden("codex", "exec_command.jsonl"),
		odd,
		golden("codex", "rollout_exec_command_v0143.jsonl"),
	}
	r := twasm(t, append([]string{"--storage", storage, "import", "--provider", "auto"}, files...)...)
	if r.code != 2 {
		t.Fatalf("exit %d, want 2: %v", r.code, r)
	}
	if !strings.Contains(r.errOut, odd) || !strings.Contains(r.errOut, "1 of 5 files not imported") {
		t.Errorf("the undetectable file is not reported: %s", r.errOut)
	}
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d imported, want 4:\n%s", len(lines), r.out)
	}
	wantProv := []string{"claude", "claude", "codex", "codex"}
	var runs []string
	for i, l := range lines {
		f := strings.Split(l, "\t")
		if len(f) != 4 || f[1] != wantProv[i] {
			t.Errorf("line %q, want provider %s", l, wantProv[i])
			continue
		}
		runs = append(runs, transcriptPath(storage, f[0]))
	}
	validate(t, runs...)

	r = twasmOK(t, "--storage", storage, "import", "--provider", "codex", "--json", golden("codex", "rollout_shell_v040.jsonl"))
	if !strings.Contains(r.out, `"provider":"codex"`) || !strings.Contains(r.out, `"run_id"`) {
		t.Errorf("import --json: %s", r.out)
	}
}

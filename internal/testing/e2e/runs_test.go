package e2e

import (
	"fmt"
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

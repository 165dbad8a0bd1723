package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/twasm/twasm/internal/rawfile"
	"github.com/twasm/twasm/internal/testing/clitest"
	"github.com/twasm/twasm/transcript"
)

// onlyRun returns the id of the only run in storage.
func onlyRun(t *testing.T, storage string) string {
	t.Helper()
	return clitest.OnlyRun(t, storage)
}

// TestRecordLive wraps the fake agent: events reach the transcript while
// it runs (it waits, mid-stream, until the test has seen a tool.call in
// the file), stdout is passed through, stderr is kept raw and never
// parsed, and the agent's exit code is twasm's.
func TestRecordLive(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	gate := filepath.Join(t.TempDir(), "gate")
	const marker = "fake-agent-diagnostic {\"type\":\"assistant\",\"message\":{\"id\":\"from-stderr\"}}"
	p := start(t, nil, fakeEnv(fakeInput, example(), fakeDelay, "10ms", fakeGateAfter, "5", fakeGate, gate,
		fakeStderr, marker, fakeExit, "3"),
		"--storage", storage, "record", "--provider", "claude", "--live", "--", fake)

	var file string
	waitFor(t, "a tool.call in the transcript while the agent runs", hangBound, func() bool {
		m, _ := filepath.Glob(filepath.Join(storage, "transcripts", "*.jsonl"))
		if len(m) != 1 {
			return false
		}
		file = m[0]
		b, _ := os.ReadFile(file)
		return bytes.Contains(b, []byte(`"type":"tool.call"`))
	})
	b, _ := os.ReadFile(file)
	if bytes.Contains(b, []byte(`"run.completed"`)) || bytes.Contains(b, []byte(`"step.completed"`)) {
		t.Fatalf("the step ended before the agent did:\n%s", b)
	}
	// The run id is said while the agent runs, not only at the end.
	id := strings.TrimSuffix(filepath.Base(file), ".jsonl")
	if !strings.Contains(p.errOut.String(), "recording run "+id) {
		t.Errorf("--live did not say the run id while the agent runs: %s", p.errOut.String())
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r := p.wait(t, hangBound)
	if r.code != 3 {
		t.Fatalf("exit %d, want the agent's 3\n%v", r.code, r)
	}
	in, _ := os.ReadFile(example())
	if r.out != string(in) {
		t.Errorf("stdout is not the agent's stdout:\n%s", r.out)
	}
	if !strings.Contains(r.errOut, marker) {
		t.Errorf("the agent's stderr is not shown: %s", r.errOut)
	}
	if !strings.Contains(r.errOut, "tool.call") {
		t.Errorf("--live printed no event lines: %s", r.errOut)
	}

	evs := readRun(t, file)
	checkSeq(t, evs)
	_, res := agentResult(t, evs)
	if res.ExitCode == nil || *res.ExitCode != 3 {
		t.Errorf("exit_code %v, want 3", res.ExitCode)
	}
	if res.Status != transcript.StatusOK {
		t.Errorf("agent status %q: the result line says success", res.Status)
	}
	if res.Raw == nil || res.Raw.Stderr == "" {
		t.Fatalf("no stderr capture in %+v", res.Raw)
	}
	stderr, err := os.ReadFile(filepath.Join(storage, filepath.FromSlash(res.Raw.Stderr)))
	if err != nil || !strings.Contains(string(stderr), marker) {
		t.Errorf("stderr capture %q, %v", stderr, err)
	}
	raw, err := rawfile.ReadFile(filepath.Join(storage, filepath.FromSlash(res.Raw.Path)))
	if err != nil || !bytes.Equal(raw, in) {
		t.Errorf("raw capture differs from the agent's stdout (%v)", err)
	}
	if bytes.Contains(b, []byte("from-stderr")) {
		t.Error("stderr was parsed as provider output")
	}
	if got := len(ofType(evs, transcript.ToolCall)); got != 2 {
		t.Errorf("%d tool calls, want 2", got)
	}
	if st := runEnd(t, evs).Status; st != transcript.StatusOK {
		t.Errorf("run status %q", st)
	}
	validate(t, file)
}

// TestRecordAgentKilled: the agent dies of SIGKILL mid-stream; twasm still
// closes the step and the run, and the file validates.
func TestRecordAgentKilled(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	ready := filepath.Join(t.TempDir(), "ready")
	p := start(t, nil, fakeEnv(fakeInput, example(), fakeHangAfter, "3", fakeReady, ready),
		"--storage", storage, "record", "--provider", "claude", "-q", "--", fake)
	var pid int
	waitFor(t, "the fake agent to be ready", hangBound, func() bool {
		b, err := os.ReadFile(ready)
		pid, _ = strconv.Atoi(string(b))
		return err == nil && pid > 0
	})
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r := p.wait(t, hangBound)
	if r.code != 128+int(syscall.SIGKILL) {
		t.Fatalf("exit %d, want 137\n%v", r.code, r)
	}
	file := transcriptPath(storage, onlyRun(t, storage))
	evs := readRun(t, file)
	step, res := agentResult(t, evs)
	if step.Status == transcript.StatusOK || (res.Status != transcript.StatusIncomplete && res.Status != transcript.StatusError) {
		t.Errorf("step status %q, agent status %q after a kill", step.Status, res.Status)
	}
	if res.ExitCode == nil || *res.ExitCode != 137 {
		t.Errorf("exit_code %v", res.ExitCode)
	}
	if st := runEnd(t, evs).Status; st == transcript.StatusOK {
		t.Errorf("run status %q after the agent was killed", st)
	}
	validate(t, file)
}

// TestRecordInterrupt: SIGINT to twasm goes to the agent, which ends its
// own way; the run is cancelled and twasm exits 130.
func TestRecordInterrupt(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	ready := filepath.Join(t.TempDir(), "ready")
	p := start(t, nil, fakeEnv(fakeInput, example(), fakeHangAfter, "4", fakeReady, ready, fakeTrapInt, "1"),
		"--storage", storage, "record", "--provider", "claude", "--", fake)
	waitFor(t, "the fake agent to be ready", hangBound, func() bool {
		_, err := os.Stat(ready)
		return err == nil
	})
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := p.wait(t, hangBound)
	if r.code != 130 {
		t.Fatalf("exit %d, want 130\n%v", r.code, r)
	}
	if !strings.Contains(r.out, "fake_interrupted") {
		t.Errorf("the agent's last line (after SIGINT) was not passed through: %q", r.out)
	}
	file := transcriptPath(storage, onlyRun(t, storage))
	evs := readRun(t, file)
	if st := runEnd(t, evs).Status; st != transcript.StatusCancelled {
		t.Errorf("run status %q, want cancelled", st)
	}
	step, res := agentResult(t, evs)
	if step.Status != transcript.StatusCancelled {
		t.Errorf("step status %q, want cancelled", step.Status)
	}
	if res.ExitCode == nil || *res.ExitCode != 130 {
		t.Errorf("exit_code %v", res.ExitCode)
	}
	raw, _ := rawfile.ReadFile(filepath.Join(storage, filepath.FromSlash(res.Raw.Path)))
	if !bytes.Contains(raw, []byte("fake_interrupted")) {
		t.Errorf("the line written after SIGINT is not in the raw capture")
	}
	validate(t, file)
}

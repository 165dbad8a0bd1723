package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/twasm/twasm/internal/rawfile"
	"github.com/twasm/twasm/internal/testing/syncbuf"
	"github.com/twasm/twasm/transcript"
)

// Tests of runs and the recorder under attack (issue 11, items 7-13):
// concurrent and early ends, stopped lock holders, big runs, FIFOs, full
// disks, bad paths and interrupts, all through the built binary.

func beginRun(t *testing.T, storage string) string {
	t.Helper()
	return strings.TrimSpace(twasmOK(t, "--storage", storage, "run", "begin", "--name", "attacked").out)
}

// recordHeld starts `record --run-id id --path plan` with a fake agent
// that stops after three lines until the gate file exists, and waits for
// its step to be in the file.
func recordHeld(t *testing.T, storage, id string) (rec *proc, gate, file string) {
	t.Helper()
	gate = filepath.Join(t.TempDir(), "gate")
	rec = start(t, nil, fakeEnv(fakeInput, example(), fakeGateAfter, "3", fakeGate, gate),
		"--storage", storage, "record", "--run-id", id, "--path", "plan", "--provider", "claude", "-q", "--", fake)
	file = transcriptPath(storage, id)
	waitFor(t, "the record's step to start", hangBound, func() bool {
		b, _ := os.ReadFile(file)
		return bytes.Contains(b, []byte(`"step.started"`))
	})
	return rec, gate, file
}

func countType(evs []*transcript.Event, typ transcript.EventType) int { return len(ofType(evs, typ)) }

// TestRunEndWhileRecording: `run end` while a `record --run-id` is still
// writing is refused, naming the open step, and writes nothing; once the
// record is done, eight concurrent `run end`s write one run.completed,
// the last line; a later record into the ended run is refused.
func TestRunEndWhileRecording(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	id := beginRun(t, storage)
	rec, gate, file := recordHeld(t, storage, id)
	r := twasm(t, "--storage", storage, "run", "end", id)
	if r.code != 2 || !strings.Contains(r.errOut, `step "plan"`) || !strings.Contains(r.errOut, "--cancel-open") {
		t.Fatalf("run end while a step is open: %v", r)
	}
	if b, _ := os.ReadFile(file); bytes.Contains(b, []byte(`"run.completed"`)) {
		t.Fatal("a refused run end wrote run.completed")
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := rec.wait(t, hangBound); r.code != 0 {
		t.Fatalf("record: %v", r)
	}

	results := make([]result, 8)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() { defer wg.Done(); results[i] = twasm(t, "--storage", storage, "run", "end", id) }()
	}
	wg.Wait()
	ok := 0
	for _, r := range results {
		switch {
		case r.code == 0:
			ok++
		case r.code != 2 || !strings.Contains(r.errOut, "finished"):
			t.Errorf("concurrent run end: %v", r)
		}
	}
	evs := readRun(t, file)
	if ok != 1 || countType(evs, transcript.RunCompleted) != 1 {
		t.Fatalf("%d run ends succeeded, %d run.completed", ok, countType(evs, transcript.RunCompleted))
	}
	runEnd(t, evs) // the last line
	checkSeq(t, evs)
	validate(t, file)

	r = twasm(t, "--storage", storage, "record", "--run-id", id, "--provider", "claude", "--input", example())
	if r.code != 2 || !strings.Contains(r.errOut, "finished") {
		t.Errorf("record into an ended run: %v", r)
	}
	if n := len(readRun(t, file)); n != len(evs) {
		t.Errorf("the ended run grew from %d to %d events", len(evs), n)
	}
}

// TestRunEndCancelOpen: `run end --cancel-open` while a record is writing
// closes its step as cancelled and ends the run; the record's next event
// is refused, it exits non-zero saying so, and nothing follows
// run.completed.
func TestRunEndCancelOpen(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	id := beginRun(t, storage)
	rec, gate, file := recordHeld(t, storage, id)
	twasmOK(t, "--storage", storage, "run", "end", id, "--cancel-open")
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r := rec.wait(t, hangBound)
	if r.code == 0 || !strings.Contains(r.errOut, "finished") {
		t.Errorf("record into a run ended under it: %v", r)
	}
	evs := readRun(t, file)
	runEnd(t, evs)
	done := ofType(evs, transcript.StepCompleted)
	if len(done) != 1 || done[0].Step().Status != transcript.StatusCancelled || countType(evs, transcript.RunCompleted) != 1 {
		t.Fatalf("events after the end: %d step.completed, %d run.completed", len(done), countType(evs, transcript.RunCompleted))
	}
	validate(t, file)
}

// TestStoppedLockHolder: a writer stopped (SIGSTOP) while it holds the
// run's lock blocks others; after a few seconds they say on stderr which
// process holds it; with --lock-timeout they fail instead, naming it.
func TestStoppedLockHolder(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	id := beginRun(t, storage)
	ready := filepath.Join(t.TempDir(), "ready")
	holder := exec.Command(fake)
	holder.Env = env(fakeEnv(fakeFlock, transcriptPath(storage, id), fakeReady, ready)...)
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = holder.Process.Kill(); _ = holder.Wait() })
	waitFor(t, "the lock holder", hangBound, func() bool { _, err := os.Stat(ready); return err == nil })
	if err := holder.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	pid := "process " + strconv.Itoa(holder.Process.Pid)

	r := twasm(t, "--storage", storage, "run", "end", id, "--lock-timeout", "500ms")
	if r.code == 0 || !strings.Contains(r.errOut, pid) || !strings.Contains(r.errOut, "stopped") {
		t.Fatalf("run end --lock-timeout: %v", r)
	}
	end := start(t, nil, nil, "--storage", storage, "run", "end", id)
	waitFor(t, "run end to name the stopped holder", hangBound, func() bool {
		return strings.Contains(end.errOut.String(), pid) && strings.Contains(end.errOut.String(), "stopped")
	})
	_ = holder.Process.Kill()
	if r := end.wait(t, hangBound); r.code != 0 {
		t.Fatalf("run end once the holder is gone: %v", r)
	}
	runEnd(t, readRun(t, transcriptPath(storage, id)))
}

// TestFIFOInStorage: a FIFO at transcripts/<id>.jsonl is refused, named,
// without blocking, by every command that opens it.
func TestFIFOInStorage(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	id := "0b6e8c0e-5c1e-4f7e-9d8a-1f2e3d4c5b6a"
	if err := os.MkdirAll(filepath.Join(storage, "transcripts"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(transcriptPath(storage, id), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"record", "--run-id", id, "--provider", "claude", "--input", example()},
		{"run", "end", id},
		{"run", "begin", "--parent", id, "--path", "sub"},
		{"tail", id},
		{"tail", "-f", id},
		{"view", id},
		{"view", "latest"},
		{"renormalize", id},
		{"tree", id},
		{"validate", id},
		{"stats", "--all"},
		{"search", "anything"},
		{"usage"},
	} {
		r := start(t, nil, nil, append([]string{"--storage", storage}, args...)...).wait(t, hangBound)
		if args[len(args)-1] == "latest" {
			// The FIFO is not a run to choose from; nothing else is.
			if r.code == 0 {
				t.Errorf("twasm %s: %v", strings.Join(args, " "), r)
			}
			continue
		}
		if r.code == 0 || !strings.Contains(r.errOut, "named pipe") {
			t.Errorf("twasm %s: %v", strings.Join(args, " "), r)
		}
	}
}

// TestFullDisk: a storage that fills up mid-recording: twasm names the
// real error (no space left on device), says what was and was not
// recorded, and exits non-zero; the transcript holds only whole lines.
func TestFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (%v): %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", mnt).Run() })
	// About 1 MiB of a real stream, each line given a member of random
	// text that no compression shrinks much: the raw capture alone fills
	// the disk (framed and compressed, as a raw capture is).
	ex, err := os.ReadFile(example())
	if err != nil {
		t.Fatal(err)
	}
	var in bytes.Buffer
	pad := make([]byte, 1536)
	for in.Len() < 1<<20 {
		for _, l := range bytes.SplitAfter(ex, []byte("\n")) {
			if len(l) < 2 || l[0] != '{' {
				in.Write(l)
				continue
			}
			_, _ = rand.Read(pad)
			in.WriteString(`{"pad":"` + base64.StdEncoding.EncodeToString(pad) + `",`)
			in.Write(l[1:])
		}
	}
	big := filepath.Join(t.TempDir(), "big.jsonl")
	if err := os.WriteFile(big, in.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	storage := filepath.Join(mnt, "storage")
	r := twasm(t, "--storage", storage, "record", "--provider", "claude", "--input", big)
	if r.code == 0 || !strings.Contains(r.errOut, "no space left on device") || strings.Contains(r.errOut, "short write") {
		t.Fatalf("record on a full disk: %v", r)
	}
	if !strings.Contains(r.errOut, "recorded: ") || !strings.Contains(r.errOut, "not recorded: ") {
		t.Errorf("what was and was not recorded is not said: %s", r.errOut)
	}
	m, _ := filepath.Glob(filepath.Join(storage, "transcripts", "*.jsonl"))
	if len(m) != 1 {
		t.Fatalf("transcripts: %v", m)
	}
	b, _ := os.ReadFile(m[0])
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Error("the transcript ends in a partial line")
	}
	checkSeq(t, readRun(t, m[0]))
}

// TestCtrlCDuringRecord: a Ctrl-C at the terminal (SIGINT to twasm's
// process group) reaches the agent once; everything the agent prints
// after it (its final result line, and more) is read and normalized; the
// agent is not killed by SIGPIPE and twasm exits 130.
func TestCtrlCDuringRecord(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	tmp := t.TempDir()
	ready, siglog := filepath.Join(tmp, "ready"), filepath.Join(tmp, "siglog")
	cmd := exec.Command(binary, "--storage", storage, "record", "--provider", "claude", "-q", "--", fake)
	cmd.Env = env(fakeEnv(fakeInput, example(), fakeHangAfter, "3", fakeReady, ready, fakeIntRest, "20000", fakeSigLog, siglog)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its own group, as a shell job
	var out, errOut syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, out: &out, errOut: &errOut}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
		}
	})
	waitFor(t, "the fake agent to be ready", hangBound, func() bool { _, err := os.Stat(ready); return err == nil })
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil { // what the terminal does
		t.Fatal(err)
	}
	r := p.wait(t, hangBound)
	if r.code != 130 {
		t.Fatalf("exit %d, want 130\n%v", r.code, r)
	}
	if n, _ := os.ReadFile(siglog); string(n) != "I" {
		t.Errorf("the agent got %d SIGINTs for one Ctrl-C", len(n))
	}
	file := transcriptPath(storage, onlyRun(t, storage))
	evs := readRun(t, file)
	step, res := agentResult(t, evs)
	if step.Status != transcript.StatusCancelled || runEnd(t, evs).Status != transcript.StatusCancelled {
		t.Errorf("step %q, run %q: want cancelled", step.Status, runEnd(t, evs).Status)
	}
	// The example's last line is its result: the run's cost and usage
	// come from it, printed after the Ctrl-C.
	if res.CostUSD == nil || res.Usage == nil {
		t.Errorf("the result line printed after Ctrl-C was not normalized: %+v", res)
	}
	raw, _ := rawfile.ReadFile(filepath.Join(storage, filepath.FromSlash(res.Raw.Path)))
	if !bytes.Contains(raw, []byte(`"i":19999}`)) {
		t.Error("the agent's output after the Ctrl-C was not read to the end")
	}
	if res.ExitCode == nil || *res.ExitCode != 130 {
		t.Errorf("agent exit_code %v, want 130", res.ExitCode)
	}
	validate(t, file)
}

// TestAgentLeavesAProcessHoldingItsOutput: the agent exits while a
// process it started keeps its stdout open; record ends anyway (after a
// short wait, saying why) with the agent's result.
func TestAgentLeavesAProcessHoldingItsOutput(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Skip("no sleep command:", err)
	}
	storage := t.TempDir()
	pidFile := filepath.Join(t.TempDir(), "orphan")
	p := start(t, nil, fakeEnv(fakeInput, example(), fakeOrphan, pidFile),
		"--storage", storage, "record", "--provider", "claude", "-q", "--", fake)
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, _ := strconv.Atoi(string(b)); pid > 0 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	r := p.wait(t, hangBound)
	if r.code != 0 || !strings.Contains(r.errOut, "kept its output open") {
		t.Fatalf("record with an orphan holding the pipes: %v", r)
	}
	evs := readRun(t, transcriptPath(storage, onlyRun(t, storage)))
	if _, res := agentResult(t, evs); res.Status != transcript.StatusOK {
		t.Errorf("status %q", res.Status)
	}
}

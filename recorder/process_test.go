package recorder

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/twasm/twasm/internal/runid"
	"github.com/twasm/twasm/transcript"
)

// Child processes are this test binary re-executed with -test.run
// TestChildProcess and the role in these environment variables.
const (
	childEnv   = "TWASM_RECORDER_CHILD" // "append" or "kill"
	childPath  = "TWASM_RECORDER_PATH"
	childRunID = "TWASM_RECORDER_RUN"
	childCount = "TWASM_RECORDER_N"
	childSeed  = "TWASM_RECORDER_SEED"
)

func childCmd(role, path, runID string, extra ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildProcess$", "-test.count=1", "-test.v=false")
	cmd.Env = append(os.Environ(), childEnv+"="+role, childPath+"="+path, childRunID+"="+runID)
	cmd.Env = append(cmd.Env, extra...)
	cmd.Stderr = os.Stderr
	return cmd
}

// TestChildProcess is the body of the re-executed children; it does
// nothing in a normal run.
func TestChildProcess(t *testing.T) {
	role := os.Getenv(childEnv)
	if role == "" {
		t.Skip("helper for the multi-process tests")
	}
	ctx := context.Background()
	path, runID := os.Getenv(childPath), os.Getenv(childRunID)
	switch role {
	case "append":
		n, _ := strconv.Atoi(os.Getenv(childCount))
		r, err := Open(ctx, path, runID, Options{Logger: quietLog(), Fsync: FsyncNever})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			if err := r.Record(ctx, assistantEvent(text200)); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	case "kill":
		seed, _ := strconv.ParseUint(os.Getenv(childSeed), 10, 64)
		rng := rand.New(rand.NewPCG(seed, 1))
		r, err := Open(ctx, path, runID, Options{Logger: quietLog(), Fsync: FsyncAlways})
		if err != nil {
			t.Fatal(err)
		}
		out := bufio.NewWriter(os.Stdout)
		// Report what the open repaired, then every acknowledged seq.
		fmt.Fprintf(out, "open %d %d\n", r.lastSeq.Load(), len(r.repairsMade()))
		out.Flush()
		// Mostly small events; sometimes a big multi-page one, the only
		// kind a signal can cut in the middle of its write(2).
		big := strings.Repeat("0123456789abcdef", 8<<10)
		for {
			text := text200
			if rng.IntN(16) == 0 {
				text = big[:rng.IntN(len(big))]
			}
			ev := assistantEvent(text)
			if err := r.Record(ctx, ev); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(out, "%d\n", ev.Seq)
			out.Flush()
		}
	case "interleave":
		// Record back to back until this writer has seen its seq jump
		// (another process appended in between) interleaveJumps times,
		// or the other writer has finished; fail when a long run of
		// events never lets the other one in.
		name := os.Getenv(childName)
		stop := path + ".done"
		r, err := Open(ctx, path, runID, Options{Logger: quietLog(), Fsync: FsyncNever})
		if err != nil {
			t.Fatal(err)
		}
		var prev uint64
		jumps, n := 0, 0
		for jumps < interleaveJumps {
			ev := assistantEvent(name)
			if err := r.Record(ctx, ev); err != nil {
				t.Fatal(err)
			}
			if prev != 0 && ev.Seq != prev+1 {
				jumps++
			}
			prev = ev.Seq
			if n++; n%64 == 0 {
				if _, err := os.Stat(stop); err == nil {
					break
				}
			}
			if n == interleaveMax {
				t.Fatalf("%s: %d events, and the other writer got in between only %d times", name, n, jumps)
			}
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(stop, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("unknown role %q", role)
	}
}

// The interleave children: how many hand-overs each waits for, and how
// many events one may write without that many (a writer that never gives
// the lock up to a waiting one, which holds it between appends, fails).
const (
	childName       = "TWASM_RECORDER_NAME"
	interleaveJumps = 20
	interleaveMax   = 400_000
)

// TestTwoProcessesInterleave: two processes recording back to back into
// one transcript, each keeping the lock between its appends while nobody
// waits (the lease), hand the lock over to each other: both see the
// other's lines between theirs many times, and the file holds whole lines
// with seqs 1..N in file order, none twice.
func TestTwoProcessesInterleave(t *testing.T) {
	path := t.TempDir() + "/transcripts/run.jsonl"
	id := runid.New()
	names := []string{"writer-a", "writer-b"}
	cmds := make([]*exec.Cmd, len(names))
	for i, name := range names {
		cmds[i] = childCmd("interleave", path, id, childName+"="+name)
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("child: %v", err)
		}
	}
	evs := checkFile(t, path, id)
	checkValidate(t, path, id)
	switches, count := 0, map[string]int{}
	for i, ev := range evs {
		text := ev.Message().Blocks[0].Text
		count[text]++
		if i > 0 && text != evs[i-1].Message().Blocks[0].Text {
			switches++
		}
	}
	if count[names[0]] == 0 || count[names[1]] == 0 || count[names[0]]+count[names[1]] != len(evs) {
		t.Fatalf("lines per writer %v of %d", count, len(evs))
	}
	if switches < interleaveJumps {
		t.Fatalf("the writers took turns %d times, want at least %d", switches, interleaveJumps)
	}
	t.Logf("%d events %v, %d hand-overs", len(evs), count, switches)
}

func TestMultiProcess(t *testing.T) {
	const procs, perProc = 4, 2000
	path := t.TempDir() + "/transcripts/run.jsonl"
	id := runid.New()
	cmds := make([]*exec.Cmd, procs)
	for i := range cmds {
		cmds[i] = childCmd("append", path, id, childCount+"="+strconv.Itoa(perProc))
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("child: %v", err)
		}
	}
	checkValidate(t, path, id)
	if evs := checkFile(t, path, id); len(evs) != procs*perProc {
		t.Fatalf("%d lines, want %d", len(evs), procs*perProc)
	}
}

// TestKillAtRandomMoments kills a writer (FsyncAlways) with SIGKILL at 50
// random moments and reopens after each: torn tails are repaired and
// reported, the seq series continues, the file validates and every seq the
// child acknowledged is in the file. Every few rounds the parent also
// plants a torn line, as a writer killed mid-write would leave.
func TestKillAtRandomMoments(t *testing.T) {
	rounds := 50
	if testing.Short() {
		rounds = 10
	}
	path := t.TempDir() + "/transcripts/run.jsonl"
	id := runid.New()
	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), 7))
	ctx := context.Background()
	var naturalTorn, plantedTorn int
	for round := 0; round < rounds; round++ {
		cmd := childCmd("kill", path, id, childSeed+"="+strconv.Itoa(round))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill after a random number of acknowledgements (0 = while it
		// is still opening/repairing).
		killAfter := rng.IntN(20)
		var mu sync.Mutex
		var acked []uint64
		var openLine string
		killed := make(chan struct{})
		reached := make(chan struct{})
		readDone := make(chan struct{})
		go func() {
			defer close(readDone)
			sc := bufio.NewScanner(stdout)
			n := 0
			for sc.Scan() {
				line := sc.Text()
				if strings.HasPrefix(line, "open ") {
					openLine = line
					continue
				}
				seq, err := strconv.ParseUint(line, 10, 64)
				if err != nil {
					continue
				}
				mu.Lock()
				acked = append(acked, seq)
				mu.Unlock()
				if n++; n == killAfter {
					close(reached)
				}
			}
		}()
		if killAfter > 0 {
			select {
			case <-reached:
			case <-readDone: // the child died on its own: reported below
			}
		}
		cmd.Process.Signal(syscall.SIGKILL)
		close(killed)
		<-readDone
		err = cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Fatalf("round %d: child ended with %v, not by our kill (open line %q)", round, err, openLine)
		}
		data, _ := os.ReadFile(path)
		tornLen := 0
		if i := strings.LastIndexByte(string(data), '\n'); i+1 < len(data) {
			tornLen = len(data) - (i + 1)
			naturalTorn++
		} else if round%5 == 4 && len(data) > 0 {
			// Plant a torn line: a prefix of a valid next line.
			ev := assistantEvent(text200)
			ev.RunID, ev.Seq = id, 1<<40
			b, _ := transcript.AppendEvent(nil, ev)
			cut := 1 + rng.IntN(len(b)-1)
			appendRaw(t, path, string(b[:cut]))
			tornLen = cut
			plantedTorn++
		}
		r, err := Open(ctx, path, id, Options{Logger: quietLog()})
		if err != nil {
			t.Fatalf("round %d: reopen: %v", round, err)
		}
		reps := r.repairsMade()
		if tornLen > 0 && (len(reps) != 1 || reps[0].Bytes != tornLen) {
			t.Fatalf("round %d: torn tail of %d bytes, repairs %+v", round, tornLen, reps)
		}
		if tornLen == 0 && len(reps) != 0 {
			t.Fatalf("round %d: repair without a torn tail: %+v", round, reps)
		}
		evs := checkFile(t, path, id)
		if r.lastSeq.Load() != uint64(len(evs)) {
			t.Fatalf("round %d: reopened at %d with %d lines", round, r.lastSeq.Load(), len(evs))
		}
		mu.Lock()
		for _, s := range acked {
			if s > uint64(len(evs)) {
				t.Fatalf("round %d: acknowledged seq %d missing (file has %d)", round, s, len(evs))
			}
		}
		mu.Unlock()
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	evs := checkFile(t, path, id)
	checkValidate(t, path, id)
	t.Logf("%d rounds: %d events, %d torn tails from kills, %d planted", rounds, len(evs), naturalTorn, plantedTorn)
}

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/viewstest"
)

// TestTailFollow runs "tail -f" as a process while this test
// writes the transcript, and interrupts a second one with SIGINT.
func TestTailFollow(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, viewstest.Child+".jsonl")
	b := viewstest.ChildRun(t)
	// Bounds a tail that never exits, however busy the machine.
	ctx, cancel := context.WithTimeout(context.Background(), hangBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "tail", "-f", "--interval", "10ms", p)
	cmd.Env = env()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	for i := range b.Len() {
		line := b.Line(t, i)
		// Write each line in two parts, so tail sees torn lines.
		for _, part := range [][]byte{line[:5], line[5:]} {
			time.Sleep(15 * time.Millisecond)
			if _, err := f.Write(part); err != nil {
				t.Fatal(err)
			}
		}
	}
	f.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("tail -f: %v\nstderr: %s", err, errOut.String())
	}
	if n := strings.Count(out.String(), "\n"); n != b.Len() || !strings.Contains(out.String(), "run.completed") {
		t.Fatalf("%d lines:\n%s", n, out.String())
	}

	// SIGINT once tail says it waits for the file: it then handles the
	// signal (a signal sent earlier, while the process starts, kills it).
	cmd = exec.CommandContext(ctx, binary, "-v", "tail", "-f", filepath.Join(dir, viewstest.Other+".jsonl"))
	cmd.Env = env()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waiting, drained := make(chan struct{}), make(chan string)
	go func() {
		var all strings.Builder
		seen := false
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			all.WriteString(sc.Text() + "\n")
			if !seen && strings.Contains(sc.Text(), "waiting for the transcript to appear") {
				seen = true
				close(waiting)
			}
		}
		drained <- all.String()
	}()
	select {
	case <-waiting:
	case all := <-drained:
		t.Fatalf("tail -f ended before it waited: %v\nstderr: %s", cmd.Wait(), all)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	all := <-drained
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("after SIGINT: %v\nstderr: %s", err, all)
	}
}

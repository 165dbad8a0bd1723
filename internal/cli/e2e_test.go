package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/cli/iostreams"
	"github.com/twasm/twasm/internal/testing/viewstest"
)

// binary is the twasm executable built once for the end-to-end tests.
var binary string

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "twasm-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "twasm")
	build := exec.Command("go", "build", "-ldflags", "-X github.com/twasm/twasm/internal/cli/build.Version=v9.9.9-test",
		"-o", binary, "github.com/twasm/twasm/cmd/twasm")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build twasm:", err)
		return 1
	}
	return m.Run()
}

type result struct {
	code        int
	out, errOut string
}

// twasm runs the binary with a clean environment plus env.
func twasm(t *testing.T, ctx context.Context, env []string, args ...string) result {
	t.Helper()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, out.String(), errOut.String()}
}

func TestEndToEnd(t *testing.T) {
	storage := t.TempDir()
	dir := viewstest.WriteStore(t, storage)
	rootFile := filepath.Join(dir, viewstest.Root+".jsonl")
	env := []string{"TWASM_STORAGE=" + storage}
	tests := []struct {
		name     string
		env      []string
		args     []string
		code     int
		out, err []string // substrings; "" entries mean "must be empty"
	}{
		{"version", nil, []string{"version"}, 0, []string{"twasm version v9.9.9-test", "module github.com/twasm/twasm"}, []string{""}},
		{"--version", nil, []string{"--version"}, 0, []string{"twasm version v9.9.9-test"}, []string{""}},
		{"help has examples", nil, []string{"view", "--help"}, 0, []string{"Examples:", "twasm view --only dialog,thinking"}, nil},
		{"validate broken", nil, []string{"validate", rootFile}, 1, []string{"error: line 9: malformed_line"}, []string{""}},
		{"validate ok by id from env", env, []string{"validate", viewstest.Child}, 0, []string{": ok: run"}, []string{""}},
		{"storage flag beats env", []string{"TWASM_STORAGE=/nonexistent"}, []string{"--storage", storage, "tree", viewstest.Root}, 0,
			[]string{"└─ delegate"}, []string{""}},
		{"missing run", env, []string{"tree", viewstest.Other}, 2, []string{""},
			[]string{viewstest.Other + ".jsonl: no such file or directory"}},
		{"default storage", nil, []string{"tree", viewstest.Root}, 2, []string{""}, []string{".local/share/twasm: storage root does not exist"}},
		{"bad run id", env, []string{"view", "not-a-run-id"}, 2, []string{""}, []string{"neither a run id (or the start of one)"}},
		{"unknown flag", env, []string{"tools", "--bogus", viewstest.Root}, 2, []string{""}, []string{"unknown flag: --bogus", "Usage:"}},
		{"unknown command", nil, []string{"frobnicate"}, 2, []string{""}, []string{"unknown command", "Available Commands:"}},
		{"tools piped", env, []string{"tools", viewstest.Root}, 0, []string{"7\treview\tRead\tread\t\tdangling"}, []string{""}},
		{"view", env, []string{"view", "--only", "thinking", viewstest.Root}, 0, []string{"<details><summary>Thinking</summary>"}, []string{""}},
		// The store was written without twasm, so it has no index yet:
		// the first command that reads across runs builds it and says so.
		{"stats all json", env, []string{"stats", "--all", "--json"}, 0, []string{`"runs":2`}, []string{"was missing: built from the transcripts"}},
		{"stats all json again", env, []string{"stats", "--all", "--json"}, 0, []string{`"runs":2`}, []string{""}},
		// usage prices the child's gpt-5 step (113 µ$) beside the $0.25
		// Claude stated, from the index stats just built.
		{"usage by provider", env, []string{"usage", "--by", "provider", "--json"}, 0,
			[]string{`"key":"claude"`, `"micro_usd":250000,"usd":"0.25","source":"provider"`, `"total":{"key":"total","sessions":1`, `"micro_usd":250113,"usd":"0.250113","source":"mixed","prices":"twasm-bundled@`}, []string{""}},
		{"usage by day since", env, []string{"usage", "--since", "20250501", "--until", "2025-05-01"}, 0, []string{"2025-05-01\t1\t", "total\t1\t"}, []string{""}},
		{"prices", env, []string{"prices"}, 0, []string{"price table twasm-bundled@", "(bundled)", "gemini-2.5-pro"}, []string{""}},
		{"tail", env, []string{"tail", "-n", "1", viewstest.Root}, 0, []string{"#13 run  run.completed  ok\n"}, nil},
		{"completion", nil, []string{"completion", "bash"}, 0, []string{"bash completion"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := twasm(t, context.Background(), tc.env, tc.args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, tc.code, r.out, r.errOut)
			}
			check := func(stream, got string, want []string) {
				for _, w := range want {
					if w == "" && got != "" || !strings.Contains(got, w) {
						t.Errorf("%s = %q, want %q", stream, got, w)
					}
				}
			}
			check("stdout", r.out, tc.out)
			check("stderr", r.errOut, tc.err)
			if strings.HasPrefix(tc.name, "stats all json") && !json.Valid([]byte(r.out)) {
				t.Errorf("stdout is not JSON: %s", r.out)
			}
		})
	}
}

// TestEndToEndTailFollow runs "tail -f" as a process while this test
// writes the transcript, and interrupts a second one with SIGINT.
func TestEndToEndTailFollow(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, viewstest.Child+".jsonl")
	b := viewstest.ChildRun(t)
	// Bounds a tail that never exits, however busy the machine.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "tail", "-f", "--interval", "10ms", p)
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

// TestMainInProcess covers Main's error mapping without a subprocess.
func TestMainInProcess(t *testing.T) {
	tests := []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"--help"}, 0, ""},
		{[]string{"tree"}, 2, "takes 1 argument"},
		{[]string{"stats"}, 2, "give RUN arguments or --all"},
		{[]string{"view", "--only", "x", "r.jsonl"}, 2, `unknown section "x"`},
		{[]string{"validate", "/nonexistent/r.jsonl"}, 2, "/nonexistent/r.jsonl: no such file or directory"},
	}
	for _, tc := range tests {
		ios, _, _, errOut := iostreams.Test()
		code := Main(context.Background(), tc.args, ios, func(string) string { return "" })
		if code != tc.code || !strings.Contains(errOut.String(), tc.err) {
			t.Errorf("%v: exit %d, stderr %q", tc.args, code, errOut)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ios, _, _, errOut := iostreams.Test()
	if code := Main(ctx, []string{"tail", "-f", filepath.Join(t.TempDir(), "x.jsonl")}, ios, os.Getenv); code != 130 || !strings.Contains(errOut.String(), "interrupted") {
		t.Errorf("cancelled: exit %d, stderr %q", code, errOut)
	}
}

func TestSystemStreams(t *testing.T) {
	ios := iostreams.System(func(k string) string { return map[string]string{"NO_COLOR": "1"}[k] })
	if ios.ColorEnabled() {
		t.Fatal("color with NO_COLOR")
	}
}

package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Its settings, in its environment (twasm passes its environment on to
// the agent it wraps); internal/testing/e2e sets them.
const (
	fakeInput     = "FAKE_INPUT"      // file to replay on stdout, line by line
	fakeDelay     = "FAKE_DELAY"      // pause after each line (Go duration)
	fakeGateAfter = "FAKE_GATE_AFTER" // after this many lines, wait for...
	fakeGate      = "FAKE_GATE"       // ...this file to exist
	fakeHangAfter = "FAKE_HANG_AFTER" // after this many lines, write FAKE_READY (with the pid) and hang
	fakeReady     = "FAKE_READY"
	fakeTrapInt   = "FAKE_TRAP_INT" // on SIGINT print a line and exit 130
	fakeStderr    = "FAKE_STDERR"   // written to stderr first
	fakeExit      = "FAKE_EXIT"     // exit code at the end
	// On SIGINT: print the input lines not yet written, then this many
	// filler lines, then wait a little for more signals, and exit 130.
	fakeIntRest = "FAKE_INT_REST"
	fakeSigLog  = "FAKE_SIGLOG" // one byte appended per SIGINT received
	fakeOrphan  = "FAKE_ORPHAN" // start `sleep 300` holding stdout, write its pid here
	fakeFlock   = "FAKE_FLOCK"  // only flock(LOCK_EX) this file, write FAKE_READY, and wait
)

func main() { os.Exit(fakeAgent()) }

// fakeAgent replays FAKE_INPUT as an agent CLI would write it.
func fakeAgent() int {
	atoi := func(k string) int { n, _ := strconv.Atoi(os.Getenv(k)); return n }
	if path := os.Getenv(fakeFlock); path != "" {
		return fakeLockHolder(path)
	}
	if path := os.Getenv(fakeOrphan); path != "" {
		orphan := exec.Command("sleep", "300")
		orphan.Stdout, orphan.Stderr = os.Stdout, os.Stderr
		if err := orphan.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 95
		}
		if err := os.WriteFile(path, []byte(strconv.Itoa(orphan.Process.Pid)), 0o600); err != nil {
			return 95
		}
	}
	var written atomic.Int64 // input lines written so far
	if rest := os.Getenv(fakeIntRest); rest != "" {
		c := make(chan os.Signal, 8)
		signal.Notify(c, os.Interrupt)
		n, _ := strconv.Atoi(rest)
		go func() {
			<-c
			countSignal()
			b, _ := os.ReadFile(os.Getenv(fakeInput))
			lines := strings.SplitAfter(string(b), "\n")
			for _, l := range lines[min(int(written.Load()), len(lines)):] {
				os.Stdout.WriteString(l)
			}
			for i := 0; i < n; i++ {
				os.Stdout.WriteString("{\"type\":\"fake_after_interrupt\",\"i\":" + strconv.Itoa(i) + "}\n")
			}
			// Another SIGINT arriving now is counted too.
			deadline := time.After(500 * time.Millisecond)
			for {
				select {
				case <-c:
					countSignal()
				case <-deadline:
					os.Exit(130)
				}
			}
		}()
	}
	if os.Getenv(fakeTrapInt) != "" {
		c := make(chan os.Signal, 1)
		signal.Notify(c, os.Interrupt)
		go func() {
			<-c
			os.Stdout.WriteString("{\"type\":\"fake_interrupted\"}\n")
			os.Exit(130)
		}()
	}
	if s := os.Getenv(fakeStderr); s != "" {
		fmt.Fprintln(os.Stderr, s)
	}
	delay, _ := time.ParseDuration(os.Getenv(fakeDelay))
	b, err := os.ReadFile(os.Getenv(fakeInput))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 99
	}
	lines := strings.SplitAfter(string(b), "\n")
	for i, line := range lines {
		if line == "" {
			continue
		}
		os.Stdout.WriteString(line)
		written.Add(1)
		time.Sleep(delay)
		if i+1 == atoi(fakeGateAfter) {
			deadline := time.Now().Add(time.Minute)
			for {
				if _, err := os.Stat(os.Getenv(fakeGate)); err == nil {
					break
				}
				if time.Now().After(deadline) {
					fmt.Fprintln(os.Stderr, "fake agent: gate never opened")
					return 98
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		if i+1 == atoi(fakeHangAfter) {
			if err := os.WriteFile(os.Getenv(fakeReady), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
				return 97
			}
			time.Sleep(time.Minute)
			return 96
		}
	}
	return atoi(fakeExit)
}

// countSignal appends one byte to FAKE_SIGLOG.
func countSignal() {
	if p := os.Getenv(fakeSigLog); p != "" {
		f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			f.WriteString("I")
			f.Close()
		}
	}
}

// fakeLockHolder takes the transcript's file lock as a twasm writer would
// and keeps it: the test stops this process to play a writer stopped by
// Ctrl-Z inside its critical section.
func fakeLockHolder(path string) int {
	f, err := os.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 94
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 94
	}
	if err := os.WriteFile(os.Getenv(fakeReady), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		return 94
	}
	time.Sleep(5 * time.Minute)
	return 0
}

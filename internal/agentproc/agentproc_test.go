package agentproc

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv("AGENTPROC_HELPER") != "" {
		helper(os.Getenv("AGENTPROC_HELPER"))
		return
	}
	goleak.VerifyTestMain(m)
}

// helper is the fake agent: it runs inside a re-executed test binary.
func helper(mode string) {
	switch mode {
	case "echo":
		os.Stdout.WriteString("line 1\n")
		os.Stderr.WriteString("warning on stderr\n")
		os.Stdout.WriteString("line 2\n")
		os.Exit(3)
	case "trap":
		// Wait for SIGINT, say so, exit 130 like an interrupted CLI.
		c := make(chan os.Signal, 1)
		signalNotify(c)
		os.Stdout.WriteString("ready\n")
		<-c
		os.Stdout.WriteString("interrupted\n")
		os.Exit(130)
	case "grandchild":
		// Start a process that inherits stdout and outlives the agent.
		gc := exec.Command("sleep", "300")
		gc.Stdout = os.Stdout
		if err := gc.Start(); err != nil {
			os.Exit(2)
		}
		os.Stdout.WriteString(strconv.Itoa(gc.Process.Pid) + "\n")
		// Exit once the test has read that line (it creates the gate),
		// so that no load on the machine leaves it unread when reading
		// stops WaitDelay after the exit.
		for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if _, err := os.Stat(os.Getenv("AGENTPROC_GATE")); err == nil {
				os.Exit(0)
			}
		}
		os.Exit(4)
	case "burst":
		os.Stdout.WriteString(strconv.Itoa(os.Getpid()) + "\n")
		time.Sleep(20 * time.Millisecond) // the pid line is read alone
		for i := 0; i < 256; i++ {
			os.Stdout.WriteString(strings.Repeat("y", 127) + "\n")
		}
	case "flood":
		for i := 0; i < 100000; i++ {
			os.Stdout.WriteString(strings.Repeat("x", 100) + "\n")
		}
	}
}

func self(t *testing.T, mode string) Options {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	return Options{Args: []string{exe, "-test.run=^$"}, Env: append(os.Environ(), "AGENTPROC_HELPER="+mode)}
}

type collector struct {
	mu          sync.Mutex
	out, errOut bytes.Buffer
}

func (c *collector) opts(o Options) Options {
	o.Stdout = func(p []byte) error { c.mu.Lock(); defer c.mu.Unlock(); c.out.Write(p); return nil }
	o.Stderr = func(p []byte) { c.mu.Lock(); defer c.mu.Unlock(); c.errOut.Write(p) }
	return o
}

func TestRunSplitsStreamsAndKeepsExitCode(t *testing.T) {
	var c collector
	res, err := Run(context.Background(), c.opts(self(t, "echo")))
	require.NoError(t, err)
	assert.Equal(t, 3, res.ExitCode)
	assert.Equal(t, "line 1\nline 2\n", c.out.String())
	assert.Equal(t, "warning on stderr\n", c.errOut.String())
}

func TestRunForwardsSIGINT(t *testing.T) {
	var c collector
	o := c.opts(self(t, "trap"))
	ready := make(chan struct{})
	var once sync.Once
	inner := o.Stdout
	o.Stdout = func(p []byte) error {
		if bytes.Contains(p, []byte("ready")) {
			once.Do(func() { close(ready) })
		}
		return inner(p)
	}
	go func() {
		<-ready
		// The signal goes to twasm (this process); Run must forward it.
		_ = syscall.Kill(os.Getpid(), syscall.SIGINT)
	}()
	res, err := Run(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, 130, res.ExitCode)
	assert.Equal(t, os.Interrupt, res.Signaled)
	assert.Contains(t, c.out.String(), "interrupted")
}

func TestRunCancelKills(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	o := self(t, "trap")
	o.Signals = []os.Signal{syscall.SIGUSR2} // keep SIGINT out of this test
	o.Stdout = func(p []byte) error {
		if bytes.Contains(p, []byte("ready")) {
			cancel()
		}
		return nil
	}
	res, err := Run(ctx, o)
	require.NoError(t, err)
	assert.Equal(t, 128+int(syscall.SIGKILL), res.ExitCode)
}

func TestRunStdoutErrorStopsReading(t *testing.T) {
	o := self(t, "flood")
	boom := errors.New("disk full")
	n := 0
	o.Stdout = func(p []byte) error { n++; return boom }
	_, err := Run(context.Background(), o)
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, 1, n)
}

func TestRunNotFound(t *testing.T) {
	_, err := Run(context.Background(), Options{Args: []string{"/nonexistent/agent-cli"}})
	assert.ErrorIs(t, err, ErrStart)
	_, err = Run(context.Background(), Options{})
	assert.ErrorIs(t, err, ErrStart)
	var ee *exec.Error
	_ = ee
	_ = time.Second
}

// TestRunGrandchildHoldsPipes: the agent exits while a process it started
// keeps its stdout open; Run stops reading WaitDelay later instead of
// waiting for that process, and says so.
func TestRunGrandchildHoldsPipes(t *testing.T) {
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Skip("no sleep command:", err)
	}
	var c collector
	gate := filepath.Join(t.TempDir(), "gate")
	o := c.opts(self(t, "grandchild"))
	o.Env = append(o.Env, "AGENTPROC_GATE="+gate)
	inner := o.Stdout
	o.Stdout = func(p []byte) error {
		err := inner(p)
		if bytes.Contains(p, []byte("\n")) {
			_ = os.WriteFile(gate, nil, 0o600)
		}
		return err
	}
	o.WaitDelay = 50 * time.Millisecond
	res, err := Run(context.Background(), o)
	require.NoError(t, err)
	pid, _ := strconv.Atoi(strings.TrimSpace(c.out.String()))
	if pid > 0 {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	assert.True(t, res.OutputLeftOpen)
	assert.Equal(t, 0, res.ExitCode)
	assert.Positive(t, pid, "the agent's output before it exited is read")
}

// TestRunSlowReaderGetsEverything: the agent prints its pid, then 32
// KiB (the pipe holds it all), and exits; the callback, given the first
// chunk, waits until the agent is gone and then takes longer than
// WaitDelay (as normalizing does on a busy machine). Every byte is still
// read, and the output is not taken for held open: WaitDelay bounds
// waiting for the pipe, not handling what it gave. (os/exec's WaitDelay,
// which counts the callbacks' time, closed the pipe and record dropped
// the agent's last lines under load.)
func TestRunSlowReaderGetsEverything(t *testing.T) {
	var c collector
	o := c.opts(self(t, "burst"))
	inner := o.Stdout
	first := true
	o.Stdout = func(p []byte) error {
		if first {
			first = false
			pid, err := strconv.Atoi(strings.TrimSpace(string(p[:bytes.IndexByte(p, '\n')])))
			require.NoError(t, err)
			// Until Run has reaped it: the agent has exited, what it
			// printed is in the pipe.
			for syscall.Kill(pid, 0) == nil {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(50 * time.Millisecond) // 5x WaitDelay
		}
		return inner(p)
	}
	o.WaitDelay = 10 * time.Millisecond
	res, err := Run(context.Background(), o)
	require.NoError(t, err)
	assert.False(t, res.OutputLeftOpen)
	n := bytes.IndexByte(c.out.Bytes(), '\n') + 1
	assert.Equal(t, 256*128, c.out.Len()-n, "every byte the agent printed")
}

package e2e

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/twasm/twasm/internal/testing/syncbuf"
	"github.com/twasm/twasm/transcript"
)

// openPTY opens a pseudo-terminal pair: the master, which the test
// writes keystrokes to, and the terminal the process under test reads.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	master, tty, _ = openPTYOutput(t)
	return master, tty
}

// openPTYOutput is openPTY that also keeps what the terminal shows.
func openPTYOutput(t *testing.T) (master, tty *os.File, shown *syncbuf.Buffer) {
	t.Helper()
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	master = os.NewFile(uintptr(fd), "/dev/ptmx")
	t.Cleanup(func() { master.Close() })
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tty.Close() })
	// Drain what the terminal shows, so that it never fills.
	shown = &syncbuf.Buffer{}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			shown.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	return master, tty, shown
}

// startOnTTY starts twasm with a terminal as stdin (its controlling
// terminal, in a session of its own, so that Ctrl-C typed on it reaches
// twasm as SIGINT) and pipes as stdout and stderr.
func startOnTTY(t *testing.T, tty *os.File, args ...string) *proc {
	t.Helper()
	return startTTY(t, tty, true, false, false, env(), args...)
}

// startTTY starts twasm in a session of its own with tty as its
// controlling terminal and as each of stdin, stdout and stderr that is
// asked for; the others are pipes (stdin: empty).
func startTTY(t *testing.T, tty *os.File, in, out, errOut bool, environ []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = environ
	cmd.Dir = t.TempDir()
	p := &proc{cmd: cmd, out: &syncbuf.Buffer{}, errOut: &syncbuf.Buffer{}}
	cmd.Stdout, cmd.Stderr = p.out, p.errOut
	if in {
		cmd.Stdin = tty
	}
	if out {
		cmd.Stdout = tty
	}
	if errOut {
		cmd.Stderr = tty
	}
	ctty := 0
	switch {
	case in:
	case out:
		ctty = 1
	default:
		ctty = 2
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: ctty}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return p
}

// TestRecordFromTerminal: with a terminal on stdin and no --input, record
// says it is reading stdin and how to end it; Ctrl-D ends the input and
// Ctrl-C cancels the recording (exit 130, the run ends cancelled).
func TestRecordFromTerminal(t *testing.T) {
	t.Parallel()
	// One line: a terminal hands each line to its own read.
	in, err := os.ReadFile(golden("claude", "json_result.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"ctrl-d", "ctrl-c"} {
		t.Run(key, func(t *testing.T) {
			t.Parallel()
			storage := t.TempDir()
			master, tty := openPTY(t)
			p := startOnTTY(t, tty, "--storage", storage, "record", "--provider", "claude")
			waitFor(t, "the notice on stderr", hangBound, func() bool { return strings.Contains(p.errOut.String(), "Ctrl-D") })
			if !strings.Contains(p.errOut.String(), "reading") || !strings.Contains(p.errOut.String(), "Ctrl-C") {
				t.Errorf("notice: %s", p.errOut)
			}
			// A copy: the parallel subtests share in, and append could
			// write into its spare capacity from both.
			keys, code := append(slices.Clip(in), 4), 0
			if key == "ctrl-c" {
				keys, code = []byte{3}, 130
			}
			if _, err := master.Write(keys); err != nil {
				t.Fatal(err)
			}
			r := p.wait(t, hangBound)
			if r.code != code {
				t.Fatalf("exit %d, want %d: %v", r.code, code, r)
			}
			evs := readRun(t, transcriptPath(storage, onlyRun(t, storage)))
			if key == "ctrl-c" {
				if st := runEnd(t, evs).Status; st != transcript.StatusCancelled {
					t.Errorf("run status %q, want cancelled", st)
				}
			} else if _, res := agentResult(t, evs); res.Status != transcript.StatusOK || res.FinalText != "Created hello.txt." {
				t.Errorf("the line typed was not recorded: %+v", res)
			}
		})
	}
}

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
	"github.com/twasm/twasm/transcript"
)

// hostilePlugin builds a test plugin of the host's testdata (or this
// package's) into a new plugin directory and returns the file.
func hostilePlugin(t *testing.T, dir, name string) string {
	t.Helper()
	return clitest.BuildPlugin(t, dir, name)
}

// A signal ends twasm while a plugin is busy in a feed call whose every
// loop pass is one memory.fill of 64 MiB (its time limit is an hour, so
// that twasm ending at all says the signal stopped it): exit 130, the run
// closed as cancelled, the transcript valid.
func TestSignalStopsBusyPlugin(t *testing.T) {
	t.Parallel()
	plugin := hostilePlugin(t, filepath.Join(root, "host", "testdata", "misbehave"), "misbehave")
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			storage := t.TempDir()
			p := start(t, []byte("emit before\nwarnlog "+intoFill+"\nfill\n"), nil, "--storage", storage, "record", "--provider", "misbehave",
				"--plugin-path", filepath.Dir(plugin), "--plugin-timeout", "1h", "--plugin-memory", "256MiB")
			waitIntoFill(t, p)
			sent := time.Now()
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			// The plugin's limit is an hour: ending at all (the wait only
			// bounds a hang, at hangBound) says the signal stopped it. How soon is for
			// the log, not asserted.
			r := p.wait(t, hangBound)
			t.Logf("twasm ended %v after %v", time.Since(sent), sig)
			if r.code != 130 {
				t.Fatalf("exit %d, want 130\n%v", r.code, r)
			}
			file := transcriptPath(storage, onlyRun(t, storage))
			evs := readRun(t, file)
			if st := runEnd(t, evs).Status; st != transcript.StatusCancelled {
				t.Errorf("run status %q, want cancelled", st)
			}
			validate(t, file)
		})
	}
}

// A file in the user's plugin directory whose initializer loops over
// memory.fill of 64 MiB costs `twasm record --provider claude` nothing
// once interrupted: SIGINT ends twasm (the initializer's limit is an hour,
// so that twasm ending at all says the signal stopped it).
func TestSignalStopsHostileInitializer(t *testing.T) {
	t.Parallel()
	plugin := hostilePlugin(t, filepath.Join(root, "host", "testdata", "initfill"), "initfill")
	config := t.TempDir()
	if err := os.MkdirAll(filepath.Join(config, "twasm"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Dir(plugin), filepath.Join(config, "twasm", "plugins")); err != nil {
		t.Fatal(err)
	}
	storage, cache := t.TempDir(), t.TempDir()
	p := start(t, nil, []string{"XDG_CONFIG_HOME=" + config, "XDG_CACHE_HOME=" + cache},
		"--storage", storage, "record", "--provider", "claude", "--input", example(), "--plugin-timeout", "1h", "--plugin-memory", "256MiB")
	// The initializer logs right before its loop (a warning, which twasm
	// writes to stderr at once): the signal then reaches a plugin busy in
	// its initializer, not one still being compiled.
	waitFor(t, "the initializer to enter its fill loop", hangBound, func() bool {
		return strings.Contains(p.errOut.String(), initIntoFill)
	})
	sent := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := p.wait(t, hangBound)
	t.Logf("twasm ended %v after SIGINT", time.Since(sent))
	if r.code != 130 {
		t.Fatalf("exit %d, want 130\n%v", r.code, r)
	}
}

// The same with an agent: SIGINT reaches the agent, which ends, and the
// plugin busy with its output is stopped by it, not at its limit (an
// hour).
func TestSignalStopsBusyPluginWithAgent(t *testing.T) {
	t.Parallel()
	plugin := hostilePlugin(t, filepath.Join(root, "host", "testdata", "misbehave"), "misbehave")
	input := filepath.Join(t.TempDir(), "input")
	if err := os.WriteFile(input, []byte("emit before\nwarnlog "+intoFill+"\nfill\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	storage := t.TempDir()
	ready := filepath.Join(t.TempDir(), "ready")
	p := start(t, nil, fakeEnv(fakeInput, input, fakeHangAfter, "2", fakeReady, ready, fakeTrapInt, "1"),
		"--storage", storage, "record", "--provider", "misbehave", "--plugin-path", filepath.Dir(plugin),
		"--plugin-timeout", "1h", "--plugin-memory", "256MiB", "--", fake)
	waitFor(t, "the fake agent to be ready", hangBound, func() bool {
		_, err := os.Stat(ready)
		return err == nil
	})
	waitIntoFill(t, p)
	sent := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := p.wait(t, hangBound)
	t.Logf("twasm ended %v after SIGINT", time.Since(sent))
	if r.code != 130 {
		t.Fatalf("exit %d, want 130\n%v", r.code, r)
	}
	file := transcriptPath(storage, onlyRun(t, storage))
	if st := runEnd(t, readRun(t, file)).Status; st != transcript.StatusCancelled {
		t.Errorf("run status %q, want cancelled", st)
	}
	validate(t, file)
}

// initIntoFill is what the initfill plugin's initializer logs right
// before its loop (its IntoFill).
const initIntoFill = "initfill: into the fill loop"

// intoFill is what the misbehave plugin logs right
// before its fill loop, in the same call (its "warnlog" command).
const intoFill = "misbehave: into the fill loop"

// waitIntoFill waits until twasm's stderr shows intoFill: the plugin is
// then inside its feed call, at the fill loop, so a signal sent next
// interrupts a busy plugin (a sleep stood here: on a slow machine the
// signal could come before the call, and the test checked the easier
// path without saying so).
func waitIntoFill(t *testing.T, p *proc) {
	t.Helper()
	waitFor(t, "the plugin to enter its fill loop", hangBound, func() bool {
		return strings.Contains(p.errOut.String(), intoFill)
	})
}

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/tools/wasmbuild"
	"github.com/twasm/twasm/transcript"
)

// hostilePlugin builds a test plugin of the host's testdata (or this
// package's) into a new plugin directory and returns the directory and the
// file.
func hostilePlugin(t *testing.T, dir, name string) string {
	t.Helper()
	b := wasmbuild.ForTest(t, dir)
	plugins := t.TempDir()
	path := filepath.Join(plugins, name+".wasm")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
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

// proc_exit from a plugin, even with the code wazero uses for a cancelled
// context, is the plugin's fault: the lost line is counted and said, the
// run is not taken for a user's cancellation.
func TestProcExitIsThePluginsFault(t *testing.T) {
	t.Parallel()
	plugin := hostilePlugin(t, filepath.Join(root, "host", "testdata", "misbehave"), "misbehave")
	storage := t.TempDir()
	r := start(t, []byte("emit before\nprocexit 4294967295\n"), nil, "--storage", storage, "record", "--provider", "misbehave",
		"--plugin-path", filepath.Dir(plugin)).wait(t, hangBound)
	if r.code == 130 || strings.Contains(r.errOut, "interrupted") {
		t.Fatalf("taken for an interrupt: %v", r)
	}
	file := transcriptPath(storage, onlyRun(t, storage))
	evs := readRun(t, file)
	if st := runEnd(t, evs).Status; st == transcript.StatusCancelled {
		t.Errorf("run status %q", st)
	}
	step, res := agentResult(t, evs)
	if step.Status == transcript.StatusCancelled || step.Status == transcript.StatusOK || res.FailedLines == 0 ||
		!strings.Contains(strings.Join(res.Warnings, "\n"), "proc_exit") {
		t.Errorf("step %q, failed lines %d, warnings %q", step.Status, res.FailedLines, res.Warnings)
	}
	validate(t, file)
}

// A plugin fault with --input, whose lines reach the plugin in batches of
// up to 64, loses the line that faulted and no other: the lines batched
// with it are sent again one at a time, as when lines arrive one by one,
// and the lost line is counted and said with the plugin's reason.
func TestRecordInputFaultLosesOneLine(t *testing.T) {
	t.Parallel()
	plugin := hostilePlugin(t, filepath.Join(root, "host", "testdata", "misbehave"), "misbehave")
	for _, at := range []int{1, 20, 64} {
		t.Run(strconv.Itoa(at), func(t *testing.T) {
			t.Parallel()
			var in strings.Builder
			var want []string
			for i := 1; i <= 64; i++ {
				if i == at {
					in.WriteString("fatal line " + strconv.Itoa(i) + " is bad\n")
					continue
				}
				fmt.Fprintf(&in, "emit line %d\n", i)
				want = append(want, "line "+strconv.Itoa(i))
			}
			input := filepath.Join(t.TempDir(), "run.log")
			if err := os.WriteFile(input, []byte(in.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			storage := t.TempDir()
			r := twasm(t, "--storage", storage, "record", "--provider", "misbehave", "--input", input,
				"--plugin-path", filepath.Dir(plugin))
			file := transcriptPath(storage, onlyRun(t, storage))
			_, res := agentResult(t, readRun(t, file))
			var got []string
			for _, w := range res.Warnings {
				if strings.HasPrefix(w, "line ") {
					got = append(got, w)
				}
			}
			if res.FailedLines != 1 || !slices.Equal(got, want) {
				t.Errorf("failed lines %d (want 1); records of %d innocent lines (want 63); exit %d\nwarnings %q", res.FailedLines, len(got), r.code, res.Warnings)
			}
			if all := strings.Join(res.Warnings, "\n"); !strings.Contains(all, "1 line(s) lost") || !strings.Contains(all, "line "+strconv.Itoa(at)+" is bad") {
				t.Errorf("the lost line and its reason are not said: %q", res.Warnings)
			}
			validate(t, file)
		})
	}
}

// An external plugin claiming a provider a bundled plugin serves does not
// take it, nor disable it: the bundled plugin records, and a warning names
// the file and --plugin-override, which makes the external one record.
func TestExternalPluginClaimingBundledProvider(t *testing.T) {
	t.Parallel()
	plugin := hostilePlugin(t, filepath.Join(root, "internal", "testing", "e2e", "testdata", "impostor"), "impostor")
	for _, override := range []bool{false, true} {
		storage := t.TempDir()
		args := []string{"--storage", storage, "record", "--provider", "claude", "--input", example(), "--plugin-path", filepath.Dir(plugin), "--json"}
		if override {
			args = append(args, "--plugin-override")
		}
		r := twasm(t, args...)
		if !override && r.code != 0 {
			t.Fatalf("override %v: %v", override, r)
		}
		s := parseSummary(t, r)
		switch {
		case !override && (s.Plugin == nil || s.Plugin.Name != "claude"):
			t.Errorf("without override, plugin %+v", s.Plugin)
		case !override && (!strings.Contains(r.errOut, plugin) || !strings.Contains(r.errOut, "--plugin-override")):
			t.Errorf("without override, no warning naming the file: %s", r.errOut)
		case override && (s.Plugin == nil || s.Plugin.Name != "impostor"):
			t.Errorf("with override, plugin %+v", s.Plugin)
		}
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

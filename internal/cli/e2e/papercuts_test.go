package e2e

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestRecordQuietKeepsStderr: -q hides the agent's stdout, never its
// stderr, where it says why it failed.
func TestRecordQuietKeepsStderr(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	const marker = "fake-agent: auth failed, run login"
	r := start(t, nil, fakeEnv(fakeInput, example(), fakeStderr, marker), "--storage", storage, "record", "-q", "--provider", "claude", "--", fake).wait(t, time.Minute)
	if r.code != 0 || r.out != "" || !strings.Contains(r.errOut, marker) {
		t.Fatalf("want no stdout and the agent's stderr: %v", r)
	}
}

// TestRecordInvocation: the wrapped command line and its working
// directory are in the step's result.
func TestRecordInvocation(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	p := start(t, nil, fakeEnv(fakeInput, example()), "--storage", storage, "record", "--provider", "claude", "--", fake, "-p", "fix the tests")
	wd := p.cmd.Dir
	if r := p.wait(t, time.Minute); r.code != 0 {
		t.Fatal(r)
	}
	evs := readRun(t, transcriptPath(storage, onlyRun(t, storage)))
	sp, _ := agentResult(t, evs)
	var got struct {
		Command []string `json:"command"`
		Cwd     string   `json:"cwd"`
	}
	if err := json.Unmarshal(sp.Result, &got); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Command, []string{fake, "-p", "fix the tests"}) || got.Cwd != wd {
		t.Errorf("command %q in %q, want %q in %q", got.Command, got.Cwd, fake, wd)
	}
	validate(t, transcriptPath(storage, onlyRun(t, storage)))
}

// TestLiveColour: --live colours its lines only when stdout and stderr are
// both terminals; a log that either is redirected to gets none.
func TestLiveColour(t *testing.T) {
	t.Parallel()
	var environ []string
	for _, e := range env() {
		if !strings.HasPrefix(e, "NO_COLOR=") {
			environ = append(environ, e)
		}
	}
	environ = append(environ, "TERM=xterm")
	for _, tc := range []struct {
		name        string
		out, errOut bool
		colour      bool
	}{
		{"both terminals", true, true, true},
		{"stderr to a log", true, false, false},
		{"stdout to a log", false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, tty, shown := openPTYOutput(t)
			p := startTTY(t, tty, false, tc.out, tc.errOut, environ, "--storage", t.TempDir(), "record", "--live", "--provider", "claude", "--input", example())
			r := p.wait(t, time.Minute)
			if r.code != 0 {
				t.Fatal(r)
			}
			var live string
			if tc.errOut {
				waitFor(t, "the live lines on the terminal", 30*time.Second, func() bool { return strings.Contains(shown.String(), "run.completed") })
				live = shown.String()
			} else {
				live = r.errOut
			}
			if !strings.Contains(live, "tool.call") {
				t.Fatalf("no live lines: %q", live)
			}
			if got := strings.Contains(live, "\x1b["); got != tc.colour {
				t.Errorf("colour %v, want %v: %q", got, tc.colour, live)
			}
		})
	}
}

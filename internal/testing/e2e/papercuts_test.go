package e2e

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// TestRecordQuietKeepsStderr: -q hides the agent's stdout, never its
// stderr, where it says why it failed.
func TestRecordQuietKeepsStderr(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	const marker = "fake-agent: auth failed, run login"
	r := start(t, nil, fakeEnv(fakeInput, example(), fakeStderr, marker), "--storage", storage, "record", "-q", "--provider", "claude", "--", fake).wait(t, hangBound)
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
	if r := p.wait(t, hangBound); r.code != 0 {
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
			r := p.wait(t, hangBound)
			if r.code != 0 {
				t.Fatal(r)
			}
			var live string
			if tc.errOut {
				waitFor(t, "the live lines on the terminal", hangBound, func() bool { return strings.Contains(shown.String(), "run.completed") })
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

// TestVersionJSON: version --json carries everything the text form
// prints.
func TestVersionJSON(t *testing.T) {
	t.Parallel()
	text := twasmOK(t, "version").out
	var m map[string]any
	if err := json.Unmarshal([]byte(twasmOK(t, "version", "--json").out), &m); err != nil {
		t.Fatal(err)
	}
	var vals []string
	for _, v := range m {
		vals = append(vals, fmt.Sprint(v))
	}
	for _, word := range strings.Fields(text) {
		word = strings.Trim(word, "()")
		if word == "twasm" || word == "version" || word == "module" || word == "revision" || word == "modified" {
			continue
		}
		found := false
		for _, v := range vals {
			if strings.Contains(v, word) || strings.Contains(word, v) && v != "" {
				found = true
			}
		}
		if !found {
			t.Errorf("%q of the text form is not in --json: %v", word, m)
		}
	}
}

// TestToolsHelpExample: the jq filter of `tools --help` selects calls
// that have a non-zero exit code, and only those.
func TestToolsHelpExample(t *testing.T) {
	t.Parallel()
	jq, err := exec.LookPath("jq")
	if err != nil {
		t.Skip("no jq on PATH")
	}
	help := twasmOK(t, "tools", "--help").out
	i := strings.Index(help, "twasm tools --json run.jsonl | ")
	if i < 0 {
		t.Fatalf("no --json example in:\n%s", help)
	}
	line := help[i:]
	line = line[:strings.IndexByte(line, '\n')]
	storage := t.TempDir()
	id := clitest.Record(t, storage, "codex", golden("codex", "exec_command_failed.jsonl"))
	script := strings.Replace(strings.Replace(line, "twasm ", binary+" --storage "+storage+" ", 1), "run.jsonl", transcriptPath(storage, id), 1)
	script = strings.Replace(script, "| jq ", "| "+jq+" ", 1)
	out, err := exec.Command("sh", "-c", script).Output()
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	rows := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(rows) == 0 || rows[0] == "" {
		t.Fatalf("the example selected nothing from %s", twasmOK(t, "--storage", storage, "tools", "--json", id).out)
	}
	for _, l := range rows {
		var row struct {
			ExitCode *int `json:"exit_code"`
		}
		if err := json.Unmarshal([]byte(l), &row); err != nil || row.ExitCode == nil || *row.ExitCode == 0 {
			t.Errorf("selected %s", l)
		}
	}
}

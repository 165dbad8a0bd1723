package searchcmd_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// env is the whole environment of each command line of these tests.
var env = clitest.Plain()

// search prints what a transcript holds as every view does: terminal
// escape sequences in provider text (colours, OSC 8 hyperlinks with a
// javascript: target, a title change) and control bytes never reach the
// terminal, in the snippet or in the run's name; the match is still
// marked.
func TestSearchNeutralizesEscapes(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	hostile := `\u001b[31mred\u001b[0m \u001b]8;;javascript:alert(1)\u0007click\u001b]8;;\u0007 \u001b]0;pwned\u0007 xylophone \u009b2J bell\u0007 back\b`
	line := `{"type":"assistant","message":{"model":"m","id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"` + hostile + `"}],"stop_reason":"end_turn"},"session_id":"s1"}` + "\n"
	input := filepath.Join(t.TempDir(), "run.jsonl")
	if err := os.WriteFile(input, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	clitest.RunOK(t, env, "--storage", storage, "record", "--provider", "claude", "--input", input, "--name", "\x1b]8;;javascript:x\x07named\x1b]8;;\x07")
	r := clitest.RunOK(t, env, "--storage", storage, "search", "xylophone")
	for _, bad := range []string{"\x1b", "\x07", "\x08", "\u009b", "javascript:", "pwned", "[31m"} {
		if strings.Contains(r.Out, bad) {
			t.Errorf("search output holds %q:\n%q", bad, r.Out)
		}
	}
	for _, want := range []string{"«xylophone»", "red click", "named"} {
		if !strings.Contains(r.Out, want) {
			t.Errorf("search output lacks %q:\n%q", want, r.Out)
		}
	}
}

// The README's search of failed calls finds the failed command by its own
// outcome, filters alone list what they select, and nothing at all is a
// usage error.
func TestSearchFailedCallsAndFiltersAlone(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	clitest.RunOK(t, env, "--storage", storage, "record", "--provider", "codex", "--input", filepath.Join(clitest.Root, "testdata/golden/codex/exec_command_failed.jsonl"))
	clitest.RunOK(t, env, "--storage", storage, "record", "--provider", "codex", "--input", filepath.Join(clitest.Root, "testdata/golden/codex/exec_command.jsonl"))
	r := clitest.RunOK(t, env, "--storage", storage, "search", "--json", "--type", "tool_call", "--status", "error")
	lines := strings.Split(strings.TrimSpace(r.Out), "\n")
	if len(lines) == 0 || lines[0] == "" {
		t.Fatalf("no failed call found by filters alone: %v", r)
	}
	for _, l := range lines {
		var h map[string]any
		if err := json.Unmarshal([]byte(l), &h); err != nil {
			t.Fatal(err)
		}
		if h["kind"] != "tool_call" || h["status"] != "error" {
			t.Fatalf("hit %s: want failed tool calls only", l)
		}
	}
	if r := clitest.Run(t, env, "--storage", storage, "search"); r.Code != 2 || !strings.Contains(r.ErrOut, "a filter") {
		t.Fatalf("search with nothing: %v", r)
	}
}

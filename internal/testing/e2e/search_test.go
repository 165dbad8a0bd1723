package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// The README's search of failed calls finds the failed command by its own
// outcome, filters alone list what they select, and nothing at all is a
// usage error.
func TestSearchFailedCallsAndFiltersAlone(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	twasmOK(t, "--storage", storage, "record", "--provider", "codex", "--input", filepath.Join(root, "testdata/golden/codex/exec_command_failed.jsonl"))
	twasmOK(t, "--storage", storage, "record", "--provider", "codex", "--input", filepath.Join(root, "testdata/golden/codex/exec_command.jsonl"))
	r := twasmOK(t, "--storage", storage, "search", "--json", "--type", "tool_call", "--status", "error")
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
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
	if r := twasm(t, "--storage", storage, "search"); r.code != 2 || !strings.Contains(r.errOut, "a filter") {
		t.Fatalf("search with nothing: %v", r)
	}
}

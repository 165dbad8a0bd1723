package ls_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// env is the whole environment of each command line of these tests.
var env = clitest.Plain()

// TestLs: newest first by start time, every column, the filters, --json
// as JSON Lines; latest is the run that started last, whatever the files'
// modification times say; a unique prefix of a run id names the run.
func TestLs(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	first := clitest.Record(t, storage, "claude", clitest.Example(), "--name", "first claude")
	second := clitest.Record(t, storage, "codex", clitest.Golden("codex", "exec_command.jsonl"), "--name", "Nightly codex")
	// The older run's file is written last: latest must not follow it.
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(clitest.TranscriptPath(storage, first), future, future); err != nil {
		t.Fatal(err)
	}

	r := clitest.RunOK(t, env, "--storage", storage, "ls")
	lines := strings.Split(strings.TrimSpace(r.Out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], second+"\t") || !strings.HasPrefix(lines[1], first+"\t") {
		t.Fatalf("not newest first:\n%s", r.Out)
	}
	cols := strings.Split(lines[1], "\t")
	// ID NAME STATUS STARTED DURATION PROVIDERS STEPS TOOLS COST
	if len(cols) != 9 || cols[1] != "first claude" || cols[2] != "ok" || cols[5] != "claude" || cols[6] != "1" || cols[7] != "2" || cols[8] == "" {
		t.Errorf("columns %q", cols)
	}
	if _, err := time.Parse(time.RFC3339, cols[3]); err != nil {
		t.Errorf("started %q: %v", cols[3], err)
	}

	r = clitest.RunOK(t, env, "--storage", storage, "ls", "--json")
	var rows []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(r.Out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("ls --json line %q: %v", l, err)
		}
		rows = append(rows, m)
	}
	if len(rows) != 2 || rows[0]["run_id"] != second || rows[1]["cost_usd"] == nil || rows[1]["steps"] != 1.0 {
		t.Errorf("ls --json: %v", rows)
	}

	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--provider", "codex"}, []string{second}},
		{[]string{"--provider", "gemini"}, nil},
		{[]string{"--name", "nightly"}, []string{second}},
		{[]string{"--status", "ok"}, []string{second, first}},
		{[]string{"--status", "error"}, nil},
		{[]string{"--since", "1h"}, []string{second, first}},
		{[]string{"--until", "1h"}, nil},
		{[]string{"--since", time.Now().Add(time.Hour).Format(time.RFC3339)}, nil},
		{[]string{"-n", "1"}, []string{second}},
	} {
		r := clitest.RunOK(t, env, append([]string{"--storage", storage, "ls"}, tc.args...)...)
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(r.Out), "\n") {
			if l != "" {
				got = append(got, strings.Split(l, "\t")[0])
			}
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("ls %v: %v, want %v", tc.args, got, tc.want)
		}
	}
	if r := clitest.Run(t, env, "--storage", storage, "ls", "--since", "yesterday-ish"); r.Code != 2 {
		t.Errorf("bad --since: %v", r)
	}

	r = clitest.RunOK(t, env, "--storage", storage, "tree", "--json", "latest")
	if !strings.Contains(r.Out, second) {
		t.Errorf("latest is not the run that started last: %s", r.Out)
	}
	r = clitest.RunOK(t, env, "--storage", storage, "tools", "--json", first[:6])
	if !strings.Contains(r.Out, `"Bash"`) {
		t.Errorf("tools by prefix: %s", r.Out)
	}
}

// TestRunIDPrefix: an ambiguous prefix lists the runs it matches; an
// unknown one says so; both exit 2.
func TestRunIDPrefix(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	id := clitest.Record(t, storage, "claude", clitest.Example())
	b, err := os.ReadFile(clitest.TranscriptPath(storage, id))
	if err != nil {
		t.Fatal(err)
	}
	twins := []string{"abcdef01-0000-4000-8000-000000000001", "abcdef01-0000-4000-8000-000000000002"}
	for _, twin := range twins {
		if err := os.WriteFile(clitest.TranscriptPath(storage, twin), []byte(strings.ReplaceAll(string(b), id, twin)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, cmd := range []string{"view", "tree", "tools", "validate", "tail"} {
		r := clitest.Run(t, env, "--storage", storage, cmd, "abcdef")
		if r.Code != 2 || !strings.Contains(r.ErrOut, "ambiguous") || !strings.Contains(r.ErrOut, twins[0]) || !strings.Contains(r.ErrOut, twins[1]) {
			t.Errorf("%s with an ambiguous prefix: %v", cmd, r)
		}
		r = clitest.Run(t, env, "--storage", storage, cmd, "abcdef01-0000-4000-8000-000000000002")
		if r.Code != 0 {
			t.Errorf("%s with a full id: %v", cmd, r)
		}
		r = clitest.Run(t, env, "--storage", storage, cmd, "fff")
		if r.Code != 2 || !strings.Contains(r.ErrOut, `no run id starts with "fff"`) {
			t.Errorf("%s with an unknown prefix: %v", cmd, r)
		}
	}
	r := clitest.RunOK(t, env, "--storage", storage, "stats", "--json", "abcdef01-0000-4000-8000-000000000001", id[:8])
	if !strings.Contains(r.Out, `"runs":2`) {
		t.Errorf("stats by prefix: %s", r.Out)
	}
}

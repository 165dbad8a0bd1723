package importcmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// env is the whole environment of each command line of these tests.
var env = clitest.Plain()

// TestImport: --provider auto picks the provider per file; a file it
// cannot place is reported with the reason and exit 2 while the others
// are imported; --provider codex reads a rollout.
func TestImport(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	odd := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(odd, []byte("just some notes\nnot an agent log\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	files := []string{
		clitest.Example(),
		clitest.Golden("claude", "session_log.jsonl"),
		clitest.Golden("codex", "exec_command.jsonl"),
		odd,
		clitest.Golden("codex", "rollout_exec_command_v0143.jsonl"),
	}
	r := clitest.Run(t, env, append([]string{"--storage", storage, "import", "--provider", "auto"}, files...)...)
	if r.Code != 2 {
		t.Fatalf("exit %d, want 2: %v", r.Code, r)
	}
	if !strings.Contains(r.ErrOut, odd) || !strings.Contains(r.ErrOut, "1 of 5 files not imported") {
		t.Errorf("the undetectable file is not reported: %s", r.ErrOut)
	}
	lines := strings.Split(strings.TrimSpace(r.Out), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d imported, want 4:\n%s", len(lines), r.Out)
	}
	wantProv := []string{"claude", "claude", "codex", "codex"}
	var runs []string
	for i, l := range lines {
		f := strings.Split(l, "\t")
		if len(f) != 4 || f[1] != wantProv[i] {
			t.Errorf("line %q, want provider %s", l, wantProv[i])
			continue
		}
		runs = append(runs, clitest.TranscriptPath(storage, f[0]))
	}
	clitest.Validate(t, runs...)

	r = clitest.RunOK(t, env, "--storage", storage, "import", "--provider", "codex", "--json", clitest.Golden("codex", "rollout_shell_v040.jsonl"))
	if !strings.Contains(r.Out, `"provider":"codex"`) || !strings.Contains(r.Out, `"run_id"`) {
		t.Errorf("import --json: %s", r.Out)
	}
}

// TestImportAutoClineStreams: --provider auto places the Cline CLI's
// --json output of the SDK's agent events and Roo Code's CLI stream-json
// (their first lines) and json (its document), and the cline plugin reads
// each in its format:
// provider, format and status as the golden inputs' terminal lines say.
func TestImportAutoClineStreams(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	cases := []struct{ file, provider, format, status string }{
		{"cli_agent_events_success.jsonl", "cline", "agent-events", "ok"},
		{"cli_agent_events_denied_aborted.jsonl", "cline", "agent-events", "incomplete"},
		{"roo_stream_json_success.jsonl", "roo", "roo-stream-json", "ok"},
		{"roo_stream_json_failed.jsonl", "roo", "roo-stream-json", "error"},
		{"roo_stream_json_stdin_cancelled.jsonl", "roo", "roo-stream-json", "incomplete"},
		{"roo_json_success.json", "roo", "roo-json", "ok"},
	}
	for _, tc := range cases {
		r := clitest.RunOK(t, env, "--storage", storage, "import", "--provider", "auto", "--json", clitest.Golden("cline", tc.file))
		for _, want := range []string{`"provider":"` + tc.provider + `"`, `"format":"` + tc.format + `"`, `"status":"` + tc.status + `"`} {
			if !strings.Contains(r.Out, want) {
				t.Errorf("%s: %s not in %s", tc.file, want, r.Out)
			}
		}
	}
}

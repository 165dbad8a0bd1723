package importcmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/cmdtest"
)

// The flag layer: what the command line becomes, and what it refuses.
func TestNewCmdImport(t *testing.T) {
	tests := []struct {
		argv    string
		wantErr string
		want    Options
	}{
		{argv: "--provider auto a.jsonl b.jsonl", want: Options{Provider: "auto", Files: []string{"a.jsonl", "b.jsonl"}}},
		{argv: "--provider codex --format exec-json --json --redact x", want: Options{Provider: "codex", Format: "exec-json", JSON: true, Redact: true, Files: []string{"x"}}},
		{argv: "a.jsonl", wantErr: "--provider is required"},
		{argv: "--provider auto", wantErr: "requires at least 1 arg"},
	}
	for _, tc := range tests {
		t.Run(tc.argv, func(t *testing.T) {
			e := cmdtest.New(t)
			var got *Options
			err := cmdtest.Parse(NewCmdImport(e.F, func(_ context.Context, o *Options) error { got = o; return nil }), tc.argv)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Provider != tc.want.Provider || got.Format != tc.want.Format || got.JSON != tc.want.JSON ||
				got.Redact != tc.want.Redact || strings.Join(got.Files, " ") != strings.Join(tc.want.Files, " ") {
				t.Errorf("options %+v, want %+v", got, tc.want)
			}
		})
	}
}

// capture is a real Claude Code session log of the project's captures.
const claudeLog = "../../../testdata/captures/claude/agentcmd_session_log_v2.0.26_plan_rejected.jsonl"

// The run layer: a native session log imported with --provider auto is
// detected, recorded as one run and printed as JSON; imported again it is
// recognised by its content and skipped.
func TestRunImport(t *testing.T) {
	e := cmdtest.New(t)
	file := filepath.Join(t.TempDir(), "session.jsonl")
	src, err := os.ReadFile(claudeLog)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, src, 0o600); err != nil {
		t.Fatal(err)
	}
	imp := func(argv ...string) []Imported { return runImport(t, e, argv...) }
	got := imp("--provider", "auto", "--json", file)
	if len(got) != 1 || got[0].Provider != "claude" || got[0].Action != "new" || got[0].RunID == "" || got[0].File != file {
		t.Fatalf("first import: %+v", got)
	}
	tr, err := os.ReadFile(got[0].Transcript)
	if err != nil || !json.Valid(tr[:strings.IndexByte(string(tr), '\n')]) {
		t.Fatalf("transcript %s: %v", got[0].Transcript, err)
	}
	again := imp("--provider", "claude", "--json", file)
	if len(again) != 1 || again[0].RunID != got[0].RunID || again[0].Action != "unchanged" {
		t.Fatalf("second import: %+v, want the first run %s recognised", again, got[0].RunID)
	}
	if after, _ := os.ReadFile(file); string(after) != string(src) {
		t.Fatal("import changed the file it read")
	}
}

// aiderHistory is a real Aider chat history of the project's captures:
// five sessions, one after another.
const aiderHistory = "../../../testdata/captures/aider/coding_aider_edits_commits.md"

// A file that holds many sessions (Aider's chat history) is imported as
// one run per session, FILE#1 to FILE#N, as sync archives it; imported
// again each is recognised; a session appended later is the only new
// run; --whole makes one run of the file.
func TestRunImportSessions(t *testing.T) {
	src, err := os.ReadFile(aiderHistory)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), ".aider.chat.history.md")
	if err := os.WriteFile(file, src, 0o600); err != nil {
		t.Fatal(err)
	}
	e := cmdtest.New(t)
	imp := func(e *cmdtest.Env, argv ...string) []Imported { return runImport(t, e, argv...) }
	check := func(what string, got []Imported, actions ...string) {
		t.Helper()
		if len(got) != len(actions) {
			t.Fatalf("%s: %d sessions imported, want %d: %+v", what, len(got), len(actions), got)
		}
		for i, im := range got {
			if want := file + "#" + strconv.Itoa(i+1); im.File != want || im.Action != actions[i] || im.RunID == "" || im.Provider != "aider" || im.Error != "" {
				t.Errorf("%s: session %d: %+v, want %s %s", what, i+1, im, want, actions[i])
			}
		}
	}
	first := imp(e, "--provider", "auto", "--json", file)
	check("first import", first, "new", "new", "new", "new", "new")
	ids := map[string]bool{}
	for _, im := range first {
		ids[im.RunID] = true
	}
	if len(ids) != 5 {
		t.Fatalf("5 sessions, %d runs: %+v", len(ids), first)
	}
	again := imp(e, "--provider", "aider", "--json", file)
	check("second import", again, "unchanged", "unchanged", "unchanged", "unchanged", "unchanged")
	for i := range again {
		if again[i].RunID != first[i].RunID {
			t.Errorf("second import: session %d is run %s, was %s", i+1, again[i].RunID, first[i].RunID)
		}
	}
	more := append(append([]byte{}, src...), "\n# aider chat started at 2025-03-02 09:00:00\n\n#### hello\n\nHi.\n"...)
	if err := os.WriteFile(file, more, 0o600); err != nil {
		t.Fatal(err)
	}
	grown := imp(e, "--provider", "aider", "--json", file)
	check("after a session was appended", grown, "unchanged", "unchanged", "unchanged", "unchanged", "unchanged", "new")
	if ids[grown[5].RunID] {
		t.Errorf("the appended session went into an earlier run %s", grown[5].RunID)
	}
	whole := imp(cmdtest.New(t), "--provider", "aider", "--whole", "--json", file)
	if len(whole) != 1 || whole[0].File != file || whole[0].Action != "new" {
		t.Fatalf("--whole: %+v, want one run of the file", whole)
	}
	if after, _ := os.ReadFile(file); string(after) != string(more) {
		t.Fatal("import changed the file it read")
	}
}

// runImport runs the import command with argv in e and returns what
// --json printed, one Imported per line.
func runImport(t *testing.T, e *cmdtest.Env, argv ...string) []Imported {
	t.Helper()
	e.Out.Reset()
	e.ErrOut.Reset()
	cmd := NewCmdImport(e.F, nil)
	cmd.SetArgs(argv)
	cmd.SetOut(e.ErrOut)
	cmd.SetErr(e.ErrOut)
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("import %v: %v\n%s", argv, err, e.ErrOut)
	}
	return cmdtest.JSONLines[Imported](t, e.Out.Bytes())
}

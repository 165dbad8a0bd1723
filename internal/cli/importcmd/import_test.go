package importcmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
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
	imp := func(argv ...string) []Imported {
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

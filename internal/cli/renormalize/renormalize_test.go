package renormalize

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/internal/archive"
	"github.com/twasm/twasm/internal/cli/importcmd"
	"github.com/twasm/twasm/internal/rawfile"
	"github.com/twasm/twasm/internal/testing/cmdtest"
	"github.com/twasm/twasm/plugins/claude"
)

// The flag layer.
func TestNewCmdRenormalize(t *testing.T) {
	tests := []struct {
		argv    string
		wantErr string
		want    Options
	}{
		{argv: "abc", want: Options{Run: "abc"}},
		{argv: "--json --redact abc", want: Options{Run: "abc", JSON: true, Redact: true}},
		{argv: "", wantErr: "RUN"},
		{argv: "a b", wantErr: "RUN"},
	}
	for _, tc := range tests {
		t.Run(tc.argv, func(t *testing.T) {
			e := cmdtest.New(t)
			var got *Options
			err := cmdtest.Parse(NewCmdRenormalize(e.F, func(_ context.Context, o *Options) error { got = o; return nil }), tc.argv)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Run != tc.want.Run || got.JSON != tc.want.JSON || got.Redact != tc.want.Redact {
				t.Errorf("options %+v, want %+v", got, tc.want)
			}
		})
	}
}

// The run layer: an imported Claude session renormalized with the same
// plugin gives a new run, named after the original, whose agent step has
// the same status and unmapped counts; the original is unchanged.
// TestRunRenormalize rebuilds an imported run from its raw capture: a
// framed one as twasm writes it now, a plain one as an older twasm wrote
// it (the same transcript either way).
func TestRunRenormalize(t *testing.T) {
	for _, kind := range []string{"framed", "older plain", "torn"} {
		t.Run(kind, func(t *testing.T) { testRunRenormalize(t, kind) })
	}
}

// testRunRenormalize: kind "torn" is a framed capture whose last frame
// was cut short since: the step is rebuilt in error, naming the damage,
// never from fewer bytes as if they were all.
func testRunRenormalize(t *testing.T, kind string) {
	e := cmdtest.New(t)
	src, err := os.ReadFile("../../../testdata/captures/claude/agentcmd_session_log_v2.0.26_plan_rejected.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(file, src, 0o600); err != nil {
		t.Fatal(err)
	}
	imp := importcmd.NewCmdImport(e.F, nil)
	imp.SetArgs([]string{"--provider", "claude", "--json", file})
	imp.SetErr(e.ErrOut)
	if err := imp.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("import: %v\n%s", err, e.ErrOut)
	}
	orig := cmdtest.JSONLines[importcmd.Imported](t, e.Out.Bytes())[0]
	switch kind {
	case "older plain":
		olderStore(t, filepath.Dir(filepath.Dir(orig.Transcript)), orig.Transcript)
	case "torn":
		framed, _ := filepath.Glob(filepath.Join(filepath.Dir(filepath.Dir(orig.Transcript)), "raw", "*", "*.raw"+rawfile.Ext))
		if len(framed) != 1 {
			t.Fatalf("framed captures %q", framed)
		}
		st, err := os.Stat(framed[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(framed[0], st.Size()-2); err != nil {
			t.Fatal(err)
		}
	}
	before, err := os.ReadFile(orig.Transcript)
	if err != nil {
		t.Fatal(err)
	}
	e.Out.Reset()
	sum := renormalizeJSON(t, e, orig.RunID)
	if kind == "torn" {
		tr, _ := os.ReadFile(sum.Transcript)
		if len(sum.Steps) != 1 || sum.Steps[0].New.Status != "error" || !strings.Contains(string(tr), "raw capture ends in a frame cut short") {
			t.Fatalf("a torn raw capture: steps %+v, transcript:\n%s", sum.Steps, tr)
		}
		return
	}
	if sum.Original != orig.RunID || sum.New == "" || sum.New == orig.RunID || len(sum.Problems) != 0 {
		t.Fatalf("summary %+v", sum)
	}
	agents := 0
	for _, s := range sum.Steps {
		if s.Renormalized {
			agents++
			if a, b := json.RawMessage(mustJSON(t, s.Old)), json.RawMessage(mustJSON(t, s.New)); string(a) != string(b) {
				t.Errorf("step %s: old %s, new %s: the same plugin gave another outcome", s.Path, a, b)
			}
		}
	}
	if agents != 1 {
		t.Errorf("%d agent steps renormalized, want 1: %+v", agents, sum.Steps)
	}
	tr, err := os.ReadFile(sum.Transcript)
	if err != nil || !strings.Contains(string(tr), `"`+FieldFrom+`":"`+orig.RunID+`"`) {
		t.Errorf("new transcript %s does not name its original (%v)", sum.Transcript, err)
	}
	if after, _ := os.ReadFile(orig.Transcript); string(after) != string(before) {
		t.Error("renormalize changed the original transcript")
	}
}

// olderStore turns the run's raw captures into what an older twasm
// wrote: plain "*.raw" files, so named by its transcript.
func olderStore(t *testing.T, root, transcriptPath string) {
	t.Helper()
	framed, _ := filepath.Glob(filepath.Join(root, "raw", "*", "*.raw"+rawfile.Ext))
	if len(framed) == 0 {
		t.Fatal("no framed raw capture")
	}
	for _, p := range framed {
		b, err := rawfile.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(strings.TrimSuffix(p, rawfile.Ext), b, 0o600); err != nil {
			t.Fatal(err)
		}
		os.Remove(p)
	}
	b, err := os.ReadFile(transcriptPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(transcriptPath, bytes.ReplaceAll(b, []byte(".raw"+rawfile.Ext+`"`), []byte(`.raw"`)), 0o600); err != nil {
		t.Fatal(err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRenormalizeOpenRun: the run of a synced session that may still
// grow has no run.completed (archive: a session log's run stays open);
// renormalize rebuilds it and ends the new run with the status of its
// latest part, as the open run states it, saying it was open (before:
// "error", the original "has no run.completed"). A run without
// run.completed that is no archived session still ends in error, saying
// why.
func TestRenormalizeOpenRun(t *testing.T) {
	for _, tc := range []struct {
		name, capture, want string
	}{
		{"a session ending on an answer", "agentcmd_session_log_v2.0.26_plan_rejected.jsonl", "ok"},
		{"a session ending on a provider error", "irrlicht_session_log_v2.1.143_api_error_rate_limit_retries.jsonl", "error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := cmdtest.New(t)
			src, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "captures", "claude", tc.capture))
			if err != nil {
				t.Skipf("capture: %v", err)
			}
			file := filepath.Join(t.TempDir(), "s.jsonl")
			if err := os.WriteFile(file, src, 0o600); err != nil {
				t.Fatal(err)
			}
			a, _, err := archive.Open(archive.Options{Store: e.F.Store(), CloseIdle: -1, Whole: true,
				Plugin: func(context.Context, string) (capture.Plugin, error) { return capture.NativePlugin(claude.Plugin), nil }})
			if err != nil {
				t.Fatal(err)
			}
			o := a.SyncFile(context.Background(), "claude", file)
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			if o.Action != archive.ActionNew || o.Status != tc.want {
				t.Fatalf("sync: %+v", o)
			}
			sum := renormalizeJSON(t, e, o.RunID)
			if !sum.Open || sum.Status != tc.want {
				t.Errorf("summary: open %v, status %q; want open, %q", sum.Open, sum.Status, tc.want)
			}
			tr, err := os.ReadFile(sum.Transcript)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(tr), `"type":"run.completed"`) || !strings.Contains(string(tr), `"status":"`+tc.want+`"`) || strings.Contains(string(tr), "no run.completed") {
				t.Errorf("the new run does not end %s:\n%s", tc.want, lastLine(tr))
			}
		})
	}
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// renormalizeJSON runs renormalize --json on run in e and returns its
// summary.
func renormalizeJSON(t *testing.T, e *cmdtest.Env, run string) Summary {
	t.Helper()
	cmd := NewCmdRenormalize(e.F, nil)
	cmd.SetArgs([]string{"--json", run})
	cmd.SetErr(e.ErrOut)
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("renormalize: %v\n%s", err, e.ErrOut)
	}
	var sum Summary
	if err := json.Unmarshal(e.Out.Bytes(), &sum); err != nil {
		t.Fatalf("--json: %v\n%s", err, e.Out)
	}
	return sum
}

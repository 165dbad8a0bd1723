package runcmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/cmdtest"
	"github.com/twasm/twasm/transcript"
)

// The flag layer of run begin and run end.
func TestNewCmdRun(t *testing.T) {
	tests := []struct {
		argv    string
		wantErr string
		begin   *BeginOptions
		end     *EndOptions
	}{
		{argv: "begin", begin: &BeginOptions{Name: "run"}},
		{argv: "begin --name rel --parent P --path fixes --iteration 2 --redact", begin: &BeginOptions{Name: "rel", Parent: "P", Path: "fixes", Iter: 2, Redact: true}},
		{argv: "begin --parent P", wantErr: "--parent and --path go together"},
		{argv: "begin --path p", wantErr: "--parent and --path go together"},
		{argv: "begin --parent P --path p --iteration -1", wantErr: "--iteration must not be negative"},
		{argv: "begin --parent P --path ../x", wantErr: "--path"},
		{argv: "begin extra", wantErr: "unknown command"},
		{argv: "end R --error boom --export-dir out", end: &EndOptions{RunID: "R", Error: "boom", ExportDir: "out"}},
		{argv: "end R --cancelled --cancel-open", end: &EndOptions{RunID: "R", Cancelled: true, CancelOpen: true}},
		{argv: "end R --error boom --cancelled", wantErr: "--error and --cancelled exclude each other"},
		{argv: "end", wantErr: "accepts 1 arg"},
	}
	for _, tc := range tests {
		t.Run(tc.argv, func(t *testing.T) {
			e := cmdtest.New(t)
			var b *BeginOptions
			var en *EndOptions
			cmd := NewCmdRun(e.F, func(_ context.Context, o *BeginOptions) error { b = o; return nil },
				func(_ context.Context, o *EndOptions) error { en = o; return nil })
			err := cmdtest.Parse(cmd, tc.argv)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if w := tc.begin; w != nil && (b == nil || b.Name != w.Name || b.Parent != w.Parent || b.Path != w.Path || b.Iter != w.Iter || b.Redact != w.Redact) {
				t.Errorf("begin options %+v, want %+v", b, w)
			}
			if w := tc.end; w != nil && (en == nil || en.RunID != w.RunID || en.Error != w.Error || en.Cancelled != w.Cancelled ||
				en.CancelOpen != w.CancelOpen || en.ExportDir != w.ExportDir) {
				t.Errorf("end options %+v, want %+v", en, w)
			}
		})
	}
}

// The run layer: a run begun, given a sub-run, and ended with an error and
// --export-dir: the ids are printed, the parent links the child, both end
// as they were told, and the run folders of both are written.
func TestBeginEnd(t *testing.T) {
	e := cmdtest.New(t)
	run := func(argv ...string) string {
		t.Helper()
		e.Out.Reset()
		e.ErrOut.Reset()
		cmd := NewCmdRun(e.F, nil, nil)
		cmd.SetArgs(argv)
		cmd.SetErr(e.ErrOut)
		if err := cmd.ExecuteContext(context.Background()); err != nil {
			t.Fatalf("run %v: %v\n%s", argv, err, e.ErrOut)
		}
		return strings.TrimSpace(e.Out.String())
	}
	parent := run("begin", "--name", "release")
	child := run("begin", "--parent", parent, "--path", "fixes", "--name", "fixes")
	if parent == "" || child == "" || parent == child {
		t.Fatalf("ids %q and %q", parent, child)
	}
	run("end", child)
	out := t.TempDir()
	folders := strings.Fields(run("end", parent, "--error", "tests still failing", "--export-dir", out))
	if len(folders) != 2 || filepath.Base(folders[0]) != parent || filepath.Base(folders[1]) != child {
		t.Fatalf("run folders %v, want the parent's then the child's", folders)
	}
	read := func(id string) []*transcript.Event {
		f, err := os.Open(filepath.Join(e.Storage, "transcripts", id+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var evs []*transcript.Event
		rd := transcript.NewReader(f)
		for rd.Next() {
			evs = append(evs, rd.Event())
		}
		return evs
	}
	pe, ce := read(parent), read(child)
	last := pe[len(pe)-1]
	if last.Type != transcript.RunCompleted || last.Step().Status != transcript.StatusError || last.Step().Error != "tests still failing" {
		t.Errorf("parent ends with %s %+v", last.Type, last.Payload)
	}
	linked := false
	for _, ev := range pe {
		linked = linked || ev.Type == transcript.StepCallWorkflowCompleted && ev.ChildRunID == child && ev.Path == "fixes"
	}
	if !linked {
		t.Error("the parent has no completed call_workflow step linking the child")
	}
	if l := ce[len(ce)-1]; l.Type != transcript.RunCompleted || l.Step().Status != transcript.StatusOK || l.ParentRunID != parent {
		t.Errorf("child ends with %s %+v (parent %q)", l.Type, l.Payload, l.ParentRunID)
	}
}

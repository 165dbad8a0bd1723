package exportcmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/cmdtest"
	"github.com/twasm/twasm/internal/testing/viewstest"
)

// `export dir` of a tree with a missing child and a chain deeper than
// runtree.MaxDepth writes every run it can follow, prints their folders,
// warns of each child it left out, and succeeds.
func TestExportDirSkippedChildren(t *testing.T) {
	e := cmdtest.New(t)
	for _, s := range viewstest.Storages() {
		if s.Name == "links" {
			s.Write(t, e.Storage)
		}
	}
	out := t.TempDir()
	tests := []struct {
		name    string
		root    string
		folders int
		warn    string
	}{
		{"missing child", viewstest.RunID(4), 1, "child run " + viewstest.RunID(99) + " not exported: no transcript file"},
		{"too deep", viewstest.RunID(10), 64, "not exported: not followed: deeper than 64 runs"},
		{"cycle", viewstest.RunID(1), 3, "not exported: cycle: run " + viewstest.RunID(1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e.Out.Reset()
			e.ErrOut.Reset()
			err := runDir(context.Background(), e.F, &DirOptions{Dir: out, Runs: []string{tc.root}})
			if err != nil {
				t.Fatalf("export dir: %v", err)
			}
			folders := strings.Fields(e.Out.String())
			if len(folders) != tc.folders {
				t.Errorf("%d folders printed, want %d:\n%s", len(folders), tc.folders, e.Out)
			}
			for _, f := range folders {
				if _, err := os.Stat(filepath.Join(f, "transcript.md")); err != nil {
					t.Errorf("printed folder %s: %v", f, err)
				}
			}
			if !strings.Contains(e.ErrOut.String(), tc.warn) {
				t.Errorf("stderr %q does not say %q", e.ErrOut, tc.warn)
			}
		})
	}
}

// export's help lists every format of the table.
func TestExportFormats(t *testing.T) {
	e := cmdtest.New(t)
	cmd := NewCmdExport(e.F)
	for _, f := range formats(e.F) {
		c, _, err := cmd.Find([]string{f.Name()})
		if err != nil || c.Name() != f.Name() {
			t.Errorf("format %s is not a subcommand of export: %v", f.Name(), err)
		}
		if f.Short == "" || f.Long == "" {
			t.Errorf("format %s has no help", f.Name())
		}
	}
}

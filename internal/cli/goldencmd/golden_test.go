package goldencmd

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/testing/cmdtest"
)

// The flag layer.
func TestNewCmdGolden(t *testing.T) {
	tests := []struct {
		argv    string
		wantErr string
		want    Options
	}{
		{argv: "check a b", want: Options{Dirs: []string{"a", "b"}}},
		{argv: "update --provider codex a", want: Options{Dirs: []string{"a"}, Provider: "codex", Update: true}},
		{argv: "check", wantErr: "no DIR given and no testdata/golden/* directory here"},
	}
	for _, tc := range tests {
		t.Run(tc.argv, func(t *testing.T) {
			e := cmdtest.New(t)
			t.Chdir(t.TempDir()) // no testdata/golden here
			var got *Options
			err := cmdtest.Parse(NewCmdGolden(e.F, func(_ context.Context, o *Options) error { got = o; return nil }), tc.argv)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got.Dirs, " ") != strings.Join(tc.want.Dirs, " ") || got.Provider != tc.want.Provider || got.Update != tc.want.Update {
				t.Errorf("options %+v, want %+v", got, tc.want)
			}
		})
	}
}

// The run layer, through the bundled pi plugin: the project's goldens
// pass; a golden edited to pin another answer fails with its diff and exit
// status 1 (ErrSilent: the output says it); update rewrites it back.
func TestRunGolden(t *testing.T) {
	src := "../../../testdata/golden/pi"
	dir := filepath.Join(t.TempDir(), "pi")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	e := cmdtest.New(t)
	golden := func(argv ...string) (string, error) {
		e.Out.Reset()
		cmd := NewCmdGolden(e.F, nil)
		cmd.SetArgs(argv)
		cmd.SetErr(e.ErrOut)
		err := cmd.ExecuteContext(context.Background())
		return e.Out.String(), err
	}
	out, err := golden("check", dir)
	if err != nil || !strings.Contains(out, " passed, 0 failed") {
		t.Fatalf("check: %v\n%s", err, out)
	}
	goldens, _ := filepath.Glob(filepath.Join(dir, "*.golden.jsonl"))
	if len(goldens) == 0 {
		t.Fatal("no golden files")
	}
	orig, err := os.ReadFile(goldens[0])
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(orig), `"status":"ok"`, `"status":"error"`, 1)
	if edited == string(orig) {
		edited = strings.Replace(string(orig), `"text":"`, `"text":"not what the agent said `, 1)
	}
	if err := os.WriteFile(goldens[0], []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = golden("check", dir)
	if !errors.Is(err, cmdutil.ErrSilent) || !strings.Contains(out, "FAIL ") || !strings.Contains(out, ", 1 failed") {
		t.Fatalf("check of an edited golden: %v\n%s", err, out)
	}
	if out, err = golden("update", dir); err != nil || !strings.Contains(out, "updated "+goldens[0]) {
		t.Fatalf("update: %v\n%s", err, out)
	}
	if now, _ := os.ReadFile(goldens[0]); string(now) != string(orig) {
		t.Fatal("update did not write the plugin's answer back")
	}
}

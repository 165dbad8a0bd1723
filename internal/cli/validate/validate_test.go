package validate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/testing/cmdtest"
	"github.com/twasm/twasm/internal/testing/viewstest"
)

func TestNewCmdValidate(t *testing.T) {
	tests := []struct {
		argv    string
		want    Options
		wantErr bool
	}{
		{"a.jsonl b.jsonl", Options{Args: []string{"a.jsonl", "b.jsonl"}}, false},
		{"--json --strict a.jsonl", Options{Args: []string{"a.jsonl"}, JSON: true, Strict: true}, false},
		{"", Options{}, true},
		{"--bogus a.jsonl", Options{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.argv, func(t *testing.T) {
			env := cmdtest.New(t)
			var got *Options
			err := cmdtest.Parse(NewCmdValidate(env.F, func(o *Options) error { got = o; return nil }), tc.argv)
			if tc.wantErr {
				// Unknown flags become usage errors at the root (see cli).
				if err == nil {
					t.Fatal("want an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got.Args, " ") != strings.Join(tc.want.Args, " ") || got.JSON != tc.want.JSON || got.Strict != tc.want.Strict {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestRunValidate(t *testing.T) {
	tests := []struct {
		name     string
		args     func(e *cmdtest.Env) []string
		json     bool
		strict   bool
		wantCode int
		want     []string
	}{
		{"broken file by path", func(e *cmdtest.Env) []string { return []string{filepath.Join(e.Dir, viewstest.Root+".jsonl")} },
			false, false, cmdutil.ExitFailure, []string{"FAIL (1 errors)", "error: line 9: malformed_line:",
				"warning: line 8: unknown_event_type:", "warning: line 7: dangling_call: tool.call c2 (Read)"}},
		{"good run by id", func(*cmdtest.Env) []string { return []string{viewstest.Child} },
			false, false, cmdutil.ExitOK, []string{": ok: run " + viewstest.Child + ", 7 events, finished, 0 warnings"}},
		{"strict passes a clean run", func(*cmdtest.Env) []string { return []string{viewstest.Child} },
			false, true, cmdutil.ExitOK, nil},
		{"json", func(*cmdtest.Env) []string { return []string{viewstest.Child, viewstest.Root} },
			true, false, cmdutil.ExitFailure, []string{`"run_id":"` + viewstest.Child}},
		{"missing run", func(*cmdtest.Env) []string { return []string{viewstest.Other} },
			false, false, cmdutil.ExitUsage, nil},
		{"directory", func(e *cmdtest.Env) []string {
			p := filepath.Join(e.Dir, "dir.jsonl")
			if err := os.Mkdir(p, 0o700); err != nil {
				panic(err)
			}
			return []string{p}
		},
			false, false, cmdutil.ExitUsage, nil},
		{"bad id", func(*cmdtest.Env) []string { return []string{"not-a-run"} },
			false, false, cmdutil.ExitUsage, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := cmdtest.New(t)
			err := runValidate(&Options{IO: env.IO, Resolve: env.F.ResolveRun, Args: tc.args(env), JSON: tc.json, Strict: tc.strict})
			if got := cmdutil.ExitCode(err); got != tc.wantCode {
				t.Fatalf("exit %d (%v), want %d", got, err, tc.wantCode)
			}
			for _, w := range tc.want {
				if !strings.Contains(env.Out.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, env.Out)
				}
			}
			if tc.json {
				if reps := cmdtest.JSONLines[FileReport](t, env.Out.Bytes()); len(reps) != 2 || reps[1].OK() {
					t.Fatalf("json: %+v", reps)
				}
			}
			if tc.name == "missing run" {
				var ie *cmdutil.InputError
				if !errors.As(err, &ie) || !strings.Contains(err.Error(), viewstest.Other+".jsonl") {
					t.Fatalf("err = %v, want the path", err)
				}
			}
		})
	}
}

package tree

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/testing/cmdtest"
	"github.com/twasm/twasm/internal/testing/viewstest"
	"github.com/twasm/twasm/internal/views"
)

func TestNewCmdTree(t *testing.T) {
	env := cmdtest.New(t)
	var got *Options
	if err := cmdtest.Parse(NewCmdTree(env.F, func(o *Options) error { got = o; return nil }), "--json x.jsonl"); err != nil {
		t.Fatal(err)
	}
	if got.Run != "x.jsonl" || !got.JSON {
		t.Fatalf("got %+v", got)
	}
	if err := cmdtest.Parse(NewCmdTree(env.F, nil), "a b"); cmdutil.ExitCode(err) != cmdutil.ExitUsage {
		t.Fatalf("two args: %v", err)
	}
}

func TestRunTree(t *testing.T) {
	tests := []struct {
		name string
		run  string
		json bool
		code int
		want string
	}{
		{"text", viewstest.Root, false, 0, "└─ delegate  call_workflow  error  1.0s  error: search failed\n   └─ run " + viewstest.Child},
		{"json", viewstest.Root, true, 0, `"child_run_id":"` + viewstest.Child},
		{"missing", viewstest.Other, false, cmdutil.ExitUsage, ""},
		{"bad id", "nope", false, cmdutil.ExitUsage, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := cmdtest.New(t)
			err := runTree(&Options{IO: env.IO, Load: env.F.LoadTree, Run: tc.run, JSON: tc.json})
			if cmdutil.ExitCode(err) != tc.code {
				t.Fatalf("err = %v", err)
			}
			if !contains(env.Out.String(), tc.want) {
				t.Fatalf("stdout lacks %q:\n%s", tc.want, env.Out)
			}
			if tc.json {
				var n views.RunNode
				if err := json.Unmarshal(env.Out.Bytes(), &n); err != nil || n.Steps[1].Child.RunID != viewstest.Child {
					t.Fatalf("json: %v", err)
				}
			}
		})
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

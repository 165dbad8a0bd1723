package tools

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/testing/cmdtest"
	"github.com/twasm/twasm/internal/testing/viewstest"
	"github.com/twasm/twasm/internal/views"
)

func TestNewCmdTools(t *testing.T) {
	env := cmdtest.New(t)
	var got *Options
	if err := cmdtest.Parse(NewCmdTools(env.F, func(o *Options) error { got = o; return nil }), "--json r.jsonl"); err != nil {
		t.Fatal(err)
	}
	if got.Run != "r.jsonl" || !got.JSON {
		t.Fatalf("got %+v", got)
	}
}

func TestRunTools(t *testing.T) {
	tests := []struct {
		name string
		tty  bool
		json bool
		want []string
	}{
		{"pipe", false, false, []string{
			"5\treview\tBash\texecute\tls -la\tok\t0\t1000\tagent_emitted\tc1\n",
			"7\treview\tRead\tread\t\tdangling\t\t\tagent_emitted\tc2\n",
			"4\tdelegate.search\tshell\texecute\tgrep -rn TODO .\terror\t1\t1000\tagent_emitted\tc3\n"}},
		{"tty", true, false, []string{"SEQ  PATH", "dangling", "1.0s"}},
		{"json", false, true, []string{`"call_id":"c2"`, `"dangling":true`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := cmdtest.New(t)
			env.IO.SetStdoutTTY(tc.tty)
			if err := runTools(&Options{IO: env.IO, Load: env.F.LoadTree, Run: viewstest.Root, JSON: tc.json}); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(env.Out.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, env.Out)
				}
			}
			if tc.name == "pipe" && strings.Count(env.Out.String(), "\n") != 3 {
				t.Fatalf("want 3 lines, no header:\n%s", env.Out)
			}
			if tc.json {
				if rows := cmdtest.JSONLines[views.ToolRow](t, env.Out.Bytes()); len(rows) != 3 {
					t.Fatalf("json: %d rows", len(rows))
				}
			}
		})
	}
	env := cmdtest.New(t)
	if err := runTools(&Options{IO: env.IO, Load: env.F.LoadTree, Run: viewstest.Child, JSON: true}); err != nil {
		t.Fatal(err)
	}
	env = cmdtest.New(t)
	err := runTools(&Options{IO: env.IO, Load: env.F.LoadTree, Run: viewstest.Other})
	if cmdutil.ExitCode(err) != cmdutil.ExitUsage {
		t.Fatalf("missing run: %v", err)
	}
}

package view

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/testing/cmdtest"
	"github.com/twasm/twasm/internal/testing/viewstest"
	"github.com/twasm/twasm/transcript"
)

func TestNewCmdView(t *testing.T) {
	tests := []struct {
		argv string
		want Options
		code int
	}{
		{"r.jsonl", Options{Run: "r.jsonl", Format: "md", Children: "inline", MaxOutput: 2000}, 0},
		{"--only dialog,tools --only errors --path a.b --format text --children link --max-output -1 r.jsonl",
			Options{Run: "r.jsonl", Only: []string{"dialog", "tools", "errors"}, Path: "a.b", Format: "text", Children: "link", MaxOutput: -1}, 0},
		{"--json r.jsonl", Options{Run: "r.jsonl", Format: "json", Children: "inline", MaxOutput: 2000, JSON: true}, 0},
		{"--json --format text r.jsonl", Options{}, cmdutil.ExitUsage},
	}
	for _, tc := range tests {
		t.Run(tc.argv, func(t *testing.T) {
			env := cmdtest.New(t)
			var got *Options
			err := cmdtest.Parse(NewCmdView(env.F, func(o *Options) error { got = o; return nil }), tc.argv)
			if cmdutil.ExitCode(err) != tc.code {
				t.Fatalf("err = %v", err)
			}
			if tc.code != 0 {
				return
			}
			if got.Run != tc.want.Run || strings.Join(got.Only, ",") != strings.Join(tc.want.Only, ",") || got.Path != tc.want.Path ||
				got.Format != tc.want.Format || got.Children != tc.want.Children || got.MaxOutput != tc.want.MaxOutput || got.JSON != tc.want.JSON {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestRunView(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		code int
		want []string
		lack []string
	}{
		{"markdown", Options{Format: "md", MaxOutput: 2000}, 0,
			[]string{"# Run review-wf", "<details><summary>Thinking</summary>", "### Sub-run search-wf · " + viewstest.Child[:8]}, nil},
		{"text dialog", Options{Format: "text", Only: []string{"dialog"}, MaxOutput: 2000}, 0,
			[]string{"Review the diff in ./src"}, []string{"Tool result", "<details>"}},
		{"max output zero", Options{Format: "md", MaxOutput: 0}, 0, []string{"_Output truncated: 1 of 4000 bytes"}, nil},
		{"json", Options{Format: "json", Path: "delegate.search"}, 0, []string{`"type":"tool.call"`}, []string{"review"}},
		{"bad only", Options{Format: "md", Only: []string{"nope"}}, cmdutil.ExitUsage, nil, nil},
		{"bad format", Options{Format: "html"}, cmdutil.ExitUsage, nil, nil},
		{"bad children", Options{Format: "md", Children: "deep"}, cmdutil.ExitUsage, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := cmdtest.New(t)
			o := tc.opts
			o.IO, o.Load, o.Run = env.IO, env.F.LoadTree, viewstest.Root
			err := runView(&o)
			if cmdutil.ExitCode(err) != tc.code {
				t.Fatalf("err = %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(env.Out.String(), w) {
					t.Errorf("stdout lacks %q", w)
				}
			}
			for _, w := range tc.lack {
				if strings.Contains(env.Out.String(), w) {
					t.Errorf("stdout has %q", w)
				}
			}
			if o.Format == "json" && tc.code == 0 {
				lines := cmdtest.JSONLines[json.RawMessage](t, env.Out.Bytes())
				if len(lines) != 5 {
					t.Fatalf("json: %d events\n%s", len(lines), env.Out)
				}
				if _, err := transcript.DecodeEvent(lines[0]); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func TestRunViewJSONKeepsUnknownTypes(t *testing.T) {
	env := cmdtest.New(t)
	err := runView(&Options{IO: env.IO, Load: env.F.LoadTree, Run: viewstest.Root, Format: "json", Only: []string{"errors"}})
	if err != nil {
		t.Fatal(err)
	}
	lines := cmdtest.JSONLines[json.RawMessage](t, env.Out.Bytes())
	if len(lines) != 4 {
		t.Fatalf("json: %d events\n%s", len(lines), env.Out)
	}
	ev, err := transcript.DecodeEvent(lines[0])
	if !errors.As(err, new(*transcript.UnknownTypeError)) || ev.Type != "agent.heartbeat" || ev.Seq != 8 {
		t.Fatalf("unknown event: %+v %v", ev, err)
	}
}

// --seq opens a long step at the hit: the events around it, what is left
// out said in place, and the commands that read on.
func TestRunViewSeqWindow(t *testing.T) {
	const runID = "eeeeeeee-eeee-4eee-8eee-eeeeeeeeeeee"
	b := viewstest.NewBuilder(runID, "")
	b.Add(viewstest.Started("long"))
	b.Add(viewstest.Step(transcript.StepStarted, "chat", 0, &transcript.StepPayload{Name: "chat", Kind: transcript.KindAgent}))
	for i := range 60 {
		b.Add(viewstest.Msg(transcript.MessageAssistant, "chat", transcript.TextBlock(fmt.Sprintf("answer number %03d", i))))
	}
	b.Add(viewstest.Step(transcript.StepCompleted, "chat", 0, &transcript.StepPayload{Name: "chat", Kind: transcript.KindAgent, Status: transcript.StatusOK}))
	b.Add(viewstest.Completed("long", transcript.StatusOK, ""))
	file := filepath.Join(t.TempDir(), runID+".jsonl")
	viewstest.WriteFile(t, file, b.Bytes(t))
	// Seqs: 1 run.started, 2 step.started, 3..62 the answers 000..059.
	hit := uint64(3 + 30)
	tests := []struct {
		name    string
		context int
		want    []string
		lack    []string
	}{
		{"window", 3, []string{
			"> seq 33: ", "answer number 027", "answer number 030", "answer number 033",
			"… 27 earlier events of this step not shown", "… 26 later events of this step not shown",
			"earlier: twasm view " + runID + " --seq 26 --context 3",
			"later: twasm view " + runID + " --seq 40 --context 3",
			"whole step: twasm view " + runID + " --seq 33 --context -1",
		}, []string{"answer number 026", "answer number 034"}},
		{"whole step", -1, []string{"answer number 000", "answer number 059"}, []string{"not shown", "later: "}},
		{"window reaches the start", 40, []string{"answer number 000", "answer number 059"}, []string{"earlier: ", "later: ", "not shown"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := cmdtest.New(t)
			o := Options{IO: env.IO, Load: env.F.LoadTree, Run: file, Format: "md", MaxOutput: 2000, Seq: hit, Context: tc.context}
			if err := runView(&o); err != nil {
				t.Fatal(err)
			}
			out := env.Out.String()
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q\n%s", w, out)
				}
			}
			for _, w := range tc.lack {
				if strings.Contains(out, w) {
					t.Errorf("stdout has %q\n%s", w, out)
				}
			}
		})
	}
}

// The footer gives each agent step's cost and where it comes from: the
// fixture's Claude step states $0.25 (provider), its sub-run's Codex step
// is priced from the table (gpt-5: 50*1.25 + 5*10 = 112.5 µ$, $0.0001).
// Without a table, the stated cost alone, as before.
func TestRunViewStepCosts(t *testing.T) {
	env := cmdtest.New(t)
	o := &Options{IO: env.IO, Load: env.F.LoadTree, Run: viewstest.Root, Format: "md", MaxOutput: 2000, Prices: env.F.Prices}
	if err := runView(o); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"out 200, $0.2500 provider", "$0.0001 priced"} {
		if !strings.Contains(env.Out.String(), w) {
			t.Errorf("stdout lacks %q:\n%s", w, env.Out)
		}
	}
	env = cmdtest.New(t)
	o = &Options{IO: env.IO, Load: env.F.LoadTree, Run: viewstest.Root, Format: "md", MaxOutput: 2000}
	if err := runView(o); err != nil {
		t.Fatal(err)
	}
	if s := env.Out.String(); !strings.Contains(s, "$0.2500") || strings.Contains(s, "priced") {
		t.Errorf("without a table:\n%s", s)
	}
}

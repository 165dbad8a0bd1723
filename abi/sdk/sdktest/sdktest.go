package sdktest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/golden"
	"github.com/twasm/twasm/golden/goldentest"
	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/transcript"
)

// Options name a plugin's test data and how the host begins it.
type Options struct {
	// Provider is the provider name the plugin is begun with, as
	// `twasm record --provider` gives it.
	Provider string
	// Golden is a directory of golden cases (package golden):
	// <case>.<ext>, the raw input, beside <case>.golden.jsonl, the
	// rendering it must give. Empty for none.
	Golden string
	// Captures are files of real provider output with no pinned
	// rendering: they are checked for conformance and batching only.
	Captures []string
	// Unmapped is the directory holding each capture's
	// <capture file name>.unmapped.json ([Expectation]); empty: beside
	// the capture. A golden case's unmapped counts are pinned by its
	// golden file instead.
	Unmapped string
	// Update rewrites the golden files that differ (from a -update flag
	// of the author's test); review their diff.
	Update bool
	// Check, when set, checks more of every input's run: what the
	// provider's own fields say must be there (tool call ids, model
	// text, usage), read from Result.Raw apart from the plugin.
	Check func(t *testing.T, r *Result)
}

// Result is what the host made of one input, for [Options.Check].
type Result struct {
	// Input is the input's path, Raw its bytes.
	Input string
	Raw   []byte
	// Golden is set for a golden case (else a capture).
	Golden bool
	// Step is the step's result as the host writes it into
	// step.completed.
	Step *transcript.AgentResult
	// Events are the events the host assembled, in order, in every
	// scope (a sub-agent's scope becomes a child run).
	Events []Event
	// Silent are the numbers of the first raw lines the plugin said
	// nothing about (spec §6.8 wants none), SilentN how many there were.
	Silent  []int
	SilentN int
}

// Event is an assembled event and its scope: "" for the step itself,
// else the plugin's scope id of a sub-agent.
type Event struct {
	Scope string
	*transcript.Event
}

// Expectation is the content of a capture's unmapped expectation file:
//
//	{"unmapped": {"<native type>": count}, "reasons": {"<native type>": "why"}}
//
// A capture without one may leave nothing unmapped. Counts are exact, so
// a list goes stale (and fails) when the plugin starts mapping a type.
type Expectation struct {
	Unmapped map[string]int    `json:"unmapped"`
	Reasons  map[string]string `json:"reasons"`
}

// epoch is the clock of events without a provider timestamp, as in
// golden renderings.
var epoch = func() time.Time { return time.Unix(0, 0).UTC() }

// Test checks plugin p over the inputs opts names, as subtests of t:
//
//   - golden/<case>: each golden case's rendering is its golden file
//     (with opts.Update, rewritten instead).
//   - conformance/<input>: for every golden input and capture, the
//     plugin never faults (no line lost; a golden case whose <case>.fault
//     file says why may), every raw line is accounted for (it gave a
//     record, or was declared ignored or counted unmapped: spec §6.8), a
//     capture's unmapped counts are its [Expectation], every event the
//     host assembles is a valid transcript line, and opts.Check passes.
//   - batching/<input>: the rendering is the same whether the input
//     arrives in full batches, one line a call or three lines a call (a
//     message, a document, a tool call cut across calls), as a live
//     agent's output does. A plugin, or the SDK under it, that kept a
//     value of one call into the next (a span, an abi.Value, a string
//     aliasing the line) reads another line's bytes there and shows here.
//     (Not for a golden case that expects a fault: the lines a fault
//     loses are those of its call.)
//
// It fails when opts names no input at all.
func Test(t *testing.T, p sdk.Plugin, opts Options) {
	t.Helper()
	ins := inputs(t, p, opts)
	t.Run("conformance", func(t *testing.T) {
		for _, in := range ins {
			t.Run(in.name(), func(t *testing.T) { conform(t, p, opts, in) })
		}
	})
	t.Run("batching", func(t *testing.T) {
		for _, in := range ins {
			t.Run(in.name(), func(t *testing.T) {
				if in.faultAllow {
					// A fault loses the lines of its call: how many
					// depends on the cut.
					t.Skip("the case expects a plugin fault")
				}
				batching(t, p, opts.Provider, in.path)
			})
		}
	})
}

// input is one file Test runs.
type input struct {
	path       string
	golden     bool
	faultAllow bool // a golden case whose .fault file allows a fault
}

func (in input) name() string { return filepath.Base(in.path) }

// inputs runs the golden subtests and lists every input: the golden
// cases' inputs, then the captures.
func inputs(t *testing.T, p sdk.Plugin, opts Options) []input {
	t.Helper()
	var ins []input
	if opts.Golden != "" {
		t.Run("golden", func(t *testing.T) {
			goldentest.Test(t, opts.Golden, capture.NativePlugin(p), golden.Options{Provider: opts.Provider, Update: opts.Update})
		})
		cases, err := golden.Cases(opts.Golden)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			ins = append(ins, input{path: c.Input, golden: true, faultAllow: c.Fault != ""})
		}
	}
	for _, c := range opts.Captures {
		ins = append(ins, input{path: c})
	}
	if len(ins) == 0 {
		t.Fatal("sdktest: no golden case and no capture to check")
	}
	return ins
}

// Run normalizes raw natively with p through the host's pipeline (lines,
// tapes, batches, records assembled into events), as a capture of
// provider's output would.
func Run(ctx context.Context, p sdk.Plugin, provider string, raw []byte) (*Result, error) {
	var c normalize.Collector
	s, err := normalize.NewStream(ctx, normalize.NativeInstance(p), &c, normalize.Options{Provider: provider, Now: epoch})
	if err != nil {
		return nil, err
	}
	if err := s.Feed(ctx, raw); err != nil {
		return nil, err
	}
	res, err := s.Close(ctx)
	if err != nil {
		return nil, err
	}
	r := &Result{Raw: raw, Step: res}
	r.SilentN, r.Silent = s.Silent()
	for _, it := range c.Items {
		if it.Event != nil {
			r.Events = append(r.Events, Event{Scope: it.Scope, Event: it.Event})
		}
	}
	return r, nil
}

// silent says which raw lines nothing accounted for (spec §6.8), "" when
// none.
func (r *Result) silent() string {
	if r.SilentN == 0 {
		return ""
	}
	return fmt.Sprintf("%d raw line(s) accounted for by no record, no ignored and no unmapped (spec §6.8), the first: lines %v", r.SilentN, r.Silent)
}

// conform is the conformance check of one input.
func conform(t *testing.T, p sdk.Plugin, opts Options, in input) {
	raw, err := os.ReadFile(in.path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), p, opts.Provider, raw)
	if err != nil {
		t.Fatal(err)
	}
	r.Input, r.Golden = in.path, in.golden
	if r.Step.FailedLines != 0 && !in.faultAllow {
		t.Errorf("%d raw line(s) lost to a plugin fault: %q", r.Step.FailedLines, r.Step.Warnings)
	}
	if msg := r.silent(); msg != "" {
		t.Error(msg)
	}
	checkEvents(t, r.Events)
	if !in.golden {
		dir := opts.Unmapped
		if dir == "" {
			dir = filepath.Dir(in.path)
		}
		CheckUnmapped(t, filepath.Join(dir, filepath.Base(in.path)+".unmapped.json"), r.Step.Unmapped)
	}
	if opts.Check != nil {
		opts.Check(t, r)
	}
}

// checkEvents fails for an event that does not encode as a transcript
// line, with the run id and sequence number the host would give it.
func checkEvents(t *testing.T, evs []Event) {
	t.Helper()
	for i, e := range evs {
		ev := *e.Event
		ev.Seq = uint64(i + 1)
		ev.RunID = "6f1443c9-0000-4000-8000-000000000000"
		if _, err := transcript.AppendEvent(nil, &ev); err != nil {
			t.Fatalf("event %d (%s) is not a valid transcript line: %v", i+1, ev.Type, err)
		}
	}
}

// CheckUnmapped compares the unmapped counts got of a capture's run with
// the [Expectation] in file (none: nothing may be unmapped). Every listed
// type must say why, must still be unmapped (a type the plugin now maps
// is to be dropped from the list), and must be counted exactly as often
// as listed; a type that is not listed must not be unmapped at all.
func CheckUnmapped(tb testing.TB, file string, got map[string]int) {
	tb.Helper()
	var want Expectation
	b, err := os.ReadFile(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		tb.Fatal(err)
	default:
		if err := json.Unmarshal(b, &want); err != nil {
			tb.Fatalf("%s: %v", file, err)
		}
	}
	for k := range want.Unmapped {
		if strings.TrimSpace(want.Reasons[k]) == "" {
			tb.Errorf("%s: unmapped %q has no reason", file, k)
		}
	}
	var unexpected []string
	for k, n := range got {
		if _, listed := want.Unmapped[k]; !listed {
			unexpected = append(unexpected, k)
		} else if n != want.Unmapped[k] {
			tb.Errorf("%q unmapped %d times, %s says %d", k, n, file, want.Unmapped[k])
		}
	}
	sort.Strings(unexpected)
	for _, k := range unexpected {
		tb.Errorf("%q unmapped %d times without a reason in %s", k, got[k], file)
	}
	for k := range want.Unmapped {
		if got[k] == 0 {
			tb.Errorf("%s lists %q as unmapped but the plugin now maps it: drop it", file, k)
		}
	}
}

// batching fails unless the input renders the same one line a call and
// three lines a call as in full batches.
func batching(t *testing.T, p sdk.Plugin, provider, path string) {
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	render := func(lines int) []byte {
		b, err := golden.Normalize(ctx, capture.NativePlugin(p), raw, golden.Options{Provider: provider, BatchLines: lines})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	full := render(0)
	for _, lines := range []int{1, 3} {
		if got := render(lines); !bytes.Equal(got, full) {
			t.Errorf("%d line(s) a call: %s", lines, firstDiff(full, got))
		}
	}
}

// firstDiff names the first line at which two renderings differ.
func firstDiff(want, got []byte) string {
	w, g := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl []byte
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if !bytes.Equal(wl, gl) {
			return fmt.Sprintf("line %d of the rendering is\n\t%.400s\nwhere full batches give\n\t%.400s", i+1, gl, wl)
		}
	}
	return "the renderings differ"
}

package plugintest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/transcript"
)

// Outcome is what a native run of a plugin gave.
type Outcome struct {
	Result *transcript.AgentResult
	Sink   normalize.Collector
}

// Run normalizes raw natively with p through normalize.Run; an error of
// the run fails the test.
func Run(tb testing.TB, p sdk.Plugin, raw []byte, opts normalize.Options) *Outcome {
	tb.Helper()
	o := &Outcome{}
	res, err := normalize.Run(context.Background(), normalize.NativeInstance(p), bytes.NewReader(raw), &o.Sink, opts)
	if err != nil {
		tb.Fatal(err)
	}
	o.Result = res
	return o
}

// FromResult is the Outcome of an sdktest run (its events in every
// scope), for the checks of this package.
func FromResult(r *sdktest.Result) *Outcome {
	o := &Outcome{Result: r.Step}
	for _, e := range r.Events {
		o.Sink.Items = append(o.Sink.Items, normalize.Collected{Scope: e.Scope, Event: e.Event})
	}
	return o
}

// Calls returns the call id of every tool.call, in every scope.
func (o *Outcome) Calls() map[string]bool {
	calls := map[string]bool{}
	for _, it := range o.Sink.Items {
		if it.Event == nil || it.Event.Type != transcript.ToolCall {
			continue
		}
		if tp := it.Event.Tool(); tp != nil {
			calls[tp.CallID] = true
		}
	}
	return calls
}

// Tools returns the payloads of every tool.call and every tool.result, in
// every scope, each in order.
func (o *Outcome) Tools() (calls, results []*transcript.ToolPayload) {
	for _, it := range o.Sink.Items {
		if it.Event == nil {
			continue
		}
		switch tp := it.Event.Tool(); {
		case tp == nil:
		case it.Event.Type == transcript.ToolCall:
			calls = append(calls, tp)
		case it.Event.Type == transcript.ToolResult:
			results = append(results, tp)
		}
	}
	return calls, results
}

// NamesOutputs returns the name of every tool.call and the output of
// every tool.result, in every scope, each in order.
func (o *Outcome) NamesOutputs() (names, outputs []string) {
	calls, results := o.Tools()
	for _, p := range calls {
		names = append(names, p.Name)
	}
	for _, p := range results {
		outputs = append(outputs, p.Output)
	}
	return names, outputs
}

// WantNamesOutputs runs lines (one input, a newline after each) through
// p as provider and fails tb unless the tool.call names and the
// tool.result outputs are calls and results, each in order (NamesOutputs):
// the check of every plugin's TestReusedCallID.
func WantNamesOutputs(tb testing.TB, p sdk.Plugin, provider string, lines, calls, results []string) {
	tb.Helper()
	gotCalls, gotResults := Run(tb, p, []byte(strings.Join(lines, "\n")+"\n"), normalize.Options{Provider: provider}).NamesOutputs()
	if !slices.Equal(gotCalls, calls) || !slices.Equal(gotResults, results) {
		tb.Errorf("calls %q, results %q; want %q, %q", gotCalls, gotResults, calls, results)
	}
}

// ToolTrace returns a line for every scope opened ("open S by P"), closed
// ("close S status"), tool.call ("S: call Name id") and tool.result ("S:
// result Name id: output"), in order, S being the scope ("main" for the
// step's own) and a result's Name that of the call the host paired it
// with in its scope: which scope each call and result went to, and which
// call each result answers.
func (o *Outcome) ToolTrace() []string {
	var out []string
	for _, it := range o.Sink.Items {
		scope := cmp.Or(it.Scope, "main")
		switch {
		case it.Open != nil:
			out = append(out, "open "+scope+" by "+it.Open.ParentToolID)
		case it.Close:
			out = append(out, "close "+scope+" "+it.CloseStatus)
		case it.Event == nil:
		case it.Event.Type == transcript.ToolCall:
			tp := it.Event.Tool()
			out = append(out, scope+": call "+tp.Name+" "+tp.CallID)
		case it.Event.Type == transcript.ToolResult:
			tp := it.Event.Tool()
			out = append(out, scope+": result "+tp.Name+" "+tp.CallID+": "+tp.Output)
		}
	}
	return out
}

// WantToolTrace runs lines (one input, a newline after each) through p
// as provider and fails tb unless its [Outcome.ToolTrace] is want.
func WantToolTrace(tb testing.TB, p sdk.Plugin, provider string, lines, want []string) {
	tb.Helper()
	got := Run(tb, p, []byte(strings.Join(lines, "\n")+"\n"), normalize.Options{Provider: provider}).ToolTrace()
	if !slices.Equal(got, want) {
		tb.Errorf("tool trace:\n\t%s\nwant:\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}

// ResultStatus returns the status of call id's tool.result, in any
// scope, and whether there is one (the host keeps a call's first result
// only); a result that states none is ok (the spec's default).
func (o *Outcome) ResultStatus(id string) (string, bool) {
	for _, it := range o.Sink.Items {
		if it.Event == nil || it.Event.Type != transcript.ToolResult {
			continue
		}
		if tp := it.Event.Tool(); tp != nil && tp.CallID == id {
			if tp.Status == "" {
				return "ok", true
			}
			return tp.Status, true
		}
	}
	return "", false
}

// Texts returns the Text and Thinking of every block of the messages keep
// accepts (every message, in every scope, when keep is nil), in order.
func (o *Outcome) Texts(keep func(*transcript.Event) bool) []string {
	var texts []string
	for _, it := range o.Sink.Items {
		if it.Event == nil || keep != nil && !keep(it.Event) {
			continue
		}
		if mp := it.Event.Message(); mp != nil {
			for _, b := range mp.Blocks {
				texts = append(texts, b.Text, b.Thinking)
			}
		}
	}
	return texts
}

// Summary is what a test of which turns a run holds compares: the
// non-empty texts of the messages keep accepts (every message when keep
// is nil), joined by "|", the number of tool calls, and the step's input
// and output tokens (-1 where the step states none).
func (o *Outcome) Summary(keep func(*transcript.Event) bool) (texts string, calls int, input, output int64) {
	var said []string
	for _, t := range o.Texts(keep) {
		if t != "" {
			said = append(said, t)
		}
	}
	c, _ := o.Tools()
	input, output = -1, -1
	if u := o.Result.Usage; u != nil {
		if u.InputTokens != nil {
			input = *u.InputTokens
		}
		if u.OutputTokens != nil {
			output = *u.OutputTokens
		}
	}
	return strings.Join(said, "|"), len(c), input, output
}

// Turns runs in natively with p through sdktest (as the plugin's provider)
// and returns the run and the [Outcome.Summary] of its assistant
// messages; the test fails when the run fails or leaves a line unmapped
// or unaccounted for (the plugins' fork tests).
func Turns(tb testing.TB, p sdk.Plugin, provider string, in []byte) (r *sdktest.Result, texts string, calls int, input int64) {
	tb.Helper()
	r, err := sdktest.Run(context.Background(), p, provider, in)
	if err != nil {
		tb.Fatal(err)
	}
	if len(r.Step.Unmapped) != 0 || r.SilentN != 0 {
		tb.Errorf("unmapped %v, %d silent lines; want none", r.Step.Unmapped, r.SilentN)
	}
	texts, calls, input, _ = FromResult(r).Summary(Assistant)
	return r, texts, calls, input
}

// Assistant accepts assistant messages (for [Outcome.Texts]).
func Assistant(ev *transcript.Event) bool { return ev.Type == transcript.MessageAssistant }

// CheckCalls fails for every id that has no tool.call.
func (o *Outcome) CheckCalls(tb testing.TB, ids []string) {
	tb.Helper()
	calls := o.Calls()
	for _, id := range ids {
		if !calls[id] {
			tb.Errorf("tool call %s in the raw input has no tool.call", id)
		}
	}
}

// CheckFailed checks each call of failed (call id -> whether the raw
// input says it failed) against its tool.result: one there is, not ok
// for a call that failed, ok for one that did not.
func (o *Outcome) CheckFailed(tb testing.TB, failed map[string]bool) {
	tb.Helper()
	for id, bad := range failed {
		st, ok := o.ResultStatus(id)
		switch {
		case !ok:
			tb.Errorf("call %s: no tool.result", id)
		case bad && st == "ok":
			tb.Errorf("call %s failed in the raw input, its tool.result says ok", id)
		case !bad && st != "ok":
			tb.Errorf("call %s succeeded in the raw input, its tool.result says %s", id, st)
		}
	}
}

// CheckTexts fails for every fragment of model text that is in none of
// texts: inside one when exact is false, the whole of one when it is true.
func CheckTexts(tb testing.TB, texts, frags []string, exact bool) {
	tb.Helper()
	all := strings.Join(texts, "\x00")
	whole := map[string]bool{}
	for _, s := range texts {
		whole[s] = true
	}
	for _, fr := range frags {
		if exact && !whole[fr] || !exact && !strings.Contains(all, fr) {
			tb.Errorf("model text %.80q is in no block", fr)
		}
	}
}

// Docs decodes a capture with encoding/json, apart from the plugin: the
// whole capture when it is one JSON document (a response body, maybe
// pretty-printed), otherwise every line that is one, after an SSE
// "data:" prefix.
func Docs(raw []byte) []any {
	var whole any
	if json.Unmarshal(raw, &whole) == nil {
		return []any{whole}
	}
	var docs []any
	for _, l := range bytes.Split(raw, []byte("\n")) {
		l = bytes.TrimPrefix(bytes.TrimSpace(l), []byte("data:"))
		var v any
		if json.Unmarshal(l, &v) == nil {
			docs = append(docs, v)
		}
	}
	return docs
}

// OneAssistant normalizes in natively with p through the host's pipeline
// (sdktest.Run) and returns its one assistant message: the test fails
// when the step has a warning (a message the host had to close, say) or
// when there is not exactly one such message.
func OneAssistant(tb testing.TB, p sdk.Plugin, provider string, in []byte) *transcript.MessagePayload {
	tb.Helper()
	r, err := sdktest.Run(context.Background(), p, provider, in)
	if err != nil {
		tb.Fatal(err)
	}
	if len(r.Step.Warnings) != 0 {
		tb.Errorf("warnings %q; want none", r.Step.Warnings)
	}
	var msgs []*transcript.MessagePayload
	for _, e := range r.Events {
		if e.Event.Type == transcript.MessageAssistant {
			msgs = append(msgs, e.Event.Message())
		}
	}
	if len(msgs) != 1 {
		tb.Fatalf("%d assistant messages; want 1", len(msgs))
	}
	return msgs[0]
}

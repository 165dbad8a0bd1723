package plugintest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/normalize"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, a ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, a...))
}

// echo turns every JSON line into an assistant message with the line's
// "text" and a tool call with its "call"; other lines are unmapped.
type echo struct{ n int }

func (e *echo) Line(l *sdk.Line, out *sdk.Out) error {
	if !l.JSON().Exists() {
		out.Unmapped(sdk.S("non_json"))
		return nil
	}
	e.n++
	key := sdk.S(fmt.Sprint(e.n))
	out.Open(key, sdk.Message{})
	out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(l.JSON().Get("text"))})
	out.Close(key, sdk.MessageEnd{})
	if id := l.JSON().Get("call"); id.Exists() {
		out.ToolCall(sdk.ToolCall{CallID: sdk.Text(id), Name: sdk.S("t")})
	}
	// "results": [[call id, is_error], ...], each a tool.result.
	for it := l.JSON().Get("results").Iter(); it.Next(); {
		r := it.Value()
		out.ToolResult(sdk.ToolResult{CallID: sdk.Text(r.Index(0)), IsError: r.Index(1).Truthy()})
	}
	if u := l.JSON().Get("usage"); u.Exists() {
		out.Usage(sdk.Split(sdk.IntOf(u.Get("uncached")), sdk.IntOf(u.Get("read")), sdk.Int{}), sdk.ModeAdd)
	}
	return nil
}

func (e *echo) End(out *sdk.Out) error {
	out.Status(sdk.StatusOK, sdk.Str{}, sdk.LevelTerminal)
	return nil
}

var echoPlugin = sdk.Plugin{
	Manifest: abi.Manifest{Name: "echo", Version: "1.0.0", Providers: []string{"echo"}, Formats: []string{"jsonl"}},
	New:      func(abi.BeginOptions) sdk.Normalizer { return &echo{} },
}

const input = `{"text":"hello world","call":"c1"}` + "\n\nbanner\n" + `{"text":"bye"}` + "\n"

// TestRunCollects: Run and FromResult (an sdktest run) collect the same
// calls and texts, and the checks find what is missing.
func TestRunCollects(t *testing.T) {
	r, err := sdktest.Run(context.Background(), echoPlugin, "echo", []byte(input))
	if err != nil {
		t.Fatal(err)
	}
	for name, o := range map[string]*Outcome{
		"Run":        Run(t, echoPlugin, []byte(input), normalize.Options{Provider: "echo"}),
		"FromResult": FromResult(r),
	} {
		t.Run(name, func(t *testing.T) {
			if o.Result.FailedLines != 0 || o.Result.Unmapped["non_json"] != 1 {
				t.Fatalf("result %+v", o.Result)
			}
			var r recorder
			o.CheckCalls(&r, []string{"c1", "c2"})
			CheckTexts(&r, o.Texts(Assistant), []string{"world", "bye"}, false)
			CheckTexts(&r, o.Texts(nil), []string{"world", "bye"}, true)
			if len(r.errs) != 2 {
				t.Fatalf("want a missing call c2 and an inexact text, got %q", r.errs)
			}
		})
	}
}

// TestCheckFailed: a call's tool.result (the host keeps the first) is
// checked against what the raw input says of it, one that states no
// status read as ok; a call without one fails.
func TestCheckFailed(t *testing.T) {
	in := `{"text":"a","call":"c1","results":[["c1",false],["c1",true]]}` + "\n" +
		`{"text":"b","call":"c2","results":[["c2",true]]}` + "\n" + `{"text":"c","call":"c3"}` + "\n"
	o := Run(t, echoPlugin, []byte(in), normalize.Options{Provider: "echo"})
	for _, c := range []struct {
		failed map[string]bool
		errs   int
	}{
		{map[string]bool{"c1": false, "c2": true}, 0},
		{map[string]bool{"c1": true}, 1},
		{map[string]bool{"c2": false}, 1},
		{map[string]bool{"c3": false}, 1}, // no result
	} {
		var r recorder
		o.CheckFailed(&r, c.failed)
		if len(r.errs) != c.errs {
			t.Errorf("%v: %d errors %q, want %d", c.failed, len(r.errs), r.errs, c.errs)
		}
	}
}

// fatalRecorder records a Fatalf and stops there (panics with itself).
type fatalRecorder struct{ recorder }

func (r *fatalRecorder) Fatalf(format string, a ...any) {
	r.Errorf(format, a...)
	panic(r)
}

// TestCaptures: the repository's captures of an agent, by pattern, from
// any directory below the root; none is a failure.
func TestCaptures(t *testing.T) {
	files := Captures(t, "qwen", "*.jsonl")
	if len(files) == 0 {
		t.Fatal("no qwen captures")
	}
	for _, f := range files {
		if _, err := os.Stat(f); err != nil || !strings.HasSuffix(f, ".jsonl") {
			t.Errorf("%s: %v", f, err)
		}
	}
	r := &fatalRecorder{}
	func() {
		defer func() {
			if p := recover(); p != nil && p != r {
				panic(p)
			}
		}()
		Captures(r, "no-such-agent", "*.jsonl")
	}()
	if len(r.errs) != 1 || !strings.Contains(r.errs[0], "no captures") {
		t.Errorf("no capture: %q", r.errs)
	}
}

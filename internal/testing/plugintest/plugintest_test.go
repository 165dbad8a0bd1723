package plugintest

import (
	"context"
	"fmt"
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

package plugintest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/wire"
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

func TestRunCollects(t *testing.T) {
	o := Run(t, echoPlugin, []byte(input), normalize.Options{Provider: "echo"})
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
	CheckRun(t, echoPlugin, []byte(input), normalize.Options{Provider: "echo"})
}

func TestBatchesAndDrive(t *testing.T) {
	bs := Batches([]byte(input), 1)
	if len(bs) != 3 {
		t.Fatalf("%d batches, want one per non-blank line", len(bs))
	}
	Drive(t, echoPlugin.Driver(), "echo", bs)
	Drive(t, echoPlugin.Driver(), "echo", Batches(Corpus([][]byte{[]byte(`{"text":"x"}`)}, 1000), wire.MaxBatchLines))
}

func TestCheckUnmapped(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.MkdirAll(ExpectationDir, 0o755); err != nil {
		t.Fatal(err)
	}
	exp := `{"unmapped":{"a":1,"gone":2,"why":1},"reasons":{"a":"a reason","gone":"was unmapped","why":" "}}`
	if err := os.WriteFile(filepath.Join(ExpectationDir, "f.jsonl.unmapped.json"), []byte(exp), 0o644); err != nil {
		t.Fatal(err)
	}
	var r recorder
	CheckUnmapped(&r, "/elsewhere/f.jsonl", map[string]int{"a": 1, "why": 1})
	if len(r.errs) != 2 {
		t.Fatalf("want a missing reason and a listed type now mapped, got %q", r.errs)
	}
	r.errs = nil
	CheckUnmapped(&r, "/elsewhere/f.jsonl", map[string]int{"a": 2, "gone": 2, "why": 1, "new": 1})
	if len(r.errs) != 3 {
		t.Fatalf("want a missing reason, a count and an unlisted type, got %q", r.errs)
	}
	r.errs = nil
	CheckUnmapped(&r, "/elsewhere/none.jsonl", nil)
	CheckUnmapped(&r, "/elsewhere/none.jsonl", map[string]int{"x": 1})
	if len(r.errs) != 1 {
		t.Fatalf("without a file nothing may be unmapped, got %q", r.errs)
	}
}

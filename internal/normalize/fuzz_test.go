package normalize

import (
	"bytes"
	"context"
	"testing"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/transcript"
)

// echoAll turns every value of every JSON line into records, as spans in
// every mode, so arbitrary input reaches every resolution path.
type echoAll struct{}

func (echoAll) Line(l *sdk.Line, out *sdk.Out) error {
	if !l.JSON().Exists() {
		out.Unmapped(sdk.S(string(l.Raw)))
		out.Final(sdk.S(string(l.Raw)), true)
		return nil
	}
	n := 0
	var walk func(v abi.Value)
	walk = func(v abi.Value) {
		n++
		key := sdk.S("k")
		out.Open(key, sdk.Message{ID: sdk.Text(v), Time: sdk.Text(v), Scope: sdk.Text(v.Get("scope"))})
		out.Block(key, n%4-1, sdk.Block{Type: v.Get("type").String(), Text: sdk.Text(v), ToolInput: sdk.JSON(v), Origin: v.Get("origin").String()})
		out.Append(key, n%3-1, appendTypes[n%len(appendTypes)], sdk.Text(v))
		out.ToolCall(sdk.ToolCall{CallID: sdk.Text(v.Get("id")), Name: sdk.Text(v), Input: sdk.JSON(v), Kind: v.String(), Time: sdk.Text(v), Scope: sdk.Text(v.Get("scope"))})
		out.ToolResult(sdk.ToolResult{CallID: sdk.Text(v.Get("id")), Output: sdk.Text(v), ExitCode: sdk.IntOf(v), Status: sdk.Text(v)})
		if n%5 == 0 {
			out.Close(key, sdk.MessageEnd{StopReason: sdk.Text(v), Usage: sdk.Usage{Input: sdk.IntOf(v)}})
		}
		out.Meta(sdk.Meta{Model: sdk.Text(v)})
		f, _ := v.Float()
		out.Cost(f, v.String())
		out.Status(v.String(), sdk.Text(v), n%4)
		out.ScopeOpen(sdk.Text(v.Get("open")), sdk.Text(v), sdk.Text(v), sdk.Text(v))
		out.ScopeClose(sdk.Text(v.Get("close")), v.String(), sdk.Text(v))
		for it := v.Iter(); it.Next(); {
			walk(it.Value())
		}
	}
	walk(l.JSON())
	return nil
}

func (echoAll) End(*sdk.Out) error { return nil }

// appendTypes are the block types echoAll appends to: every one with an
// appendable field, and two the host refuses.
var appendTypes = []string{sdk.BlockText, sdk.BlockThinking, sdk.BlockToolUse, sdk.BlockToolResult,
	sdk.BlockCommand, sdk.BlockStream, "image", ""}

func FuzzStream(f *testing.F) {
	f.Add([]byte(`{"type":"text","id":"c1","scope":"s","x":[1,"2",{"open":"s2","close":"s2"}]}` + "\n" + "banner\r\n" + `[1e400,"\ud800",-0]`))
	f.Add([]byte("{\"a\":\"\\u0000\\udcff\"}\n\n\x00\xff\n"))
	f.Add([]byte(`{"id":"x","type":"tool_use","origin":"prompt"}` + "\n" + `["9999-12-31T23:00:00-05:00"]`))
	p := sdk.Plugin{Manifest: abi.Manifest{Name: "echo-all"}, New: func(abi.BeginOptions) sdk.Normalizer { return echoAll{} }}
	f.Fuzz(func(t *testing.T, raw []byte) {
		sink := &checkSink{t: t}
		o := opts()
		o.MaxLineBytes = 256
		o.BatchLines = 3
		res, err := Run(context.Background(), NativeInstance(p), bytes.NewReader(raw), sink, o)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := jsonMarshal(res); err != nil {
			t.Fatalf("result does not encode: %v", err)
		}
		if res.Lines < bytes.Count(raw, []byte("\n")) {
			t.Fatalf("%d lines counted for %d LFs", res.Lines, bytes.Count(raw, []byte("\n")))
		}
		for _, it := range sink.Items {
			if it.Event != nil {
				e := *it.Event
				e.RunID = "r"
				if _, err := transcript.AppendEvent(nil, &e); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

package normalize

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/internal/wire"
	"github.com/twasm/twasm/transcript"
)

// forgetful opens message "m" on lines with "open" and never closes it;
// every line with "tool" reports a tool call.
type forgetful struct{}

func (forgetful) Line(l *sdk.Line, out *sdk.Out) error {
	root := l.JSON()
	switch {
	case root.Get("open").Exists():
		k := sdk.S("m")
		out.Open(k, sdk.Message{})
		out.Append(k, 0, sdk.BlockText, sdk.Text(root.Get("open")))
	case root.Get("tool").Exists():
		id := sdk.Text(root.Get("tool"))
		out.ToolCall(sdk.ToolCall{CallID: id, Name: sdk.S("t")})
		out.ToolResult(sdk.ToolResult{CallID: id, Output: sdk.S("ok")})
	}
	return nil
}
func (forgetful) End(out *sdk.Out) error {
	out.Status(sdk.StatusOK, sdk.Str{}, sdk.LevelTerminal)
	return nil
}

var forgetfulPlugin = sdk.Plugin{Manifest: abi.Manifest{Name: "forgetful"}, New: func(abi.BeginOptions) sdk.Normalizer { return forgetful{} }}

func TestUnclosedMessageDoesNotHoldTheStream(t *testing.T) {
	var in strings.Builder
	in.WriteString(`{"open":"hello "}` + "\n")
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&in, `{"tool":"t%d"}`+"\n", i)
		if i == 2000 {
			in.WriteString(`{"open":"again"}` + "\n")
		}
	}
	run := func(batch int) ([]*transcript.Event, *transcript.AgentResult, int) {
		var c Collector
		s, err := NewStream(context.Background(), NativeInstance(forgetfulPlugin), &c, Options{BatchLines: batch, Now: func() time.Time { return time.Unix(0, 0) }})
		if err != nil {
			t.Fatal(err)
		}
		maxQueued := 0
		data := []byte(in.String())
		for len(data) > 0 {
			n := min(len(data), 4096)
			if err := s.Feed(context.Background(), data[:n]); err != nil {
				t.Fatal(err)
			}
			data = data[n:]
			maxQueued = max(maxQueued, len(s.asm.queue))
		}
		res, err := s.Close(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return c.Events(""), res, maxQueued
	}
	evs, res, maxQueued := run(0)
	if maxQueued > maxHeld+wire.MaxBatchLines*2 {
		t.Fatalf("the assembler held back %d items", maxQueued)
	}
	// The first message is closed after idleLines lines without news and
	// written before the tool calls that followed it; the second one too.
	var texts []string
	for _, ev := range evs {
		if m := ev.Message(); m != nil {
			texts = append(texts, m.Blocks[0].Text)
		}
	}
	if len(texts) != 2 || texts[0] != "hello " || texts[1] != "again" {
		t.Fatalf("messages %q", texts)
	}
	if evs[0].Type != transcript.MessageAssistant {
		t.Fatalf("first event %s, want the message", evs[0].Type)
	}
	warned := 0
	for _, w := range res.Warnings {
		if strings.Contains(w, "was not closed by the plugin") {
			warned++
		}
	}
	if warned != 2 {
		t.Fatalf("warnings %q", res.Warnings)
	}
	// Batching does not change the result.
	evs1, _, _ := run(1)
	if len(evs1) != len(evs) {
		t.Fatalf("batch of 1: %d events, default: %d", len(evs1), len(evs))
	}
	for i := range evs {
		a, _ := transcript.AppendEvent(nil, withRun(evs[i]))
		b, _ := transcript.AppendEvent(nil, withRun(evs1[i]))
		if string(a) != string(b) {
			t.Fatalf("event %d differs:\n%s\n%s", i, a, b)
		}
	}
}

func withRun(ev *transcript.Event) *transcript.Event {
	e := *ev
	e.RunID = "r"
	return &e
}

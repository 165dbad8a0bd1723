package normalize

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/transcript"
)

// script is a test plugin: every JSON line carries the records to emit
// ({"do":[{"op":...},...]}), with values taken as spans of the line; a
// line's "end" array is kept (copied) and emitted at End through a parsed
// document, so the literal path is exercised too. Other lines are
// unmapped "non-json".
type script struct{ end []byte }

func scriptPlugin() sdk.Plugin {
	return sdk.Plugin{
		Manifest: abi.Manifest{Name: "script", Version: "0.0.1"},
		New:      func(abi.BeginOptions) sdk.Normalizer { return &script{} },
	}
}

func (s *script) Line(l *sdk.Line, out *sdk.Out) error {
	if !l.JSON().Exists() {
		out.Unmapped(sdk.S("non-json"))
		return nil
	}
	root := l.JSON()
	if e := root.Get("end"); e.Exists() {
		s.end = append([]byte(nil), e.Raw()...)
	}
	return run(root.Get("do"), out)
}

func (s *script) End(out *sdk.Out) error {
	if s.end == nil {
		return nil
	}
	d, ok := sdk.Parse(s.end)
	if !ok {
		return errors.New("bad end script")
	}
	return run(d.Root(), out)
}

// fieldNames maps a script's field to the block type whose field
// Out.Append grows; "bogus" names none, so the SDK writes a field the host
// refuses.
var fieldNames = map[string]string{
	"text": sdk.BlockText, "thinking": sdk.BlockThinking, "tool_input": sdk.BlockToolUse,
	"tool_content": sdk.BlockToolResult, "command": sdk.BlockCommand, "chunk": sdk.BlockStream, "bogus": "bogus",
}

func run(ops abi.Value, out *sdk.Out) error {
	for it := ops.Iter(); it.Next(); {
		op := it.Value()
		txt := func(k string) sdk.Str { return sdk.Text(op.Get(k)) }
		usage := func(u abi.Value) sdk.Usage {
			return sdk.Usage{Input: sdk.IntOf(u.Get("in")), CacheRead: sdk.IntOf(u.Get("cr")), CacheWrite: sdk.IntOf(u.Get("cw")),
				Output: sdk.IntOf(u.Get("out")), Reasoning: sdk.IntOf(u.Get("re"))}
		}
		slot := -1
		if n, ok := op.Get("slot").Int(); ok {
			slot = int(n)
		}
		switch kind := op.Get("op").String(); kind {
		case "panic":
			panic("script panic")
		case "reject":
			return errors.New("script rejects")
		case "meta":
			out.Meta(sdk.Meta{SessionID: txt("sid"), Model: txt("model"), ProviderVersion: txt("pv"), Format: txt("format"), Override: op.Get("override").Truthy(),
				NoTerminal: op.Get("noterm").Truthy()})
		case "open":
			out.Open(txt("key"), sdk.Message{User: op.Get("role").Is("user"), ID: txt("id"), Model: txt("model"), Scope: txt("scope"), Time: txt("time")})
		case "block":
			out.Block(txt("key"), slot, sdk.Block{Type: op.Get("type").String(), Text: txt("text"), Thinking: txt("thinking"),
				ToolName: txt("tool_name"), ToolID: txt("tool_id"), ToolInput: sdk.JSON(op.Get("tool_input")),
				ToolContent: txt("tool_content"), Command: txt("command"), Chunk: txt("chunk"),
				Redacted: op.Get("redacted").Truthy(), IsError: op.Get("is_error").Truthy(), Origin: op.Get("origin").String()})
		case "append":
			out.Append(txt("key"), slot, fieldNames[op.Get("field").String()], txt("v"))
		case "close":
			out.Close(txt("key"), sdk.MessageEnd{StopReason: txt("stop"), Model: txt("model"), ID: txt("id"), Usage: usage(op.Get("usage"))})
		case "call":
			out.ToolCall(sdk.ToolCall{CallID: txt("id"), Name: txt("name"), Input: sdk.JSON(op.Get("input")), Kind: op.Get("kind").String(),
				Command: txt("cmd"), Scope: txt("scope"), Time: txt("time"), Revised: op.Get("revised").Truthy()})
		case "result":
			out.ToolResult(sdk.ToolResult{CallID: txt("id"), Name: txt("name"), Output: txt("output"), Error: txt("error"),
				IsError: op.Get("is_error").Truthy(), ExitCode: sdk.IntOf(op.Get("exit")), Status: txt("status"), Scope: txt("scope"), Time: txt("time"),
				Revised: op.Get("revised").Truthy()})
		case "usage":
			out.Usage(usage(op), op.Get("mode").String())
		case "cost":
			f, _ := op.Get("usd").Float()
			if op.Get("usd").Is("nan") {
				f = nan()
			}
			out.Cost(f, op.Get("mode").String())
		case "status":
			n, _ := op.Get("level").Int()
			out.Status(op.Get("status").String(), txt("error"), int(n))
		case "final":
			out.Final(txt("text"), op.Get("override").Truthy())
		case "unmapped":
			out.Unmapped(txt("native"))
		case "scope_open":
			out.ScopeOpen(txt("scope"), txt("parent"), txt("name"), txt("desc"))
		case "scope_close":
			out.ScopeClose(txt("scope"), op.Get("status").String(), txt("error"))
		case "warn":
			out.Warn(op.Get("text").String())
		case "error":
			out.Error(sdk.ProviderError{Message: txt("msg"), Code: txt("code"), Scope: txt("scope")})
		case "ignored":
			n, ok := op.Get("n").Int()
			if !ok {
				n = 1
			}
			out.IgnoredN(txt("native"), int(n))
		default:
			return errors.New("unknown script op " + kind)
		}
	}
	return nil
}

func nan() float64 { z := 0.0; return z / z }

// checkSink wraps a Collector and fails the test when an event it gets
// does not marshal.
type checkSink struct {
	Collector
	t       testing.TB
	failAt  int // Emit call (1-based) that returns errSink; 0 never
	emitted int
}

var errSink = errors.New("sink full")

func (c *checkSink) Emit(ctx context.Context, scope string, evs []*transcript.Event) error {
	c.t.Helper()
	c.emitted++
	if c.failAt != 0 && c.emitted == c.failAt {
		return errSink
	}
	if len(evs) == 0 {
		c.t.Errorf("Emit %d: no events", c.emitted)
	}
	for _, ev := range evs {
		e := *ev
		e.RunID = "run"
		if _, err := transcript.AppendEvent(nil, &e); err != nil {
			c.t.Errorf("Emit %d: an event does not marshal: %v", c.emitted, err)
		}
	}
	return c.Collector.Emit(ctx, scope, evs)
}

var epoch = time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)

func opts() Options { return Options{Provider: "test", Now: func() time.Time { return epoch }} }

// runScript runs lines (joined with LF) through the script plugin.
func runScript(t testing.TB, lines ...string) (*checkSink, *transcript.AgentResult) {
	t.Helper()
	return runRaw(t, scriptPlugin(), opts(), strings.Join(lines, "\n")+"\n")
}

func runRaw(t testing.TB, p sdk.Plugin, o Options, raw string) (*checkSink, *transcript.AgentResult) {
	t.Helper()
	sink := &checkSink{t: t}
	res, err := Run(context.Background(), NativeInstance(p), bytes.NewReader([]byte(raw)), sink, o)
	require.NoError(t, err)
	require.NotNil(t, res)
	return sink, res
}

// render is a compact, comparable view of what a sink received.
func render(t testing.TB, c *Collector) []string {
	t.Helper()
	var out []string
	for _, it := range c.Items {
		switch {
		case it.Event != nil:
			e := *it.Event
			e.RunID = "run"
			b, err := transcript.AppendEvent(nil, &e)
			require.NoError(t, err)
			out = append(out, it.Scope+"|"+string(b))
		case it.Open != nil:
			out = append(out, "open|"+it.Open.ID+"|"+it.Open.ParentToolID+"|"+it.Open.Name+"|"+it.Open.Description)
		case it.Close:
			out = append(out, "close|"+it.Scope+"|"+it.CloseStatus+"|"+it.CloseError)
		}
	}
	return out
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

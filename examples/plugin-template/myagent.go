// Package myagent is the twasm plugin for MyAgent, a made-up coding agent
// that keeps one JSON Lines file per session under
// ~/.myagent/sessions/<project>/<session>.jsonl ($MYAGENT_HOME instead of
// ~/.myagent when set), one event a line:
//
//	{"type":"session","id":"s1","version":"1.2.0","cwd":"/home/me/proj","time":"..."}
//	{"type":"user","text":"list the files","time":"..."}
//	{"type":"assistant","id":"m1","model":"mini-1","thinking":"...","text":"...","tool_calls":[{"id":"c1","name":"shell","input":{"command":"ls"}}],"usage":{"input_tokens":120,"output_tokens":30},"time":"..."}
//	{"type":"tool_result","call_id":"c1","output":"a.txt","is_error":false,"exit_code":0,"time":"..."}
//	{"type":"heartbeat"}
//	{"type":"error","message":"rate limited","code":"429"}
//
// It is the template a plugin author copies (README.md): a plain Go
// package that builds and runs natively (its tests, fuzzing) and a
// two-line entry point in ./wasm that builds it into a module.
//
// Every raw line is accounted for (spec §6.8): a line gives records, or
// is declared ignored (heartbeats), or is counted unmapped by its type (a
// type MyAgent adds in a later version, a line that is not JSON), so
// `twasm stats` shows the drift.
package myagent

import (
	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// Plugin is the normalizer: its manifest, a fresh state per stream, and
// the keys it reads.
var Plugin = sdk.Plugin{
	Manifest: abi.Manifest{
		Name:        "myagent",
		Version:     "0.1.0",
		Providers:   []string{"myagent"},
		Formats:     []string{"session"},
		Description: "MyAgent session files",
		// The store `twasm doctor` lists and `twasm sync` archives: the
		// first root that applies is the agent's data directory.
		Stores: []abi.Store{{
			Name:          "MyAgent sessions",
			Roots:         []abi.Root{{Env: "MYAGENT_HOME"}, {Path: "~/.myagent"}},
			Dir:           "sessions",
			Pattern:       "*/*.jsonl",
			RetentionDays: 30,
		}},
	},
	New:  func(abi.BeginOptions) sdk.Normalizer { return &normalizer{} },
	Keys: keys,
}

// keys are the object keys the normalizer reads: declared, Get matches
// them by number inside the sandbox (sdktest.CheckKeys keeps the list
// complete).
var keys = abi.NewKeySet(
	"call_id", "code", "command", "exit_code", "id", "input", "input_tokens", "is_error", "message", "model",
	"name", "output", "output_tokens", "text", "thinking", "time", "tool_calls", "type", "usage", "version",
)

// normalizer is the state of one stream. What it keeps across lines is
// Go strings and numbers it owns: a value read from a line (abi.Value,
// sdk.Str from Text) is valid only while that line is handled.
type normalizer struct {
	n int // messages opened, for their keys
}

// Line handles one raw line.
func (n *normalizer) Line(l *sdk.Line, out *sdk.Out) error {
	v := l.JSON()
	if !v.Exists() {
		out.Unmapped(sdk.S("non_json"))
		return nil
	}
	typ := v.Get("type")
	if typ.Kind() != abi.KindString {
		out.Unmapped(sdk.S("(no type)"))
		return nil
	}
	ts := sdk.StringOf(v.Get("time"))
	switch sdk.Name(typ) {
	case "session":
		// A session log has no terminal event: the host derives the
		// step's status (an error after the last answer, a prompt left
		// unanswered).
		out.Meta(sdk.Meta{SessionID: sdk.StringOf(v.Get("id")), ProviderVersion: sdk.StringOf(v.Get("version")),
			Format: sdk.S("session"), NoTerminal: true})
	case "user":
		key := n.key()
		out.Open(key, sdk.Message{User: true, Time: ts})
		out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: sdk.Text(v.Get("text")), Origin: sdk.OriginPrompt})
		out.Close(key, sdk.MessageEnd{})
	case "assistant":
		n.assistant(v, ts, out)
	case "tool_result":
		out.ToolResult(sdk.ToolResult{
			CallID:   sdk.Text(v.Get("call_id")),
			Output:   sdk.StringOf(v.Get("output")),
			IsError:  isTrue(v.Get("is_error")),
			ExitCode: sdk.IntOf(v.Get("exit_code")),
			Time:     ts,
		})
	case "error":
		out.Error(sdk.ProviderError{Message: sdk.StringOf(v.Get("message")), Code: sdk.StringOf(v.Get("code"))})
	case "heartbeat":
		out.Ignored(sdk.S("heartbeat"))
	default:
		out.Unmapped(sdk.Text(typ))
	}
	return nil
}

// assistant writes one answer: thinking, text and tool calls as blocks in
// that order, a tool.call per call, and the answer's usage.
func (n *normalizer) assistant(v abi.Value, ts sdk.Str, out *sdk.Out) {
	key, model := n.key(), sdk.StringOf(v.Get("model"))
	out.Meta(sdk.Meta{Model: model}) // the step's model: the first one
	out.Open(key, sdk.Message{ID: sdk.StringOf(v.Get("id")), Model: model, Time: ts})
	if th := sdk.StringOf(v.Get("thinking")); !th.IsEmpty() {
		out.Block(key, -1, sdk.Block{Type: sdk.BlockThinking, Thinking: th})
	}
	if tx := sdk.StringOf(v.Get("text")); !tx.IsEmpty() {
		out.Block(key, -1, sdk.Block{Type: sdk.BlockText, Text: tx})
	}
	it := v.Get("tool_calls").Iter()
	for it.Next() {
		c := it.Value()
		id, name, input := sdk.Text(c.Get("id")), sdk.Text(c.Get("name")), c.Get("input")
		out.Block(key, -1, sdk.Block{Type: sdk.BlockToolUse, ToolID: id, ToolName: name, ToolInput: sdk.JSON(input)})
		call := sdk.ToolCall{CallID: id, Name: name, Input: sdk.JSON(input), Kind: "other", Time: ts}
		if c.Get("name").Is("shell") {
			call.Kind, call.Command = "execute", sdk.StringOf(input.Get("command"))
		}
		out.ToolCall(call)
	}
	u := v.Get("usage")
	usage := sdk.Usage{Input: sdk.IntOf(u.Get("input_tokens")), Output: sdk.IntOf(u.Get("output_tokens"))}
	out.Close(key, sdk.MessageEnd{Usage: usage})
	out.Usage(usage, sdk.ModeAdd)
}

// key names the next message of the stream.
func (n *normalizer) key() sdk.Str {
	n.n++
	return sdk.S("m" + itoa(n.n))
}

// End is called at the end of the stream: nothing is left open here.
func (n *normalizer) End(*sdk.Out) error { return nil }

// itoa formats n (strconv would link more into the module than this).
func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// isTrue reports whether v is the JSON value true.
func isTrue(v abi.Value) bool {
	b, ok := v.Bool()
	return ok && b
}

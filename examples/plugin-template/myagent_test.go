package myagent_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"path/filepath"
	"testing"

	"example.com/twasm-plugin-myagent"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/transcript"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.golden.jsonl from the plugin's output (review the diff)")

// options name the plugin's test data: golden cases (an input and the
// rendering it must give) and real captures (output of the agent itself,
// with <capture>.unmapped.json saying which types the plugin leaves
// unmapped and why).
func options(tb testing.TB) sdktest.Options {
	captures, err := filepath.Glob(filepath.Join("testdata", "captures", "*.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	return sdktest.Options{Provider: "myagent", Golden: filepath.Join("testdata", "golden"), Captures: captures, Update: *update}
}

// TestPlugin runs twasm's plugin checks: the golden cases, conformance of
// every input (no fault, every raw line accounted for, unmapped as
// expected, valid events) and the same output however the input is cut
// into batches.
func TestPlugin(t *testing.T) {
	opts := options(t)
	// The agent's own facts, read from the raw input apart from the
	// plugin (encoding/json): every tool call it states is a tool.call.
	opts.Check = func(t *testing.T, r *sdktest.Result) {
		calls := map[string]bool{}
		for _, e := range r.Events {
			if tp := e.Tool(); e.Type == transcript.ToolCall && tp != nil {
				calls[tp.CallID] = true
			}
		}
		for _, line := range bytes.Split(r.Raw, []byte("\n")) {
			var ev struct {
				ToolCalls []struct{ ID string } `json:"tool_calls"`
			}
			if json.Unmarshal(line, &ev) != nil {
				continue
			}
			for _, c := range ev.ToolCalls {
				if !calls[c.ID] {
					t.Errorf("tool call %s of the raw input has no tool.call", c.ID)
				}
			}
		}
	}
	sdktest.Test(t, myagent.Plugin, opts)
}

// FuzzPlugin: whatever the bytes, the plugin never faults and writes
// valid events (go test -fuzz FuzzPlugin).
func FuzzPlugin(f *testing.F) {
	sdktest.Fuzz(f, myagent.Plugin, options(f), []byte(`{"type":"assistant","tool_calls":[{"id":7,"input":"x"}],"usage":{"input_tokens":-1}}`))
}

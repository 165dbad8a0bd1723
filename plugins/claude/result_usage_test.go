//go:build !wasip1

package claude

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/transcript"
)

// TestResultUsageIterations: in stream-json, a result's usage is the
// main loop's usage of its cycle, the sum of its messages' top-level
// figures (the Agent SDK documents result usage as "main-loop-only and
// per-turn", modelUsage as cumulative over every call; the real captures
// in ../shared/fixtures agree: result.usage is the sum of the messages'
// top-level figures, the iterations there the last message's). A request
// that made several model calls states only its last call at the top and
// each call in usage.iterations (a compaction, the advisor tool's
// advisor_message on another model): the step counts what the
// iterations state beyond the top-level figures too, once, so that the
// step's tokens are every call's, equal to modelUsage's sum in a run
// without sub-agents (before, they were result.usage alone: the advisor's
// and the earlier calls' tokens were lost). A result without messages
// (--output-format json) counts what its modelUsage counts beyond its
// usage.
func TestResultUsageIterations(t *testing.T) {
	it := func(typ, model string, in, out int) string {
		return `{"type":"` + typ + `","model":"` + model + `","input_tokens":` + strconv.Itoa(in) + `,"output_tokens":` + strconv.Itoa(out) + `,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}`
	}
	msg := func(id, model string, in, out int, iterations ...string) string {
		its := ""
		if len(iterations) > 0 {
			its = `,"iterations":[` + strings.Join(iterations, ",") + `]`
		}
		return `{"type":"assistant","message":{"model":"` + model + `","id":"` + id + `","type":"message","role":"assistant","content":[{"type":"text","text":"Done."}],"stop_reason":"end_turn","usage":{"input_tokens":` + strconv.Itoa(in) +
			`,"output_tokens":` + strconv.Itoa(out) + `,"cache_read_input_tokens":0,"cache_creation_input_tokens":0` + its + `,"service_tier":"standard"}},"parent_tool_use_id":null,"session_id":"s1","uuid":"u-` + id + `"}`
	}
	result := func(in, out int, modelUsage string) string {
		return `{"type":"result","subtype":"success","is_error":false,"duration_ms":9000,"duration_api_ms":8000,"num_turns":1,"result":"Done.","session_id":"s1","total_cost_usd":0.05,"usage":{"input_tokens":` + strconv.Itoa(in) +
			`,"output_tokens":` + strconv.Itoa(out) + `,"cache_read_input_tokens":0,"cache_creation_input_tokens":0,"service_tier":"standard"},"modelUsage":{` + modelUsage + `},"uuid":"u-r"}`
	}
	mu := func(model string, in, out int) string {
		return `"` + model + `":{"inputTokens":` + strconv.Itoa(in) + `,"outputTokens":` + strconv.Itoa(out) + `,"cacheReadInputTokens":0,"cacheCreationInputTokens":0,"webSearchRequests":0,"costUSD":0.01}`
	}
	const initL = `{"type":"system","subtype":"init","cwd":"/w","session_id":"s1","tools":[],"mcp_servers":[],"model":"claude-sonnet-4-6","permissionMode":"default","apiKeySource":"none","uuid":"u-i"}`
	advisor := msg("msg_1", "claude-sonnet-4-6", 150, 20,
		it("message", "claude-sonnet-4-6", 100, 10), it("advisor_message", "claude-opus-4-7", 120, 50), it("message", "claude-sonnet-4-6", 150, 20))
	plain := msg("msg_2", "claude-sonnet-4-6", 200, 5)
	compacted := msg("msg_3", "claude-opus-4-7", 700, 80, it("compaction", "claude-opus-4-7", 6000, 500), it("message", "claude-opus-4-7", 700, 80))
	for _, tt := range []struct {
		name    string
		lines   []string
		in, out int64 // the step's tokens: modelUsage's sum
	}{
		{"an advisor call in the cycle", []string{initL, advisor, plain,
			result(150+200, 20+5, mu("claude-sonnet-4-6", 100+150+200, 10+20+5)+","+mu("claude-opus-4-7", 120, 50))},
			100 + 150 + 200 + 120, 10 + 20 + 5 + 50},
		{"a compaction before the answer", []string{initL, compacted, result(700, 80, mu("claude-opus-4-7", 6700, 580))},
			6700, 580},
		{"no iterations: the result's usage", []string{initL, plain, result(200, 5, mu("claude-sonnet-4-6", 200, 5))},
			200, 5},
		{"two cycles: the first's advisor counted once", []string{initL, advisor, result(150, 20, mu("claude-sonnet-4-6", 250, 30)+","+mu("claude-opus-4-7", 120, 50)),
			plain, result(200, 5, mu("claude-sonnet-4-6", 450, 35)+","+mu("claude-opus-4-7", 120, 50))},
			250 + 120 + 200, 30 + 50 + 5},
		{"cut after the advisor's message: the messages' sum", []string{initL, advisor},
			250 + 120, 30 + 50},
		// --output-format json without --verbose: no messages, so
		// modelUsage (every call of the process, sub-agents' too, which
		// have no runs here) counts what usage leaves out.
		{"a result alone: what modelUsage counts beyond usage", []string{
			result(150, 20, mu("claude-sonnet-4-6", 250, 30)+","+mu("claude-opus-4-7", 120, 50))},
			250 + 120, 30 + 50},
		{"a result alone whose modelUsage is its usage", []string{result(200, 5, mu("claude-sonnet-4-6", 200, 5))},
			200, 5},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, _ := runState(t, strings.Join(tt.lines, "\n")+"\n")
			u := out.Result.Usage
			if u == nil || u.InputTokens == nil || u.OutputTokens == nil {
				t.Fatalf("step usage %+v; want %d in, %d out", u, tt.in, tt.out)
			}
			if *u.InputTokens != tt.in || *u.OutputTokens != tt.out {
				t.Fatalf("step usage %d in, %d out; want %d in, %d out", *u.InputTokens, *u.OutputTokens, tt.in, tt.out)
			}
			if u.ServiceTier != "standard" {
				t.Errorf("tier %q; want standard", u.ServiceTier)
			}
		})
	}
}

// TestFixturesAgreeWithModelUsage: for the real captures in
// ../shared/fixtures whose result states modelUsage (cumulative over
// every call of the process, sub-agents' included), the tokens twasm
// writes for the run tree (the step's usage and its sub-agents'
// messages, which are child runs) are modelUsage's sum, figure by figure:
// nothing lost, nothing counted twice.
func TestFixturesAgreeWithModelUsage(t *testing.T) {
	root := filepath.Join("..", "..", "..", "shared", "fixtures", "claude")
	for _, name := range []string{
		"gump_stream_json_v2.1.59_write_tool.jsonl",
		"gump_json_output_v2.1.59.json",
		"switchboard_stream_json_partial_background_agent_v2.1.198.jsonl",
		"switchboard_stream_json_tool_vocabulary.jsonl",
	} {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(root, name))
			if err != nil {
				t.Skip("no shared fixture:", err)
			}
			var want [4]int64 // uncached input, output, cache read, cache write
			for _, l := range strings.Split(string(raw), "\n") {
				var v struct {
					Type       string `json:"type"`
					ModelUsage map[string]struct {
						In         int64 `json:"inputTokens"`
						Out        int64 `json:"outputTokens"`
						CacheRead  int64 `json:"cacheReadInputTokens"`
						CacheWrite int64 `json:"cacheCreationInputTokens"`
					} `json:"modelUsage"`
				}
				if json.Unmarshal([]byte(l), &v) != nil || v.Type != "result" || v.ModelUsage == nil {
					continue
				}
				want = [4]int64{}
				for _, m := range v.ModelUsage {
					want[0], want[1], want[2], want[3] = want[0]+m.In, want[1]+m.Out, want[2]+m.CacheRead, want[3]+m.CacheWrite
				}
			}
			if want == [4]int64{} {
				t.Fatal("no result with modelUsage read")
			}
			r, err := sdktest.Run(context.Background(), Plugin, "claude", raw)
			if err != nil {
				t.Fatal(err)
			}
			var got [4]int64
			add := func(u *transcript.Usage) {
				if u == nil {
					return
				}
				for i, p := range []*int64{u.UncachedInputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens} {
					if p != nil {
						got[i] += *p
					}
				}
			}
			add(r.Step.Usage)
			for _, e := range r.Events {
				if m := e.Message(); e.Scope != "" && m != nil && e.Type == transcript.MessageAssistant {
					add(m.Usage)
				}
			}
			if got != want {
				t.Errorf("run tree's tokens (uncached in, out, cache read, cache write) %v; modelUsage's sum %v", got, want)
			}
		})
	}
}

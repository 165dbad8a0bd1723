package usagecmd_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// env is the whole environment of each command line of these tests.
var env = clitest.Plain()

// TestUsageCost records three runs through the built binary and checks
// what `twasm usage`, `ls` and `stats` say they cost and where it comes
// from: the Claude example states its cost (its result line's
// total_cost_usd: provider), a real Claude session log states none and is
// priced per message from the price table (computed here from the raw
// file with claude-opus-4-6's rates as Anthropic's pricing page gives
// them: $5 input, $0.50 cache read, $6.25 and $10 cache write at 5 minutes
// and 1 hour, $25 output per million tokens), and a Codex run that names
// no model is unknown, named, never 0.
func TestUsageCost(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	stated := statedCost(t, clitest.Example())
	clitest.Record(t, storage, "claude", clitest.Example())
	session := filepath.Join(clitest.Root, "testdata", "captures", "claude", "spotter_session_log_v2.1.38_short.jsonl")
	clitest.RunOK(t, env, "--storage", storage, "import", "--provider", "claude", session)
	codex := clitest.Record(t, storage, "codex", clitest.Golden("codex", "exec_command.jsonl"))

	priced, messages := priceSessionLog(t, session)
	var rep struct {
		Groups []struct {
			Key  string
			Cost struct {
				MicroUSD       int64    `json:"micro_usd"`
				Source         string   `json:"source"`
				Prices         string   `json:"prices"`
				UnpricedModels []string `json:"unpriced_models"`
			}
		}
	}
	r := clitest.RunOK(t, env, "--storage", storage, "usage", "--by", "provider", "--json")
	if err := json.Unmarshal([]byte(r.Out), &rep); err != nil {
		t.Fatalf("usage --json: %v\n%s", err, r.Out)
	}
	seen := 0
	for _, g := range rep.Groups {
		switch g.Key {
		case "claude":
			seen++
			// each quarter-hour row is rounded to the micro-dollar once
			want := stated + (priced+500_000)/1_000_000
			if d := g.Cost.MicroUSD - want; d < -int64(messages) || d > int64(messages) || g.Cost.Source != "mixed" || !strings.HasPrefix(g.Cost.Prices, "twasm-bundled@") {
				t.Errorf("claude: %+v, want about %d µ$ (%d stated + %d priced), mixed", g.Cost, want, stated, priced/1_000_000)
			}
		case "codex":
			seen++
			if g.Cost.Source != "unknown" || g.Cost.MicroUSD != 0 || len(g.Cost.UnpricedModels) != 1 {
				t.Errorf("codex: %+v, want unknown with its model named", g.Cost)
			}
		}
	}
	if seen != 2 {
		t.Fatalf("usage: %s", r.Out)
	}
	r = clitest.RunOK(t, env, "--storage", storage, "usage")
	if !strings.Contains(r.ErrOut, "cost unknown") || !strings.Contains(r.Out, "total\t3\t") {
		t.Errorf("usage text: %s\n%s", r.Out, r.ErrOut)
	}
	r = clitest.RunOK(t, env, "--storage", storage, "ls", "--json")
	for _, line := range strings.Split(strings.TrimSpace(r.Out), "\n") {
		var row struct {
			RunID string `json:"run_id"`
			Cost  struct {
				Source string `json:"source"`
			} `json:"cost"`
		}
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatal(err)
		}
		if row.RunID == codex && row.Cost.Source != "unknown" {
			t.Errorf("ls codex run: %s", line)
		}
	}
	r = clitest.RunOK(t, env, "--storage", storage, "stats", "--all", "--provider", "codex", "--json")
	if !strings.Contains(r.Out, `"runs":1,`) || !strings.Contains(r.Out, `"source":"unknown"`) {
		t.Errorf("stats --provider codex: %s", r.Out)
	}
}

// statedCost is the total_cost_usd of a stream-json's result line, in
// micro-dollars.
func statedCost(t *testing.T, path string) int64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		var v struct {
			Type string   `json:"type"`
			Cost *float64 `json:"total_cost_usd"`
		}
		if json.Unmarshal([]byte(line), &v) == nil && v.Type == "result" && v.Cost != nil {
			return int64(*v.Cost*1e6 + 0.5)
		}
	}
	t.Fatalf("%s: no result line with a cost", path)
	return 0
}

// priceSessionLog prices a Claude session log of claude-opus-4-6 from the
// raw file: the last usage of each message id, in pico-dollars.
func priceSessionLog(t *testing.T, path string) (pico int64, messages int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type usage struct {
		Input    int64 `json:"input_tokens"`
		Read     int64 `json:"cache_read_input_tokens"`
		Write    int64 `json:"cache_creation_input_tokens"`
		Output   int64 `json:"output_tokens"`
		Creation struct {
			W1h int64 `json:"ephemeral_1h_input_tokens"`
		} `json:"cache_creation"`
	}
	last := map[string]usage{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var l struct {
			Message struct {
				ID    string `json:"id"`
				Model string `json:"model"`
				Usage *usage `json:"usage"`
			} `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Message.Usage == nil || l.Message.ID == "" {
			continue
		}
		if l.Message.Model != "claude-opus-4-6" {
			t.Fatalf("model %q: this check knows opus 4.6's rates only", l.Message.Model)
		}
		last[l.Message.ID] = *l.Message.Usage
	}
	for _, u := range last {
		pico += u.Input*5e6 + u.Read*5e5 + (u.Write-u.Creation.W1h)*6_250_000 + u.Creation.W1h*10e6 + u.Output*25e6
	}
	return pico, len(last)
}

// TestUsageBatch records batch jobs' results through the built binary and
// checks that usage prices them at the batch rate and says so: a Message
// Batch's results (Claude Haiku 4.5) and an OpenAI Batch output file
// (GPT-5) at 50% of the standard rates, which both providers bill
// (Anthropic's and OpenAI's batch pages; OpenAI's cached input at its
// standard rate, its pages stating no batch discount for it); a Batch output of a model whose
// batch rate the table does not state (gpt-4o-mini) is unknown, named,
// never the standard price; and batch lines mixed with a live response
// are priced at the standard rates. Figures worked by hand from the raw
// lines, in micro-dollars (rates in $ per million tokens).
func TestUsageBatch(t *testing.T) {
	t.Parallel()
	gpt5 := filepath.Join(t.TempDir(), "gpt5_batch_output.jsonl")
	clitest.Put(t, gpt5, []byte(`{"id":"batch_req_a","custom_id":"r1","response":{"status_code":200,"request_id":"req_a","body":{"id":"chatcmpl-A","object":"chat.completion","created":1760002900,"model":"gpt-5-2025-08-07","choices":[{"index":0,"message":{"role":"assistant","content":"Yes."},"finish_reason":"stop"}],"usage":{"prompt_tokens":2000,"prompt_tokens_details":{"cached_tokens":1500},"completion_tokens":100,"total_tokens":2100}}},"error":null}
{"id":"batch_req_b","custom_id":"r2","response":{"status_code":200,"request_id":"req_b","body":{"id":"chatcmpl-B","object":"chat.completion","created":1760002900,"model":"gpt-5-2025-08-07","choices":[{"index":0,"message":{"role":"assistant","content":"No."},"finish_reason":"stop"}],"usage":{"prompt_tokens":1000,"completion_tokens":50,"total_tokens":1050}}},"error":null}
`), 0)
	storage := t.TempDir()
	claudeBatch := clitest.Record(t, storage, "claude", clitest.Golden("claude", "message_batch_results.jsonl"))
	clitest.Record(t, storage, "openai", gpt5)
	clitest.Record(t, storage, "openai", clitest.Golden("openai", "chat_batch_output.jsonl"))
	mixed := t.TempDir()
	clitest.Record(t, mixed, "openai", clitest.Golden("openai", "chat_batch_output_mixed.jsonl"))

	for storage, want := range map[string]map[string]modelCost{
		storage: {
			// (120*1 + 4*5)/2 + (100*1 + 3*5)/2 = 70 + 57.5: 127.5, rounded once
			"claude-haiku-4-5-20251001": {MicroUSD: 128, Source: "priced", Batch: 2},
			// 500*0.625 + 1500*0.125 + 100*5 + 1000*0.625 + 50*5 = 1000 + 875: the
			// cached input at the standard rate, OpenAI stating no batch
			// discount for it
			"gpt-5-2025-08-07": {MicroUSD: 1875, Source: "priced", Batch: 2},
			// the table states no batch rate for gpt-4o-mini
			"gpt-4o-mini-2024-07-18": {Source: "unknown", UnpricedModels: []string{"gpt-4o-mini-2024-07-18 (no batch rate)"}},
		},
		mixed: {
			// standard rates: 40*0.15 + 2*0.60 + 35*0.15 + 2*0.60 = 13.65
			"gpt-4o-mini-2024-07-18": {MicroUSD: 14, Source: "priced"},
		},
	} {
		got := costsByModel(t, storage)
		if len(got) != len(want) {
			t.Errorf("groups %+v, want %+v", got, want)
		}
		for m, w := range want {
			g := got[m]
			if !g.equal(w) {
				t.Errorf("%s: %+v, want %+v", m, g, w)
			}
		}
	}
	if r := clitest.RunOK(t, env, "--storage", storage, "view", claudeBatch); !strings.Contains(r.Out, "$0.0001 priced (batch rate)") {
		t.Errorf("view's step footer does not say the batch rate:\n%s", r.Out)
	}
	r := clitest.RunOK(t, env, "--storage", storage, "usage")
	if !strings.Contains(r.ErrOut, "4 figures priced at the batch API's rate") || !strings.Contains(r.ErrOut, "gpt-4o-mini-2024-07-18 (no batch rate)") {
		t.Errorf("usage text: %s\n%s", r.Out, r.ErrOut)
	}
}

// TestUsageGemini35Flash imports the real Gemini CLI captures that name
// gemini-3.5-flash (which the price table lacked: their cost was unknown)
// and checks that usage prices them at the rates the table now has for
// it ($1.50 input, $0.15 cached input, $9 output per million tokens,
// thinking billed as output): the figures worked by hand from the
// captures' expectations (the sessions' totals, no cached input), within
// one micro-dollar per request (each quarter-hour row is rounded once).
func TestUsageGemini35Flash(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	dir := filepath.Join(clitest.Root, "testdata", "captures", "gemini")
	clitest.RunOK(t, env, "--storage", storage, "import", "--provider", "gemini",
		filepath.Join(dir, "irrlicht_session_jsonl_v0.46_rewind_and_tool_results.jsonl"),
		filepath.Join(dir, "irrlicht_session_jsonl_v0.46_compress.jsonl"))
	// 23426*1.50 + 286*9 = 37713, and 85372*1.50 + 2341*9 = 149127
	const want = 37713 + 149127
	var rep struct {
		Groups []struct {
			Key      string
			Requests int
			Cost     struct {
				MicroUSD       int64    `json:"micro_usd"`
				Source         string   `json:"source"`
				UnpricedModels []string `json:"unpriced_models"`
			}
		}
	}
	r := clitest.RunOK(t, env, "--storage", storage, "usage", "--by", "model", "--json")
	if err := json.Unmarshal([]byte(r.Out), &rep); err != nil || len(rep.Groups) != 1 {
		t.Fatalf("usage --json: %v, want one model\n%s", err, r.Out)
	}
	g := rep.Groups[0]
	if d := g.Cost.MicroUSD - want; g.Key != "gemini-3.5-flash" || g.Cost.Source != "priced" || len(g.Cost.UnpricedModels) != 0 ||
		d < -int64(g.Requests) || d > int64(g.Requests) {
		t.Errorf("%s: %+v over %d requests, want about %d µ$, priced", g.Key, g.Cost, g.Requests, want)
	}
}

// TestUsageCostLocalModel: a Chat Completions response from a model
// served locally (Ollama's OpenAI-compatible endpoint names it by its
// tag, and states usage but no price), recorded through the built
// binary, is priced by nothing: usage, ls and stats say its cost is
// unknown and name the model, and never count it as 0 dollars spent (no
// micro_usd or usd in their JSON, "?" in their text).
func TestUsageCostLocalModel(t *testing.T) {
	t.Parallel()
	for _, model := range []string{"qwen2.5-coder:7b", "ollama/qwen2.5:7b-instruct-q4_K_M"} {
		t.Run(model, func(t *testing.T) {
			t.Parallel()
			storage := t.TempDir()
			resp := filepath.Join(t.TempDir(), "response.json")
			body := `{"id":"chatcmpl-513","object":"chat.completion","created":1764500000,"model":"` + model + `","system_fingerprint":"fp_ollama",` +
				`"choices":[{"index":0,"message":{"role":"assistant","content":"The tests pass."},"finish_reason":"stop"}],` +
				`"usage":{"prompt_tokens":812,"completion_tokens":9,"total_tokens":821}}` + "\n"
			if err := os.WriteFile(resp, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			run := clitest.Record(t, storage, "openai", resp)
			var rep struct {
				Groups []struct {
					Key  string
					Cost struct {
						MicroUSD       *int64   `json:"micro_usd"`
						USD            string   `json:"usd"`
						Source         string   `json:"source"`
						UnpricedModels []string `json:"unpriced_models"`
					}
				}
			}
			r := clitest.RunOK(t, env, "--storage", storage, "usage", "--by", "model", "--json")
			if err := json.Unmarshal([]byte(r.Out), &rep); err != nil || len(rep.Groups) != 1 {
				t.Fatalf("usage --json: %v\n%s", err, r.Out)
			}
			g := rep.Groups[0]
			if g.Cost.Source != "unknown" || len(g.Cost.UnpricedModels) != 1 || !strings.Contains(g.Cost.UnpricedModels[0], model) ||
				g.Cost.MicroUSD != nil || g.Cost.USD != "" {
				t.Errorf("usage: %s %+v, want the cost unknown, the model named, no amount (not 0)", g.Key, g.Cost)
			}
			if r := clitest.RunOK(t, env, "--storage", storage, "usage"); !strings.Contains(r.ErrOut, "cost unknown") || strings.Contains(r.Out, "$0.00") {
				t.Errorf("usage text: %s\n%s", r.Out, r.ErrOut)
			}
			r = clitest.RunOK(t, env, "--storage", storage, "ls", "--json")
			if !strings.Contains(r.Out, run) || !strings.Contains(r.Out, `"source":"unknown"`) || strings.Contains(r.Out, `"micro_usd":0`) {
				t.Errorf("ls --json: %s", r.Out)
			}
			r = clitest.RunOK(t, env, "--storage", storage, "stats", "--all", "--json")
			if !strings.Contains(r.Out, `"source":"unknown"`) || strings.Contains(r.Out, `"micro_usd":0`) {
				t.Errorf("stats --json: %s", r.Out)
			}
		})
	}
}

// modelCost is a group's cost in usage --by model --json.
type modelCost struct {
	MicroUSD       int64    `json:"micro_usd"`
	Source         string   `json:"source"`
	UnpricedModels []string `json:"unpriced_models"`
	Batch          int      `json:"batch"`
	Flex           int      `json:"flex"`
	Priority       int      `json:"priority"`
}

func (c modelCost) equal(o modelCost) bool {
	return c.MicroUSD == o.MicroUSD && c.Source == o.Source && c.Batch == o.Batch && c.Flex == o.Flex && c.Priority == o.Priority &&
		strings.Join(c.UnpricedModels, ",") == strings.Join(o.UnpricedModels, ",")
}

// costsByModel is usage --by model --json's cost of each model in
// storage.
func costsByModel(t *testing.T, storage string) map[string]modelCost {
	t.Helper()
	var rep struct {
		Groups []struct {
			Key  string
			Cost modelCost
		}
	}
	r := clitest.RunOK(t, env, "--storage", storage, "usage", "--by", "model", "--json")
	if err := json.Unmarshal([]byte(r.Out), &rep); err != nil {
		t.Fatalf("usage --json: %v\n%s", err, r.Out)
	}
	out := map[string]modelCost{}
	for _, g := range rep.Groups {
		out[g.Key] = g.Cost
	}
	return out
}

// TestUsageServiceTiers records responses served at OpenAI's flex and
// priority tiers (the hand-written goldens: testdata/golden/openai
// README.md) and responses of tiers the table has no rate for, through
// the bundled plugins, and checks the prices usage gives them: flex at
// half of every rate, cached input included, and priority at OpenAI's
// priority rates, each counted and said; a flex request of a model
// without flex rates, OpenAI's scale tier and Anthropic's priority tier
// unknown, named with the reason, never the standard price. Figures
// worked by hand from the raw bodies, in micro-dollars (rates in $ per
// million tokens).
func TestUsageServiceTiers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	flex41 := filepath.Join(dir, "gpt41_flex.json")
	clitest.Put(t, flex41, []byte(`{"id":"chatcmpl-X1","object":"chat.completion","created":1760003200,"model":"gpt-4.1-2025-04-14","choices":[{"index":0,"message":{"role":"assistant","content":"Done."},"finish_reason":"stop"}],"usage":{"prompt_tokens":100,"completion_tokens":5,"total_tokens":105},"service_tier":"flex"}
`), 0)
	scale := filepath.Join(dir, "gpt4o_scale.json")
	clitest.Put(t, scale, []byte(`{"id":"chatcmpl-X2","object":"chat.completion","created":1760003300,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"message":{"role":"assistant","content":"Done."},"finish_reason":"stop"}],"usage":{"prompt_tokens":100,"completion_tokens":5,"total_tokens":105},"service_tier":"scale"}
`), 0)
	storage := t.TempDir()
	flex := clitest.Record(t, storage, "openai", clitest.Golden("openai", "responses_stream_flex.jsonl"))
	clitest.Record(t, storage, "openai", clitest.Golden("openai", "chat_completion_priority.json"))
	clitest.Record(t, storage, "claude", clitest.Golden("claude", "anthropic_response_priority_tier.json"))
	clitest.Record(t, storage, "openai", flex41)
	clitest.Record(t, storage, "openai", scale)

	got := costsByModel(t, storage)
	want := map[string]modelCost{
		// flex, half of gpt-5-mini's rates: 2000*0.125 + 10000*0.0125 +
		// 400*1 = 775 (the standard rates would give 1550)
		"gpt-5-mini-2025-08-07": {MicroUSD: 775, Source: "priced", Flex: 1},
		// priority, OpenAI's rates for GPT-5: 952*2.50 + 2048*0.25 +
		// 500*20 = 12892 (standard: 6446)
		"gpt-5-2025-08-07":           {MicroUSD: 12892, Source: "priced", Priority: 1},
		"gpt-4.1-2025-04-14":         {Source: "unknown", UnpricedModels: []string{"gpt-4.1-2025-04-14 (no flex rate)"}},
		"gpt-4o-2024-08-06":          {Source: "unknown", UnpricedModels: []string{"gpt-4o-2024-08-06 (scale tier: billed by reserved capacity, not per token)"}},
		"claude-sonnet-4-5-20250929": {Source: "unknown", UnpricedModels: []string{"claude-sonnet-4-5-20250929 (no priority rate)"}},
	}
	if len(got) != len(want) {
		t.Errorf("groups %+v, want %+v", got, want)
	}
	for m, w := range want {
		if g := got[m]; !g.equal(w) {
			t.Errorf("%s: %+v, want %+v", m, g, w)
		}
	}
	if r := clitest.RunOK(t, env, "--storage", storage, "view", flex); !strings.Contains(r.Out, "$0.0008 priced (flex rate)") {
		t.Errorf("view's step footer does not say the flex rate:\n%s", r.Out)
	}
	r := clitest.RunOK(t, env, "--storage", storage, "usage")
	for _, s := range []string{"1 figures priced at the flex tier's rates", "1 figures priced at the priority tier's rates", "gpt-4.1-2025-04-14 (no flex rate)"} {
		if !strings.Contains(r.ErrOut, s) {
			t.Errorf("usage text does not say %q:\n%s\n%s", s, r.Out, r.ErrOut)
		}
	}
}

// TestSubAgentCostOnce records a Claude stream whose background sub-agent
// (parent_tool_use_id toolu_AG: 1850 input, 26 output tokens of
// claude-sonnet-4-5) ran inside the process whose last result line
// states $0.019 (total_cost_usd: the process's cost tracker, the
// sub-agent's calls included) and checks that usage, ls and stats say
// $0.019, stated: the sub-agent's child run is not priced again (which
// made it $0.02494, mixed), while its tokens are counted once.
func TestSubAgentCostOnce(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	clitest.Record(t, storage, "claude", clitest.Golden("claude", "stream_json_background_agent.jsonl"))
	const want = `{"micro_usd":19000,"usd":"0.019","source":"provider"}`
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"usage", "--json"}, []string{`"total":{"key":"total","sessions":1,`, `"uncached_input_tokens":1962,`, `"output_tokens":76`, `"cost":` + want + `}`}},
		{[]string{"ls", "--json"}, []string{`"cost":` + want}},
		{[]string{"stats", "--all", "--json"}, []string{`"cost":` + want, `"cost_by_provider":{"claude":` + want + `}`}},
	} {
		r := clitest.RunOK(t, env, append([]string{"--storage", storage}, tc.args...)...)
		for _, w := range tc.want {
			if !strings.Contains(r.Out, w) {
				t.Errorf("%v: no %s in\n%s", tc.args, w, r.Out)
			}
		}
	}
}

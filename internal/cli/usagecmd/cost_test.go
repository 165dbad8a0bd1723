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

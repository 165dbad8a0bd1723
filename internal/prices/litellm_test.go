package prices

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// litellmFile is an extract of LiteLLM's model_prices_and_context_window.json
// (its .source.txt says which entries and fields, from which commit).
var litellmFile = filepath.Join("testdata", "litellm", "model_prices_and_context_window.extract.json")

// litellmWrong are the differences the cross-check finds where LiteLLM,
// not twasm, is wrong, each with the provider's figure that says so. A
// difference not listed fails the test (twasm's table is fixed, or the
// difference added here with its evidence); a listed one that no longer
// differs fails too, so the list does not go stale.
var litellmWrong = func() map[string]string {
	m := map[string]string{
		"claude-3-opus-20240229 cache_write_1h": "LiteLLM: $6 per million, below its own 5-minute write ($18.75); " +
			"Anthropic's pricing page gives Claude Opus 3's 1-hour cache write as $30 (2x its $15 input, as for every Claude model)",
	}
	// OpenAI's Priority processing page (openai.com/api-priority-processing)
	// gives GPT-5.5 at $12.50 input, $1.25 cached input, $75 output per
	// million (2.5x its standard rates); LiteLLM has 2x ($10, $1, $60).
	for _, name := range []string{"gpt-5.5", "gpt-5.5-2026-04-23"} {
		for _, k := range []string{"priority input", "priority output", "priority cache_read"} {
			m[name+" "+k] = "OpenAI's Priority processing page gives GPT-5.5 $12.50 / $1.25 cached / $75 per million; LiteLLM's is 2x standard, OpenAI's 2.5x"
		}
	}
	return m
}()

// litellmNotTaken are the differences where twasm deliberately does not
// take LiteLLM's rate, because the provider bills the tokens at a rate
// a session's usage cannot tell, or states none: each with why and the
// provider's figures. Like litellmWrong, an unlisted difference fails,
// and so does a listed one that no longer differs.
var litellmNotTaken = func() map[string]string {
	const qwenCache = "Model Studio bills a cache hit at 20% of the input rate with its implicit cache and 10% with its explicit one " +
		"(alibabacloud.com/help/en/model-studio/context-cache, updated 2026-01-29), and a session's usage does not say which: " +
		"twasm prices cached input at the input rate (an upper bound, prices.json's note); LiteLLM takes the explicit cache's 10%"
	m := map[string]string{
		"deepseek/deepseek-chat cache_write_5m": "DeepSeek states no cache-write price: what its cache stores is billed as cache-miss input, $0.28 per million " +
			"(api-docs.deepseek.com/quick_start/pricing), and its usage states hit and miss tokens only; LiteLLM's 0 would price such a token free, " +
			"twasm charges the input rate (the table's fallback)",
	}
	const flashCache = "LiteLLM's cache-read rates for qwen3-coder-flash ($0.08, $0.12, $0.20, $0.40 per million against $0.30, $0.50, $0.80, $1.60 input) are " +
		"about a quarter of the input rate, neither of Model Studio's cache-hit rates (20% implicit, 10% explicit: " +
		"alibabacloud.com/help/en/model-studio/context-cache), and a session's usage does not say which cache was hit: " +
		"twasm prices cached input at the input rate (an upper bound, prices.json's note)"
	for _, k := range []string{"cache_read", "cache_read above 32000", "cache_read above 128000", "cache_read above 256000"} {
		m["dashscope/qwen3-coder-plus "+k] = qwenCache
		m["dashscope/qwen3-coder-flash "+k] = flashCache
	}
	m["gpt-5.4 flex cache_read"] = "OpenAI prices flex at its Batch API's rates with prompt caching's discount on top " +
		"(developers.openai.com/api/docs/guides/flex-processing): half of GPT-5.4's $0.25 cached input, $0.125 per million; " +
		"LiteLLM's $0.13 is that figure to the cent, where its flex cached input of every other model (gpt-5, gpt-5-mini, " +
		"gpt-5-nano, gpt-5.4-mini, gpt-5.4-nano, gpt-5.5) is exactly half the standard one"
	return m
}()

// litellmNoBatch are the models LiteLLM gives batch prices for and twasm
// deliberately does not, with why.
var litellmNoBatch = func() map[string]string {
	// OpenAI's: LiteLLM states batch input and output only, and twasm
	// prices a batch request only where the provider's cached-input rate
	// in a batch is stated too (prices.json's note).
	m := map[string]string{}
	for _, name := range []string{"gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano", "gpt-4o", "gpt-4o-2024-05-13", "gpt-4o-2024-08-06",
		"gpt-4o-mini", "gpt-4o-mini-2024-07-18"} {
		m[name] = "no batch rate for cached input stated"
	}
	// No format twasm reads marks a Gemini request as sent through the
	// Batch API (Gemini CLI's chats and stream output are live requests).
	m["gemini/gemini-3-pro-preview"] = "no Gemini batch output is read"
	return m
}()

// litellmNoPriority are the models LiteLLM gives a priority price for
// and twasm deliberately does not, with why.
var litellmNoPriority = map[string]string{
	"gpt-5-nano": "OpenAI's Priority processing page lists no GPT-5 nano; LiteLLM states a priority input price only " +
		"($2.50 per million, GPT-5's), no output price",
	"gpt-5.1-codex-mini": "OpenAI's Priority processing page lists no GPT-5.1 codex mini; LiteLLM gives it GPT-5 mini's",
	"gpt-5.2-codex":      "OpenAI's Priority processing page lists no GPT-5.2 codex; LiteLLM gives it GPT-5.2's",
	"gpt-5.3-codex":      "OpenAI's Priority processing page lists no GPT-5.3 codex; LiteLLM gives it GPT-5.2's",
}

// TestLiteLLMCrossCheck compares twasm's bundled rates with LiteLLM's for
// every model both list (the extract's entries, matched by twasm's
// Lookup): input, output, cache read, cache write at five minutes and one
// hour, the long-context tiers (LiteLLM's *_above_200k_tokens fields and
// its tiered_pricing ranges of a request's input, Model Studio's) and the
// batch rates, exactly (LiteLLM's dollars per token read as exact
// decimals). It reports each difference.
func TestLiteLLMCrossCheck(t *testing.T) {
	data, err := os.ReadFile(litellmFile)
	if err != nil {
		t.Fatal(err)
	}
	var entries map[string]map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&entries); err != nil {
		t.Fatal(err)
	}
	tbl := Bundled()
	var diffs []string
	seen := map[string]bool{}
	compared := 0
	names := make([]string, 0, len(entries))
	for name := range entries {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		e := entries[name]
		m, ok := tbl.Lookup(name)
		if !ok {
			t.Errorf("%s: in the extract (chosen as a model twasm prices) but twasm's table does not match it", name)
			continue
		}
		pico := func(src map[string]json.RawMessage, field string) (int64, bool) {
			raw, ok := src[field]
			if !ok {
				return 0, false
			}
			r, ok := new(big.Rat).SetString(string(raw))
			if !ok {
				t.Fatalf("%s %s: %s is not a number", name, field, raw)
			}
			r.Mul(r, big.NewRat(1_000_000_000_000, 1))
			if !r.IsInt() {
				t.Fatalf("%s %s: %s is not a whole number of pico-dollars per token", name, field, raw)
			}
			return r.Num().Int64(), true
		}
		checkIn := func(src map[string]json.RawMessage, what string, twasm int64, field string) {
			l, ok := pico(src, field)
			if !ok {
				return
			}
			compared++
			if l != twasm {
				key := name + " " + what
				seen[key] = true
				diffs = append(diffs, fmt.Sprintf("%s: twasm %s (%s), LiteLLM %s (%s)", key, usdPerM(twasm), m.ID, usdPerM(l), field))
			}
		}
		check := func(what string, twasm int64, field string) { checkIn(e, what, twasm, field) }
		// tierAbove is twasm's tier above that many input tokens; a tier
		// LiteLLM has and twasm lacks is a difference.
		tierAbove := func(above int64) (rates, bool) {
			i := slices.IndexFunc(m.tiers, func(tr tier) bool { return tr.above == above })
			if i < 0 {
				key := fmt.Sprintf("%s tier above %d", name, above)
				seen[key] = true
				diffs = append(diffs, key+": LiteLLM has it, twasm's "+m.ID+" does not")
				return rates{}, false
			}
			return m.tiers[i].r, true
		}
		check("input", m.base.input, "input_cost_per_token")
		check("output", m.base.output, "output_cost_per_token")
		check("cache_read", m.base.read, "cache_read_input_token_cost")
		check("cache_write_5m", m.base.write5m, "cache_creation_input_token_cost")
		check("cache_write_1h", m.base.write1h, "cache_creation_input_token_cost_above_1hr")
		// Tiers by the request's input size: LiteLLM's tiered_pricing
		// (Qwen's), each a range of input tokens; the one from 0 is the
		// base rates, each other twasm's tier above its start.
		if raw, ok := e["tiered_pricing"]; ok {
			var tiers []map[string]json.RawMessage
			if err := json.Unmarshal(raw, &tiers); err != nil {
				t.Fatalf("%s tiered_pricing: %v", name, err)
			}
			for _, tr := range tiers {
				var rng []json.Number
				if err := json.Unmarshal(tr["range"], &rng); err != nil || len(rng) != 2 {
					t.Fatalf("%s tiered_pricing range %s: %v", name, tr["range"], err)
				}
				lo, ok := new(big.Rat).SetString(rng[0].String())
				if !ok || !lo.IsInt() {
					t.Fatalf("%s tiered_pricing range %s: not whole tokens", name, tr["range"])
				}
				r, what := m.base, ""
				if above := lo.Num().Int64(); above > 0 {
					if r, ok = tierAbove(above); !ok {
						continue
					}
					what = fmt.Sprintf(" above %d", above)
				}
				checkIn(tr, "input"+what, r.input, "input_cost_per_token")
				checkIn(tr, "output"+what, r.output, "output_cost_per_token")
				checkIn(tr, "cache_read"+what, r.read, "cache_read_input_token_cost")
			}
		}
		for _, above := range []int64{200_000, 272_000} {
			suffix := fmt.Sprintf("_above_%dk_tokens", above/1000)
			if _, ok := e["input_cost_per_token"+suffix]; !ok {
				continue
			}
			r, ok := tierAbove(above)
			if !ok {
				continue
			}
			what := fmt.Sprintf(" above %d", above)
			check("input"+what, r.input, "input_cost_per_token"+suffix)
			check("output"+what, r.output, "output_cost_per_token"+suffix)
			check("cache_read"+what, r.read, "cache_read_input_token_cost"+suffix)
			check("cache_write_5m"+what, r.write5m, "cache_creation_input_token_cost"+suffix)
			check("cache_write_1h"+what, r.write1h, "cache_creation_input_token_cost_above_1hr"+suffix)
		}
		if _, ok := e["input_cost_per_token_batches"]; ok {
			if m.BatchPercent == 0 {
				if _, ok := litellmNoBatch[name]; !ok {
					t.Errorf("%s: LiteLLM states batch prices, twasm's %s none, and it is not listed as deliberate", name, m.ID)
				}
				continue
			}
			b, _ := m.base.percent(m.BatchPercent)
			check("batch input", b.input, "input_cost_per_token_batches")
			check("batch output", b.output, "output_cost_per_token_batches")
		}
		// The flex tier: FlexPercent of every rate, cached input included.
		if _, ok := e["input_cost_per_token_flex"]; ok {
			if m.FlexPercent == 0 {
				t.Errorf("%s: LiteLLM states flex prices, twasm's %s none", name, m.ID)
			} else {
				f, _ := m.base.percent(m.FlexPercent)
				check("flex input", f.input, "input_cost_per_token_flex")
				check("flex output", f.output, "output_cost_per_token_flex")
				check("flex cache_read", f.read, "cache_read_input_token_cost_flex")
			}
		}
		if _, ok := e["input_cost_per_token_priority"]; ok {
			if m.Priority == nil {
				if _, ok := litellmNoPriority[name]; !ok {
					t.Errorf("%s: LiteLLM states priority prices, twasm's %s none, and it is not listed as deliberate", name, m.ID)
				}
			} else {
				check("priority input", m.priority.input, "input_cost_per_token_priority")
				check("priority output", m.priority.output, "output_cost_per_token_priority")
				check("priority cache_read", m.priority.read, "cache_read_input_token_cost_priority")
			}
		}
	}
	t.Logf("LiteLLM cross-check: %d models, %d rates compared, %d differences", len(names), compared, len(diffs))
	for _, d := range diffs {
		key := strings.SplitN(d, ":", 2)[0]
		if why, known := litellmWrong[key]; known {
			t.Logf("LiteLLM is wrong: %s (%s)", d, why)
		} else if why, known := litellmNotTaken[key]; known {
			t.Logf("not taken from LiteLLM: %s (%s)", d, why)
		} else {
			t.Errorf("twasm and LiteLLM differ: %s: fix twasm's table from the provider's page, or list it in litellmWrong with the provider's figure", d)
		}
	}
	for key := range litellmWrong {
		if !seen[key] {
			t.Errorf("%s: listed as LiteLLM's error but no longer differs: remove it from litellmWrong", key)
		}
	}
	for key := range litellmNotTaken {
		if !seen[key] {
			t.Errorf("%s: listed as not taken from LiteLLM but no longer differs: remove it from litellmNotTaken", key)
		}
	}
	for name := range litellmNoBatch {
		if _, ok := entries[name]; !ok {
			t.Errorf("%s: listed in litellmNoBatch but not in the extract", name)
		}
	}
	for name := range litellmNoPriority {
		if _, ok := entries[name]["input_cost_per_token_priority"]; !ok {
			t.Errorf("%s: listed in litellmNoPriority but its extract states no priority price", name)
		}
	}
}

// usdPerM writes pico-dollars per token as dollars per million tokens.
func usdPerM(pico int64) string { return "$" + FormatMicro(pico) + "/M" }

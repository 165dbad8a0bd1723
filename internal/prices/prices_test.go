package prices

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twasm/twasm/transcript"
)

func n(v int64) *int64 { return &v }

// The expected figures are worked by hand from the bundled table's rates
// (US dollars per million tokens = pico-dollars per token).
func TestPrice(t *testing.T) {
	tbl := Bundled()
	cases := []struct {
		name, model string
		u           transcript.Usage
		total       bool // PriceTotal (a step's sum) instead of PriceRequest
		micro       int64
		tier        int64
		tierUnknown bool
	}{
		{
			// 1000*3 + 20000*0.30 + 3000*3.75 (5m) + 2000*6 (1h) + 500*15 = 39750 µ$
			name: "claude sonnet 4.5, dated id, both cache writes", model: "claude-sonnet-4-5-20250929",
			u:     transcript.Usage{UncachedInputTokens: n(1000), CacheReadTokens: n(20000), CacheWriteTokens: n(5000), CacheWrite1hTokens: n(2000), OutputTokens: n(500)},
			micro: 39750,
		},
		{
			// input 210000 > 200000: 150000*6 + 60000*0.60 + 1000*22.50 = 958500 µ$
			name: "claude sonnet 4.5, one request above 200K: long-context rates", model: "claude-sonnet-4-5",
			u:     transcript.Usage{UncachedInputTokens: n(150000), CacheReadTokens: n(60000), OutputTokens: n(1000)},
			micro: 958500, tier: 200000,
		},
		{
			// the same as a step's total: base rates 150000*3 + 60000*0.30 + 1000*15 = 483000 µ$
			name: "claude sonnet 4.5, a total above 200K: base rates, tier unknown", model: "claude-sonnet-4-5",
			u:     transcript.Usage{UncachedInputTokens: n(150000), CacheReadTokens: n(60000), OutputTokens: n(1000)},
			total: true, micro: 483000, tierUnknown: true,
		},
		{
			// input_tokens 10000 holds the 8000 read (uncached derived: 2000):
			// 2000*1.25 + 8000*0.125 + 300*10 = 6500 µ$; reasoning is in output
			name: "gpt-5-codex with a vendor prefix, cache inside input", model: "openai/gpt-5-codex",
			u:     transcript.Usage{InputTokens: n(10000), CacheReadTokens: n(8000), OutputTokens: n(300), ReasoningTokens: n(100)},
			micro: 6500,
		},
		{
			// 250000*2.50 + 2000*15 = 655000 µ$
			name: "gemini 2.5 pro above 200K", model: "gemini-2.5-pro",
			u:     transcript.Usage{UncachedInputTokens: n(250000), OutputTokens: n(2000)},
			micro: 655000, tier: 200000,
		},
		{
			// 100000*1.80 + 1000*9 = 189000 µ$ (the 32K step, not the 128K one)
			name: "qwen3-coder-plus second step", model: "qwen3-coder-plus",
			u:     transcript.Usage{UncachedInputTokens: n(100000), OutputTokens: n(1000)},
			micro: 189000, tier: 32000,
		},
		{
			// input 300000 > 272000: 290000*10 + 10000*1 + 1000*45 = 2955000 µ$
			name: "gpt-5.5 above 272K, as a captured Codex session names it", model: "gpt-5.5-2026-04-23",
			u:     transcript.Usage{InputTokens: n(300000), CacheReadTokens: n(10000), OutputTokens: n(1000)},
			micro: 2955000, tier: 272000,
		},
		{
			// 1000*0.28 + 1000*0.028 + 1000*0.42 = 728 µ$
			name: "deepseek cache hit", model: "deepseek-chat",
			u:     transcript.Usage{UncachedInputTokens: n(1000), CacheReadTokens: n(1000), OutputTokens: n(1000)},
			micro: 728,
		},
		{
			// 1*25 = 25 µ$: Claude Code's "[1m]" suffix names the same model
			name: "opus 4.7 [1m]", model: "claude-opus-4-7[1m]",
			u:     transcript.Usage{OutputTokens: n(1)},
			micro: 25,
		},
		{
			// the first GPT-4o snapshot has its own entry: 1000*5 + 100*15 = 6500 µ$
			name: "gpt-4o-2024-05-13 priced apart", model: "gpt-4o-2024-05-13",
			u:     transcript.Usage{InputTokens: n(1000), OutputTokens: n(100)},
			micro: 6500,
		},
		{
			// a later snapshot is gpt-4o: 1000*2.50 + 100*10 = 3500 µ$
			name: "gpt-4o-2024-08-06 is gpt-4o", model: "openai/gpt-4o-2024-08-06",
			u:     transcript.Usage{InputTokens: n(1000), OutputTokens: n(100)},
			micro: 3500,
		},
		{
			// 1 uncached token of haiku 4.5: 1 pico-dollar*10^6 = 1 µ$
			name: "haiku alias with dots", model: "Claude-Haiku-4.5",
			u:     transcript.Usage{UncachedInputTokens: n(1)},
			micro: 1,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			price := tbl.PriceRequest
			if c.total {
				price = tbl.PriceTotal
			}
			p, ok := price(c.model, &c.u)
			if !ok {
				t.Fatalf("%s not in the table", c.model)
			}
			if got := Micro(p.Pico); got != c.micro || p.Tier != c.tier || p.TierUnknown != c.tierUnknown {
				t.Errorf("got %d µ$ tier %d unknown %v, want %d µ$ tier %d unknown %v", got, p.Tier, p.TierUnknown, c.micro, c.tier, c.tierUnknown)
			}
		})
	}
	// figures no request has are not priced rather than wrapped around

	for _, u := range []transcript.Usage{{OutputTokens: n(-1)}, {OutputTokens: n(1 << 62)}, {UncachedInputTokens: n(1 << 40), OutputTokens: n(1 << 40)}} {
		if p, ok := tbl.PriceRequest("claude-opus-4-1", &u); ok {
			t.Errorf("%+v priced %d", u, p.Pico)
		}
	}
	for _, m := range []string{"gpt-9", "", "auto", "<synthetic>"} {
		if _, ok := tbl.PriceRequest(m, &transcript.Usage{OutputTokens: n(1)}); ok {
			t.Errorf("%q priced: a model the table lacks must not be", m)
		}
	}
}

// A batch request is priced at the model's batch_percent of every rate
// (worked by hand from the bundled table: Anthropic and OpenAI bill the
// batch APIs at 50% of the standard prices, cache and tiers included).
func TestPriceBatch(t *testing.T) {
	tbl := Bundled()
	cases := []struct {
		name, model string
		u           transcript.Usage
		one         bool
		micro       int64
		tier        int64
		unpriced    bool
	}{
		{
			// (1000*3 + 20000*0.30 + 3000*3.75 + 2000*6 + 500*15) / 2 = 19875 µ$
			name: "sonnet 4.5, both cache writes", model: "claude-sonnet-4-5-20250929", one: true,
			u:     transcript.Usage{UncachedInputTokens: n(1000), CacheReadTokens: n(20000), CacheWriteTokens: n(5000), CacheWrite1hTokens: n(2000), OutputTokens: n(500)},
			micro: 19875,
		},
		{
			// above 200K: (150000*6 + 60000*0.60 + 1000*22.50) / 2 = 479250 µ$
			name: "sonnet 4.5 one request above 200K", model: "claude-sonnet-4-5", one: true,
			u:     transcript.Usage{UncachedInputTokens: n(150000), CacheReadTokens: n(60000), OutputTokens: n(1000)},
			micro: 479250, tier: 200000,
		},
		{
			// (120*1 + 4*5) / 2 = 70 µ$
			name: "haiku 4.5 as a batch result names it", model: "claude-haiku-4-5-20251001", one: true,
			u:     transcript.Usage{UncachedInputTokens: n(120), OutputTokens: n(4)},
			micro: 70,
		},
		{
			// OpenAI states no batch discount on cached input: it stays at
			// the standard $0.125: 2000*0.625 + 8000*0.125 + 300*5 = 3750 µ$
			name: "gpt-5 summed, cached input at the standard rate", model: "gpt-5",
			u:     transcript.Usage{InputTokens: n(10000), CacheReadTokens: n(8000), OutputTokens: n(300)},
			micro: 3750,
		},
		{
			// no cached input: (1000*2.50 + 100*15) / 2 = 2000 µ$
			name: "gpt-5.4 without cache", model: "gpt-5.4", one: true,
			u:     transcript.Usage{InputTokens: n(1000), OutputTokens: n(100)},
			micro: 2000,
		},
		{
			// the table states no batch rate for gpt-4o-mini: not priced
			name: "gpt-4o-mini: no batch rate", model: "gpt-4o-mini-2024-07-18", one: true,
			u:        transcript.Usage{InputTokens: n(22), OutputTokens: n(2)},
			unpriced: true,
		},
		{
			name: "deepseek: no batch API", model: "deepseek-chat", one: true,
			u:        transcript.Usage{InputTokens: n(22), OutputTokens: n(2)},
			unpriced: true,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, ok := tbl.PriceBatch(c.model, &c.u, c.one)
			if ok == c.unpriced {
				t.Fatalf("priced %v, want %v", ok, !c.unpriced)
			}
			if !ok {
				return
			}
			if got := Micro(p.Pico); got != c.micro || p.Tier != c.tier || !p.Batch {
				t.Errorf("got %d µ$ tier %d batch %v, want %d µ$ tier %d batch", got, p.Tier, p.Batch, c.micro, c.tier)
			}
			std, _, _ := tbl.price(c.model, &c.u, c.one, standard)
			m, _ := tbl.Lookup(c.model)
			if half := !m.BatchCacheReadStandard || c.u.CacheReadTokens == nil; std.Batch || half && std.Pico != 2*p.Pico || p.Pico > std.Pico {
				t.Errorf("standard %d pico, batch %d: not half, or above", std.Pico, p.Pico)
			}
		})
	}
}

func TestMoney(t *testing.T) {
	for _, c := range []struct {
		pico, micro int64
		text        string
	}{
		{0, 0, "0"}, {499_999, 0, "0"}, {500_000, 1, "0.000001"}, {1_499_999, 1, "0.000001"},
		{86_190_000_000, 86190, "0.08619"}, {12_000_000_000_000, 12_000_000, "12"}, {-1_500_000, -2, "-0.000002"},
	} {
		if got := Micro(c.pico); got != c.micro {
			t.Errorf("Micro(%d) = %d, want %d", c.pico, got, c.micro)
		}
		if got := FormatMicro(c.micro); got != c.text {
			t.Errorf("FormatMicro(%d) = %q, want %q", c.micro, got, c.text)
		}
	}
	if got := MicroOfUSD(0.08618999999999999); got != 86190 {
		t.Errorf("MicroOfUSD = %d, want 86190", got)
	}
	for s, want := range map[string]int64{"0.30": 300_000, "15": 15_000_000, "0.000001": 1} {
		if got, err := ParseUSD(s); err != nil || got != want {
			t.Errorf("ParseUSD(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "-1", "1e3", "0.0000001", ".5", "1.2.3", "x"} {
		if _, err := ParseUSD(s); err == nil {
			t.Errorf("ParseUSD(%q) accepted", s)
		}
	}
}

const goodModel = `{"id": "m", "provider": "p", "usd_per_mtok": {"input": "1", "output": "2"}, "sources": ["https://example.com/p"], "checked": "2026-01-01"}`

func TestParse(t *testing.T) {
	file := func(date, models string) string {
		return `{"schema": "twasm.prices/1", "name": "t", "date": "` + date + `", "models": [` + models + `]}`
	}
	if _, err := Parse([]byte(file("2026-01-01", goodModel))); err != nil {
		t.Fatalf("a good file refused: %v", err)
	}
	for _, c := range []struct{ name, data, want string }{
		{"schema", strings.Replace(file("2026-01-01", goodModel), "prices/1", "prices/2", 1), "schema"},
		{"date", file("2026-1-1", goodModel), "date"},
		{"no models", file("2026-01-01", ""), "no models"},
		{"newer schema", strings.Replace(file("2026-01-01", goodModel), "prices/1", "prices/2", 1), "newer twasm"},
		{"top-level field unknown", strings.Replace(file("2026-01-01", goodModel), `"name"`, `"currency": "eur", "name"`, 1), `field "currency" unknown`},
		{"rate too high", file("2026-01-01", strings.Replace(goodModel, `"1"`, `"1000001"`, 1)), "above"},
		{"seven decimals", file("2026-01-01", strings.Replace(goodModel, `"1"`, `"0.0000001"`, 1)), "input rate"},
		{"no output", file("2026-01-01", strings.Replace(goodModel, `, "output": "2"`, "", 1)), "no output rate"},
		{"no source", file("2026-01-01", strings.Replace(goodModel, `"https://example.com/p"`, "", 1)), "no source"},
		{"http source", file("2026-01-01", strings.Replace(goodModel, "https:", "http:", 1)), "https"},
		{"twice", file("2026-01-01", goodModel+","+strings.Replace(goodModel, `"id": "m"`, `"id": "x", "aliases": ["vendor/M"]`, 1)), "names both"},
		{"snapshot twice", file("2026-01-01", strings.Replace(goodModel, `"id": "m"`, `"id": "m-20250101"`, 1)+","+strings.Replace(goodModel, `"id": "m"`, `"id": "x", "aliases": ["M-20250101"]`, 1)), "names both"},
		{"batch above 100", file("2026-01-01", strings.Replace(goodModel, `"sources"`, `"batch_percent": 101, "sources"`, 1)), "batch_percent"},
		{"batch inexact", file("2026-01-01", strings.Replace(strings.Replace(goodModel, `"1"`, `"0.000001"`, 1), `"sources"`, `"batch_percent": 50, "sources"`, 1)), "whole number"},
		{"tiers fall", file("2026-01-01", strings.Replace(goodModel, `"sources"`,
			`"tiers": [{"above_input_tokens": 10, "usd_per_mtok": {"input": "1", "output": "2"}}, {"above_input_tokens": 5, "usd_per_mtok": {"input": "1", "output": "2"}}], "sources"`, 1)), "must rise"},
	} {
		if _, err := Parse([]byte(c.data)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want one saying %q", c.name, err, c.want)
		}
	}
}

// TestNewerFields: a price file of this schema written by a newer twasm
// may carry fields this one does not know. One in a model entry (at any
// depth) may change what the model costs: the model is kept, still
// matched by its names, and left unpriced with the field named, while
// the file's other models are priced; one at the top level may change
// every price: the file is refused as ErrNewerFormat, and Load uses the
// bundled table and says why. Fields named info_... are ignored.
func TestNewerFields(t *testing.T) {
	other := strings.Replace(goodModel, `"id": "m"`, `"id": "other"`, 1)
	file := func(model string) string {
		return `{"schema": "twasm.prices/1", "name": "t", "date": "2026-01-01", "models": [` + model + `,` + other + `]}`
	}
	u := &transcript.Usage{UncachedInputTokens: n(1000), OutputTokens: n(100), ServiceTier: "default"}
	for _, c := range []struct{ name, model, unknown string }{
		{"entry", strings.Replace(goodModel, `"sources"`, `"regional_percent": 110, "sources"`, 1), "regional_percent"},
		{"rates", strings.Replace(goodModel, `"output": "2"`, `"output": "2", "audio_input": "40"`, 1), "usd_per_mtok.audio_input"},
		{"tier", strings.Replace(goodModel, `"sources"`, `"tiers": [{"above_input_tokens": 10, "per": "request", "usd_per_mtok": {"input": "1", "output": "2"}}], "sources"`, 1), "tiers[0].per"},
		{"priority", strings.Replace(goodModel, `"sources"`, `"priority": {"usd_per_mtok": {"input": "2", "output": "4"}, "min_commit": 1}, "sources"`, 1), "priority.min_commit"},
		{"info fields ignored", strings.Replace(goodModel, `"sources"`, `"info_context_window": 400000, "usd_per_mtok_x": null, "sources"`, 1), "usd_per_mtok_x"},
		{"only info fields", strings.Replace(goodModel, `"output": "2"`, `"output": "2", "INFO_unit": "tokens"`, 1), ""},
		{"known field in another case, as encoding/json reads it", strings.Replace(goodModel, `"output"`, `"Output"`, 1), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			tbl, err := Parse([]byte(file(c.model)))
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			m, ok := tbl.Lookup("M")
			if !ok || m.Unknown != c.unknown {
				t.Fatalf("lookup %v, unknown %q, want %q", ok, m.Unknown, c.unknown)
			}
			p, why, ok := tbl.PriceAt("m", u, true, false)
			if c.unknown == "" {
				if !ok || Micro(p.Pico) != 1200 { // 1000*1 + 100*2
					t.Fatalf("priced %v %d µ$ (%q), want 1200", ok, Micro(p.Pico), why)
				}
				return
			}
			if want := `price entry field "` + c.unknown + `" unknown to this twasm`; ok || why != want {
				t.Errorf("priced %v why %q, want unpriced, why %q", ok, why, want)
			}
			if _, ok := tbl.PriceRequest("m", u); ok {
				t.Error("PriceRequest priced it")
			}
			if got := tbl.Unpriceable(); !slices.Equal(got, []string{"m (" + c.unknown + ")"}) {
				t.Errorf("Unpriceable %q", got)
			}
			if p, _, ok := tbl.PriceAt("other", u, true, false); !ok || Micro(p.Pico) != 1200 {
				t.Errorf("the file's other model: %v %d µ$", ok, Micro(p.Pico))
			}
		})
	}
	path := filepath.Join(t.TempDir(), FileName)
	for _, data := range []string{
		strings.Replace(file(goodModel), `"name"`, `"currency": "eur", "name"`, 1),
		strings.Replace(file(goodModel), "prices/1", "prices/2", 1),
	} {
		if _, err := Parse([]byte(data)); !errors.Is(err, ErrNewerFormat) {
			t.Errorf("Parse: %v, want ErrNewerFormat", err)
		}
		if _, err := Install(path, []byte(data)); err == nil {
			t.Error("installed a file this twasm cannot read")
		}
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		tbl, note, err := Load(path)
		if err != nil || tbl.Origin != "bundled" || !strings.Contains(note, "newer twasm") || !strings.Contains(note, path) {
			t.Errorf("Load: %v %q %v, want the bundled table and a note", tbl, note, err)
		}
	}
}

// Every model the bundled table prices has its sources and date, and
// Bundled does not panic.
func TestBundled(t *testing.T) {
	b := Bundled()
	if b.Origin != "bundled" || b.SHA256 == "" || len(b.Models) < 20 {
		t.Fatalf("bundled table %+v", b)
	}
}

func TestLoadInstall(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "twasm", FileName)
	tbl, note, err := Load(path)
	if err != nil || tbl.Origin != "bundled" || note != "" {
		t.Fatalf("no file: %v %q %v", tbl.Origin, note, err)
	}
	newer := `{"schema": "twasm.prices/1", "name": "mine", "date": "2999-01-01", "models": [` + goodModel + `]}`
	if _, err := Install(path, []byte(`{"schema": "twasm.prices/1"}`)); err == nil {
		t.Fatal("a bad file installed")
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("a refused file was written")
	}
	if _, err := Install(path, []byte(newer)); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("installed file: %v %v", st.Mode(), err)
	}
	tbl, note, err = Load(path)
	if err != nil || tbl.Origin != path || tbl.Version() != "mine@2999-01-01" || note != "" {
		t.Fatalf("installed newer: %s %q %v", tbl.Version(), note, err)
	}
	older := strings.Replace(newer, "2999-01-01", "2000-01-01", 1)
	if _, err := Install(path, []byte(older)); err != nil {
		t.Fatal(err)
	}
	tbl, note, err = Load(path)
	if err != nil || tbl.Origin != "bundled" || !strings.Contains(note, "older than the bundled") {
		t.Fatalf("installed older: %s %q %v", tbl.Origin, note, err)
	}
	if err := os.WriteFile(path, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("a damaged installed file: %v", err)
	}
}

// TestLocalModelsUnpriced: models served locally (Ollama, LM Studio,
// llama.cpp, vLLM) are named by their runtimes as these are, tags and
// quantizations included, with or without a "vendor/" prefix; none is
// in the table, so none is priced (ok false: the caller names it
// unpriced, its cost unknown, never 0), not even by matching a cloud
// model's name once normalized.
func TestLocalModelsUnpriced(t *testing.T) {
	tbl := Bundled()
	in, out := int64(1000), int64(100)
	u := &transcript.Usage{InputTokens: &in, UncachedInputTokens: &in, OutputTokens: &out}
	for _, model := range []string{
		"qwen2.5-coder:7b", "qwen3-coder:30b", "llama3.1:8b", "gpt-oss:20b", "deepseek-r1:14b", "devstral:24b",
		"ollama/qwen2.5:7b-instruct-q4_K_M", "ollama_chat/qwen3-coder:30b", "lm_studio/qwen/qwen3-coder-30b",
		"hosted_vllm/Qwen/Qwen2.5-Coder-32B-Instruct", "llama.cpp/gemma-3-12b-it-Q4_K_M.gguf", "local-model",
	} {
		if m, ok := tbl.Lookup(model); ok {
			t.Errorf("%s: matches %s: a local model would be priced as that one", model, m.ID)
		}
		if p, ok := tbl.PriceRequest(model, u); ok || p.Pico != 0 {
			t.Errorf("%s: priced %d pico-dollars (ok %v), want not priced", model, p.Pico, ok)
		}
	}
}

// TestCostJSONUnknown: a cost of unknown source has no micro_usd and no
// usd in JSON (0 would read as nothing spent), only its source and the
// models it could not price; a known cost, even of 0, has both.
func TestCostJSONUnknown(t *testing.T) {
	for _, c := range []struct {
		cost Cost
		want string
	}{
		{Cost{Source: SourceUnknown, Prices: "t@1", UnpricedModels: []string{"qwen2.5-coder:7b"}},
			`{"source":"unknown","prices":"t@1","unpriced_models":["qwen2.5-coder:7b"]}`},
		{Cost{MicroUSD: 0, USD: "0", Source: SourceProvider}, `{"micro_usd":0,"usd":"0","source":"provider"}`},
		{Cost{MicroUSD: 1500, USD: "0.0015", Source: SourceMixed, Prices: "t@1", UnpricedModels: []string{"m"}},
			`{"micro_usd":1500,"usd":"0.0015","source":"mixed","prices":"t@1","unpriced_models":["m"]}`},
	} {
		b, err := json.Marshal(c.cost)
		if err != nil || string(b) != c.want {
			t.Errorf("%+v: %s (%v), want %s", c.cost, b, err, c.want)
		}
		p, _ := json.Marshal(&c.cost)
		if string(p) != string(b) {
			t.Errorf("through a pointer: %s, want %s", p, b)
		}
	}
}

// TestPriceAtServiceTier prices usage at the service tier a response
// states (OpenAI's service_tier, Anthropic's usage.service_tier): the
// standard rates for none, "default", "standard" and "auto"; flex at
// FlexPercent of every rate, cached input and long-context tiers
// included; priority at the priority rates up to their max input; batch
// at the batch rates (the tier, or the capture being a batch job's
// results whatever its bodies state); every other case unpriced with why.
// Figures worked by hand from the providers' rates (dollars per million
// tokens), in micro-dollars.
func TestPriceAtServiceTier(t *testing.T) {
	tbl := Bundled()
	// gpt-5: 2000 uncached, 8000 cache read, 300 output.
	gpt5 := func(tier string) transcript.Usage {
		return transcript.Usage{InputTokens: n(10000), CacheReadTokens: n(8000), OutputTokens: n(300), ServiceTier: tier}
	}
	cases := []struct {
		name, model string
		u           transcript.Usage
		one, batch  bool
		micro       int64
		tier        int64
		service     string
		isBatch     bool
		tierUnknown bool
		why         string // unpriced when set (or when unpriced is)
		unpriced    bool
	}{
		// 2000*1.25 + 8000*0.125 + 300*10
		{name: "no tier stated: standard", model: "gpt-5", u: gpt5(""), one: true, micro: 6500},
		{name: "default: standard", model: "gpt-5", u: gpt5("default"), one: true, micro: 6500},
		{name: "auto: the project's tier, default unless configured", model: "gpt-5", u: gpt5("auto"), one: true, micro: 6500},
		// half of every rate: 2000*0.625 + 8000*0.0625 + 300*5
		{name: "flex: half, cached input too", model: "gpt-5-2025-08-07", u: gpt5("flex"), one: true, micro: 3250, service: ServiceFlex},
		{name: "flex summed over requests", model: "gpt-5", u: gpt5("flex"), micro: 3250, service: ServiceFlex},
		// 2000*2.50 + 8000*0.25 + 300*20
		{name: "priority", model: "gpt-5", u: gpt5("priority"), one: true, micro: 13000, service: ServicePriority},
		// 1000*12.50 + 100*75 (OpenAI's priority page; LiteLLM differs)
		{name: "gpt-5.5 priority", model: "gpt-5.5", one: true, micro: 20000, service: ServicePriority,
			u: transcript.Usage{InputTokens: n(1000), OutputTokens: n(100), ServiceTier: "priority"}},
		// no cached-input rate stated: the input rate, 1000*8.75 + 20*26.25
		{name: "gpt-4o-2024-05-13 priority, cached input at the input rate", model: "gpt-4o-2024-05-13", one: true, micro: 9275, service: ServicePriority,
			u: transcript.Usage{InputTokens: n(1000), CacheReadTokens: n(500), OutputTokens: n(20), ServiceTier: "priority"}},
		{name: "priority above 128K input: no rate stated", model: "gpt-5", one: true, why: "priority above 128000 input tokens: no rate",
			u: transcript.Usage{InputTokens: n(130000), OutputTokens: n(10), ServiceTier: "priority"}},
		// a total above 128K may be of requests below it: 130000*2.50 + 10*20
		{name: "priority total above 128K: priced, tier unknown", model: "gpt-5", micro: 325200, service: ServicePriority, tierUnknown: true,
			u: transcript.Usage{InputTokens: n(130000), OutputTokens: n(10), ServiceTier: "priority"}},
		// the long-context rates (5, 22.50) halved: 300000*2.50 + 1000*11.25
		{name: "gpt-5.4 flex above 272K: the long-context rates halved", model: "gpt-5.4", one: true, micro: 761250, tier: 272000, service: ServiceFlex,
			u: transcript.Usage{InputTokens: n(300000), OutputTokens: n(1000), ServiceTier: "flex"}},
		{name: "gpt-4.1: no flex rate", model: "gpt-4.1", u: gpt5("flex"), one: true, why: "no flex rate"},
		{name: "gpt-4o: no flex rate", model: "gpt-4o-2024-08-06", u: gpt5("flex"), one: true, why: "no flex rate"},
		{name: "gpt-5.2: no flex rate stated", model: "gpt-5.2", u: gpt5("flex"), one: true, why: "no flex rate"},
		// o4-mini, which OpenAI's flex guide names: half of every rate,
		// 2000*0.55 + 8000*0.1375 + 300*2.20
		{name: "o4-mini flex", model: "o4-mini-2025-04-16", u: gpt5("flex"), one: true, micro: 2860, service: ServiceFlex},
		// the Priority processing page lists GPT-5.1 codex at GPT-5's rates
		{name: "gpt-5.1-codex priority, listed", model: "gpt-5.1-codex", u: gpt5("priority"), one: true, micro: 13000, service: ServicePriority},
		// models priced at another's standard rates that the page does not list
		{name: "gpt-5.1-codex-max: no priority rate stated", model: "gpt-5.1-codex-max", u: gpt5("priority"), one: true, why: "no priority rate"},
		{name: "gpt-5.1-codex-mini: no priority rate stated", model: "gpt-5.1-codex-mini", u: gpt5("priority"), one: true, why: "no priority rate"},
		{name: "gpt-5.3-codex: no priority rate stated", model: "gpt-5.3-codex", u: gpt5("priority"), one: true, why: "no priority rate"},
		{name: "gpt-5-codex: no flex rate stated", model: "gpt-5-codex", u: gpt5("flex"), one: true, why: "no flex rate"},
		// the standard rates are still GPT-5's: 2000*1.25 + 8000*0.125 + 300*10
		{name: "gpt-5.1-codex-max standard", model: "gpt-5.1-codex-max", u: gpt5("default"), one: true, micro: 6500},
		{name: "gpt-5-nano: no priority rate", model: "gpt-5-nano", u: gpt5("priority"), one: true, why: "no priority rate"},
		{name: "scale tier: not per token", model: "gpt-5", u: gpt5("scale"), one: true, why: "scale tier: billed by reserved capacity, not per token"},
		{name: "a total of several tiers", model: "gpt-5", u: gpt5(transcript.ServiceTierMixed), why: "several service tiers in one total"},
		{name: "a tier no provider names", model: "gpt-5", u: gpt5("ultra"), one: true, why: `service tier "ultra": not known`},
		{name: "a model the table lacks", model: "gpt-9", u: gpt5("flex"), one: true, unpriced: true},
		// a batch job's results: the batch rates whatever the body states,
		// OpenAI's cached input at its standard rate: 2000*0.625 + 8000*0.125 + 300*5
		{name: "batch results stating default", model: "gpt-5", u: gpt5("default"), one: true, batch: true, micro: 3750, isBatch: true},
		// Anthropic: (120*1 + 4*5) / 2
		{name: "anthropic batch tier", model: "claude-haiku-4-5-20251001", one: true, micro: 70, isBatch: true,
			u: transcript.Usage{UncachedInputTokens: n(120), OutputTokens: n(4), ServiceTier: "batch"}},
		{name: "anthropic standard", model: "claude-haiku-4-5-20251001", one: true, micro: 140,
			u: transcript.Usage{UncachedInputTokens: n(120), OutputTokens: n(4), ServiceTier: "standard"}},
		{name: "anthropic priority: a capacity commitment, no per-token rate", model: "claude-haiku-4-5-20251001", one: true, why: "no priority rate",
			u: transcript.Usage{UncachedInputTokens: n(120), OutputTokens: n(4), ServiceTier: "priority"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, why, ok := tbl.PriceAt(c.model, &c.u, c.one, c.batch)
			if want := c.why == "" && !c.unpriced; ok != want || why != c.why {
				t.Fatalf("priced %v (why %q), want %v (why %q)", ok, why, want, c.why)
			}
			if !ok {
				return
			}
			if got := Micro(p.Pico); got != c.micro || p.Tier != c.tier || p.Service != c.service || p.Batch != c.isBatch || p.TierUnknown != c.tierUnknown {
				t.Errorf("got %d µ$ tier %d service %q batch %v tier unknown %v, want %d µ$ tier %d service %q batch %v tier unknown %v",
					got, p.Tier, p.Service, p.Batch, p.TierUnknown, c.micro, c.tier, c.service, c.isBatch, c.tierUnknown)
			}
		})
	}
}

// TestPriceOutputUnstated: a usage that states no output but a total
// above its input counts tokens it does not say the kind of (Gemini
// CLI's stream-json result: thoughts in the total only): they are not
// priced as 0 output, the figure is unpriced ("output not stated"), its
// cost unknown. A usage whose total is its input, or that states no
// total, says nothing was left out and is priced as before.
func TestPriceOutputUnstated(t *testing.T) {
	tbl := Bundled()
	const model = "gemini-3-flash-preview"
	cases := []struct {
		name string
		u    transcript.Usage
		why  string // unpriced when set
	}{
		{name: "total above input, no output", why: "output not stated",
			u: transcript.Usage{InputTokens: n(10194), CacheReadTokens: n(7577), TotalTokens: n(10479)}},
		{name: "total above input and output: priced as stated",
			u: transcript.Usage{InputTokens: n(10194), CacheReadTokens: n(7577), OutputTokens: n(7), TotalTokens: n(10479)}},
		{name: "total is the input: nothing left out",
			u: transcript.Usage{InputTokens: n(1000), TotalTokens: n(1000)}},
		{name: "no total, no output",
			u: transcript.Usage{InputTokens: n(1000)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, one := range []bool{true, false} {
				_, why, ok := tbl.PriceAt(model, &c.u, one, false)
				if ok != (c.why == "") || why != c.why {
					t.Errorf("one request %v: priced %v (why %q), want %v (why %q)", one, ok, why, c.why == "", c.why)
				}
			}
		})
	}
}

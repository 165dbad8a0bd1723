package prices

import (
	"testing"

	"github.com/twasm/twasm/transcript"
)

// FuzzParse: a price file (the user's, installed by twasm prices update)
// never panics the parser, and a table it accepts prices any usage of
// any of its models without panicking, never below 0, but a model whose
// entry has a field this twasm does not know, which it never prices.
func FuzzParse(f *testing.F) {
	f.Add(BundledJSON())
	f.Add([]byte(`{"schema": "twasm.prices/1", "name": "t", "date": "2026-01-01", "models": [` + goodModel + `]}`))
	f.Add([]byte(`{"schema": "twasm.prices/1", "name": "t", "date": "2026-01-01", "models": [{"id": "m", "provider": "p",
		"usd_per_mtok": {"input": "1.5", "output": "2", "cache_read": "0.000001"}, "tiers": [{"above_input_tokens": 1, "usd_per_mtok": {"input": "9", "output": "9"}}],
		"sources": ["https://x"], "checked": "2026-01-01"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tbl, err := Parse(data)
		if err != nil {
			return
		}
		u := &transcript.Usage{UncachedInputTokens: n(300000), CacheReadTokens: n(7), CacheWriteTokens: n(5), CacheWrite1hTokens: n(2), OutputTokens: n(11)}
		for _, m := range tbl.Models {
			if m.Unknown != "" {
				// A newer twasm's field: never priced.
				if _, ok := tbl.PriceRequest(m.ID, u); ok {
					t.Fatalf("%s with unknown field %q priced", m.ID, m.Unknown)
				}
				continue
			}
			for _, price := range []func(string, *transcript.Usage) (Price, bool){tbl.PriceRequest, tbl.PriceTotal} {
				p, ok := price(m.ID, u)
				if !ok || p.Pico < 0 {
					t.Fatalf("%s: %+v %v", m.ID, p, ok)
				}
			}
			if p, ok := tbl.PriceBatch(m.ID, u, true); ok != (m.BatchPercent > 0) || p.Pico < 0 {
				t.Fatalf("%s batch: %+v %v", m.ID, p, ok)
			}
		}
	})
}

package archive

import (
	"testing"

	"github.com/twasm/twasm/transcript"
)

func i64(v int64) *int64 { return &v }

// TestSubtractUsage: a later part's usage is its share of every counter,
// the uncached input, the one-hour cache write and the stated total
// included (a part that kept the whole stream's figures for them would
// count the session's earlier parts again), also when the previous
// part's totals were written before those counters existed.
func TestSubtractUsage(t *testing.T) {
	whole := func() *transcript.Usage {
		return &transcript.Usage{InputTokens: i64(1000), UncachedInputTokens: i64(100), CacheReadTokens: i64(800), CacheWriteTokens: i64(100),
			CacheWrite1hTokens: i64(40), OutputTokens: i64(50), TotalTokens: i64(1050)}
	}
	tests := []struct {
		name string
		prev *transcript.Usage
		want transcript.Usage
	}{
		{"previous part of the same shape",
			&transcript.Usage{InputTokens: i64(600), UncachedInputTokens: i64(60), CacheReadTokens: i64(500), CacheWriteTokens: i64(40),
				CacheWrite1hTokens: i64(10), OutputTokens: i64(20), TotalTokens: i64(620)},
			transcript.Usage{InputTokens: i64(400), UncachedInputTokens: i64(40), CacheReadTokens: i64(300), CacheWriteTokens: i64(60),
				CacheWrite1hTokens: i64(30), OutputTokens: i64(30), TotalTokens: i64(430)}},
		{"previous part's totals of an older twasm (no uncached figure)",
			&transcript.Usage{InputTokens: i64(600), CacheReadTokens: i64(500), CacheWriteTokens: i64(40), OutputTokens: i64(20)},
			transcript.Usage{InputTokens: i64(400), UncachedInputTokens: i64(40), CacheReadTokens: i64(300), CacheWriteTokens: i64(60),
				CacheWrite1hTokens: i64(40), OutputTokens: i64(30), TotalTokens: i64(1050)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &transcript.AgentResult{Usage: whole()}
			subtract(r, &Totals{Usage: tt.prev})
			if r.Usage.Check() != nil {
				t.Fatalf("the part's usage disagrees: %v", r.Usage.Check())
			}
			got, want := r.Usage.Billed(), tt.want
			for _, c := range []struct {
				name string
				g, w *int64
			}{{"input", got.InputTokens, want.InputTokens}, {"uncached", got.UncachedInputTokens, want.UncachedInputTokens},
				{"cache read", got.CacheReadTokens, want.CacheReadTokens}, {"cache write", got.CacheWriteTokens, want.CacheWriteTokens},
				{"cache write 1h", got.CacheWrite1hTokens, want.CacheWrite1hTokens}, {"output", got.OutputTokens, want.OutputTokens},
				{"total", got.TotalTokens, want.TotalTokens}} {
				if (c.g == nil) != (c.w == nil) || c.g != nil && *c.g != *c.w {
					t.Errorf("%s: got %v, want %v", c.name, deref(c.g), deref(c.w))
				}
			}
		})
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

package usage

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/prices"
	"github.com/twasm/twasm/transcript"
)

// codecCases are ledgers with every field the encoding carries: the
// store's runs (sub-agent, stated cost, renormalize rebuild, unpriced
// model, steps' costs) and hand-made ones for what those lack.
func codecCases(t testing.TB) []*Ledger {
	var out []*Ledger
	if tt, ok := t.(*testing.T); ok {
		dir, ids := store(tt)
		for _, id := range ids {
			out = append(out, LedgerFile(filepath.Join(dir, id+".jsonl"), prices.Bundled()))
		}
	}
	at := time.Date(2026, 8, 1, 10, 0, 0, 0, time.FixedZone("x", 3600))
	out = append(out,
		&Ledger{},
		&Ledger{LoadErr: "transcript: line 3: bad json", Prices: "bundled@2026-11-01"},
		&Ledger{RunID: "r", ParentRunID: "p", Name: "a name é", Started: &at, Project: "/home/u/p", RenormalizedFrom: "o", SupersedesRuns: []string{"w1", "w2"},
			Children: []string{"c1", "c2"}, Covered: []string{"c2"}, Supersedes: []string{"s"}, SupersededBy: "b", Prices: "t@1",
			Rows: []Row{
				{At: -900, Usage: nil, Requests: 1, StatedMicro: -5},
				{At: 1 << 40, Provider: "claude", Model: "m", Usage: &transcript.Usage{}, Requests: 2},
				{At: 900, Provider: "codex", Model: "gpt", Usage: &transcript.Usage{InputTokens: n(1), UncachedInputTokens: n(0), CacheReadTokens: n(-3),
					CacheWriteTokens: n(1 << 50), CacheWrite1hTokens: n(5), OutputTokens: n(6), ReasoningTokens: n(7), TotalTokens: n(8)},
					Requests: 3, PricedPico: 123456789012, StatedMicro: 7, Priced: 1, Stated: 2, Unpriced: 3, TierUnknown: 4, Batch: 5, Flex: 6, Priority: 7, UnpricedTier: 2, UnpricedWhy: []string{"no flex rate", "no batch rate"}},
			},
			Steps: []StepCost{{Seq: 1<<63 + 5, Path: "s/t", Iteration: -1, Cost: prices.Cost{MicroUSD: 9, USD: "0.000009", Source: "mixed",
				Prices: "t@1", UnpricedModels: []string{"a", "b"}, TierUnknown: 2, Batch: 3}}}},
	)
	return out
}

// TestLedgerBinary checks that a ledger decoded from its encoding is the
// ledger encoded (compared as their JSON, the form reports print), and
// that a damaged encoding is an error, never a ledger.
func TestLedgerBinary(t *testing.T) {
	for i, l := range codecCases(t) {
		b, err := l.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var got Ledger
		if err := got.UnmarshalBinary(b); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		want, _ := json.Marshal(l)
		have, _ := json.Marshal(&got)
		if string(want) != string(have) {
			t.Errorf("case %d: decoded\n%s\nwant\n%s", i, have, want)
		}
		if l.Started != nil && !got.Started.Equal(*l.Started) {
			t.Errorf("case %d: started %v, want %v", i, got.Started, l.Started)
		}
		// Every cut short, and one byte more, is damage.
		for k := range len(b) {
			if err := new(Ledger).UnmarshalBinary(b[:k]); err == nil {
				t.Errorf("case %d: %d of %d bytes decoded without error", i, k, len(b))
			}
		}
		if err := new(Ledger).UnmarshalBinary(append(b, 0)); err == nil {
			t.Errorf("case %d: a byte past the end decoded without error", i)
		}
	}
	for _, b := range [][]byte{nil, {0}, {2}, []byte(`{"run_id":"x"}`)} {
		if err := new(Ledger).UnmarshalBinary(b); err == nil {
			t.Errorf("%q decoded without error", b)
		}
	}
}

// FuzzLedgerBinary: any bytes decode to a ledger or an error, never a
// panic, and a ledger decoded encodes to bytes that decode to it again.
func FuzzLedgerBinary(f *testing.F) {
	for _, l := range codecCases(f) {
		b, _ := l.MarshalBinary()
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var l Ledger
		if l.UnmarshalBinary(b) != nil {
			return
		}
		again, err := l.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var l2 Ledger
		if err := l2.UnmarshalBinary(again); err != nil {
			t.Fatalf("re-encoded ledger does not decode: %v", err)
		}
		x, _ := json.Marshal(&l)
		y, _ := json.Marshal(&l2)
		if string(x) != string(y) {
			t.Fatalf("round trip changed the ledger:\n%s\n%s", x, y)
		}
	})
}

// TestRowUsageHasNoTier: a row sums figures of any service tier (each
// priced at its own): its usage carries no tier, so a report reads the
// same from a ledger made now and one decoded from the index.
func TestRowUsageHasNoTier(t *testing.T) {
	at := time.Unix(1760000000, 0)
	one := func(tier string) *transcript.Usage {
		n := int64(100)
		return &transcript.Usage{InputTokens: &n, OutputTokens: &n, ServiceTier: tier}
	}
	rs := rows([]entry{{at: at, model: "gpt-5", usage: one("flex"), oneRequest: true}, {at: at, model: "gpt-5", usage: one("default"), oneRequest: true}}, prices.Bundled())
	if len(rs) != 1 || rs[0].Usage == nil || rs[0].Usage.ServiceTier != "" || rs[0].Flex != 1 {
		t.Fatalf("rows %+v", rs)
	}
	l := &Ledger{RunID: "r", Prices: "p", Rows: rs}
	back := binaryLedger(t, l)
	if !reflect.DeepEqual(l.Rows, back.Rows) {
		t.Errorf("rows %+v, decoded %+v", l.Rows, back.Rows)
	}
}

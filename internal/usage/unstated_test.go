package usage

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/prices"
	"github.com/twasm/twasm/internal/testing/viewstest"
	"github.com/twasm/twasm/transcript"
)

// TestOutputNotStatedUnpriced: a step whose usage states a total above
// its input and no output (a Gemini CLI stream-json run whose model
// thought: the stream states the answer's tokens alone, so the plugin
// leaves the output out) has tokens of a kind not stated: its cost is
// unknown, named "<model> (output not stated)", never the input's alone.
// Its tokens still count. A step whose output is stated is priced.
// By hand: gemini-3-flash-preview at $0.50/M input, $0.05/M cache read,
// $3/M output: 2617 uncached + 7577 read + 7 output = 1308.5 + 378.85 +
// 21 µ$, 1708 µ$ rounded.
func TestOutputNotStatedUnpriced(t *testing.T) {
	tbl := prices.Bundled()
	i := func(v int64) *int64 { return &v }
	cases := []struct {
		name     string
		u        transcript.Usage
		micro    int64
		source   string
		unpriced []string
	}{
		{name: "no output, a total above the input",
			u:      transcript.Usage{InputTokens: i(10194), CacheReadTokens: i(7577), TotalTokens: i(10479)},
			source: "unknown", unpriced: []string{"gemini-3-flash-preview (output not stated)"}},
		{name: "output stated",
			u:     transcript.Usage{InputTokens: i(10194), CacheReadTokens: i(7577), OutputTokens: i(7), TotalTokens: i(10201)},
			micro: 1708, source: "priced"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			id := viewstest.RunID(1)
			b := viewstest.NewBuilder(id, "")
			ev := viewstest.Started("s")
			ev.Timestamp = day1
			b.Add(ev)
			st := viewstest.Step(transcript.StepStarted, "agent", 0, &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent})
			st.Timestamp = day1
			b.Add(st)
			u := c.u
			done := viewstest.AgentDone(t, "agent", &transcript.AgentResult{Provider: "gemini", Model: "gemini-3-flash-preview", Status: "ok", Usage: &u})
			done.Timestamp = day1.Add(time.Minute)
			b.Add(done)
			viewstest.WriteFile(t, filepath.Join(dir, id+".jsonl"), b.Bytes(t))
			rep, err := Build(sources(t, dir, []string{id}, tbl), tbl.Version(), Options{By: ByModel})
			if err != nil {
				t.Fatal(err)
			}
			cost := rep.Total.Cost
			if cost.MicroUSD != c.micro || cost.Source != c.source || !slices.Equal(cost.UnpricedModels, c.unpriced) {
				t.Errorf("cost %d µ$ source %s unpriced %v, want %d µ$ %s %v", cost.MicroUSD, cost.Source, cost.UnpricedModels, c.micro, c.source, c.unpriced)
			}
			if got := rep.Total.Usage; got == nil || got.InputTokens == nil || *got.InputTokens != 10194 {
				t.Errorf("usage %+v: the tokens count whatever their price", got)
			}
		})
	}
}

package archive

import (
	"fmt"

	"github.com/twasm/twasm/transcript"
)

// Totals are a session's cumulative figures at the end of a part, as the
// plugin counts them over the whole stream (the replayed part included).
// A part's result holds its own share: its totals minus the previous
// part's, so summing a run's steps counts every token once.
type Totals struct {
	Usage       *transcript.Usage `json:"usage,omitempty"`
	CostUSD     *float64          `json:"cost_usd,omitempty"`
	Unmapped    map[string]int    `json:"unmapped,omitempty"`
	Lines       int               `json:"lines,omitempty"`
	FailedLines int               `json:"failed_lines,omitempty"`
	Warnings    []string          `json:"warnings,omitempty"`
}

func totalsOf(r *transcript.AgentResult) *Totals {
	t := &Totals{Lines: r.Lines, FailedLines: r.FailedLines, Warnings: append([]string(nil), r.Warnings...)}
	if r.Usage != nil {
		u := *r.Usage
		t.Usage = &u
	}
	if r.CostUSD != nil {
		c := *r.CostUSD
		t.CostUSD = &c
	}
	if len(r.Unmapped) > 0 {
		t.Unmapped = map[string]int{}
		for k, v := range r.Unmapped {
			t.Unmapped[k] = v
		}
	}
	return t
}

// subtract turns r (totals over the whole stream) into the part's share.
// A figure that went down (another plugin version) is kept as it is and
// said in a warning rather than made negative.
func subtract(r *transcript.AgentResult, prev *Totals) {
	if prev == nil {
		return
	}
	var odd []string
	if r.Usage != nil && prev.Usage != nil {
		u := *r.Usage
		odd = append(odd, u.Sub(prev.Usage)...)
		r.Usage = &u
	}
	if r.CostUSD != nil && prev.CostUSD != nil {
		if *r.CostUSD >= *prev.CostUSD {
			c := *r.CostUSD - *prev.CostUSD
			r.CostUSD = &c
		} else {
			odd = append(odd, "cost_usd")
		}
	}
	for k, v := range prev.Unmapped {
		if n := r.Unmapped[k] - v; n > 0 {
			r.Unmapped[k] = n
		} else {
			delete(r.Unmapped, k)
		}
	}
	if len(r.Unmapped) == 0 {
		r.Unmapped = nil
	}
	r.Lines = max(0, r.Lines-prev.Lines)
	r.FailedLines = max(0, r.FailedLines-prev.FailedLines)
	had := map[string]bool{}
	for _, w := range prev.Warnings {
		had[w] = true
	}
	var ws []string
	for _, w := range r.Warnings {
		if !had[w] {
			ws = append(ws, w)
		}
	}
	r.Warnings = ws
	if len(odd) > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("session totals went down since the previous part (%v): kept as the plugin counted them", odd))
	}
}

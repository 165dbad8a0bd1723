package synccmd

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/twasm/twasm/internal/archive"
)

// TestWithSettled: a session Recover settled is counted as what
// settling did, and, when the stores' read then found it unchanged (the
// paths noted as the outcomes were streamed), not counted unchanged
// too; the settled outcomes come first among the report's outcomes (the
// failed ones, which the summary names).
func TestWithSettled(t *testing.T) {
	cases := []struct {
		name      string
		unchanged map[string]bool
		want      map[string]int
	}{
		{"found unchanged after", map[string]bool{"/s/a.jsonl": true}, map[string]int{archive.ActionUnchanged: 1, archive.ActionNew: 1, archive.ActionGrown: 1}},
		{"another path unchanged", map[string]bool{"/s/c.jsonl": true}, map[string]int{archive.ActionUnchanged: 2, archive.ActionNew: 1, archive.ActionGrown: 1}},
		{"none noted", nil, map[string]int{archive.ActionUnchanged: 2, archive.ActionNew: 1, archive.ActionGrown: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			failed := archive.Outcome{Path: "/s/f.jsonl", Action: archive.ActionFailed, Reason: "boom"}
			rep := archive.Report{Counts: map[string]int{archive.ActionUnchanged: 2, archive.ActionFailed: 1}, Bytes: 10, Outcomes: []archive.Outcome{failed}}
			settled := []archive.Outcome{
				{Path: "/s/a.jsonl", Action: archive.ActionGrown, Bytes: 5},
				{Path: "/s/b.jsonl", Action: archive.ActionNew, Bytes: 7},
			}
			got := withSettled(rep, settled, c.unchanged)
			c.want[archive.ActionFailed] = 1
			assert.Equal(t, c.want, got.Counts)
			assert.Equal(t, int64(22), got.Bytes)
			assert.Equal(t, append(settled, failed), got.Outcomes)
			assert.Equal(t, 2, rep.Counts[archive.ActionUnchanged], "the report given is not changed")
		})
	}
}

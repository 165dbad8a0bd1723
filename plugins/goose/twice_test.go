//go:build !wasip1

package goose_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/goose"
)

// TestRecordedAndSynced: goose run writes its session into sessions.db
// (unless --no-session), and its stream-json output names neither the
// session nor its id, so a run recorded from that output and the run
// twasm sync archives from the database are two runs of the same
// session, nothing tying them. Where the stream states the session's
// counters (the usage it reports), a warning says that the database's
// run holds those tokens too; before, usage added them twice silently.
// The json output reports no usage (its total is the last call's), so
// no tokens of its are counted twice.
func TestRecordedAndSynced(t *testing.T) {
	const (
		msg      = `{"type":"message","message":{"id":"m1","role":"assistant","created":1772359201,"content":[{"type":"text","text":"Done."}],"metadata":{"userVisible":true,"agentVisible":true}}}`
		counters = `{"type":"complete","total_tokens":120,"input_tokens":100,"output_tokens":20}`
		total    = `{"type":"complete","total_tokens":120}`
	)
	for _, tc := range []struct {
		name, raw string
		warn      bool
	}{
		{"stream-json stating the session's counters", msg + "\n" + counters, true},
		{"stream-json stating a total alone (no usage)", msg + "\n" + total, false},
		{"json output (no usage)", `{"messages":[{"id":"m1","role":"assistant","created":1772359201,"content":[{"type":"text","text":"Done."}]}],"metadata":{"total_tokens":120,"status":"completed"}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := plugintest.Run(t, goose.Plugin, []byte(tc.raw+"\n"), normalize.Options{Provider: "goose"})
			warned := false
			for _, w := range o.Result.Warnings {
				warned = warned || strings.Contains(w, "twasm sync archives it as a run of its own")
			}
			if warned != tc.warn {
				t.Errorf("warned %v, want %v: %q (usage %+v)", warned, tc.warn, o.Result.Warnings, o.Result.Usage)
			}
			if !tc.warn && o.Result.Usage != nil && o.Result.Usage.InputTokens != nil {
				t.Errorf("usage %+v, want none", o.Result.Usage)
			}
		})
	}
}

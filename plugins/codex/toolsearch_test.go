//go:build !wasip1

package codex_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/codex"
)

// TestToolSearch: a rollout's tool_search_call is a tool call (kind
// search) and the tool_search_output of its call_id its result; a
// server-executed search whose items name no call_id pairs its output
// with the last search. Neither is counted unmapped.
func TestToolSearch(t *testing.T) {
	const meta = `{"timestamp":"t","type":"session_meta","payload":{"id":"s1"}}`
	item := func(p string) string { return `{"timestamp":"t","type":"response_item","payload":` + p + `}` }
	tests := []struct {
		name    string
		lines   []string
		id      string // the result's call id
		outputs []string
	}{
		{"client search with its call id", []string{meta,
			item(`{"type":"tool_search_call","call_id":"search-1","execution":"client","arguments":{"query":"calendar create","limit":1}}`),
			item(`{"type":"tool_search_output","call_id":"search-1","execution":"client","status":"completed","tools":[{"name":"calendar_create"}]}`),
		}, "search-1", []string{`[{"name":"calendar_create"}]`}},
		{"server search without ids", []string{meta,
			item(`{"type":"tool_search_call","execution":"server","arguments":{"query":"git"}}`),
			item(`{"type":"tool_search_output","execution":"server","status":"completed","tools":[]}`),
		}, "", []string{`[]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := plugintest.Run(t, codex.Plugin, []byte(strings.Join(tt.lines, "\n")+"\n"), normalize.Options{Provider: "codex"})
			calls, results := o.Tools()
			names, outputs := o.NamesOutputs()
			if !slices.Equal(names, []string{"tool_search"}) || !slices.Equal(outputs, tt.outputs) {
				t.Fatalf("calls %q, outputs %q; want one tool_search with %q", names, outputs, tt.outputs)
			}
			if calls[0].Kind != "search" || results[0].CallID != calls[0].CallID || tt.id != "" && calls[0].CallID != tt.id {
				t.Errorf("call %+v, result %+v", calls[0], results[0])
			}
			if st, _ := o.ResultStatus(calls[0].CallID); st != "ok" {
				t.Errorf("status %q, want ok", st)
			}
			if len(o.Result.Unmapped) != 0 {
				t.Errorf("unmapped %v", o.Result.Unmapped)
			}
		})
	}
}

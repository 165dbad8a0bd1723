//go:build !wasip1

package crush_test

import (
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/crush"
)

// TestSessionUsageMatchesRaw checks the step usage the plugin reports
// for every Crush session against the raw input: Crush's database holds
// no per-request usage (a session's prompt_tokens and completion_tokens
// are the last request's context and output, what the session fills, not
// what was billed), so no session states token usage: the step must state
// none (unknown), never 0 nor the context size.
func TestSessionUsageMatchesRaw(t *testing.T) {
	plugintest.UsageSide{
		Plugin: crush.Plugin, Provider: "crush",
		Inputs:   plugintest.UsageInputs(t, "crush", true, "*.jsonl"),
		Counters: []string{"input_tokens", "output_tokens"},
		Raw:      func(*testing.T, string, []byte) plugintest.RawUsage { return plugintest.RawUsage{} },
	}.Test(t)
}

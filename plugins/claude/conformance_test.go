//go:build !wasip1

package claude_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/claude"
)

// TestConformance runs every real capture of ../shared/fixtures/claude and
// anthropic through the plugin: no fault, every tool_use id becomes a
// tool.call, every piece of model text lands in a block, and nothing is
// unmapped beyond the checked-in expectation (testdata/conformance).
func TestConformance(t *testing.T) {
	plugintest.Conformance{
		Plugin:   claude.Plugin,
		Provider: "claude",
		Dirs:     []string{"claude", "anthropic"},
		Skip:     func(name string) bool { return strings.HasSuffix(name, ".stderr.txt") },
		Facts:    func(_ *testing.T, raw []byte) ([]string, []string) { return rawFacts(raw) },
	}.Test(t)
}

// rawFacts reads the capture independently of the plugin (with
// encoding/json): the ids of every tool_use / server_tool_use block, and
// every piece of model text (text and thinking of assistant blocks and
// deltas).
func rawFacts(raw []byte) (ids, frags []string) {
	docs := plugintest.Docs(raw)
	seen := map[string]bool{}
	var walk func(v any, inUser bool)
	walk = func(v any, inUser bool) {
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				walk(e, inUser)
			}
		case map[string]any:
			if r, _ := x["role"].(string); r == "user" {
				inUser = true
			}
			typ, _ := x["type"].(string)
			switch typ {
			case "tool_use", "server_tool_use":
				if id, _ := x["id"].(string); id != "" && !seen[id] {
					seen[id] = true
					ids = append(ids, id)
				}
			case "text", "text_delta":
				if s, _ := x["text"].(string); s != "" && !inUser {
					frags = append(frags, s)
				}
			case "thinking", "thinking_delta":
				if s, _ := x["thinking"].(string); s != "" && !inUser {
					frags = append(frags, s)
				}
			}
			for k, e := range x {
				// Tool inputs and results are not model text blocks.
				if k == "input" || k == "tool_use_result" || k == "toolUseResult" {
					continue
				}
				walk(e, inUser)
			}
		}
	}
	for _, d := range docs {
		walk(d, false)
	}
	return ids, frags
}

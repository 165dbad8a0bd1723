//go:build !wasip1

package droid_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/testing/plugintest"
)

// checkFacts checks the run of a golden input or capture (TestGolden)
// against facts read from the raw lines apart from the plugin (with
// encoding/json): every tool_use a tool.call, every result marked
// is_error (or whose output states a failed command) not ok and every
// other ok, and the step's tokens the last settings document's.
func checkFacts(t *testing.T, r *sdktest.Result) {
	o := plugintest.FromResult(r)
	calls, failed, usage := sessionFacts(r.Raw)
	o.CheckCalls(t, calls)
	o.CheckFailed(t, failed)
	u := o.Usage()
	if got := [4]int64{u.UncachedInput, u.Output, u.CacheRead, u.CacheWrite}; got != usage {
		t.Errorf("usage (uncached input, output, cache read, cache write) %v, the settings state %v", got, usage)
	}
}

// sessionFacts reads the tool calls, the results that failed and the
// last settings' usage (output with thinking) from the raw lines.
func sessionFacts(raw []byte) (calls []string, failed map[string]bool, usage [4]int64) {
	failed = map[string]bool{}
	for _, line := range bytes.Split(raw, []byte("\n")) {
		var r struct {
			Type       string          `json:"type"`
			TokenUsage json.RawMessage `json:"tokenUsage"`
			Message    struct {
				Content []struct {
					Type      string          `json:"type"`
					ID        string          `json:"id"`
					ToolUseID string          `json:"tool_use_id"`
					IsError   bool            `json:"is_error"`
					Content   json.RawMessage `json:"content"`
				} `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(line, &r) != nil {
			continue
		}
		if len(r.TokenUsage) > 0 {
			var u struct {
				In     int64 `json:"inputTokens"`
				Out    int64 `json:"outputTokens"`
				Create int64 `json:"cacheCreationTokens"`
				Read   int64 `json:"cacheReadTokens"`
				Think  int64 `json:"thinkingTokens"`
			}
			_ = json.Unmarshal(r.TokenUsage, &u)
			usage = [4]int64{u.In, u.Out + u.Think, u.Read, u.Create}
		}
		for _, b := range r.Message.Content {
			switch b.Type {
			case "tool_use":
				calls = append(calls, b.ID)
			case "tool_result":
				var s string
				_ = json.Unmarshal(b.Content, &s)
				failed[b.ToolUseID] = b.IsError || strings.HasPrefix(s, "Error: Command failed (exit code: ") && !strings.HasPrefix(s, "Error: Command failed (exit code: 0)")
			}
		}
	}
	return calls, failed, usage
}

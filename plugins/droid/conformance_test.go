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
// other ok. A fork's lines up to the message its session_start's
// forkedAtMessageId names are its parent's: none of their facts is the
// fork's. The step's tokens are TestSessionUsageMatchesRaw's, over the
// same inputs.
func checkFacts(t *testing.T, r *sdktest.Result) {
	o := plugintest.FromResult(r)
	calls, failed := sessionFacts(r.Raw)
	o.CheckCalls(t, calls)
	o.CheckFailed(t, failed)
}

// sessionFacts reads the tool calls and the results that failed from
// the raw lines.
func sessionFacts(raw []byte) (calls []string, failed map[string]bool) {
	failed = map[string]bool{}
	forkAt := ""
	for _, line := range bytes.Split(raw, []byte("\n")) {
		var r struct {
			Type     string `json:"type"`
			ID       string `json:"id"`
			ForkedAt string `json:"forkedAtMessageId"`
			Message  struct {
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
		if r.Type == "session_start" {
			forkAt = r.ForkedAt
		}
		if forkAt != "" {
			if r.Type == "message" && r.ID == forkAt {
				forkAt = ""
			}
			continue
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
	return calls, failed
}

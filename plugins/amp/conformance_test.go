//go:build !wasip1

package amp_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/testing/plugintest"
)

// checkFacts checks the run of every thread document among the golden
// inputs (TestGolden; a stream of thread versions, .jsonl, has its own
// golden) against facts read from the raw document apart from the plugin
// (with encoding/json): every tool_use a tool.call, every piece of model
// text in an assistant block, every result whose run did not end done (or
// ended with a non-zero exit code) not ok and every done one ok. A
// fork's messages up to its forkPointIndex are its parent's: none of
// their facts is the fork's. The step's tokens are
// TestSessionUsageMatchesRaw's, over the same inputs.
func checkFacts(t *testing.T, r *sdktest.Result) {
	if filepath.Ext(r.Input) != ".json" {
		return
	}
	o := plugintest.FromResult(r)
	fx := threadFacts(t, r.Raw)
	o.CheckCalls(t, fx.calls)
	plugintest.CheckTexts(t, o.Texts(plugintest.Assistant), fx.texts, false)
	o.CheckFailed(t, fx.failed)
}

// facts are what a thread states, read apart from the plugin.
type facts struct {
	calls, texts []string
	failed       map[string]bool // call id -> its run did not succeed
}

func threadFacts(t *testing.T, raw []byte) facts {
	var th struct {
		ForkPointIndex *int `json:"forkPointIndex"`
		Messages       []struct {
			Role    string `json:"role"`
			Content []struct {
				Type      string `json:"type"`
				ID        string `json:"id"`
				Text      string `json:"text"`
				ToolUseID string `json:"toolUseID"`
				Run       struct {
					Status string          `json:"status"`
					Result json.RawMessage `json:"result"`
				} `json:"run"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(raw, &th); err != nil {
		t.Fatalf("not a thread document: %v", err)
	}
	fx := facts{failed: map[string]bool{}}
	for i, m := range th.Messages {
		if th.ForkPointIndex != nil && i <= *th.ForkPointIndex {
			continue
		}
		for _, c := range m.Content {
			switch {
			case m.Role == "assistant" && c.Type == "tool_use":
				fx.calls = append(fx.calls, c.ID)
			case m.Role == "assistant" && c.Type == "text" && c.Text != "":
				fx.texts = append(fx.texts, c.Text)
			case c.Type == "tool_result" && c.ToolUseID != "":
				if _, seen := fx.failed[c.ToolUseID]; seen {
					continue
				}
				switch c.Run.Status {
				case "done":
					var r struct {
						ExitCode *int64 `json:"exitCode"`
					}
					_ = json.Unmarshal(c.Run.Result, &r) // a string result states no exit code
					fx.failed[c.ToolUseID] = r.ExitCode != nil && *r.ExitCode != 0
				case "error", "cancelled", "rejected-by-user":
					fx.failed[c.ToolUseID] = true
				}
			}
		}
	}
	return fx
}

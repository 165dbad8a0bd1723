//go:build !wasip1

package goose_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/testing/plugintest"
)

// checkFacts checks the run of a golden input (TestGolden) against facts
// read from the raw input apart from the plugin (with encoding/json):
// every tool request a tool.call, every assistant text in an assistant
// block, every response Goose or the tool marked failed ({status: error},
// isError) or that is Goose's answer to a refused call not ok, and every
// other ok. The step's tokens are TestSessionUsageMatchesRaw's, over the
// same inputs.
func checkFacts(t *testing.T, r *sdktest.Result) {
	o := plugintest.FromResult(r)
	fx := gooseFacts(r.Raw)
	o.CheckCalls(t, fx.calls)
	plugintest.CheckTexts(t, o.Texts(plugintest.Assistant), fx.texts, false)
	o.CheckFailed(t, fx.failed)
}

// refused says whether a successful response's value (a CallToolResult,
// or the content list alone) is Goose's answer to a call that never ran:
// declined by the user or a permission rule, or skipped in chat mode
// (agents/tool_execution.rs).
func refused(v json.RawMessage) bool {
	var list []gooseItem
	if json.Unmarshal(v, &list) != nil {
		var r struct {
			Content []gooseItem `json:"content"`
		}
		_ = json.Unmarshal(v, &r)
		list = r.Content
	}
	for _, c := range list {
		if c.Type == "text" && (strings.HasPrefix(c.Text, "The user has declined to run this tool.") || strings.HasPrefix(c.Text, "Let the user know the tool call was skipped in")) {
			return true
		}
	}
	return false
}

// facts are what a session states, read apart from the plugin.
type facts struct {
	calls, texts []string
	failed       map[string]bool // call id -> the call failed
}

type gooseItem struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ID       string `json:"id"`
	ToolCall *struct {
		Status string `json:"status"`
	} `json:"toolCall"`
	ToolResult *struct {
		Status string          `json:"status"`
		Value  json.RawMessage `json:"value"`
	} `json:"toolResult"`
}

func gooseFacts(raw []byte) facts {
	fx := facts{failed: map[string]bool{}}
	for _, l := range bytes.Split(raw, []byte("\n")) {
		var e struct {
			Twasm   string          `json:"$twasm"`
			Table   string          `json:"table"`
			Row     json.RawMessage `json:"row"`
			Role    string          `json:"role"`
			Content []gooseItem     `json:"content"`
		}
		if json.Unmarshal(l, &e) != nil {
			continue
		}
		role, content := e.Role, e.Content
		switch {
		case e.Twasm == "row" && e.Table == "messages":
			var m struct {
				Role    string      `json:"role"`
				Content []gooseItem `json:"content_json"`
			}
			_ = json.Unmarshal(e.Row, &m)
			role, content = m.Role, m.Content
		}
		for _, c := range content {
			switch c.Type {
			case "text":
				if role == "assistant" {
					fx.texts = append(fx.texts, c.Text)
				}
			case "toolRequest", "frontendToolRequest":
				fx.calls = append(fx.calls, c.ID)
			case "toolResponse":
				failed := c.ToolResult == nil || c.ToolResult.Status != "success"
				var v struct {
					IsError bool `json:"isError"`
				}
				if !failed && json.Unmarshal(c.ToolResult.Value, &v) == nil && v.IsError {
					failed = true
				}
				if !failed && refused(c.ToolResult.Value) {
					failed = true
				}
				fx.failed[c.ID] = failed
			}
		}
	}
	return fx
}

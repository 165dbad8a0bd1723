//go:build !wasip1

package codex_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/codex"
)

// fixtureDir holds real Codex captures shared by the project (not copied
// into the repository): ../shared relative to the repository root. The
// fuzz test seeds from it too.
var fixtureDir = filepath.Join("..", "..", "..", "shared", "fixtures", "codex")

// TestConformance runs every real capture and checks the contract that
// does not depend on hand-written expectations: no fault and no host
// warning, every tool invocation in the raw input is a tool.call, every
// piece of model text is the text of some block, and nothing is unmapped
// beyond the fixture's expectation file (testdata/conformance).
func TestConformance(t *testing.T) {
	plugintest.Conformance{
		Plugin:   codex.Plugin,
		Provider: "codex",
		Skip:     func(name string) bool { return !strings.HasSuffix(name, ".jsonl") },
		Facts: func(t *testing.T, raw []byte) ([]string, []string) {
			f := scanFixture(t, raw)
			return f.calls, f.texts
		},
		ExactText: true,
		Check: func(t *testing.T, o *plugintest.Outcome) {
			if len(o.Result.Warnings) > 0 {
				t.Errorf("host warnings: %q", o.Result.Warnings)
			}
		},
	}.Test(t)
}

// fixtureFacts is what an independent reading of a capture says must be
// in the transcript.
type fixtureFacts struct {
	calls []string // provider call ids
	texts []string // model-authored text and reasoning
}

// scanFixture reads a capture with encoding/json, apart from the plugin,
// and lists the tool invocations and model texts in it.
func scanFixture(t *testing.T, raw []byte) fixtureFacts {
	t.Helper()
	var f fixtureFacts
	text := func(s string) {
		if s != "" {
			f.texts = append(f.texts, s)
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var l struct {
			Type    string          `json:"type"`
			Item    json.RawMessage `json:"item"`
			Msg     json.RawMessage `json:"msg"`
			Payload json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue
		}
		var x struct {
			ID        string `json:"id"`
			CallID    string `json:"call_id"`
			Type      string `json:"type"`
			Role      string `json:"role"`
			Text      string `json:"text"`
			Message   string `json:"message"`
			LastAgent string `json:"last_agent_message"`
			Summary   []struct {
				Text string `json:"text"`
			} `json:"summary"`
			Content json.RawMessage `json:"content"`
		}
		switch {
		case l.Item != nil: // exec-json
			_ = json.Unmarshal(l.Item, &x)
			switch x.Type {
			case "agent_message", "reasoning":
				text(x.Text)
			case "command_execution", "file_change", "mcp_tool_call", "web_search", "todo_list", "collab_tool_call":
				f.calls = append(f.calls, x.ID)
			}
		case l.Msg != nil: // legacy
			_ = json.Unmarshal(l.Msg, &x)
			switch x.Type {
			case "agent_message":
				text(x.Message)
			case "agent_reasoning":
				text(x.Text)
			case "task_complete":
				text(x.LastAgent)
			case "exec_command_begin", "patch_apply_begin", "mcp_tool_call_begin", "web_search_begin":
				f.calls = append(f.calls, x.CallID)
			}
		case l.Payload != nil: // rollout
			_ = json.Unmarshal(l.Payload, &x)
			switch {
			case l.Type == "response_item" && x.Type == "message" && x.Role == "assistant":
				var parts []struct {
					Text string `json:"text"`
				}
				_ = json.Unmarshal(x.Content, &parts)
				for _, p := range parts {
					text(p.Text)
				}
			case l.Type == "response_item" && x.Type == "reasoning":
				for _, s := range x.Summary {
					text(s.Text)
				}
			case l.Type == "response_item" && (x.Type == "function_call" || x.Type == "custom_tool_call" || x.Type == "local_shell_call"):
				f.calls = append(f.calls, x.CallID)
			case l.Type == "response_item" && x.Type == "web_search_call" && x.ID != "":
				f.calls = append(f.calls, x.ID)
			case l.Type == "event_msg" && x.Type == "agent_message":
				text(x.Message)
			case l.Type == "event_msg" && x.Type == "agent_reasoning":
				text(x.Text)
			case l.Type == "event_msg" && x.Type == "task_complete":
				text(x.LastAgent)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return f
}

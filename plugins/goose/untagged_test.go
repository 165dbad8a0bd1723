//go:build !wasip1

package goose_test

import (
	"context"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/goose"
	"github.com/twasm/twasm/transcript"
)

// TestUntaggedItems: the first Goose CLI's session files (November 2024,
// goose-cli's session/message_serialize.rs) hold content items without a
// type (serde untagged): {text}, {id, tool_name, arguments}, {id,
// tool_result} whose text is the content list as JSON or {"error": ...},
// and {mime_type}. Each is read; none is left unmapped. Written for the
// test from that source.
func TestUntaggedItems(t *testing.T) {
	tests := []struct {
		name, item, role string
		block            string // the block's type
		result           string // the tool.result's status ("" for none)
	}{
		{"text", `{"text":"hello"}`, "user", "text", ""},
		{"tool request", `{"id":"c1","tool_name":"developer__shell","arguments":{"command":"ls"}}`, "assistant", "tool_use", ""},
		{"tool request without id", `{"tool_name":"developer__shell","arguments":{"command":"ls"}}`, "assistant", "tool_use", ""},
		{"tool response", `{"id":"c1","tool_result":"[{\"type\":\"text\",\"text\":\"a.go\"}]"}`, "user", "tool_result", "ok"},
		{"tool error", `{"id":"c1","tool_result":"{\"error\": \"boom\"}"}`, "user", "tool_result", "error"},
		{"tool error not JSON", `{"id":"c1","tool_result":"{\"error\": \"bad \"quote\"\"}"}`, "user", "tool_result", "error"},
		{"image", `{"mime_type":"image/png"}`, "user", "text", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := `{"role":"` + tt.role + `","created":1732096800,"content":[` + tt.item + `]}` + "\n"
			r, err := sdktest.Run(context.Background(), goose.Plugin, "goose", []byte(raw))
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Step.Unmapped) != 0 {
				t.Errorf("unmapped %v", r.Step.Unmapped)
			}
			block, result := "", ""
			for _, e := range r.Events {
				if m := e.Message(); m != nil && len(m.Blocks) > 0 {
					block = string(m.Blocks[0].Type)
				}
				if e.Type == transcript.ToolResult {
					result = e.Tool().Status
				}
			}
			if block != tt.block || result != tt.result {
				t.Errorf("block %q result %q, want %q %q", block, result, tt.block, tt.result)
			}
		})
	}
}

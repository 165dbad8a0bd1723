//go:build !wasip1

package goose_test

import (
	"context"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/goose"
	"github.com/twasm/twasm/transcript"
)

// TestToolOutputForTheModel: Goose's own tools (the developer
// extension's shell, text_editor) return their output twice, once for
// the model (audience ["assistant"]) and once for the user's screen
// (audience ["user"], priority 0); the tool result is what the model was
// sent, once. An item with no audience is the model's too, and a list
// with no item for the model keeps what it has. Modelled on the session
// files Goose users quote in its issues (v1.0.x, 2025), written for the
// test.
func TestToolOutputForTheModel(t *testing.T) {
	const (
		meta = `{"working_dir":"/home/u/proj","description":"check","message_count":3,"total_tokens":null,"input_tokens":10894,"output_tokens":null,"accumulated_total_tokens":null,"accumulated_input_tokens":21711,"accumulated_output_tokens":null}`
		call = `{"id":"m2","role":"assistant","created":1755796745,"content":[{"type":"toolRequest","id":"toolu_01","toolCall":{"status":"success","value":{"name":"developer__shell","arguments":{"command":"ls"}}}}]}`
	)
	tests := []struct {
		name, content, want string
	}{
		{
			name:    "output for the model and for the screen",
			content: `[{"type":"text","text":"a\nb","annotations":{"audience":["assistant"]}},{"type":"text","text":"a\nb","annotations":{"audience":["user"],"priority":0.0}}]`,
			want:    "a\nb",
		},
		{
			name:    "as a CallToolResult",
			content: `{"content":[{"type":"text","text":"done","annotations":{"audience":["assistant"]}},{"type":"text","text":"` + "```\\ndone\\n```" + `","annotations":{"audience":["user"],"priority":0.0}}],"isError":false}`,
			want:    "done",
		},
		{
			name:    "no audience said",
			content: `[{"type":"text","text":"one"},{"type":"text","text":"two","annotations":{"audience":["user","assistant"]}}]`,
			want:    "one\ntwo",
		},
		{
			name:    "for the user alone",
			content: `[{"type":"text","text":"shown","annotations":{"audience":["user"]}}]`,
			want:    "shown",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := `{"id":"m3","role":"user","created":1755796746,"content":[{"type":"toolResponse","id":"toolu_01","toolResult":{"status":"success","value":` + tt.content + `}}]}`
			raw := strings.Join([]string{meta, `{"id":"m1","role":"user","created":1755796743,"content":[{"type":"text","text":"list it"}]}`, call, resp}, "\n") + "\n"
			r, err := sdktest.Run(context.Background(), goose.Plugin, "goose", []byte(raw))
			if err != nil {
				t.Fatal(err)
			}
			var outputs []string
			for _, e := range r.Events {
				if p := e.Event.Tool(); p != nil && e.Event.Type == transcript.ToolResult {
					outputs = append(outputs, p.Output)
				}
			}
			if len(outputs) != 1 || outputs[0] != tt.want {
				t.Errorf("outputs %q, want [%q]", outputs, tt.want)
			}
		})
	}
}

//go:build !wasip1

package claude_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/golden"
	"github.com/twasm/twasm/plugins/claude"
)

// The normalizer compiled into a Go program (no sandbox), run over saved
// output: each transcript event, each tool result's status, and the
// step's result. twasm runs the same code as a wasm module.
func Example() {
	raw, err := os.ReadFile("../../testdata/golden/claude/session_log_rejected_and_interrupted.jsonl")
	if err != nil {
		log.Fatal(err)
	}
	out, err := golden.Normalize(context.Background(), capture.NativePlugin(claude.Plugin), raw, golden.Options{Provider: "claude"})
	if err != nil {
		log.Fatal(err)
	}
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var l struct {
			Event *struct {
				Type    string
				Payload struct {
					CallID string `json:"call_id"`
					Status string
				}
			}
			Result *struct{ Status string }
		}
		if err := json.Unmarshal(line, &l); err != nil {
			log.Fatal(err)
		}
		switch {
		case l.Event != nil && l.Event.Type == "tool.result":
			fmt.Println(l.Event.Type, l.Event.Payload.CallID, l.Event.Payload.Status)
		case l.Event != nil:
			fmt.Println(l.Event.Type)
		case l.Result != nil:
			fmt.Println("step", l.Result.Status)
		}
	}
	// Output:
	// message.user
	// message.assistant
	// tool.call
	// tool.result toolu_RM denied
	// message.user
	// message.user
	// message.assistant
	// tool.call
	// tool.result toolu_LS cancelled
	// message.user
	// message.user
	// message.assistant
	// step ok
}

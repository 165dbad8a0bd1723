//go:build !wasip1

package gemini_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/golden"
	"github.com/twasm/twasm/plugins/gemini"
)

// The normalizer compiled into a Go program (no sandbox), run over saved
// output: each transcript event, each tool result's status, and the
// step's result. twasm runs the same code as a wasm module.
func Example() {
	raw, err := os.ReadFile("../../testdata/golden/gemini/stream_parallel_tools.jsonl")
	if err != nil {
		log.Fatal(err)
	}
	out, err := golden.Normalize(context.Background(), capture.NativePlugin(gemini.Plugin), raw, golden.Options{Provider: "gemini"})
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
	// tool.call
	// tool.call
	// tool.result read_file__read_file_1779285732302_2 ok
	// tool.result list_directory__list_directory_1779285732301_1 ok
	// tool.result update_topic__update_topic_1779285732300_0 ok
	// message.assistant
	// tool.call
	// tool.result write_file_1779285733010_0 ok
	// message.assistant
	// step ok
}

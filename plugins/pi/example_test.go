//go:build !wasip1

package pi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/golden"
	"github.com/twasm/twasm/plugins/pi"
)

// The normalizer compiled into a Go program (no sandbox), run over a
// session file: each transcript event, each tool result's status, and the
// step's result with its warnings (a fork, a branch the user left).
func Example() {
	raw, err := os.ReadFile("../../testdata/golden/pi/session_fork_branch_summary.jsonl")
	if err != nil {
		log.Fatal(err)
	}
	out, err := golden.Normalize(context.Background(), capture.NativePlugin(pi.Plugin), raw, golden.Options{Provider: "pi"})
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
			Result *struct {
				Status   string
				Warnings []string
			}
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
			for _, w := range l.Result.Warnings {
				fmt.Println("warning:", w[:40])
			}
		}
	}
	// Output:
	// message.user
	// message.user
	// message.assistant
	// tool.call
	// tool.call
	// tool.result call_read error
	// tool.result call_test cancelled
	// message.user
	// message.user
	// message.assistant
	// tool.call
	// tool.result call_vet error
	// message.assistant
	// step ok
	// warning: forked from session /home/u/.pi/agent/se
	// warning: 3 entries are dated before the session b
	// warning: branch: entry a000000d goes on from entr
}

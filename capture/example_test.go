package capture_test

import (
	"context"
	"fmt"
	"os"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/plugins/claude"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// A workflow engine that ran Claude Code itself feeds its output to an
// Agent inside a step; here the Claude plugin is compiled in
// (NativePlugin), and the output is the repository's example.
func ExampleStart() {
	dir, err := os.MkdirTemp("", "twasm-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	output, err := os.ReadFile("../examples/claude/stream-json.jsonl")
	if err != nil {
		panic(err)
	}

	store := recorder.NewStore(dir)
	var res *capture.Result
	err = lifecycle.Do(context.Background(), store, lifecycle.RunOptions{Name: "fix"},
		func(ctx context.Context, run *lifecycle.Step) error {
			return run.Step(ctx, "claude", transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
				a, err := capture.Start(ctx, s, capture.Options{Provider: "claude", Store: store, Plugin: capture.NativePlugin(claude.Plugin)})
				if err != nil {
					return err
				}
				if err := a.Feed(ctx, output); err != nil { // as the agent writes it
					return err
				}
				exit := 0
				if res, err = a.Finish(ctx, &exit); err != nil {
					return err
				}
				return capture.ResultError(res.AgentResult)
			})
		})
	fmt.Println("error:", err)
	fmt.Println("status:", res.Status, "provider:", res.Provider, "dangling:", len(res.Dangling), "silent:", res.Silent)
	// Output:
	// error: <nil>
	// status: ok provider: claude dangling: 0 silent: 0
}

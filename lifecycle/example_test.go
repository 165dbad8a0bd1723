package lifecycle_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// A workflow engine wraps each run in Do and each step in Step; the
// transcript gets the run bracket, one bracket per step, the prompt and
// the routed tool call, all at the step's path and iteration.
func ExampleDo() {
	dir, err := os.MkdirTemp("", "twasm-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	var router lifecycle.Router
	_ = router.Register("now", transcript.ToolOther, func(context.Context, json.RawMessage) (string, error) {
		return "noon", nil
	})
	var path string
	err = lifecycle.Do(context.Background(), recorder.NewStore(dir), lifecycle.RunOptions{Name: "hello"},
		func(ctx context.Context, run *lifecycle.Step) error {
			path = run.Run().Recorder().Path()
			return run.ForEach(ctx, "per_user", 2, func(ctx context.Context, i int, body *lifecycle.Step) error {
				return body.Step(ctx, "greet", transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
					if err := s.UserMessage(ctx, fmt.Sprintf("Greet user %d.", i), "You are polite."); err != nil {
						return err
					}
					_, err := router.Call(ctx, s, "now", nil)
					return err
				})
			})
		})
	if err != nil {
		panic(err)
	}

	f, err := os.Open(path)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	events, problems, err := transcript.ReadAll(f)
	if err != nil || len(problems) > 0 {
		panic(fmt.Sprint(err, problems))
	}
	for _, ev := range events {
		line := fmt.Sprintf("%d %s path=%q iteration=%d", ev.Seq, ev.Type, ev.Path, ev.Iteration)
		if p := ev.Step(); p != nil && p.Status != "" {
			line += " " + p.Status
		}
		fmt.Println(line)
	}
	// Output:
	// 1 run.started path="" iteration=0
	// 2 step.started path="per_user" iteration=0
	// 3 step.started path="per_user.greet" iteration=0
	// 4 message.user path="per_user.greet" iteration=0
	// 5 tool.call path="per_user.greet" iteration=0
	// 6 tool.result path="per_user.greet" iteration=0
	// 7 step.completed path="per_user.greet" iteration=0 ok
	// 8 step.started path="per_user.greet" iteration=1
	// 9 message.user path="per_user.greet" iteration=1
	// 10 tool.call path="per_user.greet" iteration=1
	// 11 tool.result path="per_user.greet" iteration=1
	// 12 step.completed path="per_user.greet" iteration=1 ok
	// 13 step.completed path="per_user" iteration=0 ok
	// 14 run.completed path="" iteration=0 ok
}

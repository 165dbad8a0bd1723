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
// the routed tool call, all at the step's path.
func ExampleDo() {
	dir, err := os.MkdirTemp("", "twasm-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	router := lifecycle.NewRouter()
	_ = router.Register("now", transcript.ToolOther, func(context.Context, json.RawMessage) (string, error) {
		return "noon", nil
	})
	err = lifecycle.Do(context.Background(), recorder.NewStore(dir), lifecycle.RunOptions{Name: "hello"},
		func(ctx context.Context, run *lifecycle.Run) error {
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
	fmt.Println("error:", err)
	// Output: error: <nil>
}

package transcript_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// Reading a transcript back: ReadAll decodes every line (a line it
// cannot decode is returned as an error, and reading goes on), Validate
// checks every invariant of the format.
func ExampleReadAll() {
	dir, err := os.MkdirTemp("", "twasm-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	store := recorder.NewStore(dir)
	err = lifecycle.Do(context.Background(), store, lifecycle.RunOptions{Name: "review"},
		func(ctx context.Context, run *lifecycle.Step) error {
			return run.Step(ctx, "review", transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
				return s.UserMessage(ctx, "Review this diff.", "")
			})
		})
	if err != nil {
		panic(err)
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "transcripts", "*.jsonl"))
	f, err := os.Open(paths[0])
	if err != nil {
		panic(err)
	}
	defer f.Close()

	events, lineErrs, err := transcript.ReadAll(f)
	if err != nil {
		panic(err)
	}
	for _, ev := range events {
		fmt.Printf("%d %s %q\n", ev.Seq, ev.Type, ev.Path)
	}
	fmt.Println("bad lines:", len(lineErrs))

	if _, err := f.Seek(0, 0); err != nil {
		panic(err)
	}
	rep := transcript.Validate(f, transcript.ValidateOptions{})
	fmt.Println("errors:", len(rep.Errors), "finished:", rep.Finished)
	// Output:
	// 1 run.started ""
	// 2 step.started "review"
	// 3 message.user "review"
	// 4 step.completed "review"
	// 5 run.completed ""
	// bad lines: 0
	// errors: 0 finished: true
}

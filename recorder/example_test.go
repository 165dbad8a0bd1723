package recorder_test

import (
	"context"
	"fmt"
	"os"

	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// The recorder is the low-level writer under lifecycle: it assigns each
// event its seq and appends it crash-safely. Reopening a run continues
// its seqs. (A program recording a workflow uses lifecycle, which also
// writes the run and step brackets.)
func ExampleStore_Open() {
	dir, err := os.MkdirTemp("", "twasm-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	store := recorder.NewStore(dir)
	id := recorder.NewRunID()

	for range 2 {
		r, err := store.Open(ctx, id)
		if err != nil {
			panic(err)
		}
		ev := &transcript.Event{
			Type: transcript.MessageAssistant,
			Path: "review",
			Payload: &transcript.MessagePayload{
				Role:   "assistant",
				Blocks: []transcript.Block{transcript.TextBlock("Looks good.")},
			},
		}
		if err := r.Record(ctx, ev); err != nil {
			panic(err)
		}
		fmt.Println("seq", ev.Seq)
		if err := r.Close(); err != nil {
			panic(err)
		}
	}
	// Output:
	// seq 1
	// seq 2
}

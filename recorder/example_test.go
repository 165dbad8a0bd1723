package recorder_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"
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
	id := uuid.NewString() // a run id is a UUID v4, canonical lower case

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

// Writing a transcript with the recorder alone: it gives each event its
// seq and a timestamp and appends it as one line, under a lock and with
// the fsync the Options ask for; a live feed sees the events as they are
// written. (lifecycle writes the run and step brackets for a program; the
// recorder writes whatever valid events it is given.)
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "twasm-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	const id = "5b6f3c2e-8d1a-4f0b-9c7e-2a4d6e8f0a1b"
	noon := func() time.Time { return time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC) }

	r, err := recorder.Open(ctx, filepath.Join(dir, id+".jsonl"), id, recorder.Options{Fsync: recorder.FsyncAlways, Clock: noon})
	if err != nil {
		panic(err)
	}
	live, _ := r.Subscribe()
	for _, ev := range []*transcript.Event{
		{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "hello", Kind: transcript.KindWorkflow, Schema: transcript.Schema}},
		{Type: transcript.MessageAssistant, Payload: &transcript.MessagePayload{Role: "assistant", Blocks: []transcript.Block{transcript.TextBlock("Hello.")}}},
		{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: "hello", Kind: transcript.KindWorkflow, Status: transcript.StatusOK}},
	} {
		if err := r.Record(ctx, ev); err != nil {
			panic(err)
		}
	}
	if err := r.Close(); err != nil { // ends the live feed too
		panic(err)
	}
	for ev := range live {
		fmt.Println("live:", ev.Seq, ev.Type)
	}

	data, err := os.ReadFile(r.Path())
	if err != nil {
		panic(err)
	}
	fmt.Print(string(data))
	rep, err := transcript.ValidateFile(os.DirFS(dir), id+".jsonl", transcript.ValidateOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println("valid:", rep.OK(), "finished:", rep.Finished)
	// Output:
	// live: 1 run.started
	// live: 2 message.assistant
	// live: 3 run.completed
	// {"seq":1,"run_id":"5b6f3c2e-8d1a-4f0b-9c7e-2a4d6e8f0a1b","type":"run.started","path":"","iteration":0,"timestamp":"2026-11-24T12:00:00.000Z","payload":{"name":"hello","kind":"workflow","schema":"twasm.transcript/1"}}
	// {"seq":2,"run_id":"5b6f3c2e-8d1a-4f0b-9c7e-2a4d6e8f0a1b","type":"message.assistant","path":"","iteration":0,"timestamp":"2026-11-24T12:00:00.000Z","payload":{"role":"assistant","blocks":[{"type":"text","fidelity":"agent_emitted","text":"Hello."}]}}
	// {"seq":3,"run_id":"5b6f3c2e-8d1a-4f0b-9c7e-2a4d6e8f0a1b","type":"run.completed","path":"","iteration":0,"timestamp":"2026-11-24T12:00:00.000Z","payload":{"name":"hello","kind":"workflow","status":"ok"}}
	// valid: true finished: true
}

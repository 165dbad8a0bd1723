package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

func main() { os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)) }

// run is main without the process: flags in, exit code out.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("workflow", flag.ContinueOnError)
	fs.SetOutput(stderr)
	storage := fs.String("storage", "./storage", "storage `dir`ectory; transcripts go to DIR/transcripts")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	res, err := record(ctx, recorder.NewStore(*storage))
	if res.RunID != "" {
		fmt.Fprintf(stderr, "run id: %s\n", res.RunID)
	}
	for _, p := range res.Paths {
		fmt.Fprintln(stdout, p)
	}
	if err != nil {
		fmt.Fprintf(stderr, "workflow: %v\n", err)
		return 1
	}
	return 0
}

// result says what record wrote.
type result struct {
	RunID string
	Paths []string // the run's transcript first, then its child runs
}

// paths collects transcript paths from the (possibly concurrent) steps.
type paths struct {
	mu   sync.Mutex
	list []string
}

func (p *paths) add(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.list = append(p.list, s)
}

var files = []string{"main.go", "flaky.go", "util.go"}

// record runs the example workflow into store.
func record(ctx context.Context, store recorder.Store) (result, error) {
	router := &lifecycle.Router{}
	if err := router.Register("read_file", transcript.ToolRead, readFile); err != nil {
		return result{}, err
	}
	var (
		res   result
		found paths
	)
	err := lifecycle.Do(ctx, store, lifecycle.RunOptions{Name: "review-pr"}, func(ctx context.Context, r *lifecycle.Step) error {
		res.RunID = r.Run().RunID()
		found.add(r.Run().Recorder().Path())
		return reviewPR(ctx, r, router, &found)
	})
	res.Paths = found.list
	return res, err
}

func reviewPR(ctx context.Context, r *lifecycle.Step, router *lifecycle.Router, found *paths) error {
	if err := r.Step(ctx, "plan", transcript.KindOperation, func(ctx context.Context, s *lifecycle.Step) error {
		return s.SetResult(map[string]any{"files": files})
	}); err != nil {
		return err
	}
	if err := r.Step(ctx, "checkout", transcript.KindCommand, func(ctx context.Context, s *lifecycle.Step) error {
		return s.SetResult(map[string]any{"command": "git checkout feature", "exit_code": 0})
	}); err != nil {
		return err
	}
	if err := r.Step(ctx, "review", transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
		return agentReview(ctx, s, router)
	}); err != nil {
		return err
	}
	if err := r.Parallel(ctx, "fanout", []lifecycle.Branch{
		{Name: "lint", Kind: transcript.KindCommand, Fn: func(ctx context.Context, s *lifecycle.Step) error {
			return s.SetResult(map[string]any{"command": "golangci-lint run", "exit_code": 0})
		}},
		{Name: "security", Kind: transcript.KindAgent, Fn: func(ctx context.Context, s *lifecycle.Step) error {
			if err := s.UserMessage(ctx, "Look for injection bugs in the diff.", "You are a security reviewer."); err != nil {
				return err
			}
			return s.AssistantMessage(ctx, transcript.TextBlock("No injection found."))
		}},
	}); err != nil {
		return err
	}
	if err := r.ForEach(ctx, "per_file", len(files), func(ctx context.Context, i int, body *lifecycle.Step) error {
		// flaky.go fails its first lint attempt, to show a retry.
		return body.Step(ctx, "lint", transcript.KindOperation, func(ctx context.Context, s *lifecycle.Step) error {
			if files[i] == "flaky.go" && s.Attempt() == 0 {
				return errors.New("linter crashed")
			}
			return s.SetResult(map[string]any{"file": files[i], "findings": 0})
		}, lifecycle.StepOptions{Retries: 1})
	}); err != nil {
		return err
	}
	if err := r.While(ctx, "poll_ci", func(_ context.Context, i int) (bool, error) { return i < 2, nil },
		func(ctx context.Context, i int, body *lifecycle.Step) error {
			return body.Step(ctx, "check", transcript.KindOperation, func(ctx context.Context, s *lifecycle.Step) error {
				return s.SetResult(map[string]any{"ci": map[bool]string{true: "running", false: "passed"}[i == 0]})
			})
		}); err != nil {
		return err
	}
	if err := r.Step(ctx, "notify", "webhook", func(ctx context.Context, s *lifecycle.Step) error {
		return s.SetResult(map[string]any{"url": "https://example.invalid/hook", "status": 204})
	}); err != nil {
		return err
	}
	if err := r.CallWorkflow(ctx, "summarize", func(ctx context.Context, child *lifecycle.Step) error {
		found.add(child.Run().Recorder().Path())
		return summarize(ctx, child, found)
	}); err != nil {
		return err
	}
	return r.Step(ctx, "done", transcript.KindTerminal, nil)
}

// agentReview is what an agent step records when the engine drives the
// model itself: the prompt, a tool call through the router, the answer.
func agentReview(ctx context.Context, s *lifecycle.Step, router *lifecycle.Router) error {
	if err := s.UserMessage(ctx, "Review the change to main.go.", "You are a careful Go reviewer. Be brief."); err != nil {
		return err
	}
	out, err := router.Call(ctx, s, "read_file", json.RawMessage(`{"path":"main.go"}`))
	if err != nil {
		return err
	}
	answer := fmt.Sprintf("main.go has %d bytes and looks fine.", len(out))
	if err := s.AssistantMessage(ctx, transcript.TextBlock(answer)); err != nil {
		return err
	}
	return s.SetResult(transcript.AgentResult{
		Provider:  "example",
		Model:     "example-model",
		Status:    transcript.StatusOK,
		FinalText: answer,
		Usage:     &transcript.Usage{InputTokens: new(int64(120)), OutputTokens: new(int64(12))},
	})
}

// summarize is the child workflow; it calls the grandchild "format".
func summarize(ctx context.Context, r *lifecycle.Step, found *paths) error {
	if err := r.Step(ctx, "draft", transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
		if err := s.UserMessage(ctx, "Summarize the review.", ""); err != nil {
			return err
		}
		return s.AssistantMessage(ctx, transcript.TextBlock("Looks good; one flaky linter run."))
	}); err != nil {
		return err
	}
	return r.CallWorkflow(ctx, "format", func(ctx context.Context, grandchild *lifecycle.Step) error {
		found.add(grandchild.Run().Recorder().Path())
		return grandchild.Step(ctx, "render", transcript.KindOperation, func(ctx context.Context, s *lifecycle.Step) error {
			return s.SetResult(map[string]any{"format": "markdown"})
		})
	}, lifecycle.StepOptions{Workflow: "format-summary"})
}

// readFile is the example's tool: it serves files from memory.
func readFile(_ context.Context, input json.RawMessage) (string, error) {
	var in struct {
		Path string `json:"path"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return "", fmt.Errorf("read_file: %w", err)
	}
	content, ok := map[string]string{"main.go": "package main\n\nfunc main() {}\n"}[in.Path]
	if !ok {
		return "", fmt.Errorf("read_file: %s: no such file", in.Path)
	}
	return content, nil
}

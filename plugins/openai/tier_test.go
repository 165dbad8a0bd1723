//go:build !wasip1

package openai_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/openai"
	"github.com/twasm/twasm/transcript"
)

// TestServiceTier runs real captured lines through the plugin and checks
// the service tier their usage carries, the messages' and the step's: a
// Chat Completions stream's chunks state "default"; a Responses stream
// states "auto" (the request's value) while in progress and "default"
// in its response.completed, whose usage is the one kept; a response
// that failed before any usage, or a chunk that states the tier null
// (OpenRouter), carries none, never a made-up "default". The flex and
// priority cases are the hand-written goldens (testdata/golden/openai
// README.md): no public capture holds them.
func TestServiceTier(t *testing.T) {
	captures := filepath.Join("..", "..", "testdata", "captures", "openai")
	goldens := filepath.Join("..", "..", "testdata", "golden", "openai")
	for _, c := range []struct {
		name, file string
		lines      []int // 1-based lines to keep (all when nil)
		want       string
		noUsage    bool
	}{
		{name: "chat stream, default", file: filepath.Join(captures, "vercelai_chat_stream_text.jsonl"), want: "default"},
		{name: "responses stream, auto then default", file: filepath.Join(captures, "vercelai_responses_stream_apply_patch_call.jsonl"), want: "default"},
		{name: "responses stream, only auto and no usage", file: filepath.Join(captures, "vercelai_responses_stream_insufficient_quota.jsonl"), noUsage: true},
		{name: "responses stream cut before its end: auto, no usage", file: filepath.Join(captures, "vercelai_responses_stream_apply_patch_call.jsonl"), lines: []int{1, 2}, noUsage: true},
		{name: "chat stream, tier null", file: filepath.Join(goldens, "chat_sse_openrouter_cost.sse"), want: ""},
		{name: "responses stream, flex (by hand)", file: filepath.Join(goldens, "responses_stream_flex.jsonl"), want: "flex"},
		{name: "chat completion, priority (by hand)", file: filepath.Join(goldens, "chat_completion_priority.json"), want: "priority"},
	} {
		t.Run(c.name, func(t *testing.T) {
			raw, err := os.ReadFile(c.file)
			if err != nil {
				t.Fatal(err)
			}
			if c.lines != nil {
				all := bytes.SplitAfter(raw, []byte("\n"))
				var keep []byte
				for _, n := range c.lines {
					keep = append(keep, all[n-1]...)
				}
				raw = keep
			}
			o := plugintest.Run(t, openai.Plugin, raw, normalize.Options{Provider: "openai", Now: func() time.Time { return time.Unix(0, 0) }})
			u := o.Result.Usage
			if c.noUsage {
				if !u.IsZero() {
					t.Fatalf("usage %+v, want none (the input states none)", u)
				}
				return
			}
			if u.IsZero() {
				t.Fatal("no usage")
			}
			if u.ServiceTier != c.want {
				t.Errorf("step service_tier %q, want %q", u.ServiceTier, c.want)
			}
			n := 0
			for _, it := range o.Sink.Items {
				if it.Event == nil || it.Event.Type != transcript.MessageAssistant {
					continue
				}
				if m := it.Event.Message(); !m.Usage.IsZero() {
					n++
					if m.Usage.ServiceTier != c.want {
						t.Errorf("message %s: service_tier %q, want %q", m.ID, m.Usage.ServiceTier, c.want)
					}
				}
			}
			if n == 0 {
				t.Error("no message states usage")
			}
		})
	}
}

//go:build !wasip1

package claude_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/claude"
	"github.com/twasm/twasm/transcript"
)

// TestServiceTier runs real captures through the plugin and checks the
// service tier their usage carries (usage.service_tier), the messages'
// and the step's: Claude Code's session log and stream-json state
// "standard", the Messages API's responses and streams (message_start's
// usage) too, a Message Batch's results "batch"; a stream whose usage
// states no tier carries none, never a made-up "standard". The priority
// case is the hand-written golden (testdata/golden/claude/README.md).
func TestServiceTier(t *testing.T) {
	root := filepath.Join("..", "..", "testdata")
	for _, c := range []struct {
		name, file string
		want       string
	}{
		{"session log 2.1.235", filepath.Join(root, "captures", "claude", "irrlicht_session_log_v2.1.235_cache_1h_usage.jsonl"), "standard"},
		{"session log 2.0.26", filepath.Join(root, "captures", "claude", "agentcmd_session_log_v2.0.26_plan_rejected.jsonl"), "standard"},
		{"messages api stream", filepath.Join(root, "captures", "anthropic", "vercelai_messages_stream_refusal.jsonl"), "standard"},
		{"messages api body", filepath.Join(root, "captures", "anthropic", "vercelai_messages_web_search.json"), "standard"},
		{"stream-json stating no tier", filepath.Join(root, "captures", "claude", "switchboard_stream_json_partial_with_usage_v2.1.141.jsonl"), ""},
		{"message batch results", filepath.Join(root, "golden", "claude", "message_batch_results.jsonl"), "batch"},
		{"priority tier (by hand)", filepath.Join(root, "golden", "claude", "anthropic_response_priority_tier.json"), "priority"},
	} {
		t.Run(c.name, func(t *testing.T) {
			raw, err := os.ReadFile(c.file)
			if err != nil {
				t.Fatal(err)
			}
			o := plugintest.Run(t, claude.Plugin, raw, normalize.Options{Provider: "claude", Now: func() time.Time { return time.Unix(0, 0) }})
			if u := o.Result.Usage; u.IsZero() || u.ServiceTier != c.want {
				t.Errorf("step usage %+v, want service_tier %q", u, c.want)
			}
			n := 0
			for _, it := range o.Sink.Items {
				if it.Event == nil || it.Event.Type != transcript.MessageAssistant || it.Scope != "" {
					continue
				}
				if m := it.Event.Message(); !m.Usage.IsZero() && m.Model != "<synthetic>" {
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

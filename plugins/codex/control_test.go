package codex_test

import (
	"context"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/plugins/codex"
)

// TestRawControlBytes: a line made invalid JSON by a raw control byte
// inside a string (a NUL from a tool's output) is repaired by the host
// before the plugin sees it, and the byte survives into the transcript.
func TestRawControlBytes(t *testing.T) {
	in := "{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n" +
		"{\"type\":\"item.completed\",\"item\":{\"id\":\"i\",\"type\":\"agent_message\",\"text\":\"x\x00y\x1b[0m\"}}\n" +
		"{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}\n"
	var sink normalize.Collector
	res, err := normalize.Run(context.Background(), normalize.NativeInstance(codex.Plugin), strings.NewReader(in), &sink, normalize.Options{Provider: "codex"})
	if err != nil {
		t.Fatal(err)
	}
	if res.FailedLines != 0 || len(res.Unmapped) != 0 {
		t.Errorf("failed lines %d, unmapped %v", res.FailedLines, res.Unmapped)
	}
	if res.FinalText != "x\x00y\x1b[0m" {
		t.Errorf("final text %q", res.FinalText)
	}
	var texts []string
	for _, ev := range sink.Events("") {
		if m := ev.Message(); m != nil {
			for _, b := range m.Blocks {
				texts = append(texts, b.Text)
			}
		}
	}
	if len(texts) != 1 || texts[0] != "x\x00y\x1b[0m" {
		t.Errorf("block texts %q", texts)
	}
}

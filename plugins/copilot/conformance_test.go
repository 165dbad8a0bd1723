package copilot_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/twasm/twasm/normalize"
	"github.com/twasm/twasm/plugins/copilot"
	"github.com/twasm/twasm/transcript"
)

// conformanceDir holds, per fixture, the unmapped native types the plugin
// is expected to count and why (<fixture file>.unmapped.json).
const conformanceDir = "testdata/conformance"

type unmappedExpectation struct {
	Unmapped map[string]int    `json:"unmapped"`
	Reasons  map[string]string `json:"reasons"`
}

// sharedFixtures finds ../shared/fixtures/<provider> next to the repository
// root (the directory holding go.mod above the test's working directory).
// The shared directory is not part of the repository: "" when absent.
func sharedFixtures(t *testing.T, provider string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
	d := filepath.Join(filepath.Dir(dir), "shared", "fixtures", provider)
	if st, err := os.Stat(d); err != nil || !st.IsDir() {
		return ""
	}
	return d
}

// TestConformance runs every real capture through the plugin: no fault,
// every tool call of the raw input becomes a tool.call, every piece of
// model text lands in a block, and nothing is unmapped beyond the
// checked-in expectation.
func TestConformance(t *testing.T) {
	dir := sharedFixtures(t, "copilot")
	if dir == "" {
		t.Skip("no shared fixtures (../shared/fixtures/copilot from the repo root)")
	}
	m, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range m {
		if !strings.HasSuffix(f, ".source.txt") {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		t.Skip("no fixtures in", dir)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var sink normalize.Collector
			res, err := normalize.Run(context.Background(), normalize.NativeInstance(copilot.Plugin), bytes.NewReader(raw), &sink, normalize.Options{Provider: "copilot"})
			if err != nil {
				t.Fatal(err)
			}
			if res.FailedLines != 0 {
				t.Errorf("failed lines: %d, warnings %q", res.FailedLines, res.Warnings)
			}
			calls := map[string]bool{}
			var texts []string
			for _, it := range sink.Items {
				if it.Event == nil {
					continue
				}
				if tp := it.Event.Tool(); tp != nil && it.Event.Type == transcript.ToolCall {
					calls[tp.CallID] = true
				}
				if mp := it.Event.Message(); mp != nil && it.Event.Type == transcript.MessageAssistant {
					for _, b := range mp.Blocks {
						texts = append(texts, b.Text, b.Thinking)
					}
				}
			}
			ids, frags := copilotFacts(raw)
			for _, id := range ids {
				if !calls[id] {
					t.Errorf("tool call %s has no tool.call", id)
				}
			}
			all := strings.Join(texts, "\x00")
			for _, fr := range frags {
				if !strings.Contains(all, fr) {
					t.Errorf("model text %.80q is in no assistant block", fr)
				}
			}
			checkUnmapped(t, f, res.Unmapped)
		})
	}
}

// checkUnmapped compares the unmapped counts with the fixture's
// expectation file; every expected entry must say why.
func checkUnmapped(t *testing.T, fixture string, got map[string]int) {
	t.Helper()
	var want unmappedExpectation
	exp := filepath.Join(conformanceDir, filepath.Base(fixture)+".unmapped.json")
	if b, err := os.ReadFile(exp); err == nil {
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatalf("%s: %v", exp, err)
		}
	}
	for k := range want.Unmapped {
		if want.Reasons[k] == "" {
			t.Errorf("%s: unmapped %q has no reason", exp, k)
		}
	}
	if len(got) == 0 && len(want.Unmapped) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want.Unmapped) {
		t.Errorf("unmapped = %v, want %v (from %s)", got, want.Unmapped, exp)
	}
}

// copilotFacts reads a capture independently of the plugin (with
// encoding/json): every toolCallId (toolRequests, tool.execution_*) and
// every piece of model text (assistant.message content and reasoningText,
// message and reasoning deltas, assistant.reasoning content).
func copilotFacts(raw []byte) (ids, frags []string) {
	seen := map[string]bool{}
	str := func(v any) string { s, _ := v.(string); return s }
	addID := func(id string) {
		if id != "" && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for _, l := range bytes.Split(raw, []byte("\n")) {
		var e struct {
			Type string         `json:"type"`
			Data map[string]any `json:"data"`
		}
		if json.Unmarshal(l, &e) != nil {
			continue
		}
		d := e.Data
		switch e.Type {
		case "assistant.message":
			frags = append(frags, str(d["content"]), str(d["reasoningText"]))
			trs, _ := d["toolRequests"].([]any)
			for _, tr := range trs {
				if m, ok := tr.(map[string]any); ok {
					addID(str(m["toolCallId"]))
				}
			}
		case "assistant.message_delta", "assistant.reasoning_delta":
			frags = append(frags, str(d["deltaContent"]))
		case "assistant.reasoning":
			frags = append(frags, str(d["content"]))
		case "tool.execution_start", "tool.execution_complete":
			addID(str(d["toolCallId"]))
		}
	}
	out := frags[:0]
	for _, f := range frags {
		if f != "" {
			out = append(out, f)
		}
	}
	return ids, out
}

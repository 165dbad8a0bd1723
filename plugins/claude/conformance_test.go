package claude_test

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
	"github.com/twasm/twasm/plugins/claude"
	"github.com/twasm/twasm/transcript"
)

// sharedFixtures is the project's shared capture directory, a sibling of
// the repository (../shared from the repo root). It is not part of the
// repository, so the conformance test skips when it is absent.
var sharedFixtures = filepath.Join("..", "..", "..", "shared", "fixtures")

// conformanceDir holds, per fixture, the unmapped native types the plugin
// is expected to count and why (<fixture file>.unmapped.json).
const conformanceDir = "testdata/conformance"

type unmappedExpectation struct {
	Unmapped map[string]int    `json:"unmapped"`
	Reasons  map[string]string `json:"reasons"`
}

// TestConformance runs every real capture through the plugin: no fault,
// every tool_use id becomes a tool.call, every piece of model text lands in
// a block, and nothing is unmapped beyond the checked-in expectation.
func TestConformance(t *testing.T) {
	var files []string
	for _, dir := range []string{"claude", "anthropic"} {
		m, _ := filepath.Glob(filepath.Join(sharedFixtures, dir, "*"))
		for _, f := range m {
			if !strings.HasSuffix(f, ".source.txt") && !strings.HasSuffix(f, ".stderr.txt") {
				files = append(files, f)
			}
		}
	}
	if len(files) == 0 {
		t.Skip("no shared fixtures at", sharedFixtures)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var sink normalize.Collector
			res, err := normalize.Run(context.Background(), normalize.NativeInstance(claude.Plugin), bytes.NewReader(raw), &sink, normalize.Options{Provider: "claude"})
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
				if mp := it.Event.Message(); mp != nil {
					for _, b := range mp.Blocks {
						texts = append(texts, b.Text, b.Thinking)
					}
				}
			}
			ids, frags := rawFacts(raw)
			for _, id := range ids {
				if !calls[id] {
					t.Errorf("tool_use %s has no tool.call", id)
				}
			}
			all := strings.Join(texts, "\x00")
			for _, fr := range frags {
				if !strings.Contains(all, fr) {
					t.Errorf("model text %.80q is in no block", fr)
				}
			}
			var want unmappedExpectation
			exp := filepath.Join(conformanceDir, filepath.Base(f)+".unmapped.json")
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
			got := res.Unmapped
			if len(got) == 0 && len(want.Unmapped) == 0 {
				return
			}
			if !reflect.DeepEqual(got, want.Unmapped) {
				t.Errorf("unmapped = %v, want %v (from %s)", got, want.Unmapped, exp)
			}
		})
	}
}

// rawFacts reads the capture independently of the plugin (with
// encoding/json): the ids of every tool_use / server_tool_use block, and
// every piece of model text (text and thinking of assistant blocks and
// deltas).
func rawFacts(raw []byte) (ids, frags []string) {
	var docs []any
	var whole any
	if json.Unmarshal(raw, &whole) == nil {
		docs = append(docs, whole)
	} else {
		for _, l := range bytes.Split(raw, []byte("\n")) {
			l = bytes.TrimPrefix(bytes.TrimSpace(l), []byte("data:"))
			var v any
			if json.Unmarshal(l, &v) == nil {
				docs = append(docs, v)
			}
		}
	}
	seen := map[string]bool{}
	var walk func(v any, inUser bool)
	walk = func(v any, inUser bool) {
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				walk(e, inUser)
			}
		case map[string]any:
			if r, _ := x["role"].(string); r == "user" {
				inUser = true
			}
			typ, _ := x["type"].(string)
			switch typ {
			case "tool_use", "server_tool_use":
				if id, _ := x["id"].(string); id != "" && !seen[id] {
					seen[id] = true
					ids = append(ids, id)
				}
			case "text", "text_delta":
				if s, _ := x["text"].(string); s != "" && !inUser {
					frags = append(frags, s)
				}
			case "thinking", "thinking_delta":
				if s, _ := x["thinking"].(string); s != "" && !inUser {
					frags = append(frags, s)
				}
			}
			for k, e := range x {
				// Tool inputs and results are not model text blocks.
				if k == "input" || k == "tool_use_result" || k == "toolUseResult" {
					continue
				}
				walk(e, inUser)
			}
		}
	}
	for _, d := range docs {
		walk(d, false)
	}
	return ids, frags
}

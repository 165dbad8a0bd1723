package openai_test

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
	"github.com/twasm/twasm/plugins/openai"
	"github.com/twasm/twasm/transcript"
)

// sharedFixtures is the project's shared capture directory, a sibling of
// the repository (../shared from the repository root). It is not part of
// the repository, so the conformance test skips when it is absent.
var sharedFixtures = filepath.Join("..", "..", "..", "shared", "fixtures", "openai")

// conformanceDir holds, per fixture, the native types the plugin is
// expected to leave unmapped and why: <fixture file>.unmapped.json,
// {"unmapped": {"<native>": count}, "reasons": {"<native>": "why"}}.
const conformanceDir = "testdata/conformance"

type unmappedExpectation struct {
	Unmapped map[string]int    `json:"unmapped"`
	Reasons  map[string]string `json:"reasons"`
}

// TestConformance runs every real capture: no fault, every tool call in
// the raw input is a tool.call, every piece of model text lands in a
// block, and nothing is unmapped beyond the checked-in expectation.
func TestConformance(t *testing.T) {
	m, _ := filepath.Glob(filepath.Join(sharedFixtures, "*"))
	var files []string
	for _, f := range m {
		if !strings.HasSuffix(f, ".source.txt") && !strings.HasSuffix(f, ".stderr.txt") {
			files = append(files, f)
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
			res, err := normalize.Run(context.Background(), normalize.NativeInstance(openai.Plugin), bytes.NewReader(raw), &sink, normalize.Options{Provider: "openai"})
			if err != nil {
				t.Fatal(err)
			}
			if res.FailedLines != 0 {
				t.Errorf("failed lines: %d, warnings %q", res.FailedLines, res.Warnings)
			}
			if res.Status == transcript.StatusIncomplete {
				t.Errorf("a complete capture normalized as incomplete (error %q)", res.Error)
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
				if mp := it.Event.Message(); mp != nil && mp.Role == "assistant" {
					for _, b := range mp.Blocks {
						texts = append(texts, b.Text, b.Thinking)
					}
				}
			}
			ids, frags := rawFacts(raw)
			t.Logf("%d tool calls, %d text pieces in the raw input", len(ids), len(frags))
			for _, id := range ids {
				if !calls[id] {
					t.Errorf("tool call %s has no tool.call", id)
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
				if strings.TrimSpace(want.Reasons[k]) == "" {
					t.Errorf("%s: unmapped %q has no reason", exp, k)
				}
			}
			if len(res.Unmapped)+len(want.Unmapped) > 0 && !reflect.DeepEqual(res.Unmapped, want.Unmapped) {
				t.Errorf("unmapped = %v, want %v (from %s)", res.Unmapped, want.Unmapped, exp)
			}
		})
	}
}

// Item types that are tool calls, and the field that names them.
var callTypes = map[string]string{
	"function_call": "call_id", "custom_tool_call": "call_id", "local_shell_call": "call_id",
	"shell_call": "call_id", "apply_patch_call": "call_id", "computer_call": "call_id",
	"web_search_call": "id", "file_search_call": "id", "code_interpreter_call": "id",
	"mcp_call": "id", "image_generation_call": "id",
}

// rawFacts reads a capture independently of the plugin (encoding/json):
// the id of every tool call (Chat tool_calls[].id, Responses call items),
// and every piece of model text (content, reasoning, refusal, their
// deltas, output_text and summary_text).
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
	id := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			ids = append(ids, s)
		}
	}
	text := func(v any) {
		if s, _ := v.(string); s != "" {
			frags = append(frags, s)
		}
	}
	var walk func(v any, parent string)
	walk = func(v any, parent string) {
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				walk(e, parent)
			}
		case map[string]any:
			typ, _ := x["type"].(string)
			if f, ok := callTypes[typ]; ok {
				s, _ := x[f].(string)
				id(s)
			}
			if _, ok := x["function"].(map[string]any); ok && parent == "tool_calls" {
				s, _ := x["id"].(string)
				id(s)
			}
			switch {
			case parent == "message" || parent == "delta":
				text(x["content"])
				text(x["reasoning_content"])
				text(x["refusal"])
			case typ == "output_text" || typ == "summary_text":
				text(x["text"])
			case typ == "refusal":
				text(x["refusal"])
			case typ == "response.output_text.delta" || typ == "response.reasoning_summary_text.delta" || typ == "response.refusal.delta":
				text(x["delta"])
			}
			for k, e := range x {
				walk(e, k)
			}
		}
	}
	for _, d := range docs {
		walk(d, "")
	}
	return ids, frags
}

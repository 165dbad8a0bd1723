package gemini_test

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
	"github.com/twasm/twasm/plugins/gemini"
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
	dir := sharedFixtures(t, "gemini")
	if dir == "" {
		t.Skip("no shared fixtures (../shared/fixtures/gemini from the repo root)")
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
			res, err := normalize.Run(context.Background(), normalize.NativeInstance(gemini.Plugin), bytes.NewReader(raw), &sink, normalize.Options{Provider: "gemini"})
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
			ids, frags := geminiFacts(raw)
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

// geminiFacts reads a capture independently of the plugin (with
// encoding/json): the id of every tool call (stream-json tool_use.tool_id,
// session-file toolCalls[].id) and every piece of model text (assistant
// deltas except the CLI's deprecation notice, the json response, session
// gemini content and thought subjects and descriptions).
func geminiFacts(raw []byte) (ids, frags []string) {
	var docs []map[string]any
	var whole map[string]any
	if json.Unmarshal(raw, &whole) == nil {
		docs = append(docs, whole)
	} else {
		for _, l := range bytes.Split(raw, []byte("\n")) {
			var v map[string]any
			if json.Unmarshal(l, &v) == nil {
				docs = append(docs, v)
			}
		}
	}
	str := func(v any) string { s, _ := v.(string); return s }
	record := func(m map[string]any) {
		if str(m["type"]) != "gemini" {
			return
		}
		switch c := m["content"].(type) {
		case string:
			frags = append(frags, c)
		case []any:
			for _, p := range c {
				if pm, ok := p.(map[string]any); ok {
					frags = append(frags, str(pm["text"]))
				}
			}
		}
		th, _ := m["thoughts"].([]any)
		for _, x := range th {
			if xm, ok := x.(map[string]any); ok {
				frags = append(frags, str(xm["subject"]), str(xm["description"]))
			}
		}
		tc, _ := m["toolCalls"].([]any)
		for _, x := range tc {
			if xm, ok := x.(map[string]any); ok {
				ids = append(ids, str(xm["id"]))
			}
		}
	}
	for _, d := range docs {
		switch {
		case d["messages"] != nil:
			ms, _ := d["messages"].([]any)
			for _, m := range ms {
				if mm, ok := m.(map[string]any); ok {
					record(mm)
				}
			}
		case str(d["type"]) == "tool_use":
			ids = append(ids, str(d["tool_id"]))
		case str(d["type"]) == "message" && str(d["role"]) == "assistant":
			if c := str(d["content"]); !strings.HasPrefix(c, "The --prompt (-p) flag has been deprecated") {
				frags = append(frags, c)
			}
		case d["response"] != nil:
			frags = append(frags, str(d["response"]))
		default:
			record(d)
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

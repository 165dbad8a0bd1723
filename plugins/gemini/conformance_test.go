//go:build !wasip1

package gemini_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/gemini"
)

// TestConformance runs every real capture of ../shared/fixtures/gemini
// through the plugin: no fault, every tool call of the raw input becomes
// a tool.call, every piece of model text lands in an assistant block, and
// nothing is unmapped beyond the checked-in expectation
// (testdata/conformance).
func TestConformance(t *testing.T) {
	plugintest.Conformance{
		Plugin:   gemini.Plugin,
		Provider: "gemini",
		Facts:    func(_ *testing.T, raw []byte) ([]string, []string) { return geminiFacts(raw) },
		Messages: plugintest.Assistant,
	}.Test(t)
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

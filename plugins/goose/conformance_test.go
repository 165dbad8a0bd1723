//go:build !wasip1

package goose_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/goose"
	"github.com/twasm/twasm/transcript"
)

// TestConformance runs every golden input through the plugin and checks
// it against facts read from the raw input apart from the plugin (with
// encoding/json): no line lost to a fault, every tool request a
// tool.call, every assistant text in an assistant block, every response
// Goose or the tool marked failed ({status: error}, isError) not ok and
// every other ok, and the step's tokens the session's accumulated
// counters.
func TestConformance(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(goldenDir, "*.jsonl"))
	for _, f := range files {
		if strings.HasSuffix(f, ".golden.jsonl") {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			o := plugintest.Run(t, goose.Plugin, raw, normalize.Options{Provider: "goose"})
			if o.Result.FailedLines != 0 {
				t.Errorf("failed lines: %d, warnings %q", o.Result.FailedLines, o.Result.Warnings)
			}
			fx := gooseFacts(raw)
			o.CheckCalls(t, fx.calls)
			plugintest.CheckTexts(t, o.Texts(plugintest.Assistant), fx.texts, false)
			for id, failed := range fx.failed {
				st, ok := resultStatus(o, id)
				switch {
				case !ok:
					t.Errorf("call %s: no tool.result", id)
				case failed && st == "ok":
					t.Errorf("call %s failed in the raw input, its tool.result says ok", id)
				case !failed && st != "ok":
					t.Errorf("call %s succeeded in the raw input, its tool.result says %s", id, st)
				}
			}
			var in, out int64
			if u := o.Result.Usage; u != nil {
				in, out = deref(u.InputTokens), deref(u.OutputTokens)
			}
			if in != fx.input || out != fx.output {
				t.Errorf("usage: input %d output %d, the session states %d and %d", in, out, fx.input, fx.output)
			}
		})
	}
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func resultStatus(o *plugintest.Outcome, id string) (string, bool) {
	for _, it := range o.Sink.Items {
		if it.Event == nil || it.Event.Type != transcript.ToolResult {
			continue
		}
		if tp := it.Event.Tool(); tp != nil && tp.CallID == id {
			if tp.Status == "" {
				return "ok", true // the default (spec 4)
			}
			return tp.Status, true
		}
	}
	return "", false
}

// facts are what a session states, read apart from the plugin.
type facts struct {
	calls, texts  []string
	failed        map[string]bool // call id -> the call failed
	input, output int64
}

type gooseItem struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ID       string `json:"id"`
	ToolCall *struct {
		Status string `json:"status"`
	} `json:"toolCall"`
	ToolResult *struct {
		Status string          `json:"status"`
		Value  json.RawMessage `json:"value"`
	} `json:"toolResult"`
}

type gooseSession struct {
	In  *int64 `json:"accumulated_input_tokens"`
	Out *int64 `json:"accumulated_output_tokens"`
}

func gooseFacts(raw []byte) facts {
	fx := facts{failed: map[string]bool{}}
	for _, l := range bytes.Split(raw, []byte("\n")) {
		var e struct {
			Twasm   string          `json:"$twasm"`
			Table   string          `json:"table"`
			Row     json.RawMessage `json:"row"`
			Role    string          `json:"role"`
			Content []gooseItem     `json:"content"`
		}
		if json.Unmarshal(l, &e) != nil {
			continue
		}
		var s gooseSession
		role, content := e.Role, e.Content
		switch {
		case e.Twasm == "row" && e.Table == "sessions":
			_ = json.Unmarshal(e.Row, &s)
		case e.Twasm == "row" && e.Table == "messages":
			var m struct {
				Role    string      `json:"role"`
				Content []gooseItem `json:"content_json"`
			}
			_ = json.Unmarshal(e.Row, &m)
			role, content = m.Role, m.Content
		case e.Twasm == "" && e.Role == "":
			_ = json.Unmarshal(l, &s) // a session file's metadata line
		}
		if s.In != nil {
			fx.input = *s.In
		}
		if s.Out != nil {
			fx.output = *s.Out
		}
		for _, c := range content {
			switch c.Type {
			case "text":
				if role == "assistant" {
					fx.texts = append(fx.texts, c.Text)
				}
			case "toolRequest", "frontendToolRequest":
				fx.calls = append(fx.calls, c.ID)
			case "toolResponse":
				failed := c.ToolResult == nil || c.ToolResult.Status != "success"
				var v struct {
					IsError bool `json:"isError"`
				}
				if !failed && json.Unmarshal(c.ToolResult.Value, &v) == nil && v.IsError {
					failed = true
				}
				fx.failed[c.ID] = failed
			}
		}
	}
	return fx
}

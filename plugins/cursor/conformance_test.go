//go:build !wasip1

package cursor_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/cursor"
)

// TestConformance runs every agent transcript among the golden inputs and
// the captures through the plugin and checks it against facts read from
// the raw lines apart from the plugin (with encoding/json): no line lost
// to a fault, one tool.call per tool_use block, a tool_result marked
// is_error never ok and any other ok, every assistant text whole, no
// usage (the format states none: none is invented), and the status a
// trailing turn_ended states.
func TestConformance(t *testing.T) {
	var files []string
	for _, dir := range []string{goldenDir, filepath.Join("..", "..", "testdata", "captures", "cursor")} {
		fs, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		for _, f := range fs {
			// The IDE's rows are checked by TestSyncCursorIDE and
			// their goldens.
			if !strings.HasSuffix(f, ".golden.jsonl") && !strings.HasPrefix(filepath.Base(f), "ide_") {
				files = append(files, f)
			}
		}
	}
	if len(files) < 4 {
		t.Fatalf("%d inputs, want the goldens and the captures", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			o := plugintest.Run(t, cursor.Plugin, raw, normalize.Options{Provider: "cursor"})
			if o.Result.FailedLines != 0 {
				t.Errorf("failed lines: %d, warnings %q", o.Result.FailedLines, o.Result.Warnings)
			}
			fx := transcriptFacts(raw)
			if got := len(o.Calls()); got != fx.calls {
				t.Errorf("%d tool.call, the transcript holds %d tool_use blocks", got, fx.calls)
			}
			for id, bad := range fx.failed {
				// A result without a status is ok (the spec's default).
				st, ok := o.ResultStatus(id)
				if !ok || bad == (st == "" || st == "ok") {
					t.Errorf("call %s: result %v status %q, the raw input says is_error %v", id, ok, st, bad)
				}
			}
			plugintest.CheckTexts(t, o.Texts(plugintest.Assistant), fx.texts, true)
			if o.Result.Usage != nil {
				t.Errorf("usage %+v: the format states none", o.Result.Usage)
			}
			if fx.last != "" && o.Result.Status != fx.last {
				t.Errorf("status %s, the transcript ends on a turn that says %s", o.Result.Status, fx.last)
			}
		})
	}
}

type facts struct {
	calls  int
	failed map[string]bool // synthesized call id -> is_error
	texts  []string
	last   string // the status of a trailing turn_ended, as a step status
}

func transcriptFacts(raw []byte) facts {
	fx := facts{failed: map[string]bool{}}
	var pending []string
	msgs := 0
	for _, line := range bytes.Split(raw, []byte("\n")) {
		var r struct {
			Type, Status, Role string
			Message            struct {
				Content json.RawMessage
			}
		}
		if json.Unmarshal(line, &r) != nil || r.Role == "" && r.Type == "" {
			continue
		}
		if r.Type == "turn_ended" {
			fx.last = map[string]string{"success": "ok", "aborted": "incomplete"}[r.Status]
			if fx.last == "" {
				fx.last = "error"
			}
			continue
		}
		fx.last = ""
		var blocks []struct {
			Type, Text string
			IsError    bool `json:"is_error"`
		}
		if r.Role != "user" && r.Role != "assistant" && r.Role != "system" || json.Unmarshal(r.Message.Content, &blocks) != nil {
			continue
		}
		msgs++
		for slot, b := range blocks {
			switch b.Type {
			case "tool_use":
				fx.calls++
				pending = append(pending, "cursor-"+itoa(msgs)+"-"+itoa(slot))
			case "tool_result":
				if len(pending) > 0 {
					fx.failed[pending[0]] = b.IsError
					pending = pending[1:]
				}
			case "text":
				if r.Role == "assistant" {
					fx.texts = append(fx.texts, b.Text)
				}
			}
		}
	}
	return fx
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

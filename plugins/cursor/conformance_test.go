//go:build !wasip1

package cursor_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/testing/plugintest"
)

// checkFacts checks the run of an agent transcript among the golden
// inputs and the captures (TestGolden; the IDE's rows are checked by
// TestSyncCursorIDE and their goldens) against facts read from the raw
// lines apart from the plugin (with encoding/json): one tool.call per
// tool_use block, a tool_result marked is_error never ok and any other
// ok, every assistant text whole (without Cursor's marker of the thinking
// it left out, "[REDACTED]"), no usage (the format states none: none
// is invented), and the status a trailing turn_ended states.
func checkFacts(t *testing.T, r *sdktest.Result) {
	if strings.HasPrefix(filepath.Base(r.Input), "ide_") || strings.HasPrefix(filepath.Base(r.Input), "stream_json") {
		// The IDE's rows, and cursor-agent's stream-json output
		// (TestStreamJSON), are not agent transcripts.
		return
	}
	o := plugintest.FromResult(r)
	fx := transcriptFacts(r.Raw)
	if got := len(o.Calls()); got != fx.calls {
		t.Errorf("%d tool.call, the transcript holds %d tool_use blocks", got, fx.calls)
	}
	o.CheckFailed(t, fx.failed)
	plugintest.CheckTexts(t, o.Texts(plugintest.Assistant), fx.texts, true)
	if o.Result.Usage != nil {
		t.Errorf("usage %+v: the format states none", o.Result.Usage)
	}
	if fx.last != "" && o.Result.Status != fx.last {
		t.Errorf("status %s, the transcript ends on a turn that says %s", o.Result.Status, fx.last)
	}
}

// captures are the agent transcripts of testdata/captures/cursor.
func captures(tb testing.TB) []string { return plugintest.Captures(tb, "cursor", "*.jsonl") }

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
				// Cursor's marker of the thinking it left out, alone or
				// after a blank line at the end, is no text.
				t := strings.TrimRight(b.Text, " \t\r\n")
				if t, ok := strings.CutSuffix(t, "\n\n[REDACTED]"); ok {
					b.Text = t
				} else if t == "[REDACTED]" {
					b.Text = ""
				}
				if r.Role == "assistant" && b.Text != "" {
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

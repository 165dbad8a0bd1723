//go:build !wasip1

package qwen_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/testing/plugintest"
)

// checkFacts checks the run of a capture or JSONL golden input
// (TestGolden; an older chat, one JSON document, is the Gemini plugin's
// reading) against facts read from the raw input apart from the plugin
// (with encoding/json): every functionCall a tool.call, every piece of
// model text in an assistant block, every result the CLI or the tool
// marked failed (an error response, a status other than success, a shell
// output stating a non-zero exit code) not ok; the step's tokens are
// TestSessionUsageMatchesRaw's, over the same inputs. A record /branch
// copied from another session (forkedFrom) is that session's: none of its
// facts is the branch's. (sdktest: a
// capture, with no expectation file, leaves nothing unmapped.)
func checkFacts(t *testing.T, r *sdktest.Result) {
	if filepath.Ext(r.Input) != ".jsonl" {
		return
	}
	o := plugintest.FromResult(r)
	fx := qwenFacts(r.Raw)
	o.CheckCalls(t, fx.calls)
	plugintest.CheckTexts(t, o.Texts(plugintest.Assistant), fx.texts, false)
	o.CheckFailed(t, fx.failed)
}

// facts are what a chat states, read apart from the plugin.
type facts struct {
	calls, texts []string
	failed       map[string]bool // call id -> the call failed
}

// qwenFacts reads the session's records.
func qwenFacts(raw []byte) facts {
	fx := facts{failed: map[string]bool{}}
	for _, l := range bytes.Split(raw, []byte("\n")) {
		var r struct {
			Type       string `json:"type"`
			ForkedFrom any    `json:"forkedFrom"`
			Message    struct {
				Parts []struct {
					Text         *string `json:"text"`
					Thought      bool    `json:"thought"`
					FunctionCall *struct {
						ID string `json:"id"`
					} `json:"functionCall"`
					FunctionResponse *struct {
						ID       string `json:"id"`
						Response struct {
							Output json.RawMessage `json:"output"`
							Error  json.RawMessage `json:"error"`
						} `json:"response"`
					} `json:"functionResponse"`
				} `json:"parts"`
			} `json:"message"`
			ToolCallResult *struct {
				Status string `json:"status"`
			} `json:"toolCallResult"`
		}
		if json.Unmarshal(l, &r) != nil || r.ForkedFrom != nil {
			continue
		}
		for _, p := range r.Message.Parts {
			switch {
			case r.Type == "assistant" && p.FunctionCall != nil && p.FunctionCall.ID != "":
				fx.calls = append(fx.calls, p.FunctionCall.ID)
			case r.Type == "assistant" && p.Text != nil && *p.Text != "":
				fx.texts = append(fx.texts, *p.Text)
			case p.FunctionResponse != nil && p.FunctionResponse.ID != "":
				if _, seen := fx.failed[p.FunctionResponse.ID]; seen {
					continue
				}
				resp := p.FunctionResponse.Response
				failed := len(resp.Error) > 0 && string(resp.Error) != "null"
				if tcr := r.ToolCallResult; tcr != nil && tcr.Status != "" && tcr.Status != "success" {
					failed = true
				}
				var out string
				if json.Unmarshal(resp.Output, &out) == nil && nonZeroExit(out) {
					failed = true
				}
				fx.failed[p.FunctionResponse.ID] = failed
			}
		}
	}
	return fx
}

// nonZeroExit reports whether a shell output's "Exit Code: N" line (the
// last) states a code other than 0, or the command timed out or was
// cancelled.
func nonZeroExit(out string) bool {
	if strings.HasPrefix(out, "Command timed out after ") || strings.HasPrefix(out, "Command was cancelled by user") {
		return true
	}
	code := ""
	for _, line := range strings.Split(out, "\n") {
		if c, ok := strings.CutPrefix(line, "Exit Code: "); ok {
			code = strings.TrimSpace(c)
		}
	}
	return code != "" && code != "0" && code != "(none)"
}

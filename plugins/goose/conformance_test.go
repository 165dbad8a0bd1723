//go:build !wasip1

package goose_test

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/testing/plugintest"
)

// checkFacts checks the run of a golden input (TestGolden) against facts
// read from the raw input apart from the plugin (with encoding/json):
// every tool request a tool.call, every assistant text in an assistant
// block, every response Goose or the tool marked failed ({status: error},
// isError) or that is Goose's answer to a refused call not ok, and every
// other ok. The step's tokens are TestSessionUsageMatchesRaw's, over the
// same inputs. A message created before its session (copy_session's copy
// of another session's conversation) is that session's: none of its
// facts is this run's.
func checkFacts(t *testing.T, r *sdktest.Result) {
	o := plugintest.FromResult(r)
	fx := gooseFacts(r.Raw)
	o.CheckCalls(t, fx.calls)
	plugintest.CheckTexts(t, o.Texts(plugintest.Assistant), fx.texts, false)
	o.CheckFailed(t, fx.failed)
}

// refused says whether a successful response's value (a CallToolResult,
// or the content list alone) is Goose's answer to a call that never ran:
// declined by the user or a permission rule, or skipped in chat mode
// (agents/tool_execution.rs).
func refused(v json.RawMessage) bool {
	var list []gooseItem
	if json.Unmarshal(v, &list) != nil {
		var r struct {
			Content []gooseItem `json:"content"`
		}
		_ = json.Unmarshal(v, &r)
		list = r.Content
	}
	for _, c := range list {
		if c.Type == "text" && (strings.HasPrefix(c.Text, "The user has declined to run this tool.") || strings.HasPrefix(c.Text, "Let the user know the tool call was skipped in")) {
			return true
		}
	}
	return false
}

// facts are what a session states, read apart from the plugin.
type facts struct {
	calls, texts []string
	failed       map[string]bool // call id -> the call failed
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

func gooseFacts(raw []byte) facts {
	fx := facts{failed: map[string]bool{}}
	var created int64 // the session's creation (unix seconds), 0 when no copy is possible
	lines := bytes.Split(raw, []byte("\n"))
	var export struct {
		Conversation []json.RawMessage `json:"conversation"`
	}
	if t := bytes.TrimSpace(raw); json.Unmarshal(t, &export) == nil && export.Conversation != nil {
		// goose session export --format json: one document, its
		// messages those of a session file.
		created = copyCreated(t)
		lines = lines[:0]
		for _, m := range export.Conversation {
			lines = append(lines, m)
		}
	}
	var streamID string // goose run stream-json: the id of the message before
	for _, l := range lines {
		var ev struct {
			Type    string          `json:"type"`
			Message json.RawMessage `json:"message"`
		}
		if json.Unmarshal(l, &ev) == nil && ev.Type == "message" && len(ev.Message) > 0 {
			// A stream-json message event: its message, whose text
			// chunks of one id are one text.
			var m struct {
				ID      *string     `json:"id"`
				Role    string      `json:"role"`
				Content []gooseItem `json:"content"`
			}
			_ = json.Unmarshal(ev.Message, &m)
			id := ""
			if m.ID != nil {
				id = *m.ID
			}
			text := len(m.Content) > 0 && m.Content[len(m.Content)-1].Type == "text" && m.Role == "assistant"
			if len(m.Content) == 1 && text && id != "" && id == streamID && len(fx.texts) > 0 {
				fx.texts[len(fx.texts)-1] += m.Content[0].Text
				continue
			}
			// The next chunk of this id continues the text only when
			// this message ends on one.
			streamID = ""
			if text {
				streamID = id
			}
			l = ev.Message
		}
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
		role, content := e.Role, e.Content
		switch {
		case e.Twasm == "row" && e.Table == "sessions":
			created = copyCreated(e.Row)
		case e.Twasm == "row" && e.Table == "messages":
			var m struct {
				Role    string      `json:"role"`
				Content []gooseItem `json:"content_json"`
				Created int64       `json:"created_timestamp"`
			}
			_ = json.Unmarshal(e.Row, &m)
			if m.Created > 10_000_000_000 {
				m.Created /= 1000
			}
			if m.Created < created {
				continue
			}
			role, content = m.Role, m.Content
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
				if !failed && refused(c.ToolResult.Value) {
					failed = true
				}
				fx.failed[c.ID] = failed
			}
		}
	}
	return fx
}

// copyCreated is a sessions row's creation time (unix seconds) when the
// session is one create_session made ("<date>_<n>", created_at in UTC):
// one copy_session can have filled. Otherwise 0.
func copyCreated(row json.RawMessage) int64 {
	var s struct {
		ID      string `json:"id"`
		Created string `json:"created_at"`
	}
	if json.Unmarshal(row, &s) != nil || !regexp.MustCompile(`^[0-9]{8}_[0-9]{1,5}$`).MatchString(s.ID) {
		return 0
	}
	for _, layout := range []string{"2006-01-02 15:04:05", "2006-01-02T15:04:05Z07:00", "2006-01-02 15:04:05Z07:00", "2006-01-02T15:04:05"} {
		if at, err := time.Parse(layout, s.Created); err == nil {
			if _, off := at.Zone(); off != 0 {
				return 0
			}
			return at.Unix()
		}
	}
	return 0
}

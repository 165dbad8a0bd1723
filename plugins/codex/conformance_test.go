package codex_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/normalize"
	"github.com/twasm/twasm/plugins/codex"
	"github.com/twasm/twasm/transcript"
)

// fixtureDir holds real Codex captures shared by the project (not copied
// into the repository): ../shared relative to the repository root.
var fixtureDir = filepath.Join("..", "..", "..", "shared", "fixtures", "codex")

// expectationDir holds, per fixture, the native types it may leave
// unmapped and why: <fixture>.unmapped.json, {"<native type>": "reason"}.
var expectationDir = filepath.Join("testdata", "conformance")

// TestConformance runs every real capture and checks the contract that
// does not depend on hand-written expectations: no fault, every tool
// invocation in the raw input is a tool.call, every piece of model text
// is in some block, and nothing is unmapped without a recorded reason.
func TestConformance(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(fixtureDir, "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Skipf("no shared fixtures at %s", fixtureDir)
	}
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var c normalize.Collector
			res, err := normalize.Run(context.Background(), normalize.NativeInstance(codex.Plugin), bytes.NewReader(raw), &c,
				normalize.Options{Provider: "codex", Now: func() time.Time { return time.Unix(0, 0) }})
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if res.FailedLines != 0 {
				t.Errorf("%d lines lost to plugin faults", res.FailedLines)
			}
			if len(res.Warnings) > 0 {
				t.Errorf("host warnings: %q", res.Warnings)
			}
			want := scanFixture(t, raw)

			calls := map[string]bool{}
			texts := map[string]bool{}
			for _, ev := range c.Events("") {
				if p := ev.Tool(); p != nil && ev.Type == transcript.ToolCall {
					calls[p.CallID] = true
				}
				if p := ev.Message(); p != nil {
					for _, b := range p.Blocks {
						texts[b.Text] = true
						texts[b.Thinking] = true
					}
				}
			}
			for _, id := range want.calls {
				if !calls[id] {
					t.Errorf("tool invocation %s in the raw input has no tool.call", id)
				}
			}
			for _, s := range want.texts {
				if !texts[s] {
					t.Errorf("model text not in any block: %.80q", s)
				}
			}
			allowed := loadExpectation(t, name)
			var unexpected []string
			for native, n := range res.Unmapped {
				if allowed[native] == "" {
					unexpected = append(unexpected, native+"×"+itoa(n))
				}
			}
			sort.Strings(unexpected)
			if len(unexpected) > 0 {
				t.Errorf("unmapped without a recorded reason in %s: %v", filepath.Join(expectationDir, name+".unmapped.json"), unexpected)
			}
			for native := range allowed {
				if res.Unmapped[native] == 0 {
					t.Errorf("%s lists %q as unmapped but the plugin now maps it: drop it", name+".unmapped.json", native)
				}
			}
		})
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func loadExpectation(t *testing.T, name string) map[string]string {
	b, err := os.ReadFile(filepath.Join(expectationDir, name+".unmapped.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s.unmapped.json: %v", name, err)
	}
	for k, v := range m {
		if strings.TrimSpace(v) == "" {
			t.Errorf("%s.unmapped.json: %q has no reason", name, k)
		}
	}
	return m
}

// fixtureFacts is what an independent reading of a capture says must be
// in the transcript.
type fixtureFacts struct {
	calls []string // provider call ids
	texts []string // model-authored text and reasoning
}

// scanFixture reads a capture with encoding/json, apart from the plugin,
// and lists the tool invocations and model texts in it.
func scanFixture(t *testing.T, raw []byte) fixtureFacts {
	t.Helper()
	var f fixtureFacts
	text := func(s string) {
		if s != "" {
			f.texts = append(f.texts, s)
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var l struct {
			Type    string          `json:"type"`
			Item    json.RawMessage `json:"item"`
			Msg     json.RawMessage `json:"msg"`
			Payload json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue
		}
		var x struct {
			ID        string `json:"id"`
			CallID    string `json:"call_id"`
			Type      string `json:"type"`
			Role      string `json:"role"`
			Text      string `json:"text"`
			Message   string `json:"message"`
			LastAgent string `json:"last_agent_message"`
			Summary   []struct {
				Text string `json:"text"`
			} `json:"summary"`
			Content json.RawMessage `json:"content"`
		}
		switch {
		case l.Item != nil: // exec-json
			_ = json.Unmarshal(l.Item, &x)
			switch x.Type {
			case "agent_message", "reasoning":
				text(x.Text)
			case "command_execution", "file_change", "mcp_tool_call", "web_search", "todo_list", "collab_tool_call":
				f.calls = append(f.calls, x.ID)
			}
		case l.Msg != nil: // legacy
			_ = json.Unmarshal(l.Msg, &x)
			switch x.Type {
			case "agent_message":
				text(x.Message)
			case "agent_reasoning":
				text(x.Text)
			case "task_complete":
				text(x.LastAgent)
			case "exec_command_begin", "patch_apply_begin", "mcp_tool_call_begin", "web_search_begin":
				f.calls = append(f.calls, x.CallID)
			}
		case l.Payload != nil: // rollout
			_ = json.Unmarshal(l.Payload, &x)
			switch {
			case l.Type == "response_item" && x.Type == "message" && x.Role == "assistant":
				var parts []struct {
					Text string `json:"text"`
				}
				_ = json.Unmarshal(x.Content, &parts)
				for _, p := range parts {
					text(p.Text)
				}
			case l.Type == "response_item" && x.Type == "reasoning":
				for _, s := range x.Summary {
					text(s.Text)
				}
			case l.Type == "response_item" && (x.Type == "function_call" || x.Type == "custom_tool_call" || x.Type == "local_shell_call"):
				f.calls = append(f.calls, x.CallID)
			case l.Type == "response_item" && x.Type == "web_search_call" && x.ID != "":
				f.calls = append(f.calls, x.ID)
			case l.Type == "event_msg" && x.Type == "agent_message":
				text(x.Message)
			case l.Type == "event_msg" && x.Type == "agent_reasoning":
				text(x.Text)
			case l.Type == "event_msg" && x.Type == "task_complete":
				text(x.LastAgent)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return f
}

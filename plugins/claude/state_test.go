//go:build !wasip1

package claude

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/transcript"
)

// runState normalizes raw natively and returns the outcome with the
// normalizer, whose state the caller inspects; a failed line fails the
// test.
func runState(t *testing.T, raw string) (*plugintest.Outcome, *normalizer) {
	t.Helper()
	var got *normalizer
	p := Plugin
	p.New = func(o abi.BeginOptions) sdk.Normalizer { got = newNormalizer(o); return got }
	out := plugintest.Run(t, p, []byte(raw), normalize.Options{Provider: "claude"})
	if out.Result.FailedLines != 0 {
		t.Fatalf("failed lines %d: %q", out.Result.FailedLines, out.Result.Warnings)
	}
	return out, got
}

// TestStateBounded feeds streams in which one message id keeps coming
// back with new text blocks, and checks that every block is written while
// the state the plugin keeps for the message does not grow with the
// number of blocks: text and thinking blocks written from a snapshot are
// counted, not kept.
func TestStateBounded(t *testing.T) {
	const n = 2000
	partial := func(ev string) string {
		return `{"type":"stream_event","event":` + ev + `,"parent_tool_use_id":null,"session_id":"s"}`
	}
	tests := []struct {
		name string
		// lines of the i-th repetition; each writes the text "part i"
		// once (and "thought i" for thinking).
		lines    func(i int) []string
		thinking bool
	}{
		{"closed message comes back", func(i int) []string {
			return []string{
				fmt.Sprintf(`{"type":"assistant","message":{"id":"msg_R","role":"assistant","content":[{"type":"text","text":"part %d"}]},"parent_tool_use_id":null,"session_id":"s"}`, i),
				fmt.Sprintf(`{"type":"user","message":{"role":"user","content":"next %d"},"parent_tool_use_id":null,"session_id":"s"}`, i),
			}
		}, false},
		{"open message keeps growing", func(i int) []string {
			return []string{
				fmt.Sprintf(`{"type":"assistant","message":{"id":"msg_O","role":"assistant","content":[{"type":"thinking","thinking":"thought %d","signature":"x"},{"type":"text","text":"part %d"}]},"parent_tool_use_id":null,"session_id":"s"}`, i, i),
			}
		}, true},
		{"snapshot before its deltas, repeated", func(i int) []string {
			return []string{
				partial(`{"type":"message_start","message":{"id":"msg_S","role":"assistant","content":[],"model":"m","usage":{"input_tokens":1}}}`),
				fmt.Sprintf(`{"type":"assistant","message":{"id":"msg_S","role":"assistant","content":[{"type":"text","text":"part %d"}]},"parent_tool_use_id":null,"session_id":"s"}`, i),
				partial(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
				partial(fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"part %d"}}`, i)),
				partial(`{"type":"content_block_stop","index":0}`),
				partial(`{"type":"message_stop"}`),
			}
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var raw strings.Builder
			for i := range n {
				for _, l := range tt.lines(i) {
					raw.WriteString(l + "\n")
				}
			}
			out, got := runState(t, raw.String())

			seen := map[string]int{}
			for _, s := range out.Texts(plugintest.Assistant) {
				seen[s]++
			}
			for i := range n {
				want := []string{fmt.Sprintf("part %d", i)}
				if tt.thinking {
					want = append(want, fmt.Sprintf("thought %d", i))
				}
				for _, w := range want {
					if seen[w] != 1 {
						t.Fatalf("%q written %d times, want once", w, seen[w])
					}
				}
			}

			if len(got.byID) != 1 {
				t.Fatalf("%d messages kept by id, want 1", len(got.byID))
			}
			for id, m := range got.byID {
				if len(m.slots) > 2 || len(m.idx) > 1 {
					t.Errorf("message %s keeps %d slots and %d stream indexes after %d repetitions", id, len(m.slots), len(m.idx), n)
				}
			}
		})
	}
}

// TestStateWindow feeds streams with many distinct message, tool and
// sidechain record ids: everything is written, what the plugin keeps
// about closed messages, answered tool calls and sidechain records stays
// within its window, and an id that comes back after leaving its window
// is written again rather than lost.
func TestStateWindow(t *testing.T) {
	const n = 3000
	stream := func(f string, a ...any) string {
		return fmt.Sprintf(f, a...) + "\n"
	}
	assistant := func(id, content string) string {
		return stream(`{"type":"assistant","message":{"id":%q,"role":"assistant","content":[%s]},"parent_tool_use_id":null,"session_id":"s"}`, id, content)
	}
	toolUse := func(id string) string {
		return fmt.Sprintf(`{"type":"tool_use","id":%q,"name":"Bash","input":{"command":"echo %s"}}`, id, id)
	}
	result := func(id string) string {
		return stream(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":"out"}]},"parent_tool_use_id":null,"session_id":"s"}`, id)
	}
	text := func(s string) string { return fmt.Sprintf(`{"type":"text","text":%q}`, s) }
	side := func(uuid, parent, content string) string {
		p := "null"
		if parent != "" {
			p = fmt.Sprintf("%q", parent)
		}
		return stream(`{"type":"assistant","isSidechain":true,"sessionId":"s","parentUuid":%s,"uuid":%q,"message":{"id":"msg_%s","role":"assistant","content":[%s]}}`, p, uuid, uuid, content)
	}

	tests := []struct {
		name  string
		input func() string
		// texts each written once, and in which scope; calls each
		// reported once.
		texts map[string]string
		calls []string
	}{
		{"distinct messages and tool calls", func() string {
			var b strings.Builder
			for i := range n {
				b.WriteString(assistant(fmt.Sprint("msg_", i), text(fmt.Sprint("part ", i))+","+toolUse(fmt.Sprint("toolu_", i))))
				b.WriteString(result(fmt.Sprint("toolu_", i)))
			}
			return b.String()
		}, func() map[string]string {
			m := map[string]string{}
			for i := range n {
				m[fmt.Sprint("part ", i)] = ""
			}
			return m
		}(), func() []string {
			var c []string
			for i := range n {
				c = append(c, fmt.Sprint("toolu_", i))
			}
			return c
		}()},
		{"ids that come back after their window", func() string {
			var b strings.Builder
			b.WriteString(assistant("msg_X", text("first")+","+toolUse("toolu_X")))
			b.WriteString(result("toolu_X"))
			for i := range keepClosed + keepDone {
				b.WriteString(assistant(fmt.Sprint("msg_", i), toolUse(fmt.Sprint("toolu_", i))))
				b.WriteString(result(fmt.Sprint("toolu_", i)))
			}
			b.WriteString(assistant("msg_X", text("again")+","+toolUse("toolu_X")))
			return b.String()
		}, map[string]string{"first": "", "again": ""}, []string{"toolu_X"}},
		{"a long sidechain", func() string {
			var b strings.Builder
			b.WriteString(stream(`{"type":"assistant","isSidechain":false,"sessionId":"s","parentUuid":null,"uuid":"m0","message":{"id":"msg_T","role":"assistant","content":[{"type":"tool_use","id":"toolu_T","name":"Task","input":{"prompt":"P","subagent_type":"Explore"}}]}}`))
			b.WriteString(stream(`{"type":"user","isSidechain":true,"sessionId":"s","parentUuid":null,"uuid":"s0","message":{"role":"user","content":"P"}}`))
			for i := 1; i <= n; i++ {
				b.WriteString(side(fmt.Sprint("s", i), fmt.Sprint("s", i-1), text(fmt.Sprint("side ", i))))
			}
			return b.String()
		}, func() map[string]string {
			m := map[string]string{}
			for i := 1; i <= n; i++ {
				m[fmt.Sprint("side ", i)] = "toolu_T"
			}
			return m
		}(), []string{"toolu_T"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, got := runState(t, tt.input())

			seen := map[string]int{}
			calls := map[string]int{}
			for _, it := range out.Sink.Items {
				if it.Event == nil {
					continue
				}
				if tp := it.Event.Tool(); tp != nil && it.Event.Type == transcript.ToolCall {
					calls[tp.CallID]++
				}
				if mp := it.Event.Message(); mp != nil {
					for _, b := range mp.Blocks {
						if scope, ok := tt.texts[b.Text]; ok {
							seen[b.Text]++
							if it.Scope != scope {
								t.Errorf("%q in scope %q, want %q", b.Text, it.Scope, scope)
							}
						}
					}
				}
			}
			for s := range tt.texts {
				if seen[s] != 1 {
					t.Errorf("%q written %d times, want once", s, seen[s])
				}
			}
			for _, id := range tt.calls {
				if calls[id] != 1 {
					t.Errorf("tool call %s reported %d times, want once", id, calls[id])
				}
			}

			if len(got.byID) > keepClosed+1 || len(got.calls) > keepDone+1 || len(got.uuidScope) > keepUUIDs {
				t.Errorf("kept %d messages, %d calls, %d sidechain uuids; want at most %d, %d, %d",
					len(got.byID), len(got.calls), len(got.uuidScope), keepClosed+1, keepDone+1, keepUUIDs)
			}
		})
	}
}

// TestInterleavedMessage feeds one assistant message written as several
// session-log lines with other lines between them (hook progress, the
// results of the tools it already asked for) and checks spec §6.1 and
// §6.6: one message.assistant holding each block once, whose usage, and
// the step's, is the message's last figure. Past idleClose lines without
// a line of it the message is closed; a line that comes back after that
// is a continuation, and the step still counts the message's last figure
// once.
func TestInterleavedMessage(t *testing.T) {
	line := func(block string, out int64) string {
		return `{"type":"assistant","sessionId":"s","uuid":"x","message":{"id":"msg_I","role":"assistant","model":"m","content":[` + block +
			`],"usage":{"input_tokens":1,"cache_creation_input_tokens":10,"cache_read_input_tokens":100,"output_tokens":` + fmt.Sprint(out) + `}}}`
	}
	progress := `{"type":"progress","sessionId":"s","data":{"type":"hook_progress","hookEvent":"PreToolUse"},"parentToolUseID":"t1","toolUseID":"t1"}`
	result := `{"type":"user","sessionId":"s","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}}`
	between := func(n int) []string {
		l := []string{progress, result}
		for len(l) < n {
			l = append(l, progress)
		}
		return l
	}
	tests := []struct {
		name     string
		between  []string
		messages int // message.assistant events written for msg_I
		usage    int64
	}{
		{"progress and a tool result between", between(3), 1, 212},
		{"just under the idle limit", between(idleClose), 1, 212},
		{"past the idle limit: continued, counted once", between(idleClose + 1), 2, 212},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := []string{
				line(`{"type":"text","text":"looking"}`, 64),
				line(`{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}`, 64),
			}
			lines = append(lines, tt.between...)
			lines = append(lines, line(`{"type":"tool_use","id":"t2","name":"Glob","input":{"pattern":"*"}}`, tt.usage))
			out, _ := runState(t, strings.Join(lines, "\n")+"\n")
			var msgs []*transcript.MessagePayload
			var order []string
			for _, it := range out.Sink.Items {
				ev := it.Event
				order = append(order, string(ev.Type))
				if ev.Type == transcript.MessageAssistant {
					msgs = append(msgs, ev.Message())
				}
			}
			if len(msgs) != tt.messages {
				t.Fatalf("%d message.assistant events, want %d: %v", len(msgs), tt.messages, order)
			}
			var blocks []string
			for _, m := range msgs {
				for _, b := range m.Blocks {
					blocks = append(blocks, string(b.Type))
				}
			}
			if want := []string{"text", "tool_use", "tool_use"}; !slices.Equal(blocks, want) {
				t.Errorf("blocks %v, want %v (each once)", blocks, want)
			}
			if tt.messages == 1 {
				if u := msgs[0].Usage; u == nil || u.OutputTokens == nil || *u.OutputTokens != tt.usage {
					t.Errorf("message usage %+v, want output %d (the last figure)", u, tt.usage)
				}
				// Its tool calls and results follow it.
				if order[0] != string(transcript.MessageAssistant) {
					t.Errorf("events %v: the message is not first", order)
				}
			}
			if u := out.Result.Usage; u == nil || u.OutputTokens == nil || *u.OutputTokens != tt.usage || *u.InputTokens != 111 {
				t.Errorf("step usage %+v, want output %d and input 111 (the message's last figure, once)", u, tt.usage)
			}
		})
	}
}

// TestUnansweredCallSize checks what a tool call without a result costs
// while it is kept (spec 6.3: however late its result comes): an
// ordinary call holds no Task/Agent fields, and its record is at most 12
// words (160 bytes on a 64-bit host, 104 with the Task/Agent fields
// inline, before they moved behind a pointer); a Task or Agent call
// keeps what names its sub-agent, and a reused id that is no longer a
// Task call keeps none of it.
func TestUnansweredCallSize(t *testing.T) {
	const word = unsafe.Sizeof(uintptr(0))
	if size := unsafe.Sizeof(call{}); size > 12*word {
		t.Errorf("a call record is %d bytes, more than 12 words (%d)", size, 12*word)
	}
	assistant := func(msg, id, name, input string) string {
		return `{"type":"assistant","message":{"id":"` + msg + `","role":"assistant","model":"claude-opus-4-7","content":[{"type":"tool_use","id":"` + id + `","name":"` + name + `","input":` + input + `}]},"parent_tool_use_id":null,"session_id":"s"}` + "\n"
	}
	result := func(id string) string {
		return `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + id + `","content":"done"}]},"parent_tool_use_id":null,"session_id":"s"}` + "\n"
	}
	const taskInput = `{"subagent_type":"explorer","description":"look around","prompt":"find it"}`
	tests := []struct {
		name, raw string
		want      *task // nil: the call keeps no Task/Agent fields
	}{
		{"Bash", assistant("m1", "t1", "Bash", `{"command":"ls"}`), nil},
		{"Read", assistant("m1", "t1", "Read", `{"file_path":"a.go"}`), nil},
		{"Task", assistant("m1", "t1", "Task", taskInput), &task{subagent: "explorer", description: "look around", prompt: "find it", sub: "t1"}},
		{"Agent", assistant("m1", "t1", "Agent", taskInput), &task{subagent: "explorer", description: "look around", prompt: "find it", sub: "t1"}},
		{"Task id reused by Bash", assistant("m1", "t1", "Task", taskInput) + result("t1") + assistant("m2", "t1", "Bash", `{"command":"ls"}`), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, n := runState(t, tt.raw)
			c := n.calls["t1"]
			if c == nil {
				t.Fatal("the call is not kept")
			}
			if c.resulted {
				t.Fatal("the call has a result")
			}
			switch {
			case tt.want == nil && c.task != nil:
				t.Errorf("a %s call keeps Task/Agent fields %+v", c.name, *c.task)
			case tt.want != nil && (c.task == nil || *c.task != *tt.want):
				t.Errorf("a %s call keeps %+v, want %+v", c.name, c.task, *tt.want)
			}
		})
	}
}

//go:build !wasip1

package copilot_test

import (
	"context"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/copilot"
	"github.com/twasm/twasm/transcript"
)

// sessionStart is an events.jsonl session.start line of the CLI version
// given, the first line of the tests' inputs.
func sessionStart(version string) string {
	return `{"type":"session.start","data":{"sessionId":"s1","version":1,"producer":"copilot-agent","copilotVersion":"` + version + `"},"id":"e0","timestamp":"2026-11-01T10:00:00.000Z","parentId":null}`
}

// blocks runs lines through the plugin and returns say's line for every
// block of every message (say returns "" to leave one out), and the
// step's result.
func blocks(t *testing.T, lines []string, say func(e sdktest.Event, m *transcript.MessagePayload, b transcript.Block) string) ([]string, *transcript.AgentResult) {
	t.Helper()
	r, err := sdktest.Run(context.Background(), copilot.Plugin, "copilot", []byte(strings.Join(lines, "\n")+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range r.Events {
		m := e.Event.Message()
		if m == nil {
			continue
		}
		for _, b := range m.Blocks {
			if l := say(e, m, b); l != "" {
				got = append(got, l)
			}
		}
	}
	return got, r.Step
}

// TestUserMessageSource: the Copilot CLI writes in the user's role what
// the user did not type, and says so (copilot-sdk
// nodejs/src/generated/session-events.ts, UserMessageData: source
// "skill-pdf" for hidden skill injection, "agent-<agent-id>" for an
// inter-agent prompt; isAutopilotContinuation for autopilot's continuation
// loop). Such a message is injected context, never the user's prompt; a
// sub-agent's own first message is its prompt whatever its source.
func TestUserMessageSource(t *testing.T) {
	start := sessionStart("1.0.40")
	user := func(id, data string) string {
		return `{"type":"user.message","data":` + data + `,"id":"` + id + `","timestamp":"2026-11-01T10:00:01.000Z","parentId":"e0"}`
	}
	tests := []struct {
		name  string
		lines []string
		want  []string // origin: text of every user block, in order
	}{
		{"typed, no source", []string{start, user("e1", `{"content":"Fix the parser"}`)}, []string{"prompt: Fix the parser"}},
		{"typed, source user", []string{start, user("e1", `{"content":"Fix the parser","source":"user"}`)}, []string{"prompt: Fix the parser"}},
		{"a skill's hidden context", []string{start, user("e1", `{"content":"Fix the parser"}`),
			user("e2", `{"content":"<skill-context name=\"pdf\">Read PDFs with pdftotext.</skill-context>","source":"skill-pdf"}`)},
			[]string{"prompt: Fix the parser", `injected_context: <skill-context name="pdf">Read PDFs with pdftotext.</skill-context>`}},
		{"another agent's prompt", []string{start, user("e1", `{"content":"Review done: 2 findings.","source":"agent-reviewer-1"}`)},
			[]string{"injected_context: Review done: 2 findings."}},
		{"autopilot's continuation", []string{start, user("e1", `{"content":"Continue working on the task.","isAutopilotContinuation":true}`)},
			[]string{"injected_context: Continue working on the task."}},
		{"a sub-agent's own prompt", []string{start,
			`{"type":"subagent.started","data":{"toolCallId":"call_1","agentName":"explore","agentDisplayName":"Explore"},"id":"e1","timestamp":"2026-11-01T10:00:01.000Z","parentId":"e0","agentId":"call_1"}`,
			`{"type":"user.message","data":{"content":"Find the parser.","source":"agent-main"},"id":"e2","timestamp":"2026-11-01T10:00:01.000Z","parentId":"e1","agentId":"call_1"}`,
			`{"type":"user.message","data":{"content":"<skill-context name=\"pdf\">PDFs.</skill-context>","source":"skill-pdf"},"id":"e3","timestamp":"2026-11-01T10:00:01.000Z","parentId":"e2","agentId":"call_1"}`},
			[]string{"prompt: Find the parser.", `injected_context: <skill-context name="pdf">PDFs.</skill-context>`}},
		{"a skill's context wrapped for the model", []string{start,
			user("e1", `{"content":"Use the pdf skill.","transformedContent":"<current_datetime>now</current_datetime>\nUse the pdf skill.","source":"skill-pdf"}`)},
			[]string{"injected_context: <current_datetime>now</current_datetime>\n", "injected_context: Use the pdf skill."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := blocks(t, tt.lines, func(_ sdktest.Event, m *transcript.MessagePayload, b transcript.Block) string {
				if m.Role != "user" {
					return ""
				}
				return string(b.Origin) + ": " + b.Text
			})
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("user blocks\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// TestSkillInvoked: skill.invoked is a skill loaded into the
// conversation (copilot-sdk session-events.ts at cc0438d, SkillInvokedData:
// content "injected into the conversation for the model"); the CLI then
// writes that content as a user.message of source "skill-<name>", which is
// recorded as injected context. The event itself is declared ignored, and
// its content is written as injected context of its own only when no such
// message followed before the agent's next response or the end. Before,
// skill.invoked was counted unmapped.
func TestSkillInvoked(t *testing.T) {
	start := sessionStart("1.0.40")
	line := func(typ, id, agent, data string) string {
		a := ""
		if agent != "" {
			a = `,"agentId":"` + agent + `"`
		}
		return `{"type":"` + typ + `","data":` + data + `,"id":"` + id + `","timestamp":"2026-11-01T10:00:01.000Z","parentId":"e0"` + a + `}`
	}
	prompt := line("user.message", "e1", "", `{"content":"/pdf report.pdf"}`)
	skill := func(id, agent string) string {
		return line("skill.invoked", id, agent, `{"name":"pdf","path":"/home/dev/.copilot/skills/pdf/SKILL.md","content":"Read PDFs with pdftotext.","trigger":"user-invoked"}`)
	}
	shown := line("user.message", "e3", "", `{"content":"<skill-context name=\"pdf\">\nRead PDFs with pdftotext.\n</skill-context>","source":"skill-pdf"}`)
	answer := func(id, agent string) string {
		return line("assistant.message", id, agent, `{"messageId":"m-`+id+`","content":"Done.","toolRequests":[]}`)
	}
	tests := []struct {
		name  string
		lines []string
		want  []string // scope, role, origin: text of every block, in order
	}{
		{"its user.message carries it", []string{start, prompt, skill("e2", ""), shown, answer("e4", "")},
			[]string{"user prompt: /pdf report.pdf", "user injected_context: <skill-context name=\"pdf\">\nRead PDFs with pdftotext.\n</skill-context>", "assistant : Done."}},
		{"no user.message: before the next response", []string{start, prompt, skill("e2", ""), answer("e4", "")},
			[]string{"user prompt: /pdf report.pdf", "user injected_context: Read PDFs with pdftotext.", "assistant : Done."}},
		{"no user.message: at the end", []string{start, prompt, skill("e2", "")},
			[]string{"user prompt: /pdf report.pdf", "user injected_context: Read PDFs with pdftotext."}},
		{"a sub-agent's preloaded skill", []string{start, prompt,
			line("subagent.started", "e2", "explore-1", `{"toolCallId":"call_1","agentName":"explore"}`),
			line("user.message", "e3", "explore-1", `{"content":"Read the report."}`),
			skill("e4", "explore-1"), answer("e5", "explore-1"),
			line("subagent.completed", "e6", "explore-1", `{"toolCallId":"call_1","agentName":"explore"}`)},
			[]string{"user prompt: /pdf report.pdf", "explore-1 user prompt: Read the report.",
				"explore-1 user injected_context: Read PDFs with pdftotext.", "explore-1 assistant : Done."}},
		{"a running sub-agent's skill at the end, after its prompt", []string{start, prompt,
			line("assistant.message", "e2", "", `{"messageId":"m-1","content":"","toolRequests":[{"toolCallId":"call_1","name":"task","arguments":{"description":"Read","prompt":"Read the report.","agent_type":"explore"},"type":"function"}]}`),
			line("subagent.started", "e3", "explore-1", `{"toolCallId":"call_1","agentName":"explore"}`),
			skill("e4", "explore-1")},
			[]string{"user prompt: /pdf report.pdf", "assistant : " /* the task call's tool_use */, "explore-1 user prompt: Read the report.",
				"explore-1 user injected_context: Read PDFs with pdftotext."}},
		{"no content", []string{start, prompt, line("skill.invoked", "e2", "", `{"name":"pdf","path":"x/SKILL.md"}`)},
			[]string{"user prompt: /pdf report.pdf"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, step := blocks(t, tt.lines, func(e sdktest.Event, m *transcript.MessagePayload, b transcript.Block) string {
				return strings.TrimPrefix(e.Scope+" ", " ") + string(m.Role) + " " + string(b.Origin) + ": " + b.Text
			})
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(step.Unmapped) != 0 {
				t.Errorf("blocks\n%q\nwant\n%q\nunmapped %v, want none", got, tt.want, step.Unmapped)
			}
		})
	}
}

// TestContextCut: session.truncation (the CLI dropped the oldest messages
// to fit the context window) and session.context_cleared (the host
// cleared the conversation) change what the model sees; the transcript
// keeps the messages and a warning says so (copilot-sdk
// session-events.ts, TruncationData and ContextClearedData). Before,
// both were counted unmapped.
func TestContextCut(t *testing.T) {
	start := sessionStart("1.0.40")
	tests := []struct{ name, line, warning string }{
		{"truncation", `{"type":"session.truncation","data":{"tokenLimit":128000,"preTruncationTokensInMessages":131000,"preTruncationMessagesLength":90,"postTruncationTokensInMessages":98000,"postTruncationMessagesLength":61,"tokensRemovedDuringTruncation":33000,"messagesRemovedDuringTruncation":29,"performedBy":"BasicTruncator"},"id":"e1","timestamp":"2026-11-01T10:00:01.000Z","parentId":"e0"}`,
			"copilot: the context was truncated: 29 messages (33000 tokens) the model no longer sees; the transcript keeps them"},
		{"cleared", `{"type":"session.context_cleared","data":{"messagesCleared":12},"id":"e1","timestamp":"2026-11-01T10:00:01.000Z","parentId":"e0"}`,
			"copilot: the context was cleared: 12 messages the model no longer sees; the transcript keeps them"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := sdktest.Run(context.Background(), copilot.Plugin, "copilot", []byte(start+"\n"+tt.line+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Step.Warnings) != 1 || r.Step.Warnings[0] != tt.warning || len(r.Step.Unmapped) != 0 {
				t.Errorf("warnings %q, unmapped %v; want %q and none", r.Step.Warnings, r.Step.Unmapped, tt.warning)
			}
		})
	}
}

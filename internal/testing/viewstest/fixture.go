package viewstest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/vocab"
	"github.com/twasm/twasm/transcript"
)

// Run ids of the fixture (canonical UUID v4).
const (
	Root  = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
	Child = "cccccccc-cccc-4ccc-8ccc-cccccccccccc"
	Other = "dddddddd-dddd-4ddd-8ddd-dddddddddddd"
)

// T0 is the time of seq 0; event n happens n seconds later.
var T0 = time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)

// LongOutput is the output of the first tool call, long enough to be
// truncated by the view.
var LongOutput = strings.Repeat("total 42 drwxr-xr-x\n", 200)

// Builder accumulates the events of one run, numbering them.
type Builder struct {
	RunID, Parent string
	evs           []*transcript.Event
	raw           map[int]string // extra raw lines inserted before event i
	seq           uint64
}

// NewBuilder starts a run.
func NewBuilder(runID, parent string) *Builder {
	return &Builder{RunID: runID, Parent: parent, raw: map[int]string{}}
}

// Add appends an event; seq, run ids and timestamp are filled in.
func (b *Builder) Add(ev *transcript.Event) *Builder {
	b.seq++
	ev.Seq = b.seq
	ev.RunID, ev.ParentRunID = b.RunID, b.Parent
	if ev.Timestamp.IsZero() {
		ev.Timestamp = T0.Add(time.Duration(ev.Seq) * time.Second)
	}
	b.evs = append(b.evs, ev)
	return b
}

// Raw inserts a raw line at this point of the file (not an event of the
// builder: it takes no seq).
func (b *Builder) Raw(line string) *Builder {
	b.raw[len(b.evs)] += line + "\n"
	return b
}

// Bytes encodes the run as a JSONL file.
func (b *Builder) Bytes(t testing.TB) []byte {
	t.Helper()
	var out []byte
	for i, ev := range b.evs {
		out = append(out, b.raw[i]...)
		line, err := transcript.AppendEvent(nil, ev)
		if err != nil {
			t.Fatalf("AppendEvent(nil, seq %d %s): %v", ev.Seq, ev.Type, err)
		}
		out = append(append(out, line...), '\n')
	}
	return append(out, b.raw[len(b.evs)]...)
}

// Unknown inserts a line of an event type this version does not know,
// taking the next seq.
func (b *Builder) Unknown(typ, path string) *Builder {
	b.seq++
	ts := T0.Add(time.Duration(b.seq) * time.Second).Format(vocab.TimeLayout)
	return b.Raw(fmt.Sprintf(`{"seq":%d,"run_id":%q,"type":%q,"path":%q,"iteration":0,"timestamp":%q,"payload":{"beat":1}}`,
		b.seq, b.RunID, typ, path, ts))
}

// Events returns the events added so far (not the raw lines).
func (b *Builder) Events() []*transcript.Event { return b.evs }

// Line encodes the i-th event added (0-based) as a line with LF.
func (b *Builder) Line(t testing.TB, i int) []byte {
	t.Helper()
	line, err := transcript.AppendEvent(nil, b.evs[i])
	if err != nil {
		t.Fatal(err)
	}
	return append(line, '\n')
}

// Len returns the number of events.
func (b *Builder) Len() int { return len(b.evs) }

// Step returns a step-family event.
func Step(t transcript.EventType, path string, iter int, p *transcript.StepPayload) *transcript.Event {
	return &transcript.Event{Type: t, Path: path, Iteration: iter, Payload: p}
}

// Started returns run.started.
func Started(name string) *transcript.Event {
	return Step(transcript.RunStarted, "", 0, &transcript.StepPayload{Name: name, Kind: transcript.KindWorkflow,
		Schema: transcript.Schema, Producer: &transcript.Producer{Name: "twasm", Version: "0.1.0"}})
}

// Completed returns run.completed.
func Completed(name, status, errText string) *transcript.Event {
	return Step(transcript.RunCompleted, "", 0, &transcript.StepPayload{Name: name, Kind: transcript.KindWorkflow, Status: status, Error: errText})
}

// Msg returns a message event.
func Msg(t transcript.EventType, path string, blocks ...transcript.Block) *transcript.Event {
	role := "assistant"
	if t == transcript.MessageUser {
		role = "user"
	}
	return &transcript.Event{Type: t, Path: path, Payload: &transcript.MessagePayload{Role: role, Blocks: blocks, Model: model(t)}}
}

func model(t transcript.EventType) string {
	if t == transcript.MessageAssistant {
		return "claude-sonnet-4"
	}
	return ""
}

// Tool returns a tool event.
func Tool(t transcript.EventType, path string, p *transcript.ToolPayload) *transcript.Event {
	if p.Fidelity == "" {
		p.Fidelity = transcript.FidelityAgentEmitted
	}
	return &transcript.Event{Type: t, Path: path, Payload: p}
}

// AgentDone returns the step.completed of an agent step with its result.
func AgentDone(t testing.TB, path string, r *transcript.AgentResult) *transcript.Event {
	t.Helper()
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return Step(transcript.StepCompleted, path, 0, &transcript.StepPayload{Name: path, Kind: transcript.KindAgent,
		Status: transcript.StatusOK, Result: raw})
}

// RootRun builds the parent run of the fixture.
func RootRun(t testing.TB) *Builder {
	t.Helper()
	b := NewBuilder(Root, "")
	b.Add(Started("review-wf"))
	b.Add(Step(transcript.StepStarted, "review", 0, &transcript.StepPayload{Name: "review", Kind: transcript.KindAgent}))
	b.Add(Msg(transcript.MessageUser, "review",
		transcript.Block{Type: transcript.BlockText, Fidelity: transcript.FidelityRouter, Origin: transcript.OriginSystemPrompt, Text: "You are a careful reviewer."},
		transcript.Block{Type: transcript.BlockText, Fidelity: transcript.FidelityRouter, Text: "Review the diff in ./src"}))
	b.Add(Msg(transcript.MessageAssistant, "review",
		transcript.Block{Type: transcript.BlockThinking, Fidelity: transcript.FidelityAgentEmitted, Thinking: "I should list the files first."},
		transcript.TextBlock("Let me look at the files."),
		transcript.Block{Type: transcript.BlockToolUse, Fidelity: transcript.FidelityAgentEmitted, ToolName: "Bash", ToolID: "c1", ToolInput: json.RawMessage(`{"command":"ls -la"}`)}))
	b.Add(Tool(transcript.ToolCall, "review", &transcript.ToolPayload{Name: "Bash", CallID: "c1", Kind: transcript.ToolExecute,
		Command: "ls -la", Input: json.RawMessage(`{"command":"ls -la"}`)}))
	b.Add(Tool(transcript.ToolResult, "review", &transcript.ToolPayload{Name: "Bash", CallID: "c1", Kind: transcript.ToolExecute,
		Output: LongOutput, ExitCode: new(0), Status: transcript.StatusOK}))
	b.Add(Tool(transcript.ToolCall, "review", &transcript.ToolPayload{Name: "Read", CallID: "c2", Kind: transcript.ToolRead,
		Input: json.RawMessage(`{"file_path":"/src/main.go"}`)}))
	b.Unknown("agent.heartbeat", "review")
	b.Raw(`this is not json`)
	b.Add(Msg(transcript.MessageAssistant, "review", transcript.TextBlock("The diff looks fine.")))
	b.Add(AgentDone(t, "review", &transcript.AgentResult{Provider: "claude", ProviderVersion: "2.0.1", Model: "claude-sonnet-4",
		SessionID: "sess-1", Status: transcript.StatusOK, ExitCode: new(0),
		Usage:   &transcript.Usage{InputTokens: new(int64(1000)), OutputTokens: new(int64(200)), CacheReadTokens: new(int64(800))},
		CostUSD: new(0.25), Unmapped: map[string]int{"system/hook_response": 2}, Dangling: []string{"c2"}}))
	b.Add(&transcript.Event{Type: transcript.StepCallWorkflowStarted, Path: "delegate", ChildRunID: Child,
		Payload: &transcript.StepPayload{Name: "delegate", Kind: transcript.KindCallWorkflow}})
	b.Add(&transcript.Event{Type: transcript.StepCallWorkflowCompleted, Path: "delegate", ChildRunID: Child,
		Payload: &transcript.StepPayload{Name: "delegate", Kind: transcript.KindCallWorkflow, Status: transcript.StatusError, Error: "search failed"}})
	b.Add(Completed("review-wf", transcript.StatusOK, ""))
	return b
}

// ChildRun builds the child run of the fixture.
func ChildRun(t testing.TB) *Builder {
	t.Helper()
	b := NewBuilder(Child, Root)
	b.Add(Started("search-wf"))
	b.Add(Step(transcript.StepStarted, "search", 0, &transcript.StepPayload{Name: "search", Kind: transcript.KindAgent}))
	b.Add(Msg(transcript.MessageAssistant, "search", transcript.Block{Type: transcript.BlockCommand,
		Fidelity: transcript.FidelityAgentEmitted, Command: "grep -rn TODO .", ToolID: "c3"}))
	b.Add(Tool(transcript.ToolCall, "search", &transcript.ToolPayload{Name: "shell", CallID: "c3", Kind: transcript.ToolExecute, Command: "grep -rn TODO ."}))
	b.Add(Tool(transcript.ToolResult, "search", &transcript.ToolPayload{Name: "shell", CallID: "c3", ExitCode: new(1), Error: "no matches"}))
	b.Add(AgentDone(t, "search", &transcript.AgentResult{Provider: "codex", ProviderVersion: "0.50.0", Model: "gpt-5",
		Status: transcript.StatusError, Usage: &transcript.Usage{InputTokens: new(int64(50)), OutputTokens: new(int64(5))},
		Unmapped: map[string]int{"event_msg/token_count": 3}}))
	b.Add(Completed("search-wf", transcript.StatusError, "search failed"))
	return b
}

// WriteStore writes the fixture under root/transcripts and returns the
// transcript directory.
func WriteStore(t testing.TB, root string) string {
	t.Helper()
	dir := filepath.Join(root, "transcripts")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	WriteFile(t, filepath.Join(dir, Root+".jsonl"), RootRun(t).Bytes(t))
	WriteFile(t, filepath.Join(dir, Child+".jsonl"), ChildRun(t).Bytes(t))
	return dir
}

// WriteFile writes data to path (mode 0600).
func WriteFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

package transcript

import "github.com/twasm/twasm/internal/vocab"

// Schema is the value of run.started's "schema" field for this format.
const Schema = "twasm.transcript/1"

// EventType is the closed vocabulary of envelope types (spec section 3).
type EventType string

// The event types. Writers emit nothing else.
const (
	RunStarted                EventType = "run.started"
	RunCompleted              EventType = "run.completed"
	StepStarted               EventType = "step.started"
	StepCompleted             EventType = "step.completed"
	StepCallWorkflowStarted   EventType = "step.call_workflow.started"
	StepCallWorkflowCompleted EventType = "step.call_workflow.completed"
	MessageUser               EventType = "message.user"
	MessageAssistant          EventType = "message.assistant"
	ToolCall                  EventType = "tool.call"
	ToolResult                EventType = "tool.result"
)

// eventTypes lists the vocabulary in a stable order.
var eventTypes = []EventType{
	RunStarted, RunCompleted, StepStarted, StepCompleted,
	StepCallWorkflowStarted, StepCallWorkflowCompleted,
	MessageUser, MessageAssistant, ToolCall, ToolResult,
}

// valid reports whether t is in the closed vocabulary.
func (t EventType) valid() bool {
	switch t {
	case RunStarted, RunCompleted, StepStarted, StepCompleted,
		StepCallWorkflowStarted, StepCallWorkflowCompleted,
		MessageUser, MessageAssistant, ToolCall, ToolResult:
		return true
	}
	return false
}

// payloadKind names the payload family an event type carries.
type payloadKind int

// Payload families.
const (
	payloadUnknown payloadKind = iota
	payloadStep
	payloadMessage
	payloadTool
)

// payloadKind returns the payload family of t.
func (t EventType) payloadKind() payloadKind {
	switch t {
	case RunStarted, RunCompleted, StepStarted, StepCompleted,
		StepCallWorkflowStarted, StepCallWorkflowCompleted:
		return payloadStep
	case MessageUser, MessageAssistant:
		return payloadMessage
	case ToolCall, ToolResult:
		return payloadTool
	}
	return payloadUnknown
}

// BlockType is the closed vocabulary of content blocks (spec section 5).
type BlockType string

// The block types.
const (
	BlockText       BlockType = "text"
	BlockThinking   BlockType = "thinking"
	BlockToolUse    BlockType = "tool_use"
	BlockToolResult BlockType = "tool_result"
	BlockCommand    BlockType = "command"
	BlockStream     BlockType = "stream"
)

// blockTypes lists the vocabulary in a stable order.
var blockTypes = []BlockType{BlockText, BlockThinking, BlockToolUse, BlockToolResult, BlockCommand, BlockStream}

// valid reports whether b is in the closed vocabulary.
func (b BlockType) valid() bool { return vocab.BlockType(string(b)) }

// Fidelity says where a block or tool event came from.
type Fidelity string

// The fidelities.
const (
	// FidelityRouter marks what twasm's own seams produced: the prompt it
	// was given, tools called through the router wrapper.
	FidelityRouter Fidelity = "router"
	// FidelityAgentEmitted marks anything parsed from provider output.
	FidelityAgentEmitted Fidelity = "agent_emitted"
)

// valid reports whether f is in the closed vocabulary.
func (f Fidelity) valid() bool { return f == FidelityRouter || f == FidelityAgentEmitted }

// StepKind is the kind of a step. The built-in kinds are listed below; a
// custom kind is any other lower-case identifier (letters, digits, '_',
// '-', '.'), as workflow engines define their own step types.
type StepKind string

// The built-in step kinds.
const (
	KindAgent        StepKind = "agent"
	KindCommand      StepKind = "command"
	KindOperation    StepKind = "operation"
	KindTerminal     StepKind = "terminal"
	KindParallel     StepKind = "parallel"
	KindForEach      StepKind = "for_each"
	KindWhile        StepKind = "while"
	KindCallWorkflow StepKind = "call_workflow"
	// KindWorkflow is the kind carried by run.* events.
	KindWorkflow StepKind = "workflow"
)

// builtin reports whether k is one of the built-in kinds.
func (k StepKind) builtin() bool {
	switch k {
	case KindAgent, KindCommand, KindOperation, KindTerminal, KindParallel,
		KindForEach, KindWhile, KindCallWorkflow, KindWorkflow:
		return true
	}
	return false
}

// Valid reports whether k is a built-in kind or a well-formed custom one.
func (k StepKind) Valid() bool {
	if k.builtin() {
		return true
	}
	if k == "" || len(k) > 64 {
		return false
	}
	for _, r := range string(k) {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

// ToolKind is the optional tool category, as in the Agent Client Protocol.
type ToolKind string

// The tool kinds.
const (
	ToolExecute ToolKind = "execute"
	ToolRead    ToolKind = "read"
	ToolEdit    ToolKind = "edit"
	ToolSearch  ToolKind = "search"
	ToolFetch   ToolKind = "fetch"
	ToolThink   ToolKind = "think"
	ToolOther   ToolKind = "other"
)

// valid reports whether k is empty (unset) or in the vocabulary.
func (k ToolKind) valid() bool { return vocab.ToolKind(string(k)) }

// Origin distinguishes blocks of a message.user event: the user's prompt,
// the system prompt, or context a tool injected (Codex
// <environment_context>, Claude isMeta lines). Empty means "prompt".
type Origin string

// The origins.
const (
	OriginPrompt       Origin = "prompt"
	OriginSystemPrompt Origin = "system_prompt"
	OriginInjected     Origin = "injected_context"
)

// valid reports whether o is empty or in the vocabulary.
func (o Origin) valid() bool {
	switch o {
	case "", OriginPrompt, OriginSystemPrompt, OriginInjected:
		return true
	}
	return false
}

// The statuses. Runs and steps (run.completed, step.completed, agent
// results) end ok, error, incomplete (an agent step without a terminal
// event) or cancelled. A tool.result's status is a closed set too, the
// same words for the router seam and every plugin (spec section 4): ok
// (it ran and succeeded), error (it ran and failed: a non-zero exit, a
// tool error, a stated failure), denied (a permission rule or a person
// refused it before it ran) or cancelled (interrupted, timed out, or
// stopped before it finished); anything but ok carries error text.
const (
	StatusOK         = "ok"
	StatusError      = "error"
	StatusIncomplete = "incomplete" // runs and steps only
	StatusCancelled  = "cancelled"
	StatusDenied     = "denied" // tool results only
)

// validToolStatus reports whether s is empty or one of the tool statuses.
func validToolStatus(s string) bool {
	switch s {
	case "", StatusOK, StatusError, StatusDenied, StatusCancelled:
		return true
	}
	return false
}

// ToolOutcome is the outcome of a tool.result in the closed set, for files
// of any version: its status (an older word mapped), else error when it
// carries an error, is marked an error or states a non-zero exit code,
// else ok. A word no version used is read as error when the result says
// something failed, else ok.
func ToolOutcome(p *ToolPayload) string {
	if st, ok := vocab.ToolStatus(p.Status); ok {
		return st
	}
	if p.Error != "" || p.ExitCode != nil && *p.ExitCode != 0 {
		return StatusError
	}
	return StatusOK
}

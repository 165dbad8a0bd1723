package transcript

import (
	"encoding/json"
	"fmt"
	"time"
)

// Event is one line of a transcript.
type Event struct {
	// Seq is assigned by the recorder: 1..N, strictly increasing in file
	// order. A caller-supplied value is ignored by the recorder.
	Seq         uint64
	RunID       string
	ParentRunID string // omitempty
	ChildRunID  string // omitempty
	Type        EventType
	Path        string
	Iteration   int
	// Timestamp is when the event happened as best known; it is written
	// in UTC with millisecond precision.
	Timestamp time.Time
	// Payload is *StepPayload, *MessagePayload or *ToolPayload according
	// to Type. An event of an unknown type read from a file carries a
	// *RawPayload.
	Payload Payload
	// Extra holds envelope fields this version does not know, kept so that
	// reading and writing a line loses nothing. Keys are field names,
	// values are raw JSON.
	Extra map[string]json.RawMessage
}

// Payload is implemented by the payload types of this package.
type Payload interface{ payloadKind() payloadKind }

func (*StepPayload) payloadKind() payloadKind    { return payloadStep }
func (*MessagePayload) payloadKind() payloadKind { return payloadMessage }
func (*ToolPayload) payloadKind() payloadKind    { return payloadTool }
func (*RawPayload) payloadKind() payloadKind     { return payloadUnknown }

// Step returns the step payload, or nil when the event carries another one.
func (e *Event) Step() *StepPayload { p, _ := e.Payload.(*StepPayload); return p }

// Message returns the message payload, or nil.
func (e *Event) Message() *MessagePayload { p, _ := e.Payload.(*MessagePayload); return p }

// Tool returns the tool payload, or nil.
func (e *Event) Tool() *ToolPayload { p, _ := e.Payload.(*ToolPayload); return p }

// RawPayload is the payload of an event whose type this version does not
// know: kept verbatim.
type RawPayload struct {
	JSON json.RawMessage
}

// Producer names the program that wrote a transcript.
type Producer struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// StepPayload is the payload of run.* and step.* events.
type StepPayload struct {
	Name string
	Kind StepKind
	// Status is set on run.completed, step.completed and
	// step.call_workflow.completed: ok, error, cancelled or incomplete.
	Status string
	Error  string
	// Result is arbitrary JSON; for agent steps it is an [AgentResult].
	Result json.RawMessage
	// Schema and Producer are set on run.started.
	Schema   string
	Producer *Producer
	// Attempt is the zero-based retry attempt of the step, when retried.
	Attempt int
	Extra   map[string]json.RawMessage
}

// AgentResult returns Result decoded as an agent result.
func (p *StepPayload) AgentResult() (*AgentResult, error) {
	if len(p.Result) == 0 {
		return nil, nil
	}
	var r AgentResult
	if err := json.Unmarshal(p.Result, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Usage is the provider-neutral token count. A figure the provider does not
// state is nil (left out), never guessed as 0.
//
// The first five figures are those of the first version of the format
// (spec §4): InputTokens counts every input token, cached or not, so a
// reader that knows only them stays right. The others were added so the
// figures read as the providers bill them (uncached input, cache read,
// cache write, output as separate counters): UncachedInputTokens,
// CacheWrite1hTokens and TotalTokens. An older transcript has none of
// them; Uncached derives the uncached input from the other figures.
type Usage struct {
	// InputTokens is every input token consumed, cached or not.
	InputTokens *int64 `json:"input_tokens,omitempty"`
	// UncachedInputTokens is the part of InputTokens neither read from nor
	// written to a cache: what the providers' consoles and ccusage call
	// "input". InputTokens = UncachedInputTokens + CacheReadTokens +
	// CacheWriteTokens.
	UncachedInputTokens *int64 `json:"uncached_input_tokens,omitempty"`
	// CacheReadTokens and CacheWriteTokens are the parts of InputTokens
	// read from and written to a prompt cache.
	CacheReadTokens  *int64 `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens *int64 `json:"cache_write_tokens,omitempty"`
	// CacheWrite1hTokens is the part of CacheWriteTokens written at a
	// one-hour lifetime (Anthropic prices it apart from the five-minute
	// one, the rest of CacheWriteTokens).
	CacheWrite1hTokens *int64 `json:"cache_write_1h_tokens,omitempty"`
	// OutputTokens is every output token, reasoning included.
	OutputTokens *int64 `json:"output_tokens,omitempty"`
	// ReasoningTokens is the reasoning part of OutputTokens.
	ReasoningTokens *int64 `json:"reasoning_tokens,omitempty"`
	// TotalTokens is the total the provider states, as it states it
	// (Codex, OpenAI, Gemini and Pi state one; what it counts is the
	// provider's: it is kept, not checked against the other figures).
	TotalTokens *int64 `json:"total_tokens,omitempty"`
	// ServiceTier is the service tier the provider states it served the
	// request at, as it names it (OpenAI's service_tier: "default",
	// "flex", "priority", "scale"; Anthropic's usage.service_tier:
	// "standard", "priority", "batch"): it says which rates the tokens
	// are billed at. Left out where the provider states none (never
	// guessed as the standard tier). A usage summed over requests
	// (Add) has their tier when they all state the same one, else
	// ServiceTierMixed.
	ServiceTier string `json:"service_tier,omitempty"`
}

// ServiceTierMixed is the service tier of a usage summed over requests
// that do not all state the same tier (one states none, or another
// tier): no single tier's rates price the sum.
const ServiceTierMixed = "mixed"

// figures lists u's counters, in the order they are written.
func (u *Usage) figures() [8]**int64 {
	return [8]**int64{&u.InputTokens, &u.UncachedInputTokens, &u.CacheReadTokens, &u.CacheWriteTokens,
		&u.CacheWrite1hTokens, &u.OutputTokens, &u.ReasoningTokens, &u.TotalTokens}
}

// usageNames are the JSON names of the counters, in figures' order.
var usageNames = [8]string{"input_tokens", "uncached_input_tokens", "cache_read_tokens", "cache_write_tokens",
	"cache_write_1h_tokens", "output_tokens", "reasoning_tokens", "total_tokens"}

// IsZero reports whether no figure is set (the service tier is not a
// figure: a usage that states only a tier counts no token).
func (u *Usage) IsZero() bool {
	if u == nil {
		return true
	}
	for _, f := range u.figures() {
		if *f != nil {
			return false
		}
	}
	return true
}

// Add adds every figure of o that is set to u. The uncached input of
// either that lacks it (an older transcript) is derived first (Uncached),
// so a sum over old and new transcripts counts every run's in it. The
// sum's service tier is the one both state, o's when u holds nothing
// yet, else ServiceTierMixed (a usage of no figure changes nothing, its
// tier neither).
func (u *Usage) Add(o *Usage) {
	if o == nil {
		return
	}
	switch {
	case o.IsZero():
	case u.IsZero() && u.ServiceTier == "":
		u.ServiceTier = o.ServiceTier
	case u.ServiceTier != o.ServiceTier:
		u.ServiceTier = ServiceTierMixed
	}
	if u.UncachedInputTokens == nil && u.InputTokens != nil {
		n, _ := u.Uncached()
		u.UncachedInputTokens = &n
	}
	o = o.Billed()
	of := o.figures()
	for i, dst := range u.figures() {
		v := *of[i]
		if v == nil {
			continue
		}
		if *dst == nil {
			n := *v
			*dst = &n
			continue
		}
		**dst += *v
	}
}

// Set replaces every figure of u that o states (a figure o leaves out
// stays as it was), and the service tier when o states one.
func (u *Usage) Set(o *Usage) {
	if o == nil {
		return
	}
	if o.ServiceTier != "" {
		u.ServiceTier = o.ServiceTier
	}
	of := o.figures()
	for i, dst := range u.figures() {
		if v := *of[i]; v != nil {
			n := *v
			*dst = &n
		}
	}
}

// Uncached is the uncached input: UncachedInputTokens where it is set,
// else (a transcript written before it existed, or by an older plugin)
// InputTokens less the cache read and write it states. ok is false when
// neither is known.
func (u *Usage) Uncached() (n int64, ok bool) {
	if u == nil {
		return 0, false
	}
	if u.UncachedInputTokens != nil {
		return *u.UncachedInputTokens, true
	}
	if u.InputTokens == nil {
		return 0, false
	}
	n = *u.InputTokens
	if u.CacheReadTokens != nil {
		n -= *u.CacheReadTokens
	}
	if u.CacheWriteTokens != nil {
		n -= *u.CacheWriteTokens
	}
	return n, true
}

// Sub subtracts o's figures from u's where both state one (the uncached
// input of either derived first, as Add does) and returns the JSON names
// of the figures o has more of: those are left as they were, never made
// negative.
func (u *Usage) Sub(o *Usage) (odd []string) {
	if o == nil {
		return nil
	}
	if u.UncachedInputTokens == nil && u.InputTokens != nil {
		n, _ := u.Uncached()
		u.UncachedInputTokens = &n
	}
	of := o.Billed().figures()
	for i, dst := range u.figures() {
		v := *of[i]
		if *dst == nil || v == nil {
			continue
		}
		if **dst < *v {
			odd = append(odd, usageNames[i])
			continue
		}
		n := **dst - *v
		*dst = &n
	}
	return odd
}

// Check reports whether u's counters agree (spec §4): none is negative,
// the uncached input, cache read and cache write add up to the whole
// input where the uncached input and the input are both stated, and the
// one-hour cache write is a part of the cache write.
func (u *Usage) Check() error {
	if u == nil {
		return nil
	}
	for i, f := range u.figures() {
		if *f != nil && **f < 0 {
			return fmt.Errorf("usage: %s is %d, below 0", usageNames[i], **f)
		}
	}
	val := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	}
	if u.InputTokens != nil && u.UncachedInputTokens != nil {
		if sum := *u.UncachedInputTokens + val(u.CacheReadTokens) + val(u.CacheWriteTokens); sum != *u.InputTokens {
			return fmt.Errorf("usage: uncached_input_tokens + cache_read_tokens + cache_write_tokens is %d, input_tokens %d", sum, *u.InputTokens)
		}
	}
	if u.CacheWrite1hTokens != nil && *u.CacheWrite1hTokens > val(u.CacheWriteTokens) {
		return fmt.Errorf("usage: cache_write_1h_tokens %d is above cache_write_tokens %d", *u.CacheWrite1hTokens, val(u.CacheWriteTokens))
	}
	return nil
}

// Billed is u with UncachedInputTokens derived (Uncached) where it is
// missing: the shape a report shows. u is not changed.
func (u *Usage) Billed() *Usage {
	if u == nil {
		return nil
	}
	c := *u
	if c.UncachedInputTokens == nil {
		if n, ok := u.Uncached(); ok {
			c.UncachedInputTokens = &n
		}
	}
	return &c
}

// RawRef says where the raw provider bytes of a step are kept.
type RawRef struct {
	Path   string `json:"path"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
	// Stderr is the path of the captured stderr, when there was one.
	Stderr string `json:"stderr,omitempty"`
}

// PluginRef identifies the normalizer plugin that produced a step.
type PluginRef struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	SHA256  string `json:"sha256,omitempty"`
}

// AgentResult is step.completed.result for an agent step (spec section 4).
type AgentResult struct {
	Provider        string `json:"provider"`
	ProviderVersion string `json:"provider_version,omitempty"`
	Format          string `json:"format,omitempty"`
	SessionID       string `json:"session_id,omitempty"`
	Model           string `json:"model,omitempty"`
	// Cwd is the agent's working directory and Project the repository
	// root holding it, where the provider's data states them (spec §4);
	// a reader takes a run's project as Project, else Cwd.
	Cwd       string     `json:"cwd,omitempty"`
	Project   string     `json:"project,omitempty"`
	Status    string     `json:"status"`
	Error     string     `json:"error,omitempty"`
	ExitCode  *int       `json:"exit_code,omitempty"`
	Usage     *Usage     `json:"usage,omitempty"`
	CostUSD   *float64   `json:"cost_usd,omitempty"`
	FinalText string     `json:"final_text,omitempty"`
	Raw       *RawRef    `json:"raw,omitempty"`
	Plugin    *PluginRef `json:"plugin,omitempty"`
	// Unmapped counts native line types the plugin did not map: the drift
	// signal.
	Unmapped map[string]int `json:"unmapped,omitempty"`
	// Dangling lists the call ids of tool calls that never got a result.
	Dangling []string `json:"dangling,omitempty"`
	// FailedLines counts raw lines lost to a plugin fault.
	FailedLines int `json:"failed_lines,omitempty"`
	// Redacted counts masked values by kind, when redaction ran.
	Redacted map[string]int `json:"redacted,omitempty"`
	Warnings []string       `json:"warnings,omitempty"`
	Lines    int            `json:"lines,omitempty"`
	// Errors lists every error the provider reported during the step, in
	// order (spec section 4): nothing a provider reports as an error is
	// dropped or only counted.
	Errors []ProviderError `json:"errors,omitempty"`
}

// ProjectDir is the project a reader files the step under: the
// repository root, else the working directory (spec §4); "" when the
// provider's data states neither.
func (r *AgentResult) ProjectDir() string { return ProjectOf(r.Project, r.Cwd) }

// ProjectOf is a step's project from its result's project and cwd
// members: the repository root, else the working directory. Readers
// that decode only those members (the index) use it too.
func ProjectOf(project, cwd string) string {
	if project != "" {
		return project
	}
	return cwd
}

// ProviderError is one error a provider reported during an agent step: a
// non-fatal error event, a rate limit, an overloaded or auth error, an
// error item, or the error of its terminal event.
type ProviderError struct {
	Message string `json:"message"`
	// Code is the provider's code for it, when it gives one.
	Code string `json:"code,omitempty"`
	// RawLine is the 1-based line of the raw capture it came from (0 when
	// it came from the end of the stream).
	RawLine int `json:"raw_line,omitempty"`
	// Scope names the sub-agent it happened in, when not the step itself.
	Scope string `json:"scope,omitempty"`
}

// MessagePayload is the payload of message.user and message.assistant.
type MessagePayload struct {
	Role       string
	Blocks     []Block
	Model      string
	ID         string
	StopReason string
	Usage      *Usage
	// RawLine is the 1-based line of the raw capture the message starts
	// at, when it came from provider output (audit pointer).
	RawLine int
	Extra   map[string]json.RawMessage
}

// ToolPayload is the payload of tool.call and tool.result.
type ToolPayload struct {
	Name   string
	CallID string
	// Input is the tool input (on tool.call): a JSON object when the
	// provider gave JSON, even if the provider sent it as a string.
	Input json.RawMessage
	// Output is the tool output (on tool.result). HasOutput says the
	// tool returned one, empty or not: without it an empty Output is no
	// output at all, and the line leaves output out (spec section 4: a
	// result the provider gave no output for has none, never a stand-in).
	// Reading a line sets it when output is there.
	Output    string
	HasOutput bool
	Error     string
	Fidelity  Fidelity
	Kind      ToolKind
	Command   string
	ExitCode  *int
	Status    string
	RawLine   int
	Extra     map[string]json.RawMessage
}

// Block is one content block. Which fields are meaningful depends on Type.
type Block struct {
	Type        BlockType
	Fidelity    Fidelity
	Text        string          // text
	Thinking    string          // thinking
	Redacted    bool            // thinking: redacted or encrypted by the provider
	ToolName    string          // tool_use
	ToolID      string          // tool_use, tool_result, command
	ToolInput   json.RawMessage // tool_use
	ToolContent string          // tool_result
	IsError     bool            // tool_result
	Command     string          // command
	Chunk       string          // stream
	Origin      Origin          // message.user blocks
	Extra       map[string]json.RawMessage
}

// TextBlock returns an agent-emitted text block.
func TextBlock(s string) Block {
	return Block{Type: BlockText, Fidelity: FidelityAgentEmitted, Text: s}
}

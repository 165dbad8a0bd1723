package sdk

import (
	"unsafe"

	"github.com/twasm/twasm/abi"
)

// Out is where a normalizer reports records. Its methods never fail: they
// append to a buffer the SDK hands to the host when the call returns.
type Out struct {
	enc abi.Encoder
	// base and limit delimit the host's input of the current call, so a
	// span can be written as an offset into it.
	base, limit uintptr
	lineNo      int // line being handled; 0 at End
	lineSent    int // last line number announced with OpLine
}

func (o *Out) reset(input []byte) {
	o.enc.Reset()
	o.base, o.limit = 0, 0
	if len(input) > 0 {
		o.base = uintptr(unsafe.Pointer(unsafe.SliceData(input)))
		o.limit = o.base + uintptr(len(input))
	}
	// After a panic the previous call never cleared lineNo: a record at
	// End must not claim that call's line.
	o.lineNo, o.lineSent = 0, 0
}

func (o *Out) begin(op abi.Op) {
	if o.lineNo != 0 && o.lineNo != o.lineSent {
		o.enc.Begin(abi.OpLine)
		o.enc.Int(abi.TLine, int64(o.lineNo))
		o.enc.End()
		o.lineSent = o.lineNo
	}
	o.enc.Begin(op)
}

// str takes s by pointer: a Str is six words, and Block alone writes
// eight of them; copying each one costs more than the write in wasm. It
// inlines, so that the many unset fields cost no call.
func (o *Out) str(t abi.Tag, s *Str) {
	if s.set {
		o.strSet(t, s)
	}
}

func (o *Out) strSet(t abi.Tag, s *Str) {
	if s.doc == nil {
		if s.mode == abi.SpanJSON {
			o.enc.JSON(t, []byte(s.lit))
			return
		}
		o.enc.Str(t, s.lit)
		return
	}
	raw := s.raw()
	if len(raw) > 0 {
		p := uintptr(unsafe.Pointer(unsafe.SliceData(raw)))
		if p >= o.base && p+uintptr(len(raw)) <= o.limit {
			o.enc.Span(t, int(p-o.base), len(raw), s.mode)
			return
		}
	}
	// Not in the host's input (a document the plugin assembled): resolve
	// here.
	switch s.mode {
	case abi.SpanJSON:
		o.enc.JSON(t, raw)
	case abi.SpanString:
		b, ok := abi.Unescape(nil, raw)
		if !ok {
			b = raw
		}
		o.enc.Bytes(t, b)
	case abi.SpanJSONString:
		if b, ok := abi.Unescape(nil, raw); ok {
			if _, isJSON := abi.BuildTape(nil, b); isJSON {
				o.enc.JSON(t, b)
				return
			}
			o.enc.Bytes(t, b)
			return
		}
		o.enc.Bytes(t, raw)
	default:
		o.enc.Bytes(t, raw)
	}
}

func (o *Out) lit(t abi.Tag, s string) {
	if s != "" {
		o.enc.Str(t, s)
	}
}

// flag writes a boolean field only when it is true.
func (o *Out) flag(t abi.Tag, b bool) {
	if b {
		o.enc.Bool(t, true)
	}
}

func (o *Out) num(t abi.Tag, n Int) {
	if n.set {
		o.enc.Int(t, n.v)
	}
}

func (o *Out) usage(u Usage) {
	o.num(abi.TInputTokens, u.Input)
	o.num(abi.TCacheReadTokens, u.CacheRead)
	o.num(abi.TCacheWriteTokens, u.CacheWrite)
	o.num(abi.TOutputTokens, u.Output)
	o.num(abi.TReasoningTokens, u.Reasoning)
}

// Meta reports step metadata. The first value of each field wins unless
// Override is set.
type Meta struct {
	SessionID, Model, ProviderVersion, Format Str
	Override                                  bool
	// NoTerminal says the format has no terminal event (a session log):
	// the host derives the step's status (see abi, "Final status").
	NoTerminal bool
}

// Meta reports session id, model, provider version or format.
func (o *Out) Meta(m Meta) {
	o.begin(abi.OpMeta)
	o.str(abi.TSessionID, &m.SessionID)
	o.str(abi.TModel, &m.Model)
	o.str(abi.TProviderVersion, &m.ProviderVersion)
	o.str(abi.TFormat, &m.Format)
	o.flag(abi.TOverride, m.Override)
	o.flag(abi.TNoTerminal, m.NoTerminal)
	o.enc.End()
}

// Message is the header of a message.
type Message struct {
	Role      string // RoleAssistant (default) or RoleUser
	ID, Model Str
	Scope     Str // sub-agent scope; unset for the step itself
	Time      Str // the provider's timestamp (RFC 3339), if any
}

// Open opens message key (or updates its empty header fields when it is
// open already).
func (o *Out) Open(key Str, m Message) {
	o.begin(abi.OpMsgOpen)
	o.str(abi.TKey, &key)
	role := m.Role
	if role == "" {
		role = RoleAssistant
	}
	o.enc.Str(abi.TRole, role)
	o.str(abi.TID, &m.ID)
	o.str(abi.TModel, &m.Model)
	o.str(abi.TScope, &m.Scope)
	o.str(abi.TTime, &m.Time)
	o.enc.End()
}

// Block is a content block.
type Block struct {
	Type                        string // BlockText, BlockThinking, ...
	Text, Thinking              Str
	ToolName, ToolID, ToolInput Str
	ToolContent, Command, Chunk Str
	Redacted, IsError           bool
	Origin                      string // user messages: OriginPrompt, OriginSystemPrompt, OriginInjected
}

// Block sets the block at slot of message key (slot -1 appends).
func (o *Out) Block(key Str, slot int, b Block) {
	o.begin(abi.OpBlock)
	o.str(abi.TKey, &key)
	o.enc.Int(abi.TSlot, int64(slot))
	o.enc.Str(abi.TBlockType, b.Type)
	o.str(abi.TText, &b.Text)
	o.str(abi.TThinking, &b.Thinking)
	o.str(abi.TToolName, &b.ToolName)
	o.str(abi.TToolID, &b.ToolID)
	o.str(abi.TToolInput, &b.ToolInput)
	o.str(abi.TToolContent, &b.ToolContent)
	o.str(abi.TCommand, &b.Command)
	o.str(abi.TChunk, &b.Chunk)
	o.flag(abi.TRedacted, b.Redacted)
	o.flag(abi.TIsError, b.IsError)
	o.lit(abi.TOrigin, b.Origin)
	o.enc.End()
}

// Append appends s to field of the block at slot of message key.
func (o *Out) Append(key Str, slot int, field Field, s Str) {
	if !s.set {
		return
	}
	o.begin(abi.OpAppend)
	o.str(abi.TKey, &key)
	o.enc.Int(abi.TSlot, int64(slot))
	o.enc.Int(abi.TField, int64(field))
	o.str(abi.TValue, &s)
	o.enc.End()
}

// MessageEnd is what closing a message may add.
type MessageEnd struct {
	StopReason, Model, ID Str
	Usage                 Usage
}

// Close closes message key: the host writes it now.
func (o *Out) Close(key Str, e MessageEnd) {
	o.begin(abi.OpMsgClose)
	o.str(abi.TKey, &key)
	o.str(abi.TStopReason, &e.StopReason)
	o.str(abi.TModel, &e.Model)
	o.str(abi.TID, &e.ID)
	o.usage(e.Usage)
	o.enc.End()
}

// ToolCall is a tool invocation the agent reported.
type ToolCall struct {
	CallID, Name Str
	Input        Str    // use JSON(v) for the input value
	Kind         string // "execute", "read", "edit", "search", "fetch", "think", "other"
	Command      Str    // the shell command line, for execute
	Scope, Time  Str
}

// ToolCall reports a tool.call.
func (o *Out) ToolCall(c ToolCall) {
	o.begin(abi.OpToolCall)
	o.str(abi.TCallID, &c.CallID)
	o.str(abi.TName, &c.Name)
	o.str(abi.TInput, &c.Input)
	o.lit(abi.TKind, c.Kind)
	o.str(abi.TCommand, &c.Command)
	o.str(abi.TScope, &c.Scope)
	o.str(abi.TTime, &c.Time)
	o.enc.End()
}

// ToolResult is the outcome of a tool call.
type ToolResult struct {
	CallID, Name, Output, Error Str
	IsError                     bool
	ExitCode                    Int
	Status                      Str // e.g. "completed", "failed", "declined"
	Scope, Time                 Str
}

// ToolResult reports a tool.result.
func (o *Out) ToolResult(r ToolResult) {
	o.begin(abi.OpToolResult)
	o.str(abi.TCallID, &r.CallID)
	o.str(abi.TName, &r.Name)
	o.str(abi.TOutput, &r.Output)
	o.str(abi.TError, &r.Error)
	o.flag(abi.TIsError, r.IsError)
	o.num(abi.TExitCode, r.ExitCode)
	o.str(abi.TStatus, &r.Status)
	o.str(abi.TScope, &r.Scope)
	o.str(abi.TTime, &r.Time)
	o.enc.End()
}

// Usage reports token figures for the step: mode abi.ModeAdd adds them to
// the total, abi.ModeSet replaces it (cumulative counters).
func (o *Out) Usage(u Usage, mode string) {
	if u.IsZero() {
		return
	}
	o.begin(abi.OpUsage)
	o.usage(u)
	o.lit(abi.TMode, mode)
	o.enc.End()
}

// Cost reports a cost in USD (mode as for Usage).
func (o *Out) Cost(usd float64, mode string) {
	o.begin(abi.OpCost)
	o.enc.Float(abi.TCost, usd)
	o.lit(abi.TMode, mode)
	o.enc.End()
}

// Status reports the step status at a level (abi.LevelTerminal for the
// provider's terminal event, abi.LevelError for error fields).
func (o *Out) Status(status string, err Str, level int) {
	o.begin(abi.OpStatus)
	o.enc.Str(abi.TStatus, status)
	o.str(abi.TError, &err)
	o.enc.Int(abi.TLevel, int64(level))
	o.enc.End()
}

// Final reports the final answer text.
func (o *Out) Final(text Str, override bool) {
	o.begin(abi.OpFinal)
	o.str(abi.TText, &text)
	o.flag(abi.TOverride, override)
	o.enc.End()
}

// Unmapped counts a native line type the plugin did not map.
func (o *Out) Unmapped(native Str) { o.UnmappedN(native, 1) }

// UnmappedN counts n lines of a native type the plugin did not map in one
// record (the lines of a pretty-printed document that did not parse, say);
// nothing when n < 1.
func (o *Out) UnmappedN(native Str, n int) {
	if n < 1 {
		return
	}
	o.begin(abi.OpUnmapped)
	if !native.set {
		native = S("(unknown)")
	}
	o.str(abi.TNative, &native)
	o.enc.Int(abi.TCount, int64(n))
	o.enc.End()
}

// Ignored declares the current line a native type the plugin knows and
// deliberately ignores (spec 6.8): a delta a later line repeats in full, a
// heartbeat, a "$set" patch. A line with no record and no such
// declaration is counted unmapped "(no record)" by the host.
func (o *Out) Ignored(native Str) { o.IgnoredN(native, 1) }

// IgnoredN declares n lines ending at the current one ignored in one
// record (the inner lines of a document reassembled with [DocBuffer],
// say); nothing when n < 1.
func (o *Out) IgnoredN(native Str, n int) {
	if n < 1 {
		return
	}
	o.begin(abi.OpIgnored)
	if !native.set {
		native = S("(unknown)")
	}
	o.str(abi.TNative, &native)
	o.enc.Int(abi.TCount, int64(n))
	o.enc.End()
}

// ProviderError is an error the provider reported.
type ProviderError struct {
	// Message is the error's text (required: an empty one is reported
	// as "error").
	Message Str
	// Code is the provider's code for it ("rate_limit_error", "429").
	Code Str
	// Scope is the sub-agent it happened in ("" for the step).
	Scope Str
}

// Error reports an error the provider reported during the step: a
// non-fatal error event, a rate limit, an overloaded or auth error, an
// error item. The host lists it in the step result's errors (with the
// raw line) and counts it as an error field for the status (see abi,
// "Final status"). It does not end the step: report the terminal event's
// status with [Out.Status] as before.
func (o *Out) Error(e ProviderError) {
	o.begin(abi.OpError)
	if !e.Message.set {
		e.Message = S("error")
	}
	o.str(abi.TText, &e.Message)
	o.str(abi.TCode, &e.Code)
	o.str(abi.TScope, &e.Scope)
	o.enc.End()
}

// ScopeOpen opens a sub-agent scope, linked to the tool call that started
// it.
func (o *Out) ScopeOpen(scope, parentToolID, name, description Str) {
	o.begin(abi.OpScopeOpen)
	o.str(abi.TScope, &scope)
	o.str(abi.TParentToolID, &parentToolID)
	o.str(abi.TName, &name)
	o.str(abi.TText, &description)
	o.enc.End()
}

// ScopeClose ends a sub-agent scope.
func (o *Out) ScopeClose(scope Str, status string, err Str) {
	o.begin(abi.OpScopeClose)
	o.str(abi.TScope, &scope)
	o.lit(abi.TStatus, status)
	o.str(abi.TError, &err)
	o.enc.End()
}

// Warn reports a warning for the step result.
func (o *Out) Warn(msg string) {
	o.begin(abi.OpWarning)
	o.enc.Str(abi.TText, msg)
	o.enc.End()
}

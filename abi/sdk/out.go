package sdk

import (
	"unsafe"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/wire"
)

// Out is where a normalizer reports records. Its methods never fail: they
// append to a buffer the SDK hands to the host when the call returns.
type Out struct {
	enc wire.Encoder
	// base and limit delimit the host's input of the current call, so a
	// span can be written as an offset into it.
	base, limit uintptr
	lineNo      int // line being handled; 0 at End
	lineSent    int // last line number announced with OpLine
	// text and toks are reused from field to field for a span the SDK
	// resolves itself (one of a document the plugin assembled): the
	// encoder copies what it is given, so nothing is allocated per field.
	text []byte
	toks []wire.Token
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

func (o *Out) begin(op wire.Op) {
	if o.lineNo != 0 && o.lineNo != o.lineSent {
		o.enc.Begin(wire.OpLine)
		o.enc.Int(wire.TLine, int64(o.lineNo))
		o.enc.End()
		o.lineSent = o.lineNo
	}
	o.enc.Begin(op)
}

// str takes s by pointer: a Str is six words, and Block alone writes
// eight of them; copying each one costs more than the write in wasm. It
// inlines, so that the many unset fields cost no call.
func (o *Out) str(t wire.Tag, s *Str) {
	if s.set {
		o.strSet(t, s)
	}
}

func (o *Out) strSet(t wire.Tag, s *Str) {
	if s.doc == nil {
		if s.mode == wire.SpanJSON {
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
	case wire.SpanJSON:
		o.enc.JSON(t, raw)
	case wire.SpanString:
		b, ok := wire.Unescape(o.text[:0], raw)
		o.text = b
		if !ok {
			b = raw
		}
		o.enc.Bytes(t, b)
	case wire.SpanJSONString:
		b, ok := wire.Unescape(o.text[:0], raw)
		o.text = b
		if ok {
			var isJSON bool
			if o.toks, isJSON = wire.BuildTape(o.toks[:0], b); isJSON {
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

func (o *Out) lit(t wire.Tag, s string) {
	if s != "" {
		o.enc.Str(t, s)
	}
}

// flag writes a boolean field only when it is true.
func (o *Out) flag(t wire.Tag, b bool) {
	if b {
		o.enc.Bool(t, true)
	}
}

func (o *Out) num(t wire.Tag, n Int) {
	if n.set {
		o.enc.Int(t, n.v)
	}
}

func (o *Out) usage(u Usage) {
	o.num(wire.TInputTokens, u.Input)
	o.num(wire.TCacheReadTokens, u.CacheRead)
	o.num(wire.TCacheWriteTokens, u.CacheWrite)
	o.num(wire.TOutputTokens, u.Output)
	o.num(wire.TReasoningTokens, u.Reasoning)
	o.num(wire.TUncachedInputTokens, u.uncached())
	o.num(wire.TCacheWrite1hTokens, u.CacheWrite1h)
	o.num(wire.TTotalTokens, u.Total)
	o.lit(wire.TServiceTier, u.Tier)
}

// Meta reports step metadata. The first value of each field wins unless
// Override is set.
type Meta struct {
	SessionID, Model, ProviderVersion, Format Str
	// Cwd is the agent's working directory and Project the repository
	// root holding it (ABI 1.6), each only where the provider's data
	// states it: a plugin never guesses a root from a path.
	Cwd, Project Str
	Override     bool
	// NoTerminal says the format has no terminal event (a session log):
	// the host derives the step's status (see abi, "Final status").
	NoTerminal bool
}

// Meta reports session id, model, provider version, format, working
// directory or repository root.
func (o *Out) Meta(m Meta) {
	o.begin(wire.OpMeta)
	o.str(wire.TSessionID, &m.SessionID)
	o.str(wire.TModel, &m.Model)
	o.str(wire.TProviderVersion, &m.ProviderVersion)
	o.str(wire.TFormat, &m.Format)
	o.str(wire.TCwd, &m.Cwd)
	o.str(wire.TProject, &m.Project)
	o.flag(wire.TOverride, m.Override)
	o.flag(wire.TNoTerminal, m.NoTerminal)
	o.enc.End()
}

// LatestModel reports model v as the step's model when v is a string
// other than "" and *last, and keeps it in *last: for a provider that
// names the model of every answer, the latest answer's model is the
// step's (the first reported plainly, each change with Override).
func (o *Out) LatestModel(v abi.Value, last *string) {
	if v.Kind() != abi.KindString || v.Is("") || v.Is(*last) {
		return
	}
	o.Meta(Meta{Model: Text(v), Override: *last != ""})
	*last = v.String()
}

// Message is the header of a message.
type Message struct {
	User      bool // a user message; an assistant message when false
	ID, Model Str
	Scope     Str // sub-agent scope; unset for the step itself
	Time      Str // the provider's timestamp (RFC 3339), if any
}

// Open opens message key (or updates its empty header fields when it is
// open already).
func (o *Out) Open(key Str, m Message) {
	o.begin(wire.OpMsgOpen)
	o.str(wire.TKey, &key)
	role := "assistant"
	if m.User {
		role = "user"
	}
	o.enc.Str(wire.TRole, role)
	o.str(wire.TID, &m.ID)
	o.str(wire.TModel, &m.Model)
	o.str(wire.TScope, &m.Scope)
	o.str(wire.TTime, &m.Time)
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
	o.begin(wire.OpBlock)
	o.str(wire.TKey, &key)
	o.enc.Int(wire.TSlot, int64(slot))
	o.enc.Str(wire.TBlockType, b.Type)
	o.str(wire.TText, &b.Text)
	o.str(wire.TThinking, &b.Thinking)
	o.str(wire.TToolName, &b.ToolName)
	o.str(wire.TToolID, &b.ToolID)
	o.str(wire.TToolInput, &b.ToolInput)
	o.str(wire.TToolContent, &b.ToolContent)
	o.str(wire.TCommand, &b.Command)
	o.str(wire.TChunk, &b.Chunk)
	o.flag(wire.TRedacted, b.Redacted)
	o.flag(wire.TIsError, b.IsError)
	o.lit(wire.TOrigin, b.Origin)
	o.enc.End()
}

// Append appends s to the block at slot of message key, to the one field
// of its type that grows by deltas: the text of a BlockText block, the
// thinking of BlockThinking, the input of BlockToolUse (JSON text, parsed
// when the message closes), the content of BlockToolResult, the command
// of BlockCommand, the chunk of BlockStream. An empty slot becomes a block
// of that type (the host makes text and thinking blocks; see abi, OpAppend).
// Another type is refused by the host with a warning.
func (o *Out) Append(key Str, slot int, blockType string, s Str) {
	if !s.set {
		return
	}
	o.begin(wire.OpAppend)
	o.str(wire.TKey, &key)
	o.enc.Int(wire.TSlot, int64(slot))
	o.enc.Int(wire.TField, int64(appendField(blockType)))
	o.str(wire.TValue, &s)
	o.enc.End()
}

// appendField is the field Append grows in a block of type t; 0, which
// the host refuses, for a type without one.
func appendField(t string) wire.Tag {
	switch t {
	case BlockText:
		return wire.TText
	case BlockThinking:
		return wire.TThinking
	case BlockToolUse:
		return wire.TToolInput
	case BlockToolResult:
		return wire.TToolContent
	case BlockCommand:
		return wire.TCommand
	case BlockStream:
		return wire.TChunk
	}
	return 0
}

// MessageEnd is what closing a message may add.
type MessageEnd struct {
	StopReason, Model, ID Str
	Usage                 Usage
}

// Close closes message key: the host writes it now.
func (o *Out) Close(key Str, e MessageEnd) {
	o.begin(wire.OpMsgClose)
	o.str(wire.TKey, &key)
	o.str(wire.TStopReason, &e.StopReason)
	o.str(wire.TModel, &e.Model)
	o.str(wire.TID, &e.ID)
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
	// Revised (ABI 1.13) says the call is a new version of the call of
	// its id reported before, changed in place (its message rewritten
	// and read again under a new key): the host writes it as that
	// call's latest version, counted once, its input replacing the
	// earlier one. With no call of its id reported before it is an
	// ordinary call. A host of 1.12 or before ignores it.
	Revised bool
}

// ToolCall reports a tool.call.
func (o *Out) ToolCall(c ToolCall) {
	o.begin(wire.OpToolCall)
	o.str(wire.TCallID, &c.CallID)
	o.str(wire.TName, &c.Name)
	o.str(wire.TInput, &c.Input)
	o.lit(wire.TKind, c.Kind)
	o.str(wire.TCommand, &c.Command)
	o.str(wire.TScope, &c.Scope)
	o.str(wire.TTime, &c.Time)
	o.flag(wire.TRevised, c.Revised)
	o.enc.End()
}

// ToolUse writes a tool call the model made at block slot of message
// key: its tool_use block (c's name, id and input) and its tool.call.
func (o *Out) ToolUse(key Str, slot int, c ToolCall) {
	o.Block(key, slot, Block{Type: BlockToolUse, ToolName: c.Name, ToolID: c.CallID, ToolInput: c.Input})
	o.ToolCall(c)
}

// ToolResult is the outcome of a tool call. Output is what the tool
// returned: an unset Output (the provider gave none) leaves output out of
// the tool.result, a set empty one is an empty output (spec 4).
type ToolResult struct {
	CallID, Name, Output, Error Str
	IsError                     bool
	ExitCode                    Int
	Status                      Str // e.g. "completed", "failed", "declined"
	Scope, Time                 Str
	// Revised (ABI 1.13) says the result is a new version of the result
	// of its call id reported before, changed in place: the host writes
	// it as such, its outcome replacing the earlier one. With no result
	// of its id reported before it is an ordinary result. A host of
	// 1.12 or before ignores it.
	Revised bool
}

// ToolResult reports a tool.result.
func (o *Out) ToolResult(r ToolResult) {
	o.begin(wire.OpToolResult)
	o.str(wire.TCallID, &r.CallID)
	o.str(wire.TName, &r.Name)
	o.str(wire.TOutput, &r.Output)
	o.str(wire.TError, &r.Error)
	o.flag(wire.TIsError, r.IsError)
	o.num(wire.TExitCode, r.ExitCode)
	o.str(wire.TStatus, &r.Status)
	o.str(wire.TScope, &r.Scope)
	o.str(wire.TTime, &r.Time)
	o.flag(wire.TRevised, r.Revised)
	o.enc.End()
}

// Usage reports token figures for the step: mode ModeAdd adds them to
// the total, ModeSet replaces it (cumulative counters).
func (o *Out) Usage(u Usage, mode string) {
	if u.isZero() {
		return
	}
	o.begin(wire.OpUsage)
	o.usage(u)
	o.lit(wire.TMode, mode)
	o.enc.End()
}

// Cost reports a cost in USD (mode as for Usage).
func (o *Out) Cost(usd float64, mode string) {
	o.begin(wire.OpCost)
	o.enc.Float(wire.TCost, usd)
	o.lit(wire.TMode, mode)
	o.enc.End()
}

// Status reports the step status at a level (LevelTerminal for the
// provider's terminal event, LevelError for error fields).
func (o *Out) Status(status string, err Str, level int) {
	o.begin(wire.OpStatus)
	o.enc.Str(wire.TStatus, status)
	o.str(wire.TError, &err)
	o.enc.Int(wire.TLevel, int64(level))
	o.enc.End()
}

// Final reports the final answer text.
func (o *Out) Final(text Str, override bool) {
	o.begin(wire.OpFinal)
	o.str(wire.TText, &text)
	o.flag(wire.TOverride, override)
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
	o.begin(wire.OpUnmapped)
	if !native.set {
		native = S("(unknown)")
	}
	o.str(wire.TNative, &native)
	o.enc.Int(wire.TCount, int64(n))
	o.enc.End()
}

// Ignored declares the current line a native type the plugin knows and
// deliberately ignores (spec 6.8): a delta a later line repeats in full, a
// heartbeat, a "$set" patch. A line with no record and no such
// declaration is counted unmapped "(no record)" by the host.
func (o *Out) Ignored(native Str) { o.IgnoredN(native, 1) }

// IgnoredN declares n lines ending at the current one ignored in one
// record (the inner lines of a document the plugin reassembled itself,
// say); nothing when n < 1.
func (o *Out) IgnoredN(native Str, n int) {
	if n < 1 {
		return
	}
	o.begin(wire.OpIgnored)
	if !native.set {
		native = S("(unknown)")
	}
	o.str(wire.TNative, &native)
	o.enc.Int(wire.TCount, int64(n))
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
	o.begin(wire.OpError)
	if !e.Message.set {
		e.Message = S("error")
	}
	o.str(wire.TText, &e.Message)
	o.str(wire.TCode, &e.Code)
	o.str(wire.TScope, &e.Scope)
	o.enc.End()
}

// ScopeOpen opens a sub-agent scope, linked to the tool call that started
// it.
func (o *Out) ScopeOpen(scope, parentToolID, name, description Str) {
	o.begin(wire.OpScopeOpen)
	o.str(wire.TScope, &scope)
	o.str(wire.TParentToolID, &parentToolID)
	o.str(wire.TName, &name)
	o.str(wire.TText, &description)
	o.enc.End()
}

// ScopeClose ends a sub-agent scope.
func (o *Out) ScopeClose(scope Str, status string, err Str) {
	o.begin(wire.OpScopeClose)
	o.str(wire.TScope, &scope)
	o.lit(wire.TStatus, status)
	o.str(wire.TError, &err)
	o.enc.End()
}

// Warn reports a warning for the step result.
func (o *Out) Warn(msg string) {
	o.begin(wire.OpWarning)
	o.enc.Str(wire.TText, msg)
	o.enc.End()
}

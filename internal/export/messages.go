package export

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/twasm/twasm/transcript"
)

// Message formats [ExportMessages] writes.
const (
	// FormatOpenAI is a Chat Completions request body's messages:
	// {"messages": [{"role": "system"|"user"|"assistant"|"tool", ...}]}.
	FormatOpenAI = "openai"
	// FormatAnthropic is a Messages API request body's system and
	// messages: {"messages": [...], "system": "..."}.
	FormatAnthropic = "anthropic"
)

// Dangling-call policies of [MessagesOptions].
const (
	// DanglingRefuse refuses a conversation with a tool call that has no
	// result: both APIs reject such a request.
	DanglingRefuse = "refuse"
	// DanglingNote answers each such call with a tool result that says,
	// in words, that twasm recorded none.
	DanglingNote = "note"
)

// danglingNote is the result text written for a call with no result under
// DanglingNote.
const danglingNote = "[twasm: no result was recorded for this call]"

// MessagesOptions say which conversation ExportMessages rebuilds, and how.
type MessagesOptions struct {
	Format string
	// Path selects the step (its events, at any iteration); "" takes every
	// message of the run in order.
	Path string
	// Dangling is DanglingRefuse (the default) or DanglingNote.
	Dangling string
	// Injected keeps the text blocks of origin injected_context (the
	// agent's notices, hook output, local command echoes) as user text;
	// by default they are left out and counted, since they are noise to
	// a conversation resumed elsewhere.
	Injected bool
}

// MessagesReport says what the target could not hold, so that nothing is
// left out silently.
type MessagesReport struct {
	Messages int
	// LeftOut counts, by kind, content the target format has no place
	// for (thinking without a provider signature, raw output streams).
	LeftOut map[string]int
	// Noted lists the calls answered with a "no result recorded" note.
	Noted []string
	// Renamed lists the calls written under another id than the
	// transcript's, in order: a provider may reuse a call id for a new
	// call once the first is answered (its ids are unique per response,
	// not per session), and both APIs refuse a conversation whose tool
	// call ids repeat. See [ExportMessages].
	Renamed []RenamedCall
}

// RenamedCall is a call written under an id of its own: the transcript's
// CallID was written already, for an earlier call.
type RenamedCall struct {
	Seq    uint64 // the event that made the call: its message or its tool.call
	CallID string // the transcript's id
	ID     string // the id written in the call and in its result
}

// RefusedError is a conversation the target format cannot express: the
// reason names the event.
type RefusedError struct {
	Seq    uint64
	Reason string
}

func (e *RefusedError) Error() string {
	if e.Seq == 0 {
		return "cannot export messages: " + e.Reason
	}
	return fmt.Sprintf("cannot export messages: seq %d: %s", e.Seq, e.Reason)
}

// ExportMessages rebuilds the conversation of a run (or one step of it) as
// the message list a provider API takes, so that it can be resumed in, or
// handed to, another agent or an API call. It streams: each message is
// written as soon as it is complete, and memory holds one message and the
// ids of the calls written. A message the target cannot express is
// refused with a *RefusedError naming it; content the target has no field
// for is counted in the report, never dropped unsaid. On a refusal the
// output written so far is incomplete; callers write to a temporary file.
//
// A tool.result event answers the call transcript.Pairer pairs it with;
// a tool_result block in a user message answers the earliest call of its
// id still unanswered (a call's result is written once, from whichever
// comes first). A call id the provider reused for a new call once the
// first was answered (the transcript has a tool.call event of the id for
// each call: the assembler decides) is kept as a call of its own. Both
// APIs refuse a tool call id that repeats in a conversation, so it is
// written under the first free id of <id>-2, <id>-3, ... (the n-th call
// of an id is <id>-n unless the provider used that id too), in its call
// and in its result alike; [MessagesReport.Renamed] lists each. Its
// tool_use block stays in its message: an assistant message holding the
// id of an answered call is held until the tool.call events after it say
// whether the block is a new call or the answered one written again (a
// message rewritten in place), which is left out as before. A revised
// call or result (transcript.RevisedField) is written once, at its first
// version, in its latest (revisionsOf reads them first, in a pass over
// the run's outline, and a whole one only when it finds one).
func ExportMessages(ctx context.Context, w io.Writer, run Run, opts MessagesOptions) (*MessagesReport, error) {
	if opts.Format != FormatOpenAI && opts.Format != FormatAnthropic {
		return nil, fmt.Errorf("message format %q: want %s or %s", opts.Format, FormatOpenAI, FormatAnthropic)
	}
	if opts.Dangling == "" {
		opts.Dangling = DanglingRefuse
	}
	bw := bufio.NewWriter(w)
	m := &msgWriter{w: bw, format: opts.Format, rep: &MessagesReport{LeftOut: map[string]int{}},
		pending: map[string]*msgCall{}, byID: map[string]*idCalls{}, taken: map[string]bool{}, byNum: map[int]*msgCall{},
		dangling: opts.Dangling, injected: opts.Injected}
	if _, err := bw.WriteString(`{"messages":[`); err != nil {
		return nil, err
	}
	found := opts.Path == ""
	kept := func(ev *transcript.Event) bool {
		return opts.Path == "" || ev.Path == opts.Path || strings.HasPrefix(ev.Path, opts.Path+".")
	}
	var err error
	if m.revised, err = revisionsOf(ctx, run, kept); err != nil {
		return m.rep, err
	}
	err = runEvents(ctx, run, func(ev *transcript.Event) error {
		if !kept(ev) {
			return nil
		}
		found = true
		return m.event(ev)
	})
	if err == nil && !found {
		err = &RefusedError{Reason: fmt.Sprintf("the run has no step at path %q", opts.Path)}
	}
	if err == nil {
		err = m.release()
	}
	if err == nil {
		err = m.flushCalls()
	}
	if err == nil {
		err = m.closeDangling(opts.Dangling)
	}
	if err == nil {
		err = m.flushResults()
	}
	if err != nil {
		return m.rep, err
	}
	if _, err := bw.WriteString("]"); err != nil {
		return m.rep, err
	}
	if len(m.system) > 0 {
		sys := strings.Join(m.system, "\n\n")
		if opts.Format == FormatAnthropic {
			if err := m.raw(`,"system":`, sys); err != nil {
				return m.rep, err
			}
		}
	}
	if _, err := bw.WriteString("}\n"); err != nil {
		return m.rep, err
	}
	return m.rep, bw.Flush()
}

type msgWriter struct {
	w        *bufio.Writer
	format   string
	injected bool
	rep      *MessagesReport
	n        int
	system   []string
	// pending maps the ids written for the calls the conversation has
	// made and not yet answered to the calls.
	pending map[string]*msgCall
	// byID holds the calls written under each of the transcript's call
	// ids, in order (more than one when the provider reused the id).
	byID map[string]*idCalls
	// taken holds every id written for a call.
	taken map[string]bool
	// pairs pairs tool.call and tool.result events; byNum holds the calls
	// of the tool.call events fed to it, by their numbers, until a
	// tool.result event answers them.
	pairs transcript.Pairer
	byNum map[int]*msgCall
	// revised holds the latest version of each call and result revised
	// later (revisionsOf): written at the first version, the later ones
	// left out.
	revised *revisions
	// held is an assistant message with a block of an answered call's id,
	// kept until the events after it say whether that is a new call.
	held *asstMsg
	// calls buffers tool calls known only from tool.call events (no
	// tool_use block: Codex file changes, server tools), written as one
	// assistant message when the next other event comes.
	calls []map[string]any
	// results buffers consecutive tool results (Anthropic wants them in
	// one user message).
	results []map[string]any
	// sysWritten: the system prompt was written as an OpenAI message.
	sysWritten bool
	dangling   string
}

func (m *msgWriter) raw(prefix string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := m.w.WriteString(prefix); err != nil {
		return err
	}
	_, err = m.w.Write(b)
	return err
}

func (m *msgWriter) emit(msg map[string]any) error {
	sep := ","
	if m.n == 0 {
		sep = ""
	}
	m.n++
	m.rep.Messages = m.n
	return m.raw(sep, msg)
}

// msgCall is a tool call written in the conversation.
type msgCall struct {
	id       string // the id written: the transcript's, or one of its own
	answered bool   // its result (or a note) is written
}

// idCalls are the calls written under one of the transcript's call ids.
type idCalls struct {
	calls  []*msgCall
	open   int // calls[:open] are answered
	events int // the tool.call events of the id read: calls[:events] have theirs
}

// firstOpen returns the id's first call not answered yet, or nil.
func (ic *idCalls) firstOpen() *msgCall {
	for ic.open < len(ic.calls) && ic.calls[ic.open].answered {
		ic.open++
	}
	if ic.open < len(ic.calls) {
		return ic.calls[ic.open]
	}
	return nil
}

// asstMsg is an assistant message being written: its text and its
// content in order (each part a text, a thinking or a call).
type asstMsg struct {
	texts []string
	parts []asstPart
}

type asstPart struct {
	v    map[string]any
	call bool
	// cand is the transcript's id of a block whose id is an answered
	// call's: a new call once a tool.call event of the id says so (made),
	// else the answered call written again, left out.
	cand string
	made bool
}

// ids returns the calls written under the transcript's id callID.
func (m *msgWriter) ids(callID string) *idCalls {
	ic := m.byID[callID]
	if ic == nil {
		ic = &idCalls{}
		m.byID[callID] = ic
	}
	return ic
}

// newCall writes a call of the transcript's id callID: under that id when
// no call has it yet, else under the first free of callID-2, callID-3...
func (m *msgWriter) newCall(seq uint64, callID string) *msgCall {
	id := callID
	for n := 2; m.taken[id]; n++ {
		id = callID + "-" + strconv.Itoa(n)
	}
	m.taken[id] = true
	if id != callID {
		m.rep.Renamed = append(m.rep.Renamed, RenamedCall{Seq: seq, CallID: callID, ID: id})
	}
	c := &msgCall{id: id}
	ic := m.ids(callID)
	ic.calls = append(ic.calls, c)
	m.pending[id] = c
	return c
}

// answer writes c's result.
func (m *msgWriter) answer(c *msgCall, text string, isErr bool) error {
	c.answered = true
	delete(m.pending, c.id)
	return m.result(c.id, text, isErr)
}

func (m *msgWriter) event(ev *transcript.Event) error {
	if ev.Type != transcript.ToolCall {
		if err := m.release(); err != nil {
			return err
		}
		if err := m.flushCalls(); err != nil {
			return err
		}
	}
	if ev.Type != transcript.ToolResult && ev.Type != transcript.ToolCall {
		if err := m.flushResults(); err != nil {
			return err
		}
	}
	switch ev.Type {
	case transcript.MessageUser:
		return m.user(ev)
	case transcript.MessageAssistant:
		return m.assistant(ev)
	case transcript.ToolCall:
		t := ev.Tool()
		if t == nil || t.CallID == "" {
			return nil
		}
		k, again, _ := m.pairs.Feed(ev)
		if again {
			return nil // a new version of a call written already
		}
		if latest := m.revised.call(k); latest != nil {
			t = latest
		}
		ic := m.ids(t.CallID)
		n := ic.events
		ic.events++
		if n < len(ic.calls) {
			// The call of a block written already.
			m.byNum[k] = ic.calls[n]
			return nil
		}
		// A call no block has written: a block of the held message that
		// has the id (the provider reused it), or a call known only
		// from this event.
		if a := m.held; a != nil {
			for i := range a.parts {
				if p := &a.parts[i]; p.cand == t.CallID && !p.made {
					c := m.newCall(ev.Seq, t.CallID)
					p.v["id"], p.made = c.id, true
					m.byNum[k] = c
					return nil
				}
			}
		}
		input := t.Input
		if len(input) == 0 || !json.Valid(input) {
			input = json.RawMessage(`{}`)
		}
		if t.Command != "" && string(input) == "{}" {
			b, _ := json.Marshal(map[string]string{"command": t.Command})
			input = b
		}
		c := m.newCall(ev.Seq, t.CallID)
		m.byNum[k] = c
		m.calls = append(m.calls, m.toolCall(c.id, t.Name, input))
	case transcript.ToolResult:
		t := ev.Tool()
		if t == nil {
			return nil
		}
		if err := m.flushCalls(); err != nil {
			return err
		}
		var c *msgCall
		if t.CallID != "" {
			k, again, ok := m.pairs.Feed(ev)
			if again {
				return nil // a new version of a result written already
			}
			if ok {
				c = m.byNum[k]
				delete(m.byNum, k)
				if latest := m.revised.result(k); latest != nil {
					t = latest
				}
			}
		}
		ic := m.byID[t.CallID]
		if c == nil && ic != nil {
			// A call written from its block alone (no tool.call event).
			c = ic.firstOpen()
		}
		if c == nil {
			if ic != nil {
				return nil // a second result for an answered call: the first stands
			}
			return &RefusedError{Seq: ev.Seq, Reason: fmt.Sprintf("tool result for call %q, which the conversation never made (both APIs require the call first)", t.CallID)}
		}
		if c.answered {
			return nil // its tool_result block answered it
		}
		text := t.Output
		isErr := t.Status != "" && t.Status != transcript.StatusOK && t.Status != "completed"
		if isErr && t.Error != "" {
			if text != "" {
				text += "\n"
			}
			text += t.Error
		}
		return m.answer(c, text, isErr)
	}
	return nil
}

func (m *msgWriter) toolCall(id, name string, input json.RawMessage) map[string]any {
	if name == "" {
		name = "unknown"
	}
	if m.format == FormatOpenAI {
		return map[string]any{"id": id, "type": "function", "function": map[string]any{"name": name, "arguments": string(input)}}
	}
	return map[string]any{"type": "tool_use", "id": id, "name": name, "input": input}
}

func (m *msgWriter) flushCalls() error {
	if len(m.calls) == 0 {
		return nil
	}
	calls := m.calls
	m.calls = nil
	if m.format == FormatOpenAI {
		return m.emit(map[string]any{"role": "assistant", "content": nil, "tool_calls": calls})
	}
	return m.emit(map[string]any{"role": "assistant", "content": calls})
}

func (m *msgWriter) result(id, text string, isErr bool) error {
	if m.format == FormatOpenAI {
		return m.emit(map[string]any{"role": "tool", "tool_call_id": id, "content": text})
	}
	r := map[string]any{"type": "tool_result", "tool_use_id": id, "content": text}
	if isErr {
		r["is_error"] = true
	}
	m.results = append(m.results, r)
	return nil
}

func (m *msgWriter) flushResults() error {
	if len(m.results) == 0 {
		return nil
	}
	rs := m.results
	m.results = nil
	return m.emit(map[string]any{"role": "user", "content": rs})
}

func (m *msgWriter) user(ev *transcript.Event) error {
	p := ev.Message()
	if p == nil {
		return nil
	}
	var texts []string
	for _, b := range p.Blocks {
		switch b.Type {
		case transcript.BlockText:
			if b.Origin == transcript.OriginSystemPrompt {
				m.system = append(m.system, b.Text)
				continue
			}
			if b.Origin == transcript.OriginInjected && !m.injected {
				m.rep.LeftOut["injected context (--injected keeps it)"]++
				continue
			}
			texts = append(texts, b.Text)
		case transcript.BlockToolResult:
			if ic := m.byID[b.ToolID]; ic != nil {
				if c := ic.firstOpen(); c != nil {
					if err := m.answer(c, b.ToolContent, b.IsError); err != nil {
						return err
					}
				}
			}
		default:
			m.rep.LeftOut[string(b.Type)+" in a user message"]++
		}
	}
	if err := m.flushResults(); err != nil {
		return err
	}
	if m.format == FormatOpenAI && len(m.system) > 0 && !m.sysWritten {
		m.sysWritten = true
		if err := m.emit(map[string]any{"role": "system", "content": strings.Join(m.system, "\n\n")}); err != nil {
			return err
		}
	}
	if len(texts) == 0 {
		return nil
	}
	if len(m.pending) > 0 {
		if err := m.danglingBefore(ev, "a user message"); err != nil {
			return err
		}
	}
	if m.format == FormatOpenAI {
		return m.emit(map[string]any{"role": "user", "content": strings.Join(texts, "\n\n")})
	}
	parts := make([]map[string]any, 0, len(texts))
	for _, t := range texts {
		parts = append(parts, map[string]any{"type": "text", "text": t})
	}
	return m.emit(map[string]any{"role": "user", "content": parts})
}

func (m *msgWriter) assistant(ev *transcript.Event) error {
	p := ev.Message()
	if p == nil {
		return nil
	}
	if len(m.pending) > 0 {
		if err := m.danglingBefore(ev, "an assistant message"); err != nil {
			return err
		}
	}
	a := &asstMsg{}
	held := false
	for _, b := range p.Blocks {
		switch b.Type {
		case transcript.BlockText:
			a.texts = append(a.texts, b.Text)
			a.parts = append(a.parts, asstPart{v: map[string]any{"type": "text", "text": b.Text}})
		case transcript.BlockThinking:
			sig := extraString(b.Extra, "signature")
			if m.format == FormatAnthropic && sig != "" {
				if b.Redacted {
					a.parts = append(a.parts, asstPart{v: map[string]any{"type": "redacted_thinking", "data": sig}})
				} else {
					a.parts = append(a.parts, asstPart{v: map[string]any{"type": "thinking", "thinking": b.Thinking, "signature": sig}})
				}
				continue
			}
			m.rep.LeftOut["thinking (the target accepts none without the provider's signature)"]++
		case transcript.BlockToolUse, transcript.BlockCommand:
			id, name, input := b.ToolID, b.ToolName, b.ToolInput
			if b.Type == transcript.BlockCommand {
				name = "shell"
				in, _ := json.Marshal(map[string]string{"command": b.Command})
				input = in
			}
			if id == "" {
				return &RefusedError{Seq: ev.Seq, Reason: "a tool call with no id cannot be paired with its result"}
			}
			if len(input) == 0 || !json.Valid(input) {
				input = json.RawMessage(`{}`)
			}
			ic := m.byID[id]
			switch {
			case ic == nil || len(ic.calls) == 0:
				c := m.newCall(ev.Seq, id)
				a.parts = append(a.parts, asstPart{v: m.toolCall(c.id, name, input), call: true})
			case ic.calls[len(ic.calls)-1].answered:
				// An answered call's id: a new call if a tool.call
				// event of the id follows (the provider reused it).
				a.parts = append(a.parts, asstPart{v: m.toolCall(id, name, input), call: true, cand: id})
				held = true
			default:
				// The call again, before its result: written once.
			}
		case transcript.BlockStream:
			m.rep.LeftOut["raw output stream chunks"]++
		default:
			m.rep.LeftOut[string(b.Type)+" in an assistant message"]++
		}
	}
	if held {
		m.held = a
		return nil
	}
	return m.writeAssistant(a)
}

// release writes the held assistant message, without the blocks that
// turned out to be an answered call written again.
func (m *msgWriter) release() error {
	a := m.held
	if a == nil {
		return nil
	}
	m.held = nil
	return m.writeAssistant(a)
}

func (m *msgWriter) writeAssistant(a *asstMsg) error {
	var calls, parts []map[string]any // parts: anthropic content, in order
	for _, p := range a.parts {
		if p.cand != "" && !p.made {
			continue
		}
		parts = append(parts, p.v)
		if p.call {
			calls = append(calls, p.v)
		}
	}
	if len(parts) == 0 {
		return nil
	}
	if m.format == FormatOpenAI {
		msg := map[string]any{"role": "assistant"}
		if len(a.texts) > 0 {
			msg["content"] = strings.Join(a.texts, "")
		} else {
			msg["content"] = nil
		}
		if len(calls) > 0 {
			msg["tool_calls"] = calls
		}
		if len(a.texts) == 0 && len(calls) == 0 {
			return nil
		}
		return m.emit(msg)
	}
	return m.emit(map[string]any{"role": "assistant", "content": parts})
}

// danglingBefore handles a message that arrives while calls of an earlier
// one still await results: refused, or the calls answered with notes.
func (m *msgWriter) danglingBefore(ev *transcript.Event, what string) error {
	if m.dangling != DanglingNote {
		return &RefusedError{Seq: ev.Seq, Reason: what + " while tool calls await results (" + strings.Join(slices.Sorted(maps.Keys(m.pending)), ", ") +
			"): both APIs require every call answered first; --dangling note answers each with a note that no result was recorded"}
	}
	if err := m.closeDangling(DanglingNote); err != nil {
		return err
	}
	return m.flushResults()
}

// closeDangling deals with calls still unanswered at the end.
func (m *msgWriter) closeDangling(policy string) error {
	if len(m.pending) == 0 {
		return nil
	}
	ids := slices.Sorted(maps.Keys(m.pending))
	if policy != DanglingNote {
		return &RefusedError{Reason: fmt.Sprintf("tool calls without results (%s): both APIs reject a call left unanswered; --dangling note answers each with a note that no result was recorded", strings.Join(ids, ", "))}
	}
	for _, id := range ids {
		m.rep.Noted = append(m.rep.Noted, id)
		if err := m.answer(m.pending[id], danglingNote, true); err != nil {
			return err
		}
	}
	return nil
}

func extraString(extra map[string]json.RawMessage, k string) string {
	raw, ok := extra[k]
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// IsRefused reports whether err is a refusal of the target format.
func IsRefused(err error) bool {
	var r *RefusedError
	return errors.As(err, &r)
}

package views

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/twasm/twasm/transcript"
)

// compactText is how many characters of a text a compact line keeps.
const compactText = 80

// Compact renders ev as one human line, for tail and for live views:
//
//	#12 review  message.assistant  text: "first 80 chars…"
//
// The step is shown as its path with "[i]" for a non-zero iteration, or
// "run" for run events. Text from the transcript is folded to one line and
// stripped of control characters, so a transcript cannot inject terminal
// escapes; color adds ANSI styles of twasm's own.
func Compact(ev *transcript.Event, color bool) string {
	var b strings.Builder
	b.WriteString(paint(color, ansiDim, "#"+strconv.FormatUint(ev.Seq, 10)))
	b.WriteByte(' ')
	b.WriteString(paint(color, ansiBold, stepLabel(ev.Path, ev.Iteration)))
	b.WriteString("  ")
	b.WriteString(paint(color, typeStyle(ev.Type), string(ev.Type)))
	if s := summary(ev, color); s != "" {
		b.WriteString("  ")
		b.WriteString(s)
	}
	return b.String()
}

func stepLabel(path string, iter int) string {
	if path == "" {
		path = "run"
	}
	if iter != 0 {
		path += "[" + strconv.Itoa(iter) + "]"
	}
	return oneLine(path)
}

func typeStyle(t transcript.EventType) string {
	switch t {
	case transcript.RunStarted, transcript.RunCompleted, transcript.StepStarted, transcript.StepCompleted,
		transcript.StepCallWorkflowStarted, transcript.StepCallWorkflowCompleted:
		return ansiBlue
	case transcript.MessageUser, transcript.MessageAssistant:
		return ansiCyan
	case transcript.ToolCall, transcript.ToolResult:
		return ansiYellow
	}
	return ansiRed
}

func summary(ev *transcript.Event, color bool) string {
	switch p := ev.Payload.(type) {
	case *transcript.StepPayload:
		return stepSummary(ev, p, color)
	case *transcript.MessagePayload:
		return messageSummary(p)
	case *transcript.ToolPayload:
		return toolSummary(ev.Type, p, color)
	case *transcript.RawPayload:
		return paint(color, ansiRed, "(unknown type)") + " " + Clip(string(p.JSON), compactText)
	}
	return ""
}

func stepSummary(ev *transcript.Event, p *transcript.StepPayload, color bool) string {
	var parts []string
	switch ev.Type {
	case transcript.RunStarted:
		parts = append(parts, strconv.Quote(oneLine(p.Name)))
		if p.Producer != nil {
			parts = append(parts, oneLine(strings.TrimSpace(p.Producer.Name+" "+p.Producer.Version)))
		}
	case transcript.StepStarted, transcript.StepCallWorkflowStarted:
		parts = append(parts, oneLine(string(p.Kind)))
		if p.Name != "" && p.Name != lastSegment(ev.Path) {
			parts = append(parts, strconv.Quote(oneLine(p.Name)))
		}
	default:
		st := p.Status
		if st == "" {
			st = "ok"
		}
		parts = append(parts, paint(color, statusStyle(st), st))
		if r, err := p.AgentResult(); err == nil && r != nil && r.Provider != "" && p.Kind == transcript.KindAgent {
			parts = append(parts, oneLine(strings.TrimSpace(r.Provider+" "+r.Model)))
		}
	}
	if ev.ChildRunID != "" {
		parts = append(parts, "child="+ShortID(oneLine(ev.ChildRunID)))
	}
	if p.Attempt > 0 {
		parts = append(parts, fmt.Sprintf("attempt=%d", p.Attempt))
	}
	if p.Error != "" {
		parts = append(parts, paint(color, ansiRed, "error: "+Clip(p.Error, compactText)))
	}
	return strings.Join(parts, " ")
}

func lastSegment(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[i+1:]
	}
	return path
}

func messageSummary(p *transcript.MessagePayload) string {
	if len(p.Blocks) == 0 {
		return "(no blocks)"
	}
	s := blockSummary(p.Blocks[0])
	if n := len(p.Blocks) - 1; n > 0 {
		s += fmt.Sprintf(" (+%d more)", n)
	}
	return s
}

func blockSummary(b transcript.Block) string {
	q := func(s string) string { return `"` + Clip(s, compactText) + `"` }
	label := string(b.Type)
	if b.Origin == transcript.OriginSystemPrompt || b.Origin == transcript.OriginInjected {
		label = string(b.Origin)
	}
	switch b.Type {
	case transcript.BlockText:
		return label + ": " + q(b.Text)
	case transcript.BlockThinking:
		if b.Redacted {
			return "thinking: (redacted)"
		}
		return "thinking: " + q(b.Thinking)
	case transcript.BlockToolUse:
		return "tool_use: " + oneLine(b.ToolName) + " " + Clip(string(b.ToolInput), compactText)
	case transcript.BlockToolResult:
		s := "tool_result: " + q(b.ToolContent)
		if b.IsError {
			s += " (error)"
		}
		return s
	case transcript.BlockCommand:
		return "command: " + Clip(b.Command, compactText)
	case transcript.BlockStream:
		return "stream: " + q(b.Chunk)
	}
	return oneLine(string(b.Type)) + " (unknown block)"
}

func toolSummary(t transcript.EventType, p *transcript.ToolPayload, color bool) string {
	parts := []string{oneLine(p.Name)}
	if t == transcript.ToolCall {
		switch {
		case p.Command != "":
			parts = append(parts, "$ "+Clip(p.Command, compactText))
		case len(p.Input) > 0:
			parts = append(parts, Clip(string(p.Input), compactText))
		}
	} else {
		st := ToolStatus(p)
		parts = append(parts, paint(color, statusStyle(st), st))
		if p.ExitCode != nil {
			parts = append(parts, fmt.Sprintf("exit=%d", *p.ExitCode))
		}
		if p.Error != "" {
			parts = append(parts, paint(color, ansiRed, "error: "+Clip(p.Error, compactText)))
		} else if p.Output != "" {
			parts = append(parts, `"`+Clip(p.Output, compactText)+`"`)
		}
	}
	parts = append(parts, paint(color, ansiDim, "id="+oneLine(p.CallID)))
	return strings.Join(parts, " ")
}

// ToolStatus is the outcome of a tool.result in the spec's closed set (ok,
// error, denied, cancelled): its own status, a word of older files read as
// its equivalent, else error when it carries an error or a non-zero exit
// code, else ok (transcript.ToolOutcome).
func ToolStatus(p *transcript.ToolPayload) string { return transcript.ToolOutcome(p) }

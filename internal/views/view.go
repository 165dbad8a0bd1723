package views

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/twasm/twasm/transcript"
)

// Sections selects what the transcript view shows. The zero value shows
// everything.
type Sections struct {
	Dialog   bool // the prompt and the assistant's text
	Thinking bool // thinking blocks
	Tools    bool // tool_use and command blocks, tool.call and tool.result
	Errors   bool // step and tool errors, unknown events, reader problems
}

func (s Sections) all() bool { return s == Sections{} }

// SectionNames are the values --only accepts.
var SectionNames = []string{"dialog", "thinking", "tools", "errors"}

// ErrBadOption is matched by errors about an invalid view option, so that
// a command can report them as usage errors.
var ErrBadOption = errors.New("invalid option")

// ParseSections parses --only values; each may hold a comma list.
func ParseSections(values []string) (Sections, error) {
	var s Sections
	for _, v := range values {
		for _, name := range strings.Split(v, ",") {
			switch strings.TrimSpace(name) {
			case "dialog":
				s.Dialog = true
			case "thinking":
				s.Thinking = true
			case "tools":
				s.Tools = true
			case "errors":
				s.Errors = true
			default:
				return s, fmt.Errorf("%w: unknown section %q (valid: %s)", ErrBadOption, name, strings.Join(SectionNames, ", "))
			}
		}
	}
	return s, nil
}

// Child run rendering modes of the view.
const (
	ChildrenInline = "inline" // the child's transcript nested under its call_workflow step
	ChildrenLink   = "link"   // a pointer to the child's transcript
)

// Formats of the view.
const (
	FormatMarkdown = "md"
	FormatText     = "text"
)

// DefaultMaxOutput is how many bytes of a tool output or input the view
// shows before it truncates with a note.
const DefaultMaxOutput = 2000

// ViewOptions tunes [WriteView].
type ViewOptions struct {
	Only Sections
	// Path keeps only the steps whose full path is Path or starts with
	// Path + "."; "" keeps everything.
	Path string
	// Format is FormatMarkdown (default) or FormatText.
	Format string
	// Children is ChildrenInline (default) or ChildrenLink.
	Children string
	// MaxOutput bounds shown tool outputs in bytes; 0 means
	// DefaultMaxOutput, negative means no limit.
	MaxOutput int
}

// StepPaths returns the full paths of every step of the tree, child runs
// included, in tree order without repeats.
func StepPaths(root *RunNode) []string {
	var out []string
	for _, n := range root.Runs() {
		n.Walk(func(s *StepNode, _ int) bool {
			if !slices.Contains(out, s.FullPath) {
				out = append(out, s.FullPath)
			}
			return true
		})
	}
	return out
}

// HasPath reports whether some step of the tree is selected by filter.
func HasPath(root *RunNode, filter string) bool {
	for _, p := range StepPaths(root) {
		if MatchPath(p, filter) {
			return true
		}
	}
	return false
}

// MatchPath reports whether a step's full path is selected by filter.
func MatchPath(full, filter string) bool {
	return filter == "" || full == filter || strings.HasPrefix(full, filter+".")
}

// WriteView renders the tree as a transcript a person can read: a metadata
// header, then every step with its messages and tool activity in file
// order, sub-steps and child runs nested, then the problems.
func WriteView(w io.Writer, root *RunNode, opts ViewOptions) error {
	var d docWriter
	switch opts.Format {
	case "", FormatMarkdown:
		d = &mdWriter{baseWriter{w: w}}
	case FormatText:
		d = &textWriter{baseWriter{w: w}}
	default:
		return fmt.Errorf("%w: unknown format %q (valid: md, text, json)", ErrBadOption, opts.Format)
	}
	switch opts.Children {
	case "":
		opts.Children = ChildrenInline
	case ChildrenInline, ChildrenLink:
	default:
		return fmt.Errorf("%w: unknown children mode %q (valid: inline, link)", ErrBadOption, opts.Children)
	}
	if opts.MaxOutput == 0 {
		opts.MaxOutput = DefaultMaxOutput
	}
	v := &viewer{d: d, opts: opts}
	v.header(root)
	v.runBody(root, 2, opts.Path == "")
	v.problems(root)
	return d.err()
}

type viewer struct {
	d     docWriter
	opts  ViewOptions
	found bool
}

func (v *viewer) show(s func(Sections) bool) bool { return v.opts.Only.all() || s(v.opts.Only) }

func (v *viewer) header(n *RunNode) {
	v.d.heading(1, "Run "+cmp.Or(n.Name, ShortID(n.RunID)))
	pairs := [][2]string{{"Run id", v.d.inline(n.RunID)}}
	if n.ParentRunID != "" {
		pairs = append(pairs, [2]string{"Parent run", v.d.inline(n.ParentRunID)})
	}
	status := n.Status
	if n.Error != "" {
		status += ": " + n.Error
	}
	pairs = append(pairs, [2]string{"Status", status})
	if n.Started != nil {
		pairs = append(pairs, [2]string{"Started", timeString(n.Started)})
	}
	if n.DurationMS != nil {
		pairs = append(pairs, [2]string{"Duration", FormatDuration(*n.DurationMS)})
	}
	if n.Producer != "" {
		pairs = append(pairs, [2]string{"Producer", n.Producer})
	}
	pairs = append(pairs, [2]string{"Events", strconv.Itoa(n.Events)}, [2]string{"Tool calls", strconv.Itoa(n.Tools)})
	v.d.kv(pairs)
	for _, r := range n.Runs() {
		r.Walk(func(s *StepNode, _ int) bool {
			if a := s.Agent; a != nil {
				parts := []string{v.d.inline(s.FullPath)}
				for _, f := range [][2]string{{"provider", strings.TrimSpace(a.Provider + " " + a.ProviderVersion)},
					{"model", a.Model}, {"session", a.SessionID}, {"status", a.Status}} {
					if f[1] != "" {
						parts = append(parts, f[0]+" "+v.d.inline(f[1]))
					}
				}
				if u := usageString(a.Usage); u != "" {
					parts = append(parts, u)
				}
				if a.CostUSD != nil {
					parts = append(parts, fmt.Sprintf("$%.4f", *a.CostUSD))
				}
				v.d.item(strings.Join(parts, ", "))
			}
			return true
		})
	}
	v.d.para("")
}

func usageString(u *transcript.Usage) string {
	if u.IsZero() {
		return ""
	}
	var parts []string
	add := func(name string, p *int64) {
		if p != nil {
			parts = append(parts, fmt.Sprintf("%s %d", name, *p))
		}
	}
	add("in", u.InputTokens)
	add("cache read", u.CacheReadTokens)
	add("cache write", u.CacheWriteTokens)
	add("out", u.OutputTokens)
	add("reasoning", u.ReasoningTokens)
	return "tokens " + strings.Join(parts, " / ")
}

// runBody renders a run's own events and steps, merged in seq order. all
// says whether the path filter already matched an ancestor.
func (v *viewer) runBody(n *RunNode, level int, all bool) {
	type item struct {
		seq  uint64
		ev   *transcript.Event
		step *StepNode
	}
	var items []item
	if all {
		for _, ev := range n.events {
			items = append(items, item{seq: ev.Seq, ev: ev})
		}
	}
	for _, s := range n.Steps {
		items = append(items, item{seq: s.Seq, step: s})
	}
	slices.SortStableFunc(items, func(a, b item) int { return cmp.Compare(a.seq, b.seq) })
	for _, it := range items {
		if it.ev != nil {
			v.event(n, it.ev)
		} else {
			v.step(n, it.step, level, all)
		}
	}
}

func (v *viewer) step(run *RunNode, s *StepNode, level int, all bool) {
	if !all && MatchPath(s.FullPath, v.opts.Path) {
		all = true
	}
	if !all {
		// Not selected, but a descendant may be.
		for _, c := range s.Steps {
			v.step(run, c, level, false)
		}
		if s.Child != nil && strings.HasPrefix(v.opts.Path, s.FullPath+".") {
			v.runBody(s.Child, level, false)
		}
		return
	}
	v.found = true
	title := []string{s.FullPath}
	if s.Iteration != 0 {
		title[0] += fmt.Sprintf(" [%d]", s.Iteration)
	}
	title = append(title, s.Kind)
	if s.Attempt > 0 {
		title = append(title, fmt.Sprintf("attempt %d", s.Attempt))
	}
	title = append(title, s.Status)
	if d := durationString(s.DurationMS); d != "" {
		title = append(title, d)
	}
	v.d.heading(level, strings.Join(slices.DeleteFunc(title, func(x string) bool { return x == "" }), " · "))
	if s.Error != "" && v.show(func(o Sections) bool { return o.Errors }) {
		v.d.para(v.d.strong("Error:") + " " + v.d.inline(s.Error))
	}
	items := slices.Clone(s.events)
	for _, ev := range items {
		v.event(run, ev)
	}
	for _, c := range s.Steps {
		v.step(run, c, level+1, true)
	}
	switch {
	case s.Child != nil && v.opts.Children == ChildrenInline:
		v.d.heading(level+1, "Sub-run "+s.Child.RunID+" · "+s.Child.Status)
		v.runBody(s.Child, level+2, true)
	case s.Child != nil:
		v.d.para(fmt.Sprintf("Sub-run %s (%s): %s", v.d.inline(s.Child.RunID), s.Child.Status, v.d.inline(s.Child.File)))
	case s.ChildError != "" && v.show(func(o Sections) bool { return o.Errors }):
		v.d.para(v.d.strong("Sub-run missing:") + " " + v.d.inline(s.ChildError))
	}
}

func (v *viewer) event(run *RunNode, ev *transcript.Event) {
	switch p := ev.Payload.(type) {
	case *transcript.MessagePayload:
		v.message(ev, p)
	case *transcript.ToolPayload:
		v.tool(ev, p)
	case *transcript.RawPayload:
		if v.show(func(o Sections) bool { return o.Errors }) {
			v.d.para(fmt.Sprintf("%s %s at seq %d: %s", v.d.strong("Unknown event"), v.d.inline(string(ev.Type)), ev.Seq,
				v.d.inline(Clip(string(p.JSON), 200))))
		}
	}
}

func (v *viewer) message(ev *transcript.Event, p *transcript.MessagePayload) {
	var parts []func()
	dialog := v.show(func(o Sections) bool { return o.Dialog })
	thinking := v.show(func(o Sections) bool { return o.Thinking })
	tools := v.show(func(o Sections) bool { return o.Tools })
	for _, b := range p.Blocks {
		switch {
		case b.Type == transcript.BlockText && b.Origin == transcript.OriginSystemPrompt && dialog:
			parts = append(parts, func() { v.d.fold("System prompt", b.Text, true) })
		case b.Type == transcript.BlockText && b.Origin == transcript.OriginInjected && dialog:
			parts = append(parts, func() { v.d.fold("Injected context", b.Text, true) })
		case b.Type == transcript.BlockText && dialog:
			parts = append(parts, func() { v.d.para(b.Text) })
		case b.Type == transcript.BlockThinking && thinking:
			parts = append(parts, func() {
				if b.Redacted {
					v.d.para("_Thinking redacted by the provider._")
					return
				}
				v.d.fold("Thinking", b.Thinking, false)
			})
		case b.Type == transcript.BlockToolUse && tools:
			parts = append(parts, func() {
				v.d.item(fmt.Sprintf("tool_use %s %s %s", v.d.inline(b.ToolName), v.d.inline(Clip(string(b.ToolInput), 160)), v.d.inline("id "+b.ToolID)))
				v.d.para("")
			})
		case b.Type == transcript.BlockToolResult && tools:
			parts = append(parts, func() {
				label := "tool_result " + v.d.inline(b.ToolID)
				if b.IsError {
					label += " (error)"
				}
				v.d.para(label)
				v.output(b.ToolContent)
			})
		case b.Type == transcript.BlockCommand && tools:
			parts = append(parts, func() { v.d.code("sh", "$ "+b.Command) })
		case b.Type == transcript.BlockStream && dialog:
			parts = append(parts, func() { v.d.para(b.Chunk) })
		case !b.Type.Valid() && v.show(func(o Sections) bool { return o.Errors }):
			parts = append(parts, func() { v.d.para(v.d.strong("Unknown block") + " " + v.d.inline(string(b.Type))) })
		}
	}
	if len(parts) == 0 {
		return
	}
	who := v.d.strong("User")
	if ev.Type == transcript.MessageAssistant {
		who = v.d.strong("Assistant")
		if p.Model != "" {
			who += " (" + v.d.inline(p.Model) + ")"
		}
	}
	v.d.para(who)
	for _, f := range parts {
		f()
	}
}

func (v *viewer) tool(ev *transcript.Event, p *transcript.ToolPayload) {
	failed := ev.Type == transcript.ToolResult && ToolStatus(p) == "error"
	if !v.show(func(o Sections) bool { return o.Tools || o.Errors && failed }) {
		return
	}
	if ev.Type == transcript.ToolCall {
		line := v.d.strong("Tool call") + " " + v.d.inline(p.Name)
		if p.Kind != "" {
			line += " (" + string(p.Kind) + ")"
		}
		v.d.para(line + " " + v.d.inline("id "+p.CallID))
		switch {
		case p.Command != "":
			v.d.code("sh", "$ "+p.Command)
		case len(p.Input) > 0 && string(p.Input) != "{}" && string(p.Input) != "null":
			v.output(string(p.Input))
		}
		return
	}
	parts := []string{v.d.strong("Tool result") + " " + v.d.inline(p.Name), ToolStatus(p)}
	if p.ExitCode != nil {
		parts = append(parts, fmt.Sprintf("exit %d", *p.ExitCode))
	}
	parts = append(parts, v.d.inline("id "+p.CallID))
	v.d.para(strings.Join(parts, " · "))
	if p.Error != "" {
		v.d.para(v.d.strong("Error:") + " " + v.d.inline(p.Error))
	}
	if p.Output != "" {
		v.output(p.Output)
	}
}

// output shows a tool's output or input, cut to MaxOutput bytes (on a rune
// boundary) with a note saying how much was left out.
func (v *viewer) output(s string) {
	if v.opts.MaxOutput < 0 || len(s) <= v.opts.MaxOutput {
		v.d.code("", s)
		return
	}
	cut := v.opts.MaxOutput
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	v.d.code("", s[:cut])
	v.d.para(fmt.Sprintf("_Output truncated: %d of %d bytes shown (--max-output -1 shows all)._", cut, len(s)))
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

func (v *viewer) problems(root *RunNode) {
	if !v.show(func(o Sections) bool { return o.Errors }) {
		return
	}
	var lines []string
	if v.opts.Path != "" && !v.found {
		lines = append(lines, "no step matches path "+v.d.inline(v.opts.Path))
	}
	for _, n := range root.Runs() {
		prefix := ""
		if n != root {
			prefix = "run " + ShortID(n.RunID) + ": "
		}
		if !n.Finished {
			lines = append(lines, prefix+"the run has no run.completed: still running, or its writer was stopped")
		}
		for _, p := range n.Problems {
			lines = append(lines, prefix+v.d.inline(p))
		}
		for _, r := range runLedger(n) {
			if r.Dangling {
				lines = append(lines, fmt.Sprintf("%stool call %s %s at seq %d never got a result", prefix,
					v.d.inline(r.Name), v.d.inline(r.CallID), r.Seq))
			}
		}
	}
	if len(lines) == 0 {
		return
	}
	v.d.heading(2, "Problems")
	for _, l := range lines {
		v.d.item(l)
	}
	v.d.para("")
}

// SelectEvents returns the events of every run of the tree that the view
// would show under opts.Path and opts.Only, in tree order (the root's
// events, then each child run's): the --format json form of the view.
// Selection is per event: a message is kept for dialog or thinking when it
// has such a block, tool events for tools, and for errors an event that
// carries an error, a failed tool result or an unknown type.
func SelectEvents(root *RunNode, opts ViewOptions) []*transcript.Event {
	var out []*transcript.Event
	for _, n := range root.Runs() {
		for _, ev := range n.run.Events {
			if opts.Path != "" && (ev.Path == "" && n.scope == "" || !MatchPath(n.FullPath(ev.Path), opts.Path)) {
				continue
			}
			if opts.Only.all() || wanted(ev, opts.Only) {
				out = append(out, ev)
			}
		}
	}
	return out
}

func wanted(ev *transcript.Event, o Sections) bool {
	switch p := ev.Payload.(type) {
	case *transcript.MessagePayload:
		for _, b := range p.Blocks {
			switch b.Type {
			case transcript.BlockText, transcript.BlockStream:
				if o.Dialog {
					return true
				}
			case transcript.BlockThinking:
				if o.Thinking {
					return true
				}
			case transcript.BlockToolUse, transcript.BlockToolResult, transcript.BlockCommand:
				if o.Tools {
					return true
				}
			}
		}
	case *transcript.ToolPayload:
		return o.Tools || o.Errors && ev.Type == transcript.ToolResult && ToolStatus(p) == "error"
	case *transcript.StepPayload:
		return o.Errors && p.Error != ""
	case *transcript.RawPayload:
		return o.Errors
	}
	return false
}

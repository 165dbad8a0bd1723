package views

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/twasm/twasm/internal/prices"
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
	// Window, when set, keeps only the root run's events whose seq lies
	// in [From, To]; each step says how many of its events it leaves out
	// before and after.
	Window *SeqWindow
	// StepCosts, when set, gives each agent step attempt's cost with its
	// provenance (package usage), shown in the run's footer in place of
	// the cost the provider stated alone.
	StepCosts map[StepRef]prices.Cost
}

// StepRef names one step attempt: its run and its StepNode.Seq.
type StepRef struct {
	RunID string
	Seq   uint64
}

// SeqWindow is a range of seqs of the root run (both ends included).
type SeqWindow struct{ From, To uint64 }

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
	v := &viewer{d: d, opts: opts, tools: map[*RunNode]*toolIndex{}, root: root}
	v.header(root)
	v.runBody(root, 2, opts.Path == "")
	v.problems(root)
	return d.err()
}

type viewer struct {
	d     docWriter
	opts  ViewOptions
	found bool
	tools map[*RunNode]*toolIndex
	root  *RunNode
	// lastDay is the date of the last time shown (when).
	lastDay string
}

// windowed returns the events of evs that the seq window keeps (all of
// them outside the root run or without a window) and how many it leaves
// out before and after.
func (v *viewer) windowed(run *RunNode, evs []*transcript.Event) (kept []*transcript.Event, before, after int) {
	w := v.opts.Window
	if w == nil || run != v.root {
		return evs, 0, 0
	}
	for _, ev := range evs {
		_, lifecycle := ev.Payload.(*transcript.StepPayload)
		switch {
		case lifecycle:
			kept = append(kept, ev) // not rendered as an event: not counted
		case ev.Seq < w.From:
			before++
		case ev.Seq > w.To:
			after++
		default:
			kept = append(kept, ev)
		}
	}
	return kept, before, after
}

func (v *viewer) omitted(n int, where string) {
	if n > 0 {
		word := "events"
		if n == 1 {
			word = "event"
		}
		v.d.para(fmt.Sprintf("… %d %s %s of this step not shown", n, where, word))
	}
}

func (v *viewer) show(s func(Sections) bool) bool { return v.opts.Only.all() || s(v.opts.Only) }

func (v *viewer) header(n *RunNode) {
	v.d.heading(1, "Run "+v.clip(DisplayName(headOf(n))))
	pairs := [][2]string{{"Run id", v.d.inline(n.RunID)}}
	if n.Name != "" && DisplayName(headOf(n)) != n.Name {
		pairs = append(pairs, [2]string{"Name", v.d.inline(n.Name)})
	}
	if n.ParentRunID != "" {
		pairs = append(pairs, [2]string{"Parent run", v.d.inline(n.ParentRunID)})
	}
	status := n.Status
	if n.Error != "" {
		status += ": " + v.clip(n.Error)
	}
	if n.Open {
		status += " (so far: an archived session that may still grow)"
	}
	pairs = append(pairs, [2]string{"Status", status})
	if n.Started != nil {
		if from, to, ok := n.ContentSpan(); ok && n.recordedLater(from, to) {
			// A saved log recorded later: the run's times are the
			// recording's, its events' the log's.
			pairs = append(pairs, [2]string{"Recorded", timeString(n.Started)},
				[2]string{"Session", timeString(&from) + " to " + timeString(&to) + " (the times the log gives its events)"})
		} else {
			pairs = append(pairs, [2]string{"Started", timeString(n.Started)})
		}
	}
	if n.DurationMS != nil {
		pairs = append(pairs, [2]string{"Duration", FormatDuration(*n.DurationMS)})
	}
	if n.Producer != "" {
		pairs = append(pairs, [2]string{"Producer", n.Producer})
	}
	pairs = append(pairs, [2]string{"Events", strconv.Itoa(n.Events)}, [2]string{"Tool calls", toolCalls(n)})
	if u := tokens(n); u != "" {
		pairs = append(pairs, [2]string{"Tokens", u})
	}
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
				if c, ok := v.opts.StepCosts[StepRef{r.RunID, s.Seq}]; ok {
					src := c.Source
					var at []string
					for _, r := range []struct {
						n    int
						what string
					}{{c.Batch, "batch"}, {c.Flex, "flex"}, {c.Priority, "priority"}} {
						if r.n > 0 {
							at = append(at, r.what)
						}
					}
					if len(at) > 0 {
						src += " (" + strings.Join(at, ", ") + " rate)"
					}
					if c.Source == "provider" && subRunsInCost(s) {
						src += ", its sub-agents' included"
					}
					parts = append(parts, c.Text(true)+" "+src)
				} else if a.CostUSD != nil {
					text := fmt.Sprintf("$%.4f", *a.CostUSD)
					if subRunsInCost(s) {
						text += ", its sub-agents' included"
					}
					parts = append(parts, text)
				}
				v.d.item(strings.Join(parts, ", "))
			}
			return true
		})
	}
	v.d.para("")
}

// toolCalls is the run's own tool calls and, when it has sub-runs that
// made some, theirs apart and the two together.
func toolCalls(n *RunNode) string {
	s := strconv.Itoa(n.Tools)
	if n.SubRuns != nil && n.SubRuns.Tools > 0 {
		s += fmt.Sprintf(" (sub-runs %d, in all %d)", n.SubRuns.Tools, n.Tools+n.SubRuns.Tools)
	}
	return s
}

// tokens is the run's token usage with, when it has sub-runs that used
// some, theirs apart and the two together. A run without sub-runs whose
// agent steps are listed below (each with its usage) has no such line.
func tokens(n *RunNode) string {
	own := usageString(n.Usage)
	if n.SubRuns == nil || n.SubRuns.Usage.IsZero() {
		agents := false
		n.Walk(func(s *StepNode, _ int) bool {
			agents = agents || s.Agent != nil
			return !agents
		})
		if agents {
			return ""
		}
		return own
	}
	all := n.Totals()
	return fmt.Sprintf("this run: %s; sub-runs (%d): %s; in all: %s",
		cmp.Or(own, "none"), n.SubRuns.Runs, usageString(n.SubRuns.Usage), usageString(all.Usage))
}

func usageString(u *transcript.Usage) string {
	if u.IsZero() {
		return ""
	}
	return "tokens " + UsageText(u, " / ")
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
	// The kind and the name only when they say more than the path (an
	// agent step at path "agent" is not "agent · agent").
	last := s.FullPath[strings.LastIndexByte(s.FullPath, '.')+1:]
	if s.Kind != last {
		title = append(title, s.Kind)
	}
	if s.Name != "" && s.Name != last && s.Name != s.Kind {
		title = append(title, s.Name)
	}
	if s.Attempt > 0 {
		title = append(title, fmt.Sprintf("attempt %d", s.Attempt))
	}
	title = append(title, s.Status)
	if d := durationString(s.DurationMS); d != "" {
		title = append(title, d)
	}
	v.d.heading(level, strings.Join(slices.DeleteFunc(title, func(x string) bool { return x == "" }), " · "))
	if s.Error != "" && v.show(func(o Sections) bool { return o.Errors }) {
		v.d.para(v.d.strong("Error:") + " " + v.d.inline(v.clip(s.Error)))
	}
	items, before, after := v.windowed(run, s.events)
	v.omitted(before, "earlier")
	for _, ev := range items {
		v.event(run, ev)
	}
	v.omitted(after, "later")
	for _, c := range s.Steps {
		v.step(run, c, level+1, true)
	}
	v.footer(run, s)
	switch {
	case s.Child != nil && v.opts.Children == ChildrenInline:
		title := "Sub-run " + s.Child.RunID
		if name := DisplayName(headOf(s.Child)); name != ShortID(s.Child.RunID) {
			title = "Sub-run " + v.clip(name) + " · " + ShortID(s.Child.RunID)
		}
		v.d.heading(level+1, title+" · "+s.Child.Status)
		v.runBody(s.Child, level+2, true)
	case s.Child != nil:
		v.d.para(fmt.Sprintf("Sub-run %s (%s): %s", v.d.inline(s.Child.RunID), s.Child.Status, v.d.inline(s.Child.File)))
	case s.ChildError != "" && v.show(func(o Sections) bool { return o.Errors }):
		v.d.para(v.d.strong("Sub-run missing:") + " " + v.d.inline(s.ChildError))
	}
}

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
		switch {
		case n.Open:
			lines = append(lines, prefix+"an archived session with no run.completed: it may still grow, and its status is its latest part's")
		case !n.Finished:
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
		return o.Tools || o.Errors && ev.Type == transcript.ToolResult && Failed(ToolStatus(p))
	case *transcript.StepPayload:
		return o.Errors && p.Error != ""
	case *transcript.RawPayload:
		return o.Errors
	}
	return false
}

// StatedCostCountsSubRuns reports whether the cost a provider states for
// an agent step counts what the step's sub-agents (its child runs) cost
// too: Claude Code's total_cost_usd (a result line's) and totalCostUSD (a
// session log's cost-state record) are the process's cost tracker, which
// adds every API call the process makes, its sub-agents' (Task/Agent
// tool) included; a capture of Claude Code 2.1.198 with a background
// sub-agent states $0.1662723, the parent's messages priced at Anthropic's
// rates ($0.1118133) plus its sub-agent's ($0.054459), and its modelUsage
// counts both (the usage reports do not price those child runs again;
// twasm view says so beside the step's cost). The sub-agents' usage is on their own runs' messages, not
// in the step's usage.
func StatedCostCountsSubRuns(provider string) bool {
	return provider == "claude"
}

// subRunsInCost reports whether agent step s states a cost that counts
// the child runs it links (StatedCostCountsSubRuns) and links one.
func subRunsInCost(s *StepNode) bool {
	a := s.Agent
	if a == nil || a.CostUSD == nil || !StatedCostCountsSubRuns(a.Provider) {
		return false
	}
	links := false
	var walk func(ss []*StepNode)
	walk = func(ss []*StepNode) {
		for _, c := range ss {
			if c.ChildRunID != "" {
				links = true
			}
			walk(c.Steps)
		}
	}
	walk(s.Steps)
	return links
}

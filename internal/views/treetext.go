package views

import (
	"fmt"
	"io"
	"strings"
)

// WriteTree prints the execution tree for a person: one line per run and
// step, indented with box-drawing guides, child runs under their
// call_workflow step.
func WriteTree(w io.Writer, root *RunNode, color bool) error {
	tw := &treeWriter{w: w, color: color}
	tw.run(root, "", "")
	return tw.err
}

type treeWriter struct {
	w     io.Writer
	color bool
	err   error
}

func (t *treeWriter) line(prefix, s string) {
	if t.err == nil {
		_, t.err = fmt.Fprintf(t.w, "%s%s\n", prefix, s)
	}
}

// run prints a run's line after first and its steps after prefix.
func (t *treeWriter) run(n *RunNode, first, prefix string) {
	parts := []string{paint(t.color, ansiBold, "run "+oneLine(n.RunID))}
	if name := DisplayName(headOf(n)); name != ShortID(n.RunID) {
		parts = append(parts, Clip(name, TitleRunes))
	}
	parts = append(parts, paint(t.color, statusStyle(n.Status), n.Status))
	if n.Open {
		parts = append(parts, "open (the session may grow)")
	}
	if d := durationString(n.DurationMS); d != "" {
		parts = append(parts, d)
	}
	parts = append(parts, fmt.Sprintf("events=%d tools=%d", n.Events, n.Tools))
	if n.Dangling > 0 {
		parts = append(parts, paint(t.color, ansiRed, fmt.Sprintf("dangling=%d", n.Dangling)))
	}
	if len(n.Problems) > 0 {
		parts = append(parts, paint(t.color, ansiYellow, fmt.Sprintf("problems=%d", len(n.Problems))))
	}
	if n.Error != "" {
		parts = append(parts, paint(t.color, ansiRed, "error: "+Clip(n.Error, 120)))
	}
	t.line(first, strings.Join(parts, "  "))
	t.steps(n.Steps, prefix)
}

func (t *treeWriter) steps(ss []*StepNode, prefix string) {
	for i, s := range ss {
		last := i == len(ss)-1
		branch, cont := "├─ ", "│  "
		if last {
			branch, cont = "└─ ", "   "
		}
		t.line(prefix+branch, t.stepLine(s))
		t.steps(s.Steps, prefix+cont)
		switch {
		case s.Child != nil:
			t.run(s.Child, prefix+cont+"└─ ", prefix+cont+"   ")
		case s.ChildError != "":
			t.line(prefix+cont+"└─ ", paint(t.color, ansiRed, "child "+oneLine(s.ChildError)))
		}
	}
}

func (t *treeWriter) stepLine(s *StepNode) string {
	parts := []string{paint(t.color, ansiBold, stepLabel(s.Path, s.Iteration))}
	if s.Kind != "" {
		parts = append(parts, oneLine(s.Kind))
	}
	if s.Attempt > 0 {
		parts = append(parts, fmt.Sprintf("attempt=%d", s.Attempt))
	}
	parts = append(parts, paint(t.color, statusStyle(s.Status), oneLine(s.Status)))
	if d := durationString(s.DurationMS); d != "" {
		parts = append(parts, d)
	}
	if a := s.Agent; a != nil {
		parts = append(parts, oneLine(strings.TrimSpace(strings.Join([]string{a.Provider, a.ProviderVersion, a.Model}, " "))))
	}
	if s.Tools > 0 || s.Agent != nil {
		parts = append(parts, fmt.Sprintf("tools=%d", s.Tools))
	}
	if s.Error != "" {
		parts = append(parts, paint(t.color, ansiRed, "error: "+Clip(s.Error, 120)))
	}
	return strings.Join(parts, "  ")
}

package export

import (
	"strings"

	"github.com/twasm/twasm/transcript"
)

// openSession finds what an export says of a run without run.completed
// that archives an agent session (twasm sync: run.started names its
// "source"). The session may still grow, so the run stays open; its
// status is its latest part's agent status, which spec §7 judges from the
// log alone (ok, error or incomplete), never "running": nothing may be
// running. The views (package views, RunNode.Open) apply the same rule.
type openSession struct {
	archived bool
	status   string // the latest top-level agent step's status
	open     map[stepKey]bool
}

func (o *openSession) note(ev *transcript.Event) {
	k := stepKey{ev.Path, ev.Iteration}
	switch ev.Type {
	case transcript.RunStarted:
		if p := ev.Step(); p != nil && p.Extra["source"] != nil {
			o.archived = true
		}
	case transcript.StepStarted, transcript.StepCallWorkflowStarted:
		if o.open == nil {
			o.open = map[stepKey]bool{}
		}
		o.open[k] = true
	case transcript.StepCompleted, transcript.StepCallWorkflowCompleted:
		delete(o.open, k)
		p := ev.Step()
		if p == nil || p.Kind != transcript.KindAgent || strings.Contains(ev.Path, ".") {
			return
		}
		if r, err := p.AgentResult(); err == nil && r != nil {
			o.status = orDefault(r.Status, orDefault(p.Status, transcript.StatusOK))
		}
	}
}

// sessionStatus returns the status of an open archived session (ok is
// false for any other unfinished run: still running, or its writer was
// stopped).
func (o *openSession) sessionStatus() (status string, ok bool) {
	if o.archived && o.status != "" && len(o.open) == 0 {
		return o.status, true
	}
	return "", false
}

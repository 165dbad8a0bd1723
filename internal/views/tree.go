package views

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/twasm/twasm/internal/runtree"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/transcript"
)

// RunNode is one run of the execution tree.
type RunNode struct {
	RunID       string `json:"run_id"`
	ParentRunID string `json:"parent_run_id,omitempty"`
	File        string `json:"file,omitempty"`
	Name        string `json:"name,omitempty"`
	// Title is what a person remembers the run by: its first prompt, on
	// one line and cut to TitleRunes (Title); "" when it has none.
	Title string `json:"title,omitempty"`
	// AutoName says Name is one twasm made up (an archived session's
	// "<provider> session <id>", record's "record <provider>"), not one a
	// person gave: DisplayName prefers the Title then.
	AutoName bool `json:"auto_name,omitempty"`
	// Project is the first agent step's project (AgentResult.ProjectDir):
	// its repository root, else its working directory; "" when no step
	// states one.
	Project string `json:"project,omitempty"`
	// Status is run.completed's status; "running" while there is none,
	// except for an archived session (see Open).
	Status string `json:"status"`
	// Open marks an archived agent session (run.started names its
	// "source") that has no run.completed because the session may still
	// grow: its Status is the agent status of its latest part, which
	// spec §7 judges from the log alone (ok, error or incomplete), not
	// "running", since nothing may be running.
	Open bool `json:"open,omitempty"`
	// RenormalizedFrom is the run this one was rebuilt from by twasm
	// renormalize (run.started's RenormalizedFromField); "" otherwise.
	RenormalizedFrom string `json:"renormalized_from,omitempty"`
	// SupersedesRuns are the ended runs this one's start says it holds
	// again (run.started's lifecycle.SupersedesRunsField).
	SupersedesRuns []string `json:"supersedes_runs,omitempty"`
	// SupersededBy is the run this one's end says holds again what it
	// holds (run.completed's lifecycle.SupersededByField: a sub-agent's
	// file an older twasm archived as a session of its own, an archive
	// left interrupted), or, for a rebuild by renormalize that has not
	// ended (a renormalize killed, or still running), the run it was
	// rebuilt from (UnfinishedRebuild); "" otherwise.
	SupersededBy string `json:"superseded_by,omitempty"`
	// Archived says run.started names the agent's session it archives
	// (SessionSourceField: twasm sync, import), and Sessions are the
	// agent sessions its agent steps' results name (SessionKey: provider
	// and session id, each once); Unkeyed says one of its agent steps
	// names no session. They tie a run recorded from an agent's output to
	// the run archived from the agent's own store (Superseded).
	Archived   bool       `json:"archived,omitempty"`
	Sessions   []string   `json:"sessions,omitempty"`
	Unkeyed    bool       `json:"unkeyed,omitempty"`
	Error      string     `json:"error,omitempty"`
	Schema     string     `json:"schema,omitempty"`
	Producer   string     `json:"producer,omitempty"`
	Started    *time.Time `json:"started,omitempty"`
	Completed  *time.Time `json:"completed,omitempty"`
	DurationMS *int64     `json:"duration_ms,omitempty"`
	Finished   bool       `json:"finished"`
	Events     int        `json:"events"`
	Tools      int        `json:"tools"`
	Dangling   int        `json:"dangling"`
	// Usage is the run's own token usage (RunUsage): its sub-runs' is in
	// SubRuns, and the two together in Totals.
	Usage *transcript.Usage `json:"usage,omitempty"`
	// SubRuns sums the linked child runs (BuildTree), theirs included;
	// nil when the run has none.
	SubRuns *Totals `json:"sub_runs,omitempty"`
	// Problems are the reader's per-line problems (malformed lines,
	// unknown types, a torn tail).
	Problems []string    `json:"problems,omitempty"`
	Steps    []*StepNode `json:"steps"`

	// contentFrom and contentTo are the earliest and latest times of
	// the run's messages and tool events (ContentSpan).
	contentFrom, contentTo time.Time
	// events are the run's events that belong to no step (run.* events and
	// messages or tools of a run without steps), in file order.
	events []*transcript.Event
	run    *Run
	// scope is the FullPath of the call_workflow step this run hangs
	// under, "" for the root.
	scope string
}

// Totals are tool calls and token usage summed over runs.
type Totals struct {
	Runs  int               `json:"runs"`
	Tools int               `json:"tools"`
	Usage *transcript.Usage `json:"usage,omitempty"`
}

// add adds the run n and its sub-runs to t.
func (t *Totals) add(n *RunNode) {
	t.Runs++
	t.Tools += n.Tools
	t.addUsage(n.Usage)
	if s := n.SubRuns; s != nil {
		t.Runs += s.Runs
		t.Tools += s.Tools
		t.addUsage(s.Usage)
	}
}

func (t *Totals) addUsage(u *transcript.Usage) {
	if u.IsZero() {
		return
	}
	if t.Usage == nil {
		t.Usage = &transcript.Usage{}
	}
	t.Usage.Add(u)
}

// Totals returns the run and its sub-runs together (Runs counts the run
// itself too).
func (n *RunNode) Totals() Totals {
	var t Totals
	t.add(n)
	return t
}

// AgentSummary is what an agent step's result says, for the tree.
type AgentSummary struct {
	Provider        string `json:"provider,omitempty"`
	ProviderVersion string `json:"provider_version,omitempty"`
	Model           string `json:"model,omitempty"`
	SessionID       string `json:"session_id,omitempty"`
	// Cwd and Project are the result's working directory and repository
	// root (transcript.AgentResult).
	Cwd      string            `json:"cwd,omitempty"`
	Project  string            `json:"project,omitempty"`
	Status   string            `json:"status,omitempty"`
	ExitCode *int              `json:"exit_code,omitempty"`
	Usage    *transcript.Usage `json:"usage,omitempty"`
	CostUSD  *float64          `json:"cost_usd,omitempty"`
	Unmapped map[string]int    `json:"unmapped,omitempty"`
	Dangling []string          `json:"dangling,omitempty"`
}

// StepNode is one step attempt: a (path, iteration) bracket of a run.
type StepNode struct {
	Path string `json:"path"`
	// FullPath is Path prefixed by the paths of the call_workflow steps
	// leading to this run from the root ("review.subagent.search"); it is
	// what --path filters on.
	FullPath   string        `json:"full_path"`
	Iteration  int           `json:"iteration"`
	Attempt    int           `json:"attempt,omitempty"`
	Name       string        `json:"name,omitempty"`
	Kind       string        `json:"kind,omitempty"`
	Status     string        `json:"status"`
	Error      string        `json:"error,omitempty"`
	Seq        uint64        `json:"seq"`
	Started    *time.Time    `json:"started,omitempty"`
	Completed  *time.Time    `json:"completed,omitempty"`
	DurationMS *int64        `json:"duration_ms,omitempty"`
	Messages   int           `json:"messages"`
	Tools      int           `json:"tools"`
	Agent      *AgentSummary `json:"agent,omitempty"`
	ChildRunID string        `json:"child_run_id,omitempty"`
	// Child is the linked child run; ChildError says why it is missing
	// (no file, unreadable, a cycle, too deep).
	Child      *RunNode `json:"child,omitempty"`
	ChildError string   `json:"child_error,omitempty"`
	// SupersededBy is the child run of a later link of the run that holds
	// again what Child holds (lifecycle.SupersedesField: the sub-agent of
	// an interrupted archive, archived again): Child is not in the run's
	// SubRuns totals, so that its tokens and calls are counted once.
	SupersededBy string      `json:"superseded_by,omitempty"`
	Steps        []*StepNode `json:"steps,omitempty"`

	events     []*transcript.Event
	supersedes string // the child run this link's child supersedes
}

// StatusRunning is shown for a run or step that has started and has no
// completion yet.
const StatusRunning = "running"

type stepKey struct {
	path string
	iter int
}

// BuildRun builds the tree of one run without following child runs.
func BuildRun(run *Run) *RunNode {
	n := &RunNode{RunID: run.ID, File: run.File, Status: StatusRunning, Events: len(run.Events), run: run,
		Problems: ProblemStrings(run.Problems), Steps: []*StepNode{}}
	archived := false
	var lastPart *StepNode // the latest top-level agent step completed
	open := map[stepKey]*StepNode{}
	var order []*StepNode // open steps in start order, to find parents
	// Calls pair with results by transcript.Pairer's rule (as stats
	// does): a provider may reuse a call id for a new call once the first
	// is answered. A revised call is a new version of one counted
	// already, not one more.
	var pairs transcript.Pairer
	for _, ev := range run.Events {
		_, again, _ := pairs.Feed(ev)
		if n.ParentRunID == "" {
			n.ParentRunID = ev.ParentRunID
		}
		switch ev.Type {
		case transcript.MessageUser, transcript.MessageAssistant, transcript.ToolCall, transcript.ToolResult:
			if t := ev.Timestamp; !t.IsZero() {
				if n.contentFrom.IsZero() || t.Before(n.contentFrom) {
					n.contentFrom = t
				}
				if t.After(n.contentTo) {
					n.contentTo = t
				}
			}
		}
		key := stepKey{ev.Path, ev.Iteration}
		switch ev.Type {
		case transcript.RunStarted:
			n.Started = timePtr(ev.Timestamp)
			if p := ev.Step(); p != nil {
				n.Name, n.Schema = p.Name, p.Schema
				archived = p.Extra[SessionSourceField] != nil
				if b, ok := p.Extra[RenormalizedFromField]; ok {
					_ = json.Unmarshal(b, &n.RenormalizedFrom)
				}
				if b, ok := p.Extra[lifecycle.SupersedesRunsField]; ok {
					_ = json.Unmarshal(b, &n.SupersedesRuns)
				}
				if p.Producer != nil {
					n.Producer = strings.TrimSpace(p.Producer.Name + " " + p.Producer.Version)
				}
			}
			n.events = append(n.events, ev)
		case transcript.RunCompleted:
			n.Completed, n.Finished = timePtr(ev.Timestamp), true
			n.Status = transcript.StatusOK
			if p := ev.Step(); p != nil {
				if p.Status != "" {
					n.Status = p.Status
				}
				n.Error = p.Error
				if n.Name == "" {
					n.Name = p.Name
				}
				if b, ok := p.Extra[lifecycle.SupersededByField]; ok {
					_ = json.Unmarshal(b, &n.SupersededBy)
				}
			}
			n.events = append(n.events, ev)
		case transcript.StepStarted, transcript.StepCallWorkflowStarted:
			s := &StepNode{Path: ev.Path, FullPath: ev.Path, Iteration: ev.Iteration, Seq: ev.Seq,
				Status: StatusRunning, Started: timePtr(ev.Timestamp), ChildRunID: ev.ChildRunID}
			if p := ev.Step(); p != nil {
				s.Name, s.Kind, s.Attempt = p.Name, string(p.Kind), p.Attempt
				s.supersedes = runField(p, lifecycle.SupersedesField)
			}
			if parent, ok := ParentStep(order, nodeKey, ev.Path, ev.Iteration); ok {
				parent.Steps = append(parent.Steps, s)
			} else {
				n.Steps = append(n.Steps, s)
			}
			s.events = append(s.events, ev)
			open[key] = s
			order = append(order, s)
		case transcript.StepCompleted, transcript.StepCallWorkflowCompleted:
			s := open[key]
			if s == nil {
				// A completion without its start: show it rather than drop
				// it; the validator reports the broken bracket.
				s = &StepNode{Path: ev.Path, FullPath: ev.Path, Iteration: ev.Iteration, Seq: ev.Seq}
				n.Steps = append(n.Steps, s)
			}
			delete(open, key)
			order = slices.DeleteFunc(order, func(o *StepNode) bool { return o == s })
			completeStep(s, ev)
			if s.Agent != nil && !strings.Contains(s.Path, ".") {
				lastPart = s
			}
			if s.Agent != nil && n.Project == "" {
				n.Project = transcript.ProjectOf(s.Agent.Project, s.Agent.Cwd)
			}
		default:
			s := open[key]
			if s == nil {
				n.events = append(n.events, ev)
			} else {
				s.events = append(s.events, ev)
			}
			switch ev.Type {
			case transcript.ToolCall:
				if again {
					break
				}
				n.Tools++
				if s != nil {
					s.Tools++
				}
			case transcript.MessageUser, transcript.MessageAssistant:
				if s != nil {
					s.Messages++
				}
				if n.Title == "" && ev.Type == transcript.MessageUser {
					n.Title = promptTitle(ev)
				}
			}
		}
	}
	n.Dangling = len(pairs.Dangling())
	n.AutoName = IsAutoName(n.Name, archived)
	n.Archived = archived
	n.Walk(func(s *StepNode, _ int) bool {
		if s.Agent == nil {
			return true
		}
		if s.Agent.SessionID == "" {
			n.Unkeyed = true
		} else if k := SessionKey(s.Agent.Provider, s.Agent.SessionID); !slices.Contains(n.Sessions, k) {
			n.Sessions = append(n.Sessions, k)
		}
		return true
	})
	n.SupersededBy = cmp.Or(n.SupersededBy, UnfinishedRebuild(n.RenormalizedFrom, n.Finished))
	n.Usage = RunUsage(run)
	n.DurationMS = durationMS(n.Started, n.Completed)
	if !n.Finished && archived && len(open) == 0 && lastPart != nil {
		n.Open = true
		n.Status = cmp.Or(lastPart.Agent.Status, lastPart.Status)
	}
	return n
}

// ContentSpan returns the earliest and latest times of the run's messages
// and tool events (ok: it has one).
func (n *RunNode) ContentSpan() (from, to time.Time, ok bool) {
	return n.contentFrom, n.contentTo, !n.contentFrom.IsZero()
}

// recordedLater reports whether the run's events lie outside the run's
// own times by more than a minute: a saved log recorded (record --input)
// after it was written, whose events keep the times the log gives.
func (n *RunNode) recordedLater(from, to time.Time) bool {
	if n.Started == nil {
		return false
	}
	if from.Before(n.Started.Add(-time.Minute)) {
		return true
	}
	// A run still open (an archived session that grows) has events
	// after its start by nature.
	return n.Completed != nil && to.After(n.Completed.Add(time.Minute))
}

// RunUsage is the token usage of the run itself, not of its sub-runs:
// the sum of its agent steps' results, or, in a run with no agent step
// result (a sub-agent's run: the provider's sub-agent messages are not in
// the step that started it, spec §6.10), the sum of its assistant
// messages' usage. nil when no figure is stated.
func RunUsage(run *Run) *transcript.Usage {
	var steps, msgs transcript.Usage
	agent := false
	for _, ev := range run.Events {
		switch ev.Type {
		case transcript.StepCompleted:
			if p := ev.Step(); p != nil && p.Kind == transcript.KindAgent {
				if r, err := p.AgentResult(); err == nil && r != nil {
					agent = true
					steps.Add(r.Usage)
				}
			}
		case transcript.MessageAssistant:
			if p := ev.Message(); p != nil {
				msgs.Add(p.Usage)
			}
		}
	}
	u := &msgs
	if agent {
		u = &steps
	}
	if u.IsZero() {
		return nil
	}
	return u
}

// SessionKey names an agent session across runs: the provider and the
// session id its results state.
func SessionKey(provider, session string) string { return provider + "\x00" + session }

// RenormalizedFromField is the run.started payload field with which a
// run rebuilt by twasm renormalize names the run it was rebuilt from.
const RenormalizedFromField = "renormalized_from"

// SessionSourceField is the run.started payload field with which an
// archived agent session (twasm sync, import) names its source: such a
// run stays open while the session may grow (see RunNode.Open).
const SessionSourceField = "source"

// ParentStep returns the element of open (the steps open at this point,
// oldest first) that a step of (path, iter) starting now nests under: the
// one whose path is the longest proper dot prefix of path; among those,
// one with the same iteration (a loop's body steps carry the loop index
// while the loop step carries its own scope's), the newest first. key
// gives an element's path and iteration. The execution tree, the HTML
// export's tree and the OTLP export's spans nest steps by this rule.
func ParentStep[S any](open []S, key func(S) (path string, iter int), path string, iter int) (parent S, ok bool) {
	bestLen, bestIter := -1, 0
	for i := len(open) - 1; i >= 0; i-- {
		p, it := key(open[i])
		if len(path) <= len(p) || path[len(p)] != '.' || path[:len(p)] != p {
			continue
		}
		switch {
		case len(p) > bestLen:
			parent, bestLen, bestIter = open[i], len(p), it
		case len(p) == bestLen && it == iter && bestIter != iter:
			parent, bestIter = open[i], it
		}
	}
	return parent, bestLen >= 0
}

func nodeKey(s *StepNode) (string, int) { return s.Path, s.Iteration }

func completeStep(s *StepNode, ev *transcript.Event) {
	s.events = append(s.events, ev)
	s.Completed = timePtr(ev.Timestamp)
	s.DurationMS = durationMS(s.Started, s.Completed)
	s.Status = transcript.StatusOK
	if s.ChildRunID == "" {
		s.ChildRunID = ev.ChildRunID
	}
	p := ev.Step()
	if p == nil {
		return
	}
	if p.Status != "" {
		s.Status = p.Status
	}
	s.Error = p.Error
	if s.Name == "" {
		s.Name, s.Kind = p.Name, string(p.Kind)
	}
	if transcript.StepKind(s.Kind) != transcript.KindAgent {
		return
	}
	if r, err := p.AgentResult(); err == nil && r != nil {
		s.Agent = &AgentSummary{Provider: r.Provider, ProviderVersion: r.ProviderVersion, Model: r.Model,
			SessionID: r.SessionID, Cwd: r.Cwd, Project: r.Project, Status: r.Status, ExitCode: r.ExitCode, Usage: r.Usage, CostUSD: r.CostUSD,
			Unmapped: r.Unmapped, Dangling: r.Dangling}
	}
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func durationMS(a, b *time.Time) *int64 {
	if a == nil || b == nil {
		return nil
	}
	d := b.Sub(*a).Milliseconds()
	return &d
}

// BuildTree builds the tree of root and follows child_run_id links
// recursively through l (runtree's rules). A child that cannot be loaded,
// or that would close a cycle, is left out with the reason in
// StepNode.ChildError, so that one broken link still shows the rest of the
// tree.
func BuildTree(l Loader, root *Run) *RunNode {
	type scoped struct {
		run   *Run
		scope string
	}
	visit := func(_ context.Context, sr scoped, _ int) (runtree.Visited[scoped, *RunNode], error) {
		n := BuildRun(sr.run)
		n.scope = sr.scope
		v := runtree.Visited[scoped, *RunNode]{ID: sr.run.ID, Node: n}
		by := map[string]string{} // child run → the link's child that supersedes it
		n.Walk(func(s *StepNode, _ int) bool {
			if s.supersedes != "" && s.ChildRunID != "" {
				by[s.supersedes] = s.ChildRunID
			}
			return true
		})
		n.Walk(func(s *StepNode, _ int) bool {
			if sr.scope != "" {
				s.FullPath = sr.scope + "." + s.Path
			}
			if s.ChildRunID == "" {
				return true
			}
			v.Links = append(v.Links, runtree.Link[scoped, *RunNode]{
				ID: s.ChildRunID,
				Open: func(context.Context) (scoped, error) {
					child, err := l.Load(s.ChildRunID)
					if err == nil {
						err = CheckTranscript(child)
					}
					return scoped{child, s.FullPath}, err
				},
				Attach: func(child *RunNode, err *runtree.ChildError) {
					if err != nil {
						s.ChildError = err.Error()
						return
					}
					s.Child = child
					if s.SupersededBy = by[s.ChildRunID]; s.SupersededBy != "" {
						return // its tokens are held again by the run that supersedes it
					}
					if n.SubRuns == nil {
						n.SubRuns = &Totals{}
					}
					n.SubRuns.add(child)
				},
			})
			return true
		})
		return v, nil
	}
	n, _ := runtree.Walk(context.Background(), scoped{run: root}, visit) // visit never fails
	return n
}

// Walk calls fn for every step of the run in tree order (not descending
// into child runs), depth 0 for top-level steps. fn returns false to skip a
// step's sub-steps.
func (n *RunNode) Walk(fn func(s *StepNode, depth int) bool) {
	var walk func(ss []*StepNode, d int)
	walk = func(ss []*StepNode, d int) {
		for _, s := range ss {
			if fn(s, d) {
				walk(s.Steps, d+1)
			}
		}
	}
	walk(n.Steps, 0)
}

// Runs returns n and every child run below it, depth first.
func (n *RunNode) Runs() []*RunNode {
	out := []*RunNode{n}
	n.Walk(func(s *StepNode, _ int) bool {
		if s.Child != nil {
			out = append(out, s.Child.Runs()...)
		}
		return true
	})
	return out
}

// FullPath returns path as seen from the root of the tree: prefixed with
// the path of the call_workflow step this run hangs under.
func (n *RunNode) FullPath(path string) string {
	switch {
	case n.scope == "":
		return path
	case path == "":
		return n.scope
	}
	return n.scope + "." + path
}

// Source returns the run the node was built from.
func (n *RunNode) Source() *Run { return n.run }

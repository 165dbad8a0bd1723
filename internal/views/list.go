package views

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/twasm/twasm/internal/prices"
	"github.com/twasm/twasm/transcript"
)

// RunHead is what a run says of itself: the head of its listing line
// (RunSummary) and of its digest (RunDigest).
type RunHead struct {
	RunID       string `json:"run_id"`
	ParentRunID string `json:"parent_run_id,omitempty"`
	Name        string `json:"name,omitempty"`
	// Title is the run's first prompt on one line (RunNode.Title), and
	// AutoName says Name is one twasm made up (RunNode.AutoName).
	Title    string `json:"title,omitempty"`
	AutoName bool   `json:"auto_name,omitempty"`
	// Project is the run's project (RunNode.Project).
	Project string `json:"project,omitempty"`
	Status  string `json:"status"`
	// Open marks an archived session that may still grow (RunNode.Open).
	Open bool `json:"open,omitempty"`
	// RenormalizedFrom is the run this one was rebuilt from
	// (RunNode.RenormalizedFrom).
	RenormalizedFrom string `json:"renormalized_from,omitempty"`
	// SupersedesRuns are the ended runs this one holds again
	// (RunNode.SupersedesRuns).
	SupersedesRuns []string `json:"supersedes_runs,omitempty"`
	// SupersededBy is the run that holds again what this one holds
	// (RunNode.SupersededBy).
	SupersededBy string `json:"superseded_by,omitempty"`
	// Archived, Sessions and Unkeyed are as RunNode has them: they tie a
	// run recorded from an agent's output to the run archived from the
	// agent's store that holds the same session again (Superseded).
	Archived   bool       `json:"archived,omitempty"`
	Sessions   []string   `json:"sessions,omitempty"`
	Unkeyed    bool       `json:"unkeyed,omitempty"`
	Error      string     `json:"error,omitempty"`
	Started    *time.Time `json:"started,omitempty"`
	DurationMS *int64     `json:"duration_ms,omitempty"`
}

func headOf(n *RunNode) RunHead {
	return RunHead{RunID: n.RunID, ParentRunID: n.ParentRunID, Name: n.Name, Title: n.Title, AutoName: n.AutoName, Project: n.Project, Status: n.Status, Open: n.Open,
		RenormalizedFrom: n.RenormalizedFrom, SupersedesRuns: n.SupersedesRuns, SupersededBy: n.SupersededBy,
		Archived: n.Archived, Sessions: n.Sessions, Unkeyed: n.Unkeyed, Error: n.Error, Started: n.Started, DurationMS: n.DurationMS}
}

// RunSummary is one line of the run listing (twasm ls): a run with its
// child runs folded in.
type RunSummary struct {
	RunHead
	// Providers are the providers of the agent steps of the run and its
	// child runs, sorted.
	Providers []string `json:"providers"`
	// Steps counts the step attempts of the run and its child runs, Tools
	// their tool calls, ChildRuns the child runs reached.
	Steps     int `json:"steps"`
	Tools     int `json:"tools"`
	ChildRuns int `json:"child_runs"`
	// CostUSD sums the cost the providers stated, to the micro-dollar (no
	// float noise); nil when none did. Kept for the readers written before
	// Cost.
	CostUSD *float64 `json:"cost_usd,omitempty"`
	// Cost is what the run and its child runs cost with its provenance:
	// stated by the providers, priced from the price table, or unknown
	// (package usage, TreeCost); nil when it has no usage or was not
	// asked for.
	Cost        *prices.Cost `json:"cost,omitempty"`
	statedMicro int64
	// Usage is the run's own token usage (RunNode.Usage), SubRunUsage its
	// child runs' (sub-agents), UsageInAll the two together; each nil
	// when no figure is stated.
	Usage       *transcript.Usage `json:"usage,omitempty"`
	SubRunUsage *transcript.Usage `json:"sub_run_usage,omitempty"`
	UsageInAll  *transcript.Usage `json:"usage_in_all,omitempty"`
	File        string            `json:"file"`
}

// addUsage counts a run's own usage in: the root's as the run's, a child
// run's as a sub-run's.
func (s *RunSummary) addUsage(u *transcript.Usage, child bool) {
	if u.IsZero() {
		return
	}
	add := func(dst **transcript.Usage) {
		if *dst == nil {
			*dst = &transcript.Usage{}
		}
		(*dst).Add(u)
	}
	if child {
		add(&s.SubRunUsage)
	} else {
		add(&s.Usage)
	}
	add(&s.UsageInAll)
}

// Summarize folds a run tree into its listing line. The usage of a run
// another supersedes, and of its own child runs, is not counted: the run
// that supersedes it holds those tokens again.
func Summarize(root *RunNode) RunSummary {
	s := newSummary(headOf(root), root.File)
	gone := map[string]bool{}
	for _, n := range root.Runs() {
		n.Walk(func(st *StepNode, _ int) bool {
			if st.SupersededBy != "" && st.ChildRunID != "" {
				gone[st.ChildRunID] = true
			}
			return true
		})
	}
	for _, n := range root.Runs() { // depth first: a parent before its children
		if n != root {
			s.ChildRuns++
		}
		if gone[n.ParentRunID] {
			gone[n.RunID] = true
		}
		if !gone[n.RunID] {
			s.addUsage(n.Usage, n != root)
		}
		s.Tools += n.Tools
		n.Walk(func(st *StepNode, _ int) bool {
			sd := StepDigest{}
			if a := st.Agent; a != nil {
				sd.Provider, sd.CostUSD = a.Provider, a.CostUSD
			}
			s.addStep(sd)
			return true
		})
	}
	s.finish()
	return s
}

func newSummary(h RunHead, file string) RunSummary {
	return RunSummary{RunHead: h, Providers: []string{}, File: file}
}

// addStep counts one step attempt in.
func (s *RunSummary) addStep(st StepDigest) {
	s.Steps++
	if st.Provider != "" && !slices.Contains(s.Providers, st.Provider) {
		s.Providers = append(s.Providers, st.Provider)
	}
	if st.CostUSD != nil {
		s.statedMicro += prices.MicroOfUSD(*st.CostUSD)
		usd := float64(s.statedMicro) / 1e6
		s.CostUSD = &usd
	}
}

func (s *RunSummary) finish() { slices.Sort(s.Providers) }

// SortNewestFirst orders summaries by start time, newest first; runs with
// no start time last; ties by run id.
func SortNewestFirst(ss []RunSummary) {
	slices.SortFunc(ss, func(a, b RunSummary) int {
		switch {
		case a.Started == nil && b.Started == nil:
		case a.Started == nil:
			return 1
		case b.Started == nil:
			return -1
		default:
			if c := b.Started.Compare(*a.Started); c != 0 {
				return c
			}
		}
		return cmp.Compare(b.RunID, a.RunID)
	})
}

// RunFilter selects runs for the listing; zero fields select everything.
type RunFilter struct {
	Provider string
	Status   string
	// Name matches a case-insensitive substring of the run's name or
	// title.
	Name         string
	Since, Until time.Time
	// Project selects the runs whose project is a directory or below it.
	Project ProjectFilter
}

// IsZero reports whether the filter selects every run.
func (f RunFilter) IsZero() bool {
	return f.Provider == "" && f.Status == "" && f.Name == "" && f.Since.IsZero() && f.Until.IsZero() && f.Project.IsZero()
}

// Match reports whether s passes the filter.
func (f RunFilter) Match(s RunSummary) bool {
	if f.Provider != "" && !slices.Contains(s.Providers, f.Provider) {
		return false
	}
	if f.Status != "" && s.Status != f.Status {
		return false
	}
	if !f.Project.Match(s.Project) {
		return false
	}
	if f.Name != "" && !containsFold(s.Name, f.Name) && !containsFold(s.Title, f.Name) {
		return false
	}
	if !f.Since.IsZero() && (s.Started == nil || s.Started.Before(f.Since)) {
		return false
	}
	if !f.Until.IsZero() && (s.Started == nil || !s.Started.Before(f.Until)) {
		return false
	}
	return true
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

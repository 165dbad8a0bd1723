package views

import (
	"context"
	"errors"
	"io/fs"

	"github.com/twasm/twasm/internal/runtree"
	"github.com/twasm/twasm/transcript"
)

// RunDigest is what the listing (ls) and the statistics (stats) need of
// one transcript, without its events: a cache (the index's, see package
// index) keeps it per file and gives it back while the file is unchanged,
// so ls and stats over a large storage read only the runs that changed.
// DigestRun makes it; SummarizeDigests and Stats.AddDigest use it exactly
// as Summarize and Stats.Add use a read run (they are built on it), so
// the answers are the same.
type RunDigest struct {
	// LoadErr is why the file could not be read (it is then not listed,
	// and no child of another run); NotTranscript why it is not a
	// transcript (stats refuses it).
	LoadErr       string `json:"load_err,omitempty"`
	NotTranscript string `json:"not_transcript,omitempty"`

	RunHead
	File  string `json:"file"`
	Tools int    `json:"tools"`
	// Usage is the run's own token usage (RunNode.Usage).
	Usage *transcript.Usage `json:"usage,omitempty"`
	// Steps are the run's step attempts in tree order (RunNode.Walk).
	Steps []StepDigest `json:"steps,omitempty"`
	// Counts is what the run adds to Stats.
	Counts RunCounts `json:"counts"`
}

// StepDigest is one step attempt of a RunDigest.
type StepDigest struct {
	Provider string   `json:"provider,omitempty"`
	CostUSD  *float64 `json:"cost_usd,omitempty"`
	Child    string   `json:"child,omitempty"`
}

// RunCounts is what one run adds to Stats.
type RunCounts struct {
	// Child says the run is a child run (a sub-agent's, a sub-workflow's).
	Child       bool           `json:"child,omitempty"`
	Events      int            `json:"events"`
	Malformed   int            `json:"malformed,omitempty"`
	Unknown     int            `json:"unknown,omitempty"`
	Dangling    int            `json:"dangling,omitempty"`
	EventTypes  map[string]int `json:"event_types,omitempty"`
	BlockTypes  map[string]int `json:"block_types,omitempty"`
	Tools       map[string]int `json:"tools,omitempty"`
	Fidelity    map[string]int `json:"fidelity,omitempty"`
	ToolResults map[string]int `json:"tool_results,omitempty"`
	// Agents are the agent steps' results, in file order.
	Agents []AgentCounts `json:"agents,omitempty"`
	// SubRunUsage is the usage of a run with no agent step result (a
	// sub-agent's run), from its messages (RunUsage); nil otherwise.
	SubRunUsage *transcript.Usage `json:"sub_run_usage,omitempty"`
	// Supersedes are the child runs the run's links say a later child
	// replaces (lifecycle.SupersedesField); SupersededBy the run its end
	// says holds again what it holds (lifecycle.SupersededByField). The
	// usage of a superseded run is not counted: its tokens are counted in
	// the run that supersedes it.
	Supersedes   []string `json:"supersedes,omitempty"`
	SupersededBy string   `json:"superseded_by,omitempty"`
}

// AgentCounts is what one agent step adds to Stats.
type AgentCounts struct {
	Provider        string            `json:"provider,omitempty"`
	ProviderVersion string            `json:"provider_version,omitempty"`
	Usage           *transcript.Usage `json:"usage,omitempty"`
	CostUSD         *float64          `json:"cost_usd,omitempty"`
	Unmapped        map[string]int    `json:"unmapped,omitempty"`
}

// DigestFile reads the transcript at path and digests it (a file that
// cannot be read gives a digest that says why).
func DigestFile(path string) *RunDigest {
	run, err := LoadFile(path)
	if err != nil {
		return &RunDigest{LoadErr: err.Error(), File: path}
	}
	return DigestRun(run)
}

// DigestRun digests a run read in full.
func DigestRun(run *Run) *RunDigest {
	n := BuildRun(run)
	d := &RunDigest{RunHead: headOf(n), File: n.File, Tools: n.Tools, Usage: n.Usage, Counts: CountRun(run)}
	if err := CheckTranscript(run); err != nil {
		d.NotTranscript = err.Error()
	}
	n.Walk(func(s *StepNode, _ int) bool {
		sd := StepDigest{Child: s.ChildRunID}
		if a := s.Agent; a != nil {
			sd.Provider, sd.CostUSD = a.Provider, a.CostUSD
		}
		d.Steps = append(d.Steps, sd)
		return true
	})
	return d
}

// TreeFiles returns, for a run id of digests, the files of its tree
// (DigestTree, its child runs looked up in digests): what TreeTime reads
// the times of, for Superseded.
func TreeFiles(digests map[string]*RunDigest) func(id string) []string {
	lookup := func(id string) (*RunDigest, bool) { d, ok := digests[id]; return d, ok }
	return func(id string) []string {
		var out []string
		for _, n := range DigestTree(digests[id], lookup) {
			out = append(out, n.File)
		}
		return out
	}
}

// DigestTree returns root's digest and those of the child runs it links
// to, depth first, following the links as BuildTree does (a child seen
// already, deeper than runtree.MaxDepth, or that cannot be read or is not a
// transcript is left out).
// lookup returns the digest of a run id's file, false when there is none.
func DigestTree(root *RunDigest, lookup func(runID string) (*RunDigest, bool)) []*RunDigest {
	var out []*RunDigest
	visit := func(_ context.Context, d *RunDigest, _ int) (runtree.Visited[*RunDigest, struct{}], error) {
		out = append(out, d)
		v := runtree.Visited[*RunDigest, struct{}]{ID: d.RunID}
		for _, s := range d.Steps {
			if s.Child == "" {
				continue
			}
			v.Links = append(v.Links, runtree.Link[*RunDigest, struct{}]{ID: s.Child,
				Open: func(context.Context) (*RunDigest, error) {
					c, ok := lookup(s.Child)
					switch {
					case !ok:
						return nil, fs.ErrNotExist
					case c.LoadErr != "":
						return nil, errors.New(c.LoadErr)
					case c.NotTranscript != "":
						return nil, errors.New(c.NotTranscript)
					}
					return c, nil
				}})
		}
		return v, nil
	}
	_, _ = runtree.Walk(context.Background(), root, visit) // visit never fails
	return out
}

// SummarizeDigests folds a digest tree (DigestTree) into its listing line,
// as Summarize folds a run tree.
func SummarizeDigests(tree []*RunDigest) RunSummary {
	root := tree[0]
	s := newSummary(root.RunHead, root.File)
	gone := map[string]bool{} // as Summarize: superseded runs' usage left out
	for _, d := range tree {
		for _, g := range d.Counts.Supersedes {
			gone[g] = true
		}
	}
	for i, d := range tree { // depth first: a parent before its children
		if i > 0 {
			s.ChildRuns++
		}
		if gone[d.ParentRunID] {
			gone[d.RunID] = true
		}
		if !gone[d.RunID] {
			s.addUsage(d.Usage, i > 0)
		}
		s.Tools += d.Tools
		for _, st := range d.Steps {
			s.addStep(st)
		}
	}
	s.finish()
	return s
}

// AddDigest counts a digested run in, as Add counts a read run: a run id
// already counted is skipped and AddDigest reports false.
func (s *Stats) AddDigest(d *RunDigest) bool {
	if d.LoadErr != "" {
		return false // nothing was read
	}
	return s.addCounts(d.RunID, &d.Counts)
}

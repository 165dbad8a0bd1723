package usage

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/twasm/twasm/internal/prices"
	"github.com/twasm/twasm/internal/runtree"
	"github.com/twasm/twasm/internal/views"
	"github.com/twasm/twasm/transcript"
)

// Groupings a report is cut by.
const (
	ByDay      = "day"
	ByWeek     = "week" // starting on Monday, named by that day
	ByMonth    = "month"
	BySession  = "session"
	ByModel    = "model"
	ByProvider = "provider" // the agent: claude, codex, gemini...
	ByProject  = "project"  // the session's project directory
)

// noModel stands for the model of usage whose provider names none, and
// noProject for the project of a session whose runs state none.
const (
	noModel   = "(no model named)"
	noProject = "(no project)"
)

// Groupings lists the valid Options.By values.
var Groupings = []string{ByDay, ByWeek, ByMonth, BySession, ByModel, ByProvider, ByProject}

// Options say what a report counts and how it is cut; zero values select
// everything.
type Options struct {
	By string
	// Since and Until bound the usage's time (a row's quarter-hour):
	// Since included, Until excluded.
	Since, Until time.Time
	// Provider selects one provider (agent); Model the models whose name
	// contains it, case-insensitively ("sonnet", "gpt-5").
	Provider, Model string
	// Project selects the sessions of a project directory or below it
	// (sessionProject).
	Project views.ProjectFilter
	// Breakdown adds each group's figures per model.
	Breakdown bool
	// Location is the time zone days, weeks and months are cut in
	// (time.Local when nil).
	Location *time.Location
}

// Report is usage summed by group, with the total of every group: the
// same rows are counted whatever the grouping, so totals agree across
// groupings.
type Report struct {
	By     string  `json:"by"`
	Groups []Group `json:"groups"`
	Total  Group   `json:"total"`
	// Prices names the price table the figures were priced with.
	Prices string `json:"prices"`
	// Superseded counts runs left out because another run holds their
	// usage again (a renormalize rebuild, a sub-agent archived again), so
	// that each session is counted once.
	Superseded int `json:"superseded_runs,omitempty"`
	// Unreadable lists the runs that could not be read (not counted),
	// each with why.
	Unreadable []Unreadable `json:"unreadable_runs,omitempty"`
}

// Group is the usage of one key (a day, a model, a session...).
type Group struct {
	Key string `json:"key"`
	// Name is a session's name (BySession).
	Name     string            `json:"name,omitempty"`
	Sessions int               `json:"sessions"`
	Requests int               `json:"requests"`
	Usage    *transcript.Usage `json:"usage,omitempty"`
	Cost     Cost              `json:"cost"`
	Models   []Group           `json:"models,omitempty"`

	sessions map[string]bool
	acc      costAcc
	models   map[string]*Group
}

// Cost is money with its provenance (prices.Cost).
type Cost = prices.Cost

type costAcc struct {
	micro                    int64
	priced, stated, unpriced int
	tierUnknown, batch       int
	flex, priority           int
	unpricedModels           map[string]bool
}

func (a *costAcc) add(r *Row) {
	a.micro += prices.Micro(r.PricedPico) + r.StatedMicro
	a.priced += r.Priced
	a.stated += r.Stated
	a.unpriced += r.Unpriced
	a.tierUnknown += r.TierUnknown
	a.batch += r.Batch
	a.flex += r.Flex
	a.priority += r.Priority
	if r.Unpriced > 0 {
		if a.unpricedModels == nil {
			a.unpricedModels = map[string]bool{}
		}
		m := cmp.Or(r.Model, noModel)
		if r.Unpriced > r.UnpricedTier {
			a.unpricedModels[m] = true
		}
		for _, why := range r.UnpricedWhy {
			a.unpricedModels[m+" ("+why+")"] = true
		}
	}
}

func (a *costAcc) cost(table string) Cost {
	c := Cost{MicroUSD: a.micro, USD: prices.FormatMicro(a.micro), TierUnknown: a.tierUnknown, Batch: a.batch, Flex: a.flex, Priority: a.priority}
	switch {
	case a.stated > 0 && a.priced > 0:
		c.Source = prices.SourceMixed
	case a.stated > 0:
		c.Source = prices.SourceProvider
	case a.priced > 0:
		c.Source = prices.SourcePriced
	default:
		c.Source = prices.SourceUnknown
	}
	if a.priced > 0 {
		c.Prices = table
	}
	for m := range a.unpricedModels {
		c.UnpricedModels = append(c.UnpricedModels, m)
	}
	slices.Sort(c.UnpricedModels)
	return c
}

func (g *Group) add(session string, r *Row, breakdown bool) {
	if g.sessions == nil {
		g.sessions = map[string]bool{}
	}
	g.sessions[session] = true
	g.Requests += r.Requests
	if r.Usage != nil {
		if g.Usage == nil {
			g.Usage = &transcript.Usage{}
		}
		g.Usage.Add(r.Usage)
	}
	g.acc.add(r)
	if breakdown {
		if g.models == nil {
			g.models = map[string]*Group{}
		}
		key := cmp.Or(r.Model, noModel)
		m := g.models[key]
		if m == nil {
			m = &Group{Key: key}
			g.models[key] = m
		}
		m.add(session, r, false)
	}
}

func (g *Group) finish(table string) {
	g.Sessions = len(g.sessions)
	g.Cost = g.acc.cost(table)
	for _, m := range g.models {
		m.finish(table)
		g.Models = append(g.Models, *m)
	}
	ByCost(g.Models)
}

// ByCost orders groups by cost, then requests, most first, then by key:
// the order of a report by session, model or provider.
func ByCost(gs []Group) {
	slices.SortFunc(gs, func(a, b Group) int {
		return cmp.Or(cmp.Compare(b.Cost.MicroUSD, a.Cost.MicroUSD), cmp.Compare(b.Requests, a.Requests), cmp.Compare(a.Key, b.Key))
	})
}

// Sources are the runs a report reads: their ledgers by run id, and each
// run's file time (for views.Superseded, which Build gives a run's tree
// time: the latest of its file's and its child runs', as ls and stats).
type Sources struct {
	IDs     []string
	Ledgers map[string]*Ledger
	ModTime func(id string) time.Time
}

// Unreadable is a run whose transcript could not be read: it is not
// counted.
type Unreadable struct {
	RunID string `json:"run_id"`
	// Error says why, naming the file (a named pipe where the transcript
	// goes, a file that cannot be opened or is not a transcript).
	Error string `json:"error"`
}

// Build makes the report. Each top-level run is a session, its child runs
// (sub-agents) counted with it; a run a renormalize rebuild stands for is
// left out (views.Superseded), and so is a run another supersedes (and its
// own child runs), as stats and ls leave them out.
func Build(src Sources, table string, opt Options) (*Report, error) {
	if opt.By == "" {
		opt.By = ByDay
	}
	if !slices.Contains(Groupings, opt.By) {
		return nil, fmt.Errorf("no grouping %q (one of %s)", opt.By, strings.Join(Groupings, ", "))
	}
	loc := opt.Location
	if loc == nil {
		loc = time.Local
	}
	rep := &Report{By: opt.By, Prices: table, Groups: []Group{}}
	heads := map[string]views.RunHead{}
	for _, id := range src.IDs {
		l := src.Ledgers[id]
		if l == nil || l.LoadErr != "" {
			why := "no ledger"
			if l != nil {
				why = l.LoadErr
			}
			rep.Unreadable = append(rep.Unreadable, Unreadable{RunID: id, Error: why})
			continue
		}
		heads[id] = views.RunHead{RunID: l.RunID, ParentRunID: l.ParentRunID, RenormalizedFrom: l.RenormalizedFrom, SupersedesRuns: l.SupersedesRuns,
			SupersededBy: l.SupersededBy, Archived: l.Archived, Sessions: l.Sessions, Unkeyed: l.Unkeyed}
	}
	fileTime := src.ModTime
	if fileTime == nil {
		fileTime = func(string) time.Time { return time.Time{} }
	}
	// A tree's time, as ls and stats take it (views.TreeTime): its
	// file's and its child runs' latest.
	modTime := func(id string) time.Time {
		t := fileTime(id)
		if l := src.Ledgers[id]; l != nil && l.LoadErr == "" {
			for _, m := range ledgerTree(l, src.Ledgers) {
				if mt := fileTime(m.RunID); mt.After(t) {
					t = mt
				}
			}
		}
		return t
	}
	rebuilt := views.Superseded(heads, modTime)
	groups := map[string]*Group{}
	model := strings.ToLower(opt.Model)
	for _, id := range src.IDs {
		root := src.Ledgers[id]
		if root == nil || root.LoadErr != "" || root.ParentRunID != "" {
			continue
		}
		tree := ledgerTree(root, src.Ledgers)
		if rebuilt[id] {
			rep.Superseded += len(tree)
			continue
		}
		project := sessionProject(tree)
		if !opt.Project.Match(project) {
			continue
		}
		rep.Superseded += eachRow(tree, src.Ledgers, func(session string, r *Row) {
			at := time.Unix(r.At, 0)
			switch {
			case !opt.Since.IsZero() && at.Before(opt.Since.Truncate(Slot*time.Second)),
				!opt.Until.IsZero() && !at.Before(opt.Until),
				opt.Provider != "" && r.Provider != opt.Provider,
				model != "" && !strings.Contains(strings.ToLower(r.Model), model):
				return
			}
			key, name := groupKey(opt.By, root, project, r, at.In(loc))
			g := groups[key]
			if g == nil {
				g = &Group{Key: key, Name: name}
				groups[key] = g
			}
			g.add(session, r, opt.Breakdown)
			rep.Total.add(session, r, opt.Breakdown)
		})
	}
	for _, g := range groups {
		g.finish(table)
		rep.Groups = append(rep.Groups, *g)
	}
	switch opt.By {
	case ByDay, ByWeek, ByMonth:
		slices.SortFunc(rep.Groups, func(a, b Group) int { return cmp.Compare(a.Key, b.Key) })
	default:
		ByCost(rep.Groups)
	}
	rep.Total.Key = "total"
	rep.Total.finish(table)
	return rep, nil
}

// sessionProject is a session's project: its root run's, else the first
// of its child runs that states one (tree as ledgerTree gives it).
func sessionProject(tree []*Ledger) string {
	for _, l := range tree {
		if l.Project != "" {
			return l.Project
		}
	}
	return ""
}

func groupKey(by string, root *Ledger, project string, r *Row, at time.Time) (key, name string) {
	switch by {
	case ByWeek:
		d := at.AddDate(0, 0, -((int(at.Weekday()) + 6) % 7))
		return d.Format(time.DateOnly), ""
	case ByMonth:
		return at.Format("2006-01"), ""
	case BySession:
		return root.RunID, root.Name
	case ByModel:
		return cmp.Or(r.Model, noModel), ""
	case ByProvider:
		return cmp.Or(r.Provider, "(unknown)"), ""
	case ByProject:
		return cmp.Or(project, noProject), ""
	}
	return at.Format(time.DateOnly), ""
}

// eachRow calls fn with every row of a session's runs (tree: the root
// first, depth first, as ledgerTree gives it) that is counted: a run
// another supersedes, and its own child runs, are left out (their number
// is returned); a row of a run that names no provider (a sub-agent's) is
// given the session's. A row of a run whose cost an ancestor's step
// already counts in the cost its provider stated (covered: Ledger.Covered)
// keeps its usage and adds no cost: its figures count as stated (the
// parent's statement covers them), so that a sub-agent's cost is counted
// once, in the parent step's.
func eachRow(tree []*Ledger, ledgers map[string]*Ledger, fn func(session string, r *Row)) (superseded int) {
	provider := ""
	for _, l := range tree {
		for _, r := range l.Rows {
			provider = cmp.Or(provider, r.Provider)
		}
	}
	var gone map[string]bool // made when a run supersedes another: seldom
	for _, l := range tree {
		for _, g := range l.Supersedes {
			if gone == nil {
				gone = map[string]bool{}
			}
			gone[g] = true
		}
	}
	for _, l := range tree { // depth first: a parent before its children
		if gone[l.ParentRunID] || l.SupersededBy != "" {
			if gone == nil {
				gone = map[string]bool{}
			}
			gone[l.RunID] = true
		}
		if gone[l.RunID] {
			superseded++
			continue
		}
		inParent := covered(l, ledgers)
		for i := range l.Rows {
			r := l.Rows[i]
			r.Provider = cmp.Or(r.Provider, provider)
			if inParent {
				r = r.inParentCost()
			}
			fn(tree[0].RunID, &r)
		}
	}
	return superseded
}

// covered reports whether the cost of run l is in a cost an ancestor's
// provider stated: its parent, or a run above it, lists it in Covered.
func covered(l *Ledger, ledgers map[string]*Ledger) bool {
	for depth := 0; l.ParentRunID != "" && depth < runtree.MaxDepth; depth++ {
		p := ledgers[l.ParentRunID]
		if p == nil || p.LoadErr != "" {
			return false
		}
		if slices.Contains(p.Covered, l.RunID) {
			return true
		}
		l = p
	}
	return false
}

// inParentCost is r with its cost taken out: its figures count as stated,
// at no cost of their own, since a parent's stated cost counts them.
func (r Row) inParentCost() Row {
	r.Stated += r.Priced + r.Unpriced
	r.PricedPico, r.StatedMicro = 0, 0
	r.Priced, r.Unpriced, r.TierUnknown, r.Batch, r.Flex, r.Priority, r.UnpricedTier, r.UnpricedWhy = 0, 0, 0, 0, 0, 0, 0, nil
	return r
}

// TreeCost is what the run id and the child runs it links to cost, as a
// report by session counts it; false when its ledger is missing, the run
// could not be read or it has no usage.
func TreeCost(id string, ledgers map[string]*Ledger, table string) (Cost, bool) {
	root := ledgers[id]
	if root == nil || root.LoadErr != "" {
		return Cost{}, false
	}
	var acc costAcc
	rows := 0
	eachRow(ledgerTree(root, ledgers), ledgers, func(_ string, r *Row) { acc.add(r); rows++ })
	return acc.cost(table), rows > 0
}

// Costs is what the runs ids and the child runs they link to cost, each
// run once however many of ids reach it, in all and per provider, as
// TreeCost counts one run; runs with no ledger are left out. A run whose
// parent's ledger is at hand is counted after the others, so that the
// tree of its session reaches it first and its rows take the session's
// provider, as a report's do.
func Costs(ids []string, ledgers map[string]*Ledger, table string) (total Cost, byProvider map[string]Cost) {
	var all costAcc
	per := map[string]*costAcc{}
	seen := map[string]bool{}
	hasParent := func(id string) bool {
		l := ledgers[id]
		return l != nil && l.ParentRunID != "" && ledgers[l.ParentRunID] != nil
	}
	ordered := make([]string, 0, len(ids))
	for _, id := range ids {
		if !hasParent(id) {
			ordered = append(ordered, id)
		}
	}
	for _, id := range ids {
		if hasParent(id) {
			ordered = append(ordered, id)
		}
	}
	for _, id := range ordered {
		root := ledgers[id]
		if root == nil || root.LoadErr != "" || seen[id] {
			continue
		}
		var tree []*Ledger
		for _, l := range ledgerTree(root, ledgers) {
			if !seen[l.RunID] {
				seen[l.RunID] = true
				tree = append(tree, l)
			}
		}
		eachRow(tree, ledgers, func(_ string, r *Row) {
			all.add(r)
			p := cmp.Or(r.Provider, "unknown")
			if per[p] == nil {
				per[p] = &costAcc{}
			}
			per[p].add(r)
		})
	}
	byProvider = map[string]Cost{}
	for p, a := range per {
		byProvider[p] = a.cost(table)
	}
	return all.cost(table), byProvider
}

// HasModel reports whether a usage row of the run id or of a child run it
// links to names a model containing model, case-insensitively.
func HasModel(id string, ledgers map[string]*Ledger, model string) bool {
	root := ledgers[id]
	if root == nil || root.LoadErr != "" {
		return false
	}
	model = strings.ToLower(model)
	for _, l := range ledgerTree(root, ledgers) {
		for _, r := range l.Rows {
			if strings.Contains(strings.ToLower(r.Model), model) {
				return true
			}
		}
	}
	return false
}

// ledgerTree is root and the child runs it links to, as runtree walks
// them (depth first, each once, at most runtree.MaxDepth deep). A child
// with no ledger, or whose ledger could not be loaded, is left out: a
// report counts what it can read (LoadErr says what it could not).
func ledgerTree(root *Ledger, ledgers map[string]*Ledger) []*Ledger {
	var out []*Ledger
	type visited = runtree.Visited[*Ledger, struct{}]
	// The visitor never fails and nothing is read from disk, so the walk
	// has no error to return.
	_, _ = runtree.Walk(context.Background(), root, func(_ context.Context, l *Ledger, _ int) (visited, error) {
		out = append(out, l)
		v := visited{ID: l.RunID}
		for _, id := range l.Children {
			v.Links = append(v.Links, runtree.Link[*Ledger, struct{}]{ID: id,
				Open: func(context.Context) (*Ledger, error) {
					switch c := ledgers[id]; {
					case c == nil:
						return nil, fs.ErrNotExist
					case c.LoadErr != "":
						return nil, errors.New(c.LoadErr)
					default:
						return c, nil
					}
				}})
		}
		return v, nil
	})
	return out
}

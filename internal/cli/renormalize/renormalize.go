package renormalize

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/host"
	"github.com/twasm/twasm/internal/archive"
	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/cli/plugload"
	"github.com/twasm/twasm/internal/rawfile"
	"github.com/twasm/twasm/internal/redact"
	"github.com/twasm/twasm/internal/regfile"
	"github.com/twasm/twasm/internal/runid"
	"github.com/twasm/twasm/internal/runtree"
	"github.com/twasm/twasm/internal/views"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// FieldFrom is the extra field of the new run's run.started payload that
// holds the original run id.
const FieldFrom = views.RenormalizedFromField

// Options are the flags and arguments.
type Options struct {
	F       *cmdutil.Factory
	Plugins plugload.Flags
	Run     string
	JSON    bool
	Redact  bool
}

// NewCmdRenormalize returns the renormalize command; runF replaces the run
// function in tests of flag parsing.
func NewCmdRenormalize(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "renormalize RUN",
		Short: "Rebuild a transcript from its raw captures with the current plugins",
		Long: `Renormalize writes a NEW run (a new run id) rebuilt from the raw provider
bytes kept beside RUN's transcript, normalized by the plugins twasm has now:
use it after a plugin upgrade to get what the old plugin missed (see the
unmapped counts in "twasm stats"). The original transcript and its raw
captures are never modified.

Every agent step (a step.completed whose result names a provider and a raw
capture) is recorded anew at the same path and iteration: the prompt
(message.user written by twasm, fidelity router) is kept as it was, and
everything parsed from the agent's output comes from the plugin again;
the captured stderr and the exit code are carried over. The parts of an
archived session (twasm sync: one step per part, one raw capture they all
extend) are rebuilt as sync wrote them: each part's plugin reads the
earlier parts first, output dropped, then its own bytes, and the part
keeps its own share of the session's tokens and cost. Other steps are
copied with their kind, status, error and result, and the events recorded
in them. The new run ends with the original run's status; its run.started
is named "renormalize <RUN>" and carries the original id in
"` + FieldFrom + `".

Sub-agents of an agent step are rebuilt, as new child runs, from the
agent's raw capture. A child run linked at an agent step after the step
ended (a sub-agent's own file, which sync archives as a child run of its
session's run: path "<step>.<name>", the step's iteration) is rebuilt from
its own transcript and raw captures, as a new child run linked in the new
step; where its link superseded the sub-agent's copy the agent's capture
made, the new link supersedes the new capture's, so every token counts
once; a child run such a link supersedes (a sub-agent's file linked
before its session's records named its call, archived again at the
call) is not rebuilt, the superseding one holds all it held. Not in
this version: other sub-runs (begun with "twasm run begin
--parent" elsewhere) are left out, and retry attempts are recorded as
attempt 0.

The new run id is printed on stdout; with --json, a summary comparing
each step's old and new status and unmapped counts.`,
		Example: `  twasm renormalize 0b6e8c0e-5c1e-4f7e-9d8a-1f2e3d4c5b6a
  twasm renormalize --json storage/transcripts/0b6e8c0e-5c1e-4f7e-9d8a-1f2e3d4c5b6a.jsonl
  twasm renormalize --plugin ./claude-next.wasm RUN`,
		Args:              cmdutil.ExactArgs(1, "RUN"),
		ValidArgsFunction: f.CompleteRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Run = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print a summary object on stdout")
	cmd.Flags().BoolVar(&opts.Redact, "redact", false, redact.FlagUsage)
	opts.Plugins.Register(cmd, true)
	return cmd
}

// Summary is what --json prints.
type Summary struct {
	Original   string        `json:"original"`
	New        string        `json:"new"`
	Transcript string        `json:"transcript"`
	Status     string        `json:"status"`
	Steps      []StepSummary `json:"steps"`
	// LeftOut lists what the new run does not have (sub-run links).
	LeftOut []string `json:"left_out,omitempty"`
	// Problems lists agent steps that could not be renormalized (and were
	// copied instead) and other trouble.
	Problems []string `json:"problems,omitempty"`
	// Open says the original is an archived session's run that is still
	// open (its session may grow): the new run holds what it held so far,
	// and ends with the status of its latest part, as the original's
	// status is read while it is open.
	Open bool `json:"open,omitempty"`
}

// StepSummary compares one step of the original with its new version.
type StepSummary struct {
	// SubRun is the original child run the step is of, for a step of a
	// sub-run rebuilt with the run (empty: the run's own).
	SubRun       string `json:"sub_run,omitempty"`
	Path         string `json:"path"`
	Iteration    int    `json:"iteration"`
	Kind         string `json:"kind"`
	Renormalized bool   `json:"renormalized"`
	Old          State  `json:"old"`
	New          State  `json:"new"`
}

// State is a step's outcome: its step.completed status and, for agent
// steps, the agent's status and unmapped counts.
type State struct {
	Status      string         `json:"status"`
	AgentStatus string         `json:"agent_status,omitempty"`
	Unmapped    map[string]int `json:"unmapped,omitempty"`
}

// node is a step of the original run, with what happened inside it.
type node struct {
	start, end *transcript.Event
	kind       transcript.StepKind
	attempt    int
	items      []item
	sum        *StepSummary
	// subRuns are the child runs linked at this agent step after it
	// ended (a sub-agent's own file, which sync archives as a child run
	// of its session's run): each is rebuilt from its own transcript
	// and raw captures, as a new child run linked in the new step.
	subRuns []subRunLink
}

// subRunLink is a child run linked at an agent step, and where the
// child run it supersedes (the sub-agent's copy the agent's own capture
// made) was linked: the new link supersedes the child the new capture
// makes there.
type subRunLink struct {
	ev         *transcript.Event
	supersedes *linkKey
}

// linkKey is where a link is in its run: its path and iteration, and
// how many links came before it there.
type linkKey struct {
	path      string
	iteration int
	ordinal   int
}

// item is either a child step or an event recorded in a step.
type item struct {
	step *node
	ev   *transcript.Event
}

type renormalizer struct {
	// parts are the raw captures earlier agent steps of the run read,
	// by their path: an archived session's parts extend one raw capture,
	// each step holding its first Bytes (rebuilt part by part).
	parts    map[string]rawPart
	opts     *Options
	store    recorder.Store
	rawRoot  string
	rt       *host.Runtime
	plugins  map[string]capture.Plugin
	sum      Summary
	problems int
	red      *redact.Redactor // --redact
	// dir holds the original run's transcript and its child runs'.
	dir string
	// links are the links the new runs wrote (linkLog, fed by the
	// recorder's masker).
	links *linkLog
	// origOf is the original run each new child run rebuilds; tree
	// follows the links to original child runs by runtree's rules (each
	// once, at most runtree.MaxDepth deep), and depth is how deep each
	// original run followed is (the original's 0).
	origOf map[string]string
	tree   *runtree.Tracker
	depth  map[string]int
	// superseded are the child runs linked at an agent step after it
	// ended that a later such link supersedes (a sub-agent's file linked
	// before its session's records named its call, archived again at
	// the call): not rebuilt, the superseding run holds all they held.
	superseded map[string]bool
	// source is the session file the original run archives (run.started
	// "source"; "" for a run that archives none).
	source archive.SourceRef
}

// Run renormalizes.
func Run(ctx context.Context, opts *Options) error {
	f := opts.F
	ref, err := f.ResolveRun(opts.Run)
	if err != nil {
		return err
	}
	fh, err := regfile.Open(ref.Path)
	if err != nil {
		return cmdutil.PathInputError(ref.Path, err)
	}
	events, _, err := transcript.ReadAll(fh)
	fh.Close()
	if err != nil {
		return &cmdutil.InputError{Path: ref.Path, Err: err}
	}
	if len(events) == 0 || events[0].Type != transcript.RunStarted {
		return &cmdutil.InputError{Path: ref.Path, Err: errors.New("not a run transcript (no run.started first)")}
	}
	origID := events[0].RunID

	rn := &renormalizer{opts: opts, store: f.Store(), plugins: map[string]capture.Plugin{}, parts: map[string]rawPart{},
		dir: ref.Dir, links: &linkLog{}, origOf: map[string]string{}, tree: runtree.NewTracker(), depth: map[string]int{origID: 0},
		superseded: map[string]bool{}}
	rn.tree.Visited(origID)
	var mask func(*transcript.Event)
	if opts.Redact {
		rn.red = redact.New()
		mask = rn.red.Mask
	}
	// Raw paths in a result are relative to the storage root the run was
	// recorded in: the parent of its transcripts directory.
	rn.rawRoot = f.StorageRoot()
	if abs, err := filepath.Abs(ref.Dir); err == nil && filepath.Base(abs) == "transcripts" {
		rn.rawRoot = filepath.Dir(abs)
	}
	if p := events[0].Step(); p != nil && p.Extra[archive.SourceField] != nil {
		_ = json.Unmarshal(p.Extra[archive.SourceField], &rn.source) // a source that does not read names none
	}
	top, runEnd := rn.parse(events)
	// A synced session's run stays open while its session may grow: it
	// has no run.completed, and its status is its latest part's.
	rn.sum.Open = runEnd == nil && archivedSession(events[0])

	rn.rt, err = plugload.Open(ctx, f, opts.Plugins)
	if err != nil {
		return err
	}
	defer rn.rt.Close(context.WithoutCancel(ctx))

	newID := runid.New()
	runOpts := lifecycle.RunOptions{
		Name: "renormalize " + origID, RunID: newID, Producer: f.Producer(), Logger: f.Logger(),
		Recorder: recorder.Options{Logger: f.Logger(), Mask: fromField{runID: newID, from: origID, links: rn.links, next: mask}.Mask},
	}
	run, err := lifecycle.Start(ctx, rn.store, runOpts)
	if err != nil {
		return err
	}
	rn.sum.Original, rn.sum.New, rn.sum.Transcript = origID, newID, run.Recorder().Path()
	replayErr := rn.replayTop(ctx, run, top)
	endErr := endOutcome(ctx, runEnd, origID, replayErr)
	if rn.sum.Open && ctx.Err() == nil && replayErr == nil {
		endErr = rn.openOutcome("")
	}
	finErr := run.Finish(ctx, endErr)
	rn.sum.Status = statusOf(endErr)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err := errors.Join(replayErr, finErr); err != nil {
		return err
	}
	ios := f.IOStreams
	if opts.JSON {
		if err := cmdutil.WriteJSON(ios.Out, rn.sum); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(ios.Out, newID)
		fmt.Fprintf(ios.ErrOut, "transcript: %s\n", run.Recorder().Path())
		if rn.sum.Open {
			fmt.Fprintf(ios.ErrOut, "twasm: run %s is still open (its session may grow): the new run holds what it holds so far and ends %s, its latest part's status; a later sync grows the original, not this one\n", origID, rn.sum.Status)
		}
		for _, s := range rn.sum.LeftOut {
			fmt.Fprintf(ios.ErrOut, "left out: %s\n", s)
		}
		for _, p := range rn.sum.Problems {
			fmt.Fprintf(ios.ErrOut, "twasm: %s\n", p)
		}
	}
	if rn.problems > 0 {
		return cmdutil.ErrSilent
	}
	return nil
}

// replayTop records a run's top-level items in run; the error is a
// failure to write.
func (rn *renormalizer) replayTop(ctx context.Context, run *lifecycle.Run, top []item) error {
	for _, it := range top {
		if ctx.Err() != nil {
			return nil
		}
		if it.ev != nil {
			if err := run.Root().Record(ctx, it.ev); err != nil {
				return err
			}
			continue
		}
		if err := rn.replay(ctx, run, it.step); err != nil && isWriteErr(err) {
			return err
		}
	}
	return nil
}

// endOutcome is the error a new run ends with: the original's status,
// unless the rebuild was interrupted or failed to write.
func endOutcome(ctx context.Context, runEnd *transcript.Event, origID string, replayErr error) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case replayErr != nil:
		return replayErr
	}
	return runOutcome(runEnd, origID)
}

// parse builds the step tree of the original run: top-level items in file
// order, each step with its child steps and events. It returns the
// original's run.completed, or nil.
func (rn *renormalizer) parse(events []*transcript.Event) ([]item, *transcript.Event) {
	var top []item
	var open []*node // steps started and not completed, in start order
	var runEnd *transcript.Event
	key := func(ev *transcript.Event) string { return fmt.Sprintf("%s\x00%d", ev.Path, ev.Iteration) }
	agents := map[string]*node{}     // the agent steps by path and iteration, the latest
	captured := map[string]linkKey{} // the child runs agent steps' captures linked
	ordinals := map[string]int{}     // links by path and iteration so far
	// innermost returns the open step that contains an event at path:
	// the latest started whose path is path itself (exact) or a proper
	// prefix of it (parent).
	innermost := func(path, k string, exact bool) *node {
		for i := len(open) - 1; i >= 0; i-- {
			n := open[i]
			if exact && key(n.start) == k {
				return n
			}
			if !exact && strings.HasPrefix(path, n.start.Path+".") {
				return n
			}
		}
		return nil
	}
	for _, ev := range events[1:] {
		switch ev.Type {
		case transcript.RunStarted:
			continue
		case transcript.RunCompleted:
			runEnd = ev
		case transcript.StepStarted:
			n := &node{start: ev}
			if p := ev.Step(); p != nil {
				n.kind, n.attempt = p.Kind, p.Attempt
			}
			if n.kind == transcript.KindAgent {
				agents[key(ev)] = n
			}
			if parent := innermost(ev.Path, "", false); parent != nil {
				parent.items = append(parent.items, item{step: n})
			} else {
				top = append(top, item{step: n})
			}
			open = append(open, n)
		case transcript.StepCompleted:
			p := ev.Step()
			for i := len(open) - 1; i >= 0; i-- {
				n := open[i]
				if key(n.start) == key(ev) && (p == nil || p.Attempt == n.attempt) {
					n.end = ev
					if p != nil && p.Kind != "" {
						n.kind = p.Kind
					}
					open = append(open[:i], open[i+1:]...)
					break
				}
			}
		case transcript.StepCallWorkflowStarted:
			at := linkKey{path: ev.Path, iteration: ev.Iteration, ordinal: ordinals[key(ev)]}
			ordinals[key(ev)]++
			// A sub-agent of an agent step is rebuilt by the capture;
			// a child run linked at an agent step after it ended (a
			// sub-agent's own file) is rebuilt from its own
			// transcript; other links are left out in this version.
			if n := innermost(ev.Path, "", false); n != nil && n.kind == transcript.KindAgent {
				captured[ev.ChildRunID] = at
				continue
			}
			if i := strings.LastIndexByte(ev.Path, '.'); i > 0 && ev.ChildRunID != "" {
				if n := agents[fmt.Sprintf("%s\x00%d", ev.Path[:i], ev.Iteration)]; n != nil && n.end != nil {
					l := subRunLink{ev: ev}
					if p := ev.Step(); p != nil {
						if k, ok := captured[stepField(p, lifecycle.SupersedesField)]; ok {
							l.supersedes = &k
						} else if old := stepField(p, lifecycle.SupersedesField); old != "" {
							rn.superseded[old] = true
						}
					}
					n.subRuns = append(n.subRuns, l)
					continue
				}
			}
			rn.sum.LeftOut = append(rn.sum.LeftOut, fmt.Sprintf("sub-run %s at %s (iteration %d)", ev.ChildRunID, ev.Path, ev.Iteration))
		case transcript.StepCallWorkflowCompleted:
			continue
		default:
			if ev.Step() != nil {
				continue
			}
			if ev.Path == "" {
				top = append(top, item{ev: ev})
				continue
			}
			if n := innermost(ev.Path, key(ev), true); n != nil {
				n.items = append(n.items, item{ev: ev})
				continue
			}
			rn.sum.LeftOut = append(rn.sum.LeftOut, fmt.Sprintf("%s seq %d at %s: outside any step", ev.Type, ev.Seq, ev.Path))
		}
	}
	return top, runEnd
}

// replay records n (and its children) in run. An error is returned only
// when writing failed; a step's own failure is recorded, not returned.
func (rn *renormalizer) replay(ctx context.Context, run *lifecycle.Run, n *node) error {
	sum := StepSummary{SubRun: rn.origOf[run.RunID()], Path: n.start.Path, Iteration: n.start.Iteration, Kind: string(n.kind)}
	n.sum = &sum
	var orig *transcript.AgentResult
	var stepErr error
	if n.end == nil {
		sum.Old.Status = "(not completed)"
		stepErr = errors.New("the step never completed in the original run")
	} else {
		p := n.end.Step()
		sum.Old.Status = p.Status
		stepErr = stepOutcome(p.Status, p.Error)
		if n.kind == transcript.KindAgent && len(p.Result) > 0 {
			if res, err := p.AgentResult(); err == nil && res.Raw != nil && res.Raw.Path != "" && res.Provider != "" {
				orig = res
				sum.Old.AgentStatus, sum.Old.Unmapped = res.Status, res.Unmapped
			}
		}
	}
	var plugin capture.Plugin
	var raw string
	if orig != nil {
		var why error
		raw, why = rn.rawFile(orig.Raw.Path)
		if why == nil {
			plugin, why = rn.plugin(ctx, orig.Provider)
		}
		if why != nil {
			rn.problem("step %s (iteration %d) copied, not renormalized: %v", sum.Path, sum.Iteration, why)
			orig = nil
		}
	}
	sum.Renormalized = orig != nil
	var newRes *transcript.AgentResult
	err := run.StepAt(ctx, n.start.Path, n.start.Iteration, n.kind, func(ctx context.Context, s *lifecycle.Step) error {
		for _, it := range n.items {
			if it.step != nil {
				if err := rn.replay(ctx, run, it.step); err != nil && isWriteErr(err) {
					return err
				}
				continue
			}
			if orig != nil && agentEmitted(it.ev) {
				continue // the plugin makes these again
			}
			if err := s.Record(ctx, it.ev); err != nil {
				return err
			}
		}
		if orig == nil {
			if n.end != nil && len(n.end.Step().Result) > 0 {
				if err := s.SetResult(n.end.Step().Result); err != nil {
					return err
				}
			}
			return rn.rebuildSubRuns(ctx, s, n, stepErr)
		}
		res, err := rn.recapture(ctx, s, plugin, raw, orig)
		newRes = res
		if err != nil {
			return err
		}
		if errors.Is(stepErr, context.Canceled) {
			return rn.rebuildSubRuns(ctx, s, n, stepErr) // interrupted then; keep it so
		}
		return rn.rebuildSubRuns(ctx, s, n, capture.ResultError(res))
	})
	sum.New.Status = statusOf(err)
	if newRes != nil {
		sum.New.AgentStatus, sum.New.Unmapped = newRes.Status, newRes.Unmapped
	}
	rn.sum.Steps = append(rn.sum.Steps, sum)
	return err
}

// rebuildSubRuns rebuilds the child runs linked at agent step n after it
// ended (a sub-agent's own file), each as a new child run linked in the
// new step s, from its own transcript and raw captures: the sub-agent's
// tokens and calls stay in the rebuilt session's tree, counted once (the
// new link supersedes the new capture's copy of the sub-agent where the
// original's superseded the original capture's). It returns stepErr, the
// step's own outcome, unless writing failed. A child run that cannot be
// read is left out, said in the summary, and so is a link that runtree's
// rules do not follow: a child already rebuilt (linked twice, or a
// cycle), one deeper than runtree.MaxDepth runs, an invalid id.
func (rn *renormalizer) rebuildSubRuns(ctx context.Context, s *lifecycle.Step, n *node, stepErr error) error {
	for _, l := range n.subRuns {
		if ctx.Err() != nil {
			break
		}
		if err := rn.rebuildSubRun(ctx, s, l); err != nil {
			return err
		}
	}
	return stepErr
}

// rebuildSubRun rebuilds one linked child run in s; the error is a
// failure to write.
func (rn *renormalizer) rebuildSubRun(ctx context.Context, s *lifecycle.Step, l subRunLink) error {
	id := l.ev.ChildRunID
	leftOut := func(why string) {
		rn.sum.LeftOut = append(rn.sum.LeftOut, fmt.Sprintf("sub-run %s at %s (iteration %d): %s", id, l.ev.Path, l.ev.Iteration, why))
	}
	if rn.superseded[id] {
		return nil // a later link's child run holds it again
	}
	depth := rn.depth[l.ev.RunID]
	if ce := rn.tree.Check(id, depth); ce != nil {
		why := ce.Error()
		if ce.Reason == runtree.Cycle {
			why = "linked twice"
		}
		leftOut(why)
		return nil
	}
	rn.tree.Visited(id)
	rn.depth[id] = depth + 1
	events, err := rn.readRun(id)
	if err != nil {
		leftOut(err.Error())
		return nil
	}
	top, end := rn.parse(events)
	name := l.ev.Path[strings.LastIndexByte(l.ev.Path, '.')+1:]
	o := lifecycle.SubRunOptions{}
	if p := l.ev.Step(); p != nil {
		o.Title = p.Name
	}
	if k := l.supersedes; k != nil {
		o.Supersedes = rn.links.child(s.Run().RunID(), *k)
	}
	child, err := s.SubRun(ctx, name, o)
	if err != nil {
		return err
	}
	rn.origOf[child.RunID()] = id
	replayErr := rn.replayTop(ctx, child, top)
	endErr := endOutcome(ctx, end, id, replayErr)
	if end == nil && archivedSession(events[0]) && ctx.Err() == nil && replayErr == nil {
		// A sub-agent's file still open (its session may grow): as the
		// session's own rebuild, it ends as its latest part did.
		endErr = rn.openOutcome(id)
	}
	return errors.Join(replayErr, child.Finish(ctx, endErr))
}

// readRun reads an original child run's transcript, beside the run's.
func (rn *renormalizer) readRun(id string) ([]*transcript.Event, error) {
	if err := runid.Valid(id); err != nil {
		return nil, err
	}
	fh, err := regfile.Open(filepath.Join(rn.dir, id+".jsonl"))
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	events, _, err := transcript.ReadAll(fh)
	if err != nil {
		return nil, err
	}
	if len(events) == 0 || events[0].Type != transcript.RunStarted {
		return nil, errors.New("not a run transcript (no run.started first)")
	}
	return events, nil
}

// stepField is the string a step payload's extra field holds ("" when
// none).
func stepField(p *transcript.StepPayload, field string) string {
	var v string
	if raw := p.Extra[field]; raw != nil && json.Unmarshal(raw, &v) == nil {
		return v
	}
	return ""
}

// linkLog is the links the new runs wrote, by run and place (linkKey),
// as the recorder's masker sees them.
type linkLog struct {
	mu    sync.Mutex
	links map[string][]string // run id, path, iteration -> child run ids in order
}

func linkLogKey(runID, path string, iteration int) string {
	return fmt.Sprintf("%s\x00%s\x00%d", runID, path, iteration)
}

func (l *linkLog) note(ev *transcript.Event) {
	if ev.Type != transcript.StepCallWorkflowStarted || ev.ChildRunID == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.links == nil {
		l.links = map[string][]string{}
	}
	k := linkLogKey(ev.RunID, ev.Path, ev.Iteration)
	l.links[k] = append(l.links[k], ev.ChildRunID)
}

// child is the child run linked at k in run runID ("" when none is).
func (l *linkLog) child(runID string, k linkKey) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	ids := l.links[linkLogKey(runID, k.path, k.iteration)]
	if k.ordinal < len(ids) {
		return ids[k.ordinal]
	}
	return ""
}

// rawPart is how much of a raw capture an earlier step read, and the new
// run's raw capture that holds it.
type rawPart struct {
	bytes  int64
	newRaw string
	totals *archive.Totals // the session's figures after the step
}

// recapture runs the plugin over the raw capture into s. A step whose
// raw capture an earlier step of the run read the start of (an archived
// session's next part) is rebuilt as sync wrote it: the plugin reads
// that start first, output dropped, then the step's own bytes, which
// extend the new run's raw capture of the earlier step, through the
// filter that leaves out what the earlier parts hold.
func (rn *renormalizer) recapture(ctx context.Context, s *lifecycle.Step, plugin capture.Plugin, raw string, orig *transcript.AgentResult) (*transcript.AgentResult, error) {
	f, err := rawfile.Open(raw)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The step's own bytes: all its raw capture held when it completed
	// (a later step of the run may have extended it). A capture that
	// holds fewer whole bytes (a framed one damaged since) is read to
	// its end, where the reader reports the damage: the step fails
	// saying so, never rebuilt silently from less.
	end := orig.Raw.Bytes
	if end <= 0 || end > f.Size() && f.Damage() == nil {
		end = f.Size()
	}
	src := capture.Source{Stdout: f.Section(0, end), ExitCode: orig.ExitCode}
	prev, cont := rn.parts[orig.Raw.Path]
	var filter func(*transcript.Event) *transcript.Event
	if cont && prev.bytes > 0 && prev.bytes <= end {
		src.Replay = f.Section(0, prev.bytes)
		src.Stdout = f.Section(prev.bytes, end-prev.bytes)
		if filter, err = archive.PartFilter(rn.store.Root, s.Run().RunID()); err != nil {
			return nil, err
		}
	} else {
		prev = rawPart{}
	}
	if orig.Raw.Stderr != "" {
		if p, err := rn.rawFile(orig.Raw.Stderr); err == nil {
			if ef, err := os.Open(p); err == nil {
				defer ef.Close()
				src.Stderr = ef
			}
		}
	}
	// The pipeline record --input and import use: the same bytes give
	// the same transcript.
	copts := capture.Options{Provider: orig.Provider, Store: rn.store, Plugin: plugin, Logger: rn.opts.F.Logger(),
		ContinueRaw: prev.newRaw, Filter: filter}
	if rn.red != nil {
		copts.Mask, copts.Masked, copts.Split = rn.red.MaskBytes, rn.red.Counts, redact.NewStream()
	}
	r, err := capture.Run(ctx, s, src, copts)
	var res *transcript.AgentResult
	if r != nil {
		res = r.AgentResult
		if res != nil && res.Raw != nil {
			rn.parts[orig.Raw.Path] = rawPart{bytes: end, newRaw: res.Raw.Path, totals: archive.PartShare(res, prev.totals)}
		}
	}
	if err != nil && !errors.Is(err, capture.ErrAgent) {
		return res, err
	}
	changed := prev.totals != nil // the part's share, as sync wrote it
	if res != nil && res.Project == "" && res.Cwd == "" {
		if p := rn.sourceProject(ctx, orig.Provider); p != "" {
			// Imported before twasm gave the file's project to the plugin
			// (or with --whole): its capture names none.
			res.Project, changed = p, true
			res.Warnings = append(res.Warnings, "project "+p+": the directory of the session's file "+rn.source.Path+", a store kept in each project (its capture names no project)")
		}
	}
	if len(orig.Redacted) > 0 && rn.red == nil {
		// The raw capture was masked when recorded: keep the counts.
		res.Redacted, changed = orig.Redacted, true
	}
	if orig.Raw.SHA256 != "" && res.Raw != nil && res.Raw.SHA256 != orig.Raw.SHA256 {
		res.Warnings, changed = append(res.Warnings, "raw capture "+orig.Raw.Path+" changed since it was recorded (sha256 differs)"), true
	}
	if changed {
		if err := s.SetResult(res); err != nil {
			return res, err
		}
	}
	return res, nil
}

// rawFile turns a raw path of a result into a file under the raw root,
// refusing paths that would leave it.
func (rn *renormalizer) rawFile(rel string) (string, error) {
	p := filepath.FromSlash(rel)
	if !filepath.IsLocal(p) {
		return "", fmt.Errorf("raw capture path %q is not inside the storage root", rel)
	}
	p = filepath.Join(rn.rawRoot, p)
	st, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("raw capture: %w", err)
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("raw capture %s is not a regular file", p)
	}
	return p, nil
}

// sourceProject is the project of the original run's session file when
// its provider keeps such files in each project directory (Aider's
// history: archive.SectionsStore, whose location names the file's
// directory as its project); "" otherwise.
func (rn *renormalizer) sourceProject(ctx context.Context, provider string) string {
	if rn.source.Path == "" || rn.source.Provider != provider {
		return ""
	}
	hp, err := plugload.Resolve(ctx, rn.rt, rn.opts.Plugins, provider)
	if err != nil {
		return ""
	}
	loc, ok := archive.SectionsStore(archive.DeclaredOf(hp.Info().Manifest), provider, rn.source.Path)
	if !ok {
		return ""
	}
	return loc.Project
}

func (rn *renormalizer) plugin(ctx context.Context, provider string) (capture.Plugin, error) {
	if p, ok := rn.plugins[provider]; ok {
		return p, nil
	}
	hp, err := plugload.Resolve(ctx, rn.rt, rn.opts.Plugins, provider)
	if err != nil {
		return nil, err
	}
	var p capture.Plugin = hp
	rn.plugins[provider] = p
	return p, nil
}

func (rn *renormalizer) problem(format string, args ...any) {
	rn.problems++
	rn.sum.Problems = append(rn.sum.Problems, fmt.Sprintf(format, args...))
}

// agentEmitted reports whether ev came from provider output (and so is
// made again by the plugin) rather than from twasm's own seams.
func agentEmitted(ev *transcript.Event) bool {
	if m := ev.Message(); m != nil {
		if len(m.Blocks) == 0 {
			// twasm's seams always write a block; a message without
			// one (a refusal that carries only usage) is the agent's.
			return true
		}
		for _, b := range m.Blocks {
			if b.Fidelity != transcript.FidelityRouter {
				return true
			}
		}
		return false
	}
	if t := ev.Tool(); t != nil {
		return t.Fidelity != transcript.FidelityRouter
	}
	return true
}

// statusError is a recorded outcome played back: its text is the
// original error text, and its status the original's (lifecycle records
// it: error, incomplete or cancelled).
type statusError struct {
	text, status string
}

func (e *statusError) Error() string { return e.text }

// Status is the original status (lifecycle reads it).
func (e *statusError) Status() string { return e.status }

func (e *statusError) Is(target error) bool {
	return e.status == transcript.StatusCancelled && target == context.Canceled
}

func stepOutcome(status, text string) error {
	switch status {
	case transcript.StatusOK, "":
		return nil
	case transcript.StatusCancelled, transcript.StatusIncomplete:
		if text == "" {
			text = status
		}
		return &statusError{text: text, status: status}
	default:
		if text == "" {
			text = status
		}
		return &statusError{text: text, status: transcript.StatusError}
	}
}

// runOutcome is the error the new run ends with: the original's status.
func runOutcome(end *transcript.Event, origID string) error {
	if end == nil || end.Step() == nil {
		return fmt.Errorf("the original run %s has not ended (no run.completed): it was still being recorded, or its recording was stopped", origID)
	}
	p := end.Step()
	return stepOutcome(p.Status, p.Error)
}

// archivedSession reports whether a run.started is an archived
// session's (it names its source).
func archivedSession(start *transcript.Event) bool {
	p := start.Step()
	return p != nil && len(p.Extra[archive.SourceField]) > 0
}

// openOutcome is the error an open session's rebuild ends with: its
// latest agent step's status (as renormalized, else as it was), which
// is what the original's open run states (spec §7 read from the log).
// subRun is the original child run whose steps count ("" the run's own).
func (rn *renormalizer) openOutcome(subRun string) error {
	for i := len(rn.sum.Steps) - 1; i >= 0; i-- {
		s := rn.sum.Steps[i]
		if s.SubRun != subRun || s.Kind != string(transcript.KindAgent) {
			continue
		}
		st := s.New.AgentStatus
		if st == "" {
			st = s.Old.AgentStatus
		}
		if st == "" {
			st = s.New.Status
		}
		return stepOutcome(st, "the session's latest part ended "+st)
	}
	return nil
}

// statusOf is the status lifecycle records for err.
func statusOf(err error) string {
	switch {
	case err == nil:
		return transcript.StatusOK
	case errors.Is(err, context.Canceled):
		return transcript.StatusCancelled
	}
	if se := (interface{ Status() string })(nil); errors.As(err, &se) && se.Status() == transcript.StatusIncomplete {
		return transcript.StatusIncomplete
	}
	return transcript.StatusError
}

// isWriteErr tells a failure to write the new transcript (which stops
// the command) from a step that failed (which is recorded).
func isWriteErr(err error) bool {
	var se *lifecycle.StepError
	if errors.As(err, &se) {
		var st *statusError
		if errors.As(se.Err, &st) {
			return false
		}
		return errors.Is(err, lifecycle.ErrEnded) || errors.Is(err, lifecycle.ErrInvalidName) || errors.Is(err, lifecycle.ErrInvalidKind)
	}
	return err != nil
}

// fromField stamps the original run id into the new run's run.started.
// It is installed as the recorder's masker, the one hook that sees every
// event before it is written (of the new run and its child runs), and
// notes the links they write in links; next (--redact) masks every event
// after it.
type fromField struct {
	runID, from string
	links       *linkLog
	next        func(*transcript.Event)
}

func (m fromField) Mask(ev *transcript.Event) {
	if m.next != nil {
		defer m.next(ev)
	}
	if m.links != nil {
		m.links.note(ev)
	}
	if ev.Type != transcript.RunStarted || ev.RunID != m.runID {
		return
	}
	p := ev.Step()
	if p == nil {
		return
	}
	b, _ := json.Marshal(m.from)
	extra := make(map[string]json.RawMessage, len(p.Extra)+1)
	for k, v := range p.Extra {
		extra[k] = v
	}
	extra[FieldFrom] = b
	p.Extra = extra
}

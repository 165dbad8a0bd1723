package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/twasm/twasm/internal/oneopt"
	"github.com/twasm/twasm/internal/runid"
	"github.com/twasm/twasm/internal/runstate"
	"github.com/twasm/twasm/transcript"
)

// StepFunc is the work of a step, or of a whole run (then s is the run's
// root scope, see [Run.Root]). Events it records through s carry the
// step's path and iteration.
type StepFunc func(ctx context.Context, s *Step) error

// Branch is one branch of a parallel step: a child step named Name of kind
// Kind running Fn.
type Branch struct {
	Name string
	Kind transcript.StepKind
	Fn   StepFunc
}

// StepOptions configures one step. The zero value is the default: one
// attempt, no delay, the call_workflow's workflow named after the step,
// every parallel branch run to its end. The methods that start a step take
// at most one StepOptions, last; fields that do not apply to a method are
// ignored by it.
type StepOptions struct {
	// Retries lets the step run up to Retries more times after a failed
	// attempt. Each attempt is recorded as its own step.started /
	// step.completed pair with the zero-based attempt number in the
	// payload. Outside any loop the attempt number is also the iteration
	// of the step's events and of everything inside it; inside a loop the
	// iteration stays the loop index (see the package doc). Cancellation
	// is never retried.
	Retries int
	// RetryIf, when set, restricts retries to errors for which it returns
	// true.
	RetryIf func(error) bool
	// RetryDelay is waited between attempts (or until the context is
	// done).
	RetryDelay time.Duration
	// Workflow names the workflow a call_workflow step starts
	// (run.started's name in the child file). Empty means the step name.
	Workflow string
	// FailFast makes a parallel step cancel the context of its other
	// branches as soon as one branch fails. Without it every branch runs
	// to its end.
	FailFast bool
	// EndRun ends the run with the step, for a run whose last act is this
	// step (`twasm record`): when its last attempt returns, its completion
	// and run.completed are written in one batch, so one write and, under
	// recorder.FsyncOnBoundary, one fsync instead of two. run.completed
	// gets the status and text [Run.Finish] would give the error the step
	// method returns, under the step's context; as Finish does, sub-runs
	// still open are ended first, and steps still open are closed as
	// cancelled in the same batch. A later Finish or
	// End writes nothing and returns the same result. A completion that
	// cannot be written (a full disk) does not keep the run from ending:
	// run.completed is then written alone, the step closed as cancelled,
	// as Finish would; one written whose fsync fails
	// (recorder.ErrNotDurable) is the end's error, returned by the step
	// and by Finish. No attempt follows the end, whatever RetryIf says of
	// the error it returned. A step that panics or calls runtime.Goexit ends as
	// usual; the run ends with [Run.End].
	EndRun bool
}

// Step is one attempt of one step (or, for loops, the loop step seen at
// one iteration). It is handed to the step's function and is valid until
// that function returns: afterwards recording through it fails with
// [ErrEnded]. A Step is safe for concurrent use.
type Step struct {
	run *Run
	// br is the open/ended state shared by a loop step and its iteration
	// views; nil for the run's root scope, which uses the run's own state.
	br        *bracket
	name      string
	path      string
	kind      transcript.StepKind
	iteration int
	attempt   int
	// inLoop is set inside a loop body: a retry there keeps the loop index
	// as the iteration instead of using the attempt number.
	inLoop  bool
	childID string // call_workflow steps: the child's run id
}

type bracket struct {
	// mu orders records against the completion: records hold it shared,
	// completion takes it exclusively, so every event of a step lies
	// between its step.started and step.completed lines.
	mu     sync.RWMutex
	ended  bool
	result json.RawMessage
}

// Path returns the dot-separated step path.
func (s *Step) Path() string { return s.path }

// Iteration returns the iteration events of this step carry.
func (s *Step) Iteration() int { return s.iteration }

// Attempt returns the zero-based retry attempt.
func (s *Step) Attempt() int { return s.attempt }

// Run returns the run the step belongs to.
func (s *Step) Run() *Run { return s.run }

// SetResult stores v, marshalled to JSON, as the result written into the
// step's step.completed. For a loop it is the loop step's result whichever
// iteration sets it; the last call wins.
func (s *Step) SetResult(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("lifecycle: step %s: result: %w", s.path, err)
	}
	if s.br == nil {
		return fmt.Errorf("lifecycle: the run itself has no result")
	}
	s.br.mu.Lock()
	defer s.br.mu.Unlock()
	if s.br.ended {
		return fmt.Errorf("%w: step %s: cannot set the result", ErrEnded, s.path)
	}
	s.br.result = b
	return nil
}

// Record writes ev into the run's transcript as an event of this step: the
// path, iteration, run id and parent run id are set from the step (a
// ChildRunID the caller set is kept). ev itself is not modified; its
// payload is shared with the recorder until Record returns. run.* and
// step.* events are refused with [ErrReservedType]: the lifecycle writes
// those.
func (s *Step) Record(ctx context.Context, ev *transcript.Event) error {
	if ev == nil {
		return fmt.Errorf("lifecycle: step %s: nil event", s.path)
	}
	if reserved(ev.Type) {
		return fmt.Errorf("%w: %s", ErrReservedType, ev.Type)
	}
	e := *ev
	e.Seq = 0
	e.Path = s.path
	e.Iteration = s.iteration
	return s.emit(ctx, &e)
}

// RecordBatch records evs (message.* and tool.* events, each stamped with
// the step's path and iteration as by [Step.Record]) as consecutive lines
// in one critical section of the recorder: one lock and one write for
// events that are ready together, such as the records a plugin returned
// for one batch of input lines. An invalid event fails the whole batch
// before anything is written. The caller's events are not modified.
func (s *Step) RecordBatch(ctx context.Context, evs []*transcript.Event) error {
	if len(evs) == 0 {
		return nil
	}
	copies := make([]transcript.Event, len(evs))
	ptrs := make([]*transcript.Event, len(evs))
	for i, ev := range evs {
		if ev == nil {
			return fmt.Errorf("lifecycle: step %s: nil event", s.path)
		}
		if reserved(ev.Type) {
			return fmt.Errorf("%w: %s", ErrReservedType, ev.Type)
		}
		copies[i] = *ev
		copies[i].Seq, copies[i].Path, copies[i].Iteration = 0, s.path, s.iteration
		ptrs[i] = &copies[i]
	}
	if s.br != nil {
		s.br.mu.RLock()
		defer s.br.mu.RUnlock()
		if s.br.ended {
			return fmt.Errorf("%w: step %s: cannot record %d events", ErrEnded, s.path, len(evs))
		}
	}
	return s.run.emitBatch(ctx, ptrs)
}

// UserMessage records one message.user holding the system prompt (when
// not empty) and the prompt as separate text blocks with fidelity router,
// told apart by their origin: [transcript.OriginSystemPrompt] and
// [transcript.OriginPrompt]. The system prompt comes first, as it does in
// the model's context.
func (s *Step) UserMessage(ctx context.Context, prompt, systemPrompt string) error {
	blocks := make([]transcript.Block, 0, 2)
	if systemPrompt != "" {
		blocks = append(blocks, transcript.Block{
			Type: transcript.BlockText, Fidelity: transcript.FidelityRouter,
			Text: systemPrompt, Origin: transcript.OriginSystemPrompt,
		})
	}
	blocks = append(blocks, transcript.Block{
		Type: transcript.BlockText, Fidelity: transcript.FidelityRouter,
		Text: prompt, Origin: transcript.OriginPrompt,
	})
	return s.Record(ctx, &transcript.Event{
		Type:    transcript.MessageUser,
		Payload: &transcript.MessagePayload{Role: "user", Blocks: blocks},
	})
}

// AssistantMessage records one message.assistant with blocks in order. A
// block without a fidelity gets agent_emitted: the content came from the
// model. The caller's slice is not modified.
func (s *Step) AssistantMessage(ctx context.Context, blocks ...transcript.Block) error {
	bs := make([]transcript.Block, len(blocks))
	copy(bs, blocks)
	for i := range bs {
		if bs[i].Fidelity == "" {
			bs[i].Fidelity = transcript.FidelityAgentEmitted
		}
	}
	return s.Record(ctx, &transcript.Event{
		Type:    transcript.MessageAssistant,
		Payload: &transcript.MessagePayload{Role: "assistant", Blocks: bs},
	})
}

// emit records ev unless this step has ended.
func (s *Step) emit(ctx context.Context, ev *transcript.Event) error {
	if s.br == nil {
		return s.run.emit(ctx, ev)
	}
	s.br.mu.RLock()
	defer s.br.mu.RUnlock()
	if s.br.ended {
		return fmt.Errorf("%w: step %s: cannot record %s", ErrEnded, s.path, ev.Type)
	}
	return s.run.emit(ctx, ev)
}

// Step runs fn as a child step named name (path "<this path>.<name>") of
// the given kind: it writes step.started, calls fn, and writes
// step.completed with status ok, error or cancelled and the error text,
// also when fn panics (the panic then continues) or calls runtime.Goexit.
// When ctx is already done, fn is not called and the step is recorded as
// cancelled. fn may be nil (a step with nothing to do, such as a marker).
// The child's iteration is this step's, unless the child is retried
// outside any loop (see [StepOptions].Retries). The returned error is fn's, wrapped in a [*StepError] unless a
// nested step already did, or the error of writing the step.
func (s *Step) Step(ctx context.Context, name string, kind transcript.StepKind, fn StepFunc, opts ...StepOptions) error {
	return s.runChild(ctx, name, kind, false, configure(opts), fn)
}

// ForEach runs a for_each step named name over n iterations, in order.
// Iteration i calls fn with i (zero-based) and body, the loop step seen at
// iteration i: its child
// steps are "<loop path>.<child>" with iteration i, and events it records
// carry iteration i. The loop stops at the first failing iteration or
// when ctx is done.
func (s *Step) ForEach(ctx context.Context, name string, n int, fn func(ctx context.Context, i int, body *Step) error, opts ...StepOptions) error {
	if n < 0 {
		return fmt.Errorf("lifecycle: for_each %s: negative count %d", name, n)
	}
	return s.loop(ctx, name, transcript.KindForEach, opts, func(_ context.Context, i int) (bool, error) {
		return i < n, nil
	}, fn)
}

// While runs a while step named name: before iteration i it asks cond,
// and stops when cond says false, cond fails, an iteration fails, or ctx
// is done. Iterations are numbered and run like [Step.ForEach]'s.
func (s *Step) While(ctx context.Context, name string, cond func(ctx context.Context, i int) (bool, error), fn func(ctx context.Context, i int, body *Step) error, opts ...StepOptions) error {
	return s.loop(ctx, name, transcript.KindWhile, opts, cond, fn)
}

func (s *Step) loop(ctx context.Context, name string, kind transcript.StepKind, opts []StepOptions, cond func(ctx context.Context, i int) (bool, error), fn func(ctx context.Context, i int, body *Step) error) error {
	cfg := configure(opts)
	return s.runChild(ctx, name, kind, false, cfg, func(ctx context.Context, ls *Step) error {
		// A retried loop restarts its condition with each attempt.
		for i := 0; ; i++ {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			ok, err := cond(ctx, i)
			if err != nil {
				return wrapStep(fmt.Errorf("condition: %w", err), ls.path, i, ls.attempt)
			}
			if !ok {
				return nil
			}
			body := *ls
			body.iteration = i
			body.inLoop = true
			if err := fn(ctx, i, &body); err != nil {
				return wrapStep(err, ls.path, i, ls.attempt)
			}
		}
	})
}

// Parallel runs a parallel step named name whose branches run
// concurrently, each as a child step "<path>.<branch name>". It waits for
// every branch and returns their errors joined. With [StepOptions].FailFast the first
// failure cancels the other branches' context. A branch that panics is
// recorded as failed, and once every branch is done the panic is raised
// again in the calling goroutine as a [*PanicError].
func (s *Step) Parallel(ctx context.Context, name string, branches []Branch, opts ...StepOptions) error {
	cfg := configure(opts)
	seen := make(map[string]bool, len(branches))
	for _, b := range branches {
		if seen[b.Name] {
			return fmt.Errorf("%w: parallel %s: duplicate branch %q", ErrInvalidName, name, b.Name)
		}
		seen[b.Name] = true
	}
	return s.runChild(ctx, name, transcript.KindParallel, false, cfg, func(ctx context.Context, ps *Step) error {
		bctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		errs := make([]error, len(branches))
		panics := make([]*PanicError, len(branches))
		var wg sync.WaitGroup
		for i, b := range branches {
			wg.Go(func() {
				returned := false
				defer func() {
					if returned {
						return
					}
					pv := recover()
					if pv == nil {
						errs[i] = errGoexit
						return
					}
					pe, ok := pv.(*PanicError)
					if !ok {
						pe = &PanicError{Value: pv, Stack: debug.Stack()}
					}
					panics[i] = pe
					cancel(pe)
				}()
				errs[i] = ps.Step(bctx, b.Name, b.Kind, b.Fn)
				returned = true
				if errs[i] != nil && cfg.FailFast {
					cancel(errs[i])
				}
			})
		}
		wg.Wait()
		for _, pe := range panics {
			if pe != nil {
				panic(pe)
			}
		}
		return errors.Join(errs...)
	})
}

// CallWorkflow runs a call_workflow step named name: fn runs as a child
// run in its own file (new run id, same store, same recorder options) and
// receives the child run's root scope.
// This run gets step.call_workflow.started and step.call_workflow.completed
// at the step's path, both with child_run_id; every line of the child's
// file carries this run's id as parent_run_id. The child's bracket is
// written like [Do]'s, whatever fn does; the step's status is the child
// run's. Calls nest to any depth. With [StepOptions].Retries each
// attempt is a new child run.
func (s *Step) CallWorkflow(ctx context.Context, name string, fn StepFunc, opts ...StepOptions) error {
	cfg := configure(opts)
	workflow := cfg.Workflow
	if workflow == "" {
		workflow = name
	}
	return s.runChild(ctx, name, transcript.KindCallWorkflow, true, cfg, func(ctx context.Context, cs *Step) error {
		child, err := cs.run.child(ctx, workflow, cs.childID)
		if err != nil {
			return err
		}
		return runFn(ctx, child, fn)
	})
}

// SubRun opens a child run named name in the same store, for work whose
// end the caller controls (a provider's sub-agent), and links it both ways
// like [Step.CallWorkflow]: this run gets a call_workflow step
// "<this path>.<name>" whose step.call_workflow.started is written now
// and whose step.call_workflow.completed is written when the child ends,
// with the child's status; both carry child_run_id, and every line of the
// child carries parent_run_id. name must therefore be unique among the
// sub-runs open at once in this step. The caller ends the child with
// [Run.End] or [Run.Finish], before this step returns so that the link
// lies inside the step; a child still open when this run ends is ended
// then, with the error "lifecycle: parent run ended before the sub-run".
// [SubRunOptions.Title], when given, is the name people read for the link
// step and the child run (a sub-agent's description); name stays the path
// segment.
func (s *Step) SubRun(ctx context.Context, name string, opts ...SubRunOptions) (*Run, error) {
	if !validName(name) {
		return nil, fmt.Errorf("%w: sub-run name %q must be one non-empty path segment (no '.', no whitespace)", ErrInvalidName, name)
	}
	o := oneopt.Get("lifecycle.Step.SubRun", opts)
	title := o.Title
	if title == "" {
		title = name
	}
	node := &Step{
		run: s.run, br: &bracket{}, name: title, path: joinPath(s.path, name),
		kind: transcript.KindCallWorkflow, iteration: s.iteration, inLoop: s.inLoop,
		childID: runid.New(),
	}
	pl := &transcript.StepPayload{Name: title, Kind: node.kind}
	if o.Supersedes != "" {
		if err := runid.Valid(o.Supersedes); err != nil {
			return nil, fmt.Errorf("lifecycle: sub-run %s supersedes %q: %w", name, o.Supersedes, err)
		}
		b, _ := json.Marshal(o.Supersedes)
		pl.Extra = map[string]json.RawMessage{SupersedesField: b}
	}
	ev := &transcript.Event{
		Type: transcript.StepCallWorkflowStarted, ChildRunID: node.childID, Path: node.path, Iteration: node.iteration,
		Payload: pl,
	}
	if err := s.emit(context.WithoutCancel(ctx), ev); err != nil {
		return nil, fmt.Errorf("lifecycle: start sub-run %s: %w", node.path, err)
	}
	child, err := s.run.child(ctx, title, node.childID)
	if err != nil {
		return nil, errors.Join(err, node.complete(ctx, transcript.StepCallWorkflowCompleted, err, nil))
	}
	if err := s.run.addSubRun(child, node); err != nil {
		return nil, errors.Join(err, child.finish(err, nil))
	}
	return child, nil
}

// SubRunOptions are the options of [Step.SubRun].
type SubRunOptions struct {
	// Title names the link step and the child run for people (one line,
	// any characters); empty: the path segment.
	Title string
	// Supersedes, when set, is the id of an earlier child run that this
	// one replaces: it holds again what that one held (the sub-agent of
	// a step that was interrupted and is archived again). The link's
	// step.call_workflow.started says so ([SupersedesField]); readers
	// that count or search across runs (the index) leave the superseded
	// run out, which stays as it is.
	Supersedes string
}

// SupersedesField is the field of a step.call_workflow.started payload
// naming the child run its child replaces ([SubRunOptions].Supersedes).
const SupersedesField = "supersedes"

// SupersedesRunsField is the field of a run.started payload naming the
// earlier runs, ended before it began, that the run holds again (a list
// of run ids): readers that count or search across runs leave them, and
// their child runs, out. An ended run's own run.completed can no longer
// say so ([SupersededByField]); package archive writes it for a session
// whose copy in another of the agent's stores was archived and ended
// first (an older Cursor's workspace composer, later in the global
// database).
const SupersedesRunsField = "supersedes_runs"

// SupersededByField is the field of a run.completed payload naming the
// run that holds again what the ended run holds (an interrupted archive
// of a session that was archived whole in another run): readers that
// count or search across runs leave the ended run out.
const SupersededByField = "superseded_by"

// configure returns the one StepOptions a step method was given, or the
// defaults.
func configure(opts []StepOptions) StepOptions {
	o := oneopt.Get("lifecycle.Step", opts)
	o.Retries = max(o.Retries, 0)
	return o
}

func validKind(k transcript.StepKind) bool {
	return k != transcript.KindWorkflow && k.Valid()
}

func joinPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

// runChild runs a child step of s with its attempts.
func (s *Step) runChild(ctx context.Context, name string, kind transcript.StepKind, call bool, cfg StepOptions, fn StepFunc) error {
	if !validName(name) {
		return fmt.Errorf("%w: step name %q must be one non-empty path segment (no '.', no whitespace)", ErrInvalidName, name)
	}
	if !validKind(kind) {
		return fmt.Errorf("%w: step %s: kind %q", ErrInvalidKind, joinPath(s.path, name), kind)
	}
	path := joinPath(s.path, name)
	for attempt := 0; ; attempt++ {
		iteration := s.iteration
		if cfg.Retries > 0 && !s.inLoop {
			iteration = attempt
		}
		child := &Step{
			run: s.run, br: &bracket{}, name: name, path: path, kind: kind,
			iteration: iteration, attempt: attempt, inLoop: s.inLoop,
		}
		if call {
			child.childID = runid.New()
		}
		last := func(err error) bool { return err == nil || attempt >= cfg.Retries || !shouldRetry(ctx, cfg, err) }
		ended, err := s.exec(ctx, child, fn, cfg.EndRun, last)
		if ended || last(err) { // no attempt follows the run's end
			return err
		}
		if cfg.RetryDelay > 0 {
			t := time.NewTimer(cfg.RetryDelay)
			select {
			case <-ctx.Done():
				t.Stop()
				return err
			case <-t.C:
			}
		}
	}
}

func shouldRetry(ctx context.Context, c StepOptions, err error) bool {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrEnded) {
		return false
	}
	return c.RetryIf == nil || c.RetryIf(err)
}

// exec writes c's start through s (so that it is refused when s has
// ended), runs fn and writes c's completion, whatever fn does. With
// endRun, when fn returns an error for which last holds (no attempt
// follows), the completion is written with run.completed
// ([StepOptions].EndRun); endedRun then says so, and no attempt may
// follow, whatever last says of the error the end returns. last sees
// fn's error wrapped as exec returns it (wrapStep), as RetryIf always has.
func (s *Step) exec(ctx context.Context, c *Step, fn StepFunc, endRun bool, last func(error) bool) (endedRun bool, err error) {
	started, completed := transcript.StepStarted, transcript.StepCompleted
	if c.childID != "" {
		started, completed = transcript.StepCallWorkflowStarted, transcript.StepCallWorkflowCompleted
	}
	ev := &transcript.Event{
		Type: started, ChildRunID: c.childID, Path: c.path, Iteration: c.iteration,
		Payload: &transcript.StepPayload{Name: c.name, Kind: c.kind, Attempt: c.attempt},
	}
	if err := s.emit(context.WithoutCancel(ctx), ev); err != nil {
		return false, fmt.Errorf("lifecycle: start step %s: %w", c.path, err)
	}
	returned := false
	defer func() {
		if returned {
			return
		}
		pv := recover()
		cause := errGoexit
		if pv != nil {
			cause = panicErr(pv)
		}
		if cerr := c.complete(ctx, completed, cause, nil); cerr != nil {
			c.run.log.Warn("lifecycle: write completion of a panicking step", "path", c.path, "err", cerr)
		}
		if pv != nil {
			panic(pv)
		}
	}()
	if ctx.Err() != nil {
		err = context.Cause(ctx)
	} else if fn != nil {
		err = fn(ctx, c)
	}
	returned = true
	werr := wrapStep(err, c.path, c.iteration, c.attempt)
	var cerr error
	if endRun && last(werr) {
		ctxErr := ctx.Err()
		ev := c.completion(completed, err, ctxErr)
		if ended, compErr, ferr := c.run.end(werr, ctxErr, ev); ended {
			if compErr != nil || ferr != nil { // ferr: also what Finish returns from now on
				return true, errors.Join(werr, compErr, ferr)
			}
			return true, werr
		}
		// The run had ended already: write the completion alone, which
		// is refused as it would be without EndRun.
		cerr = c.emitCompletion(ctx, ev)
	} else {
		cerr = c.complete(ctx, completed, err, ctx.Err())
	}
	if cerr != nil {
		return false, errors.Join(werr, cerr)
	}
	return false, werr
}

// complete ends c's bracket and writes its completion. It is written even
// if the parent has ended meanwhile (a step leaked into a goroutine):
// a start without its completion would be worse than a late completion.
func (c *Step) complete(ctx context.Context, typ transcript.EventType, err, ctxErr error) error {
	return c.emitCompletion(ctx, c.completion(typ, err, ctxErr))
}

// completion ends c's bracket and returns its completion event.
func (c *Step) completion(typ transcript.EventType, err, ctxErr error) *transcript.Event {
	c.br.mu.Lock()
	c.br.ended = true
	result := c.br.result
	c.br.mu.Unlock()
	status, text := runstate.Outcome(err, ctxErr)
	return &transcript.Event{
		Type: typ, ChildRunID: c.childID, Path: c.path, Iteration: c.iteration,
		Payload: &transcript.StepPayload{
			Name: c.name, Kind: c.kind, Status: status, Error: text,
			Result: result, Attempt: c.attempt,
		},
	}
}

func (c *Step) emitCompletion(ctx context.Context, ev *transcript.Event) error {
	if rerr := c.run.emit(context.WithoutCancel(ctx), ev); rerr != nil {
		return fmt.Errorf("lifecycle: complete step %s: %w", c.path, rerr)
	}
	return nil
}

// runFn is the body of [Do] for an already started run.
func runFn(ctx context.Context, r *Run, fn StepFunc) (err error) {
	returned := false
	defer func() {
		if returned {
			return
		}
		pv := recover()
		if pv == nil {
			_ = r.finish(errGoexit, nil)
			return
		}
		_ = r.finish(panicErr(pv), nil)
		panic(pv)
	}()
	err = fn(ctx, r.root)
	returned = true
	if ferr := r.finish(err, ctx.Err()); ferr != nil && err == nil {
		return ferr
	}
	return err
}

// reserved reports whether t is a run.* or step.* type, which only this
// package writes (spec section 4: they carry the step payload).
func reserved(t transcript.EventType) bool {
	switch t {
	case transcript.RunStarted, transcript.RunCompleted, transcript.StepStarted, transcript.StepCompleted,
		transcript.StepCallWorkflowStarted, transcript.StepCallWorkflowCompleted:
		return true
	}
	return false
}

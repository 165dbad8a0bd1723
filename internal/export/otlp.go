package export

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/google/uuid"
	"github.com/twasm/twasm/internal/runtree"
	"github.com/twasm/twasm/transcript"
)

// OTLPOptions says what ExportOTLP writes.
type OTLPOptions struct {
	// Content adds what was said and done (prompts, answers, thinking,
	// tool arguments, tool output, command lines) as span attributes. The
	// GenAI conventions make content opt-in; without it spans carry only
	// names, ids, times, models, usage and outcomes.
	Content bool
	// FromSeq and ToSeq (inclusive, 0 for no bound) restrict the root
	// run's spans to those whose first event lies in the range: a
	// `record --otlp` into an existing run exports only what it wrote.
	// The run's own span is exported only when its run.completed lies in
	// the range. Child runs linked from inside the range are exported
	// whole.
	FromSeq, ToSeq uint64
	// RunSpanSent says the root run's span went out in an earlier export
	// of the same run (export otlp --new sends a run that was open then
	// with its span, marked unfinished): it is not sent again when the
	// range holds run.completed, so the collector never gets one span id
	// twice.
	RunSpanSent bool
}

// OTLPStats counts what an export produced.
type OTLPStats struct {
	Runs  int
	Spans int
	// Skipped are the linked child runs not exported (runtree's rules);
	// the step that links each carries twasm.child.missing or
	// twasm.child.error.
	Skipped []*runtree.ChildError
}

// Attribute names used beside the GenAI semantic conventions. The gen_ai.*
// names follow the OpenTelemetry GenAI conventions (development status,
// v1.37+: gen_ai.provider.name, invoke_workflow/invoke_agent/chat/
// execute_tool); what they do not name is under twasm.*.
const (
	attrOperation     = "gen_ai.operation.name"
	attrProvider      = "gen_ai.provider.name"
	attrAgentName     = "gen_ai.agent.name"
	attrWorkflowName  = "gen_ai.workflow.name"
	attrConversation  = "gen_ai.conversation.id"
	attrRequestModel  = "gen_ai.request.model"
	attrResponseModel = "gen_ai.response.model"
	attrResponseID    = "gen_ai.response.id"
	attrFinishReasons = "gen_ai.response.finish_reasons"
	attrInputTokens   = "gen_ai.usage.input_tokens"
	attrOutputTokens  = "gen_ai.usage.output_tokens"
	attrCacheRead     = "gen_ai.usage.cache_read.input_tokens"
	attrCacheWrite    = "gen_ai.usage.cache_creation.input_tokens"
	attrToolName      = "gen_ai.tool.name"
	attrToolCallID    = "gen_ai.tool.call.id"
	attrToolType      = "gen_ai.tool.type"
	attrToolArgs      = "gen_ai.tool.call.arguments"
	attrToolResult    = "gen_ai.tool.call.result"
	attrInputMessages = "gen_ai.input.messages"
	attrOutputMsgs    = "gen_ai.output.messages"
	attrErrorType     = "error.type"
)

// maxContent bounds one content attribute; longer text is cut and says so.
const maxContent = 64 << 10

// providerNames maps twasm provider names to gen_ai.provider.name values
// where the conventions list one; others are passed through.
var providerNames = map[string]string{
	"claude":    "anthropic",
	"anthropic": "anthropic",
	"codex":     "openai",
	"openai":    "openai",
	"gemini":    "gcp.gemini",
}

func genAIProvider(p string) string {
	if v, ok := providerNames[p]; ok {
		return v
	}
	return p
}

// idsKey carries the span id (and, for a root, the trace id) that the next
// span started with the context must get.
type idsKey struct{}

type fixedIDs struct {
	trace trace.TraceID
	span  trace.SpanID
}

// IDGenerator gives every span the id ExportOTLP derived for it from the
// transcript (run id, seq, call id), so that exporting a run twice
// produces the same ids and spans exported by different processes (one
// record per step) link up. Use it in the TracerProvider given to
// ExportOTLP.
type IDGenerator struct{}

var _ sdktrace.IDGenerator = IDGenerator{}

// NewIDs implements sdktrace.IDGenerator.
func (IDGenerator) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	ids, _ := ctx.Value(idsKey{}).(fixedIDs)
	return ids.trace, ids.span
}

// NewSpanID implements sdktrace.IDGenerator.
func (IDGenerator) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	ids, _ := ctx.Value(idsKey{}).(fixedIDs)
	return ids.span
}

// traceIDOf is the trace id of a tree of runs: the root run's UUID, whose
// 16 bytes are a valid trace id. A run id that is not a UUID (a file
// renamed by hand) is hashed.
func traceIDOf(runID string) trace.TraceID {
	var t trace.TraceID
	if u, err := uuid.Parse(runID); err == nil {
		copy(t[:], u[:])
		return t
	}
	h := sha256.Sum256([]byte("trace\x00" + runID))
	copy(t[:], h[:])
	return t
}

// spanIDOf derives a span id from the run id and a key naming the span
// inside the run.
func spanIDOf(runID string, key ...string) trace.SpanID {
	h := sha256.New()
	h.Write([]byte(runID))
	for _, k := range key {
		h.Write([]byte{0})
		h.Write([]byte(k))
	}
	var s trace.SpanID
	copy(s[:], h.Sum(nil))
	if !s.IsValid() {
		s[7] = 1
	}
	return s
}

func seqKey(seq uint64) string { return strconv.FormatUint(seq, 10) }

// ExportOTLP streams the run at run.Path, and the child runs it links to,
// as OpenTelemetry spans through tp. Spans keep the transcript's own times,
// so old runs are backfilled as they happened. The file is read twice
// (once for the steps' results, which name provider and model, once for
// the spans), one line at a time: memory is bounded by the open steps and
// tool calls, not by the run's size. tp should use [IDGenerator]; the
// caller flushes it (Shutdown or ForceFlush).
func ExportOTLP(ctx context.Context, tp trace.TracerProvider, run Run, opts OTLPOptions) (OTLPStats, error) {
	x := &otlpExport{tracer: tp.Tracer("github.com/twasm/twasm/internal/export"), opts: opts, tree: runtree.NewTracker()}
	head, err := readHead(ctx, run.Path)
	if err != nil {
		return x.stats, err
	}
	x.tree.Visited(head.runID)
	root, parent := x.locate(ctx, run, head)
	err = x.exportRun(ctx, run, traceIDOf(root), parent, inherited{}, 0, true)
	return x.stats, err
}

type otlpExport struct {
	tracer trace.Tracer
	opts   OTLPOptions
	stats  OTLPStats
	// tree is the walk of the run's child runs (runtree's rules; the
	// children are exported in the middle of their parent's stream).
	tree *runtree.Tracker
}

// runHead is what the first event of a transcript says.
type runHead struct {
	runID  string
	parent string
}

func readHead(ctx context.Context, path string) (runHead, error) {
	var h runHead
	stop := errors.New("stop")
	err := eachEvent(ctx, path, func(ev *transcript.Event) error {
		h.runID, h.parent = ev.RunID, ev.ParentRunID
		return stop
	})
	if err != nil && !errors.Is(err, stop) {
		return h, err
	}
	if h.runID == "" {
		return h, fmt.Errorf("%s: %w (no run_id)", path, ErrNotTranscript)
	}
	return h, nil
}

// locate finds, for a run exported on its own, the root of its tree (for
// the trace id) and the span it hangs under: the call_workflow step of its
// parent that links it. Parents are read from the same directory; where
// one is missing, the topmost run found is the root.
func (x *otlpExport) locate(ctx context.Context, run Run, head runHead) (root string, parent trace.SpanContext) {
	root = head.runID
	if head.parent == "" {
		return root, parent
	}
	child, id := head.runID, head.parent
	first := true
	for depth := 0; id != "" && depth < runtree.MaxDepth; depth++ {
		root = id
		p, err := run.childPath(id)
		if err != nil {
			break
		}
		var next string
		var linkSeq uint64
		stop := errors.New("stop")
		err = eachEvent(ctx, p, func(ev *transcript.Event) error {
			if next == "" && ev.ParentRunID != "" {
				next = ev.ParentRunID
			}
			if ev.Type == transcript.StepCallWorkflowStarted && ev.ChildRunID == child {
				linkSeq = ev.Seq
				return stop
			}
			return nil
		})
		if err != nil && !errors.Is(err, stop) {
			break
		}
		if first {
			sid := spanIDOf(id, "run")
			if linkSeq != 0 {
				sid = spanIDOf(id, "step", seqKey(linkSeq))
			}
			parent = trace.NewSpanContext(trace.SpanContextConfig{SpanID: sid, TraceFlags: trace.FlagsSampled})
			first = false
		}
		child, id = id, next
	}
	if parent.HasSpanID() {
		parent = parent.WithTraceID(traceIDOf(root))
	}
	return root, parent
}

// inherited is what a child run takes from the step that started it.
type inherited struct {
	provider, model string
}

// stepInfo is what the first pass learns of a step from its completion.
type stepInfo struct {
	name, kind string
	result     *transcript.AgentResult
}

// runInfo is what the first pass learns of a run.
type runInfo struct {
	name  string
	steps map[uint64]*stepInfo // by the seq of the step's start
	// agentLike: messages or tools outside any step (a sub-agent's run).
	agentLike bool
	completed bool
	// revised: the latest versions of revised calls and results.
	revised *revisions
}

func scanRun(ctx context.Context, run Run) (*runInfo, error) {
	info := &runInfo{steps: map[uint64]*stepInfo{}, revised: newRevisions()}
	open := map[stepKey]uint64{}
	err := runEvents(ctx, run, func(ev *transcript.Event) error {
		k := stepKey{ev.Path, ev.Iteration}
		info.revised.note(ev)
		switch ev.Type {
		case transcript.RunStarted:
			if p := ev.Step(); p != nil {
				info.name = p.Name
			}
		case transcript.RunCompleted:
			info.completed = true
			if p := ev.Step(); p != nil && info.name == "" {
				info.name = p.Name
			}
		case transcript.StepStarted, transcript.StepCallWorkflowStarted:
			open[k] = ev.Seq
		case transcript.StepCompleted, transcript.StepCallWorkflowCompleted:
			start, ok := open[k]
			if !ok {
				return nil
			}
			delete(open, k)
			p := ev.Step()
			if p == nil {
				return nil
			}
			si := &stepInfo{name: p.Name, kind: string(p.Kind)}
			if p.Kind == transcript.KindAgent {
				si.result, _ = p.AgentResult()
			}
			info.steps[start] = si
		default:
			if _, ok := open[k]; !ok && (ev.Message() != nil || ev.Tool() != nil) {
				info.agentLike = true
			}
		}
		return nil
	})
	return info, err
}

// openStep is a step bracket being exported.
type openStep struct {
	sc    trace.SpanContext
	span  trace.Span // nil when the step lies outside the exported range
	info  *stepInfo
	last  time.Time // the latest event time inside the step
	input []map[string]any
	inh   inherited
}

type openTool struct {
	span trace.Span
	step stepKey
	run  bool // the call hangs under the run span
}

// openTools are a run's tool calls awaiting their results: results pair
// with calls by transcript.Pairer's rule (a provider may reuse a call
// id; a revised call or result is a new version of one, stated by the
// span of its first: see runInfo), and open holds the spans of the calls
// exported, by their numbers.
type openTools struct {
	pairs transcript.Pairer
	open  map[int]*openTool
	// revised is runInfo's: the latest versions of revised calls and
	// results, stated by the span of the first.
	revised *revisions
}

func (x *otlpExport) inRange(seq uint64) bool {
	return (x.opts.FromSeq == 0 || seq >= x.opts.FromSeq) && (x.opts.ToSeq == 0 || seq <= x.opts.ToSeq)
}

func (x *otlpExport) start(ctx context.Context, parent trace.SpanContext, traceID trace.TraceID, sid trace.SpanID,
	name string, kind trace.SpanKind, at time.Time, attrs ...attribute.KeyValue) trace.Span {
	if parent.IsValid() {
		ctx = trace.ContextWithSpanContext(ctx, parent)
	} else {
		ctx = trace.ContextWithSpanContext(ctx, trace.SpanContext{})
	}
	ctx = context.WithValue(ctx, idsKey{}, fixedIDs{trace: traceID, span: sid})
	_, sp := x.tracer.Start(ctx, name, trace.WithTimestamp(at), trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
	x.stats.Spans++
	return sp
}

func scFor(traceID trace.TraceID, sid trace.SpanID) trace.SpanContext {
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: sid, TraceFlags: trace.FlagsSampled})
}

// exportRun exports one run file. parent is the span the run hangs under
// (invalid for a root). limited applies the options' seq range (the root
// run only).
func (x *otlpExport) exportRun(ctx context.Context, run Run, traceID trace.TraceID, parent trace.SpanContext,
	inh inherited, depth int, limited bool) error {
	info, err := scanRun(ctx, run)
	if err != nil {
		return err
	}
	inRange := func(seq uint64) bool { return !limited || x.inRange(seq) }
	x.stats.Runs++

	var (
		runID     string
		runSC     trace.SpanContext
		runSpan   trace.Span
		runStart  time.Time
		lastTime  time.Time
		steps     = map[stepKey]*openStep{}
		order     []stepKey
		tools     = &openTools{open: map[int]*openTool{}, revised: info.revised}
		runInput  []map[string]any
		runEnded  bool
		runLast   time.Time // the latest event time outside any step
		childErrs []error
		sess      openSession
	)
	// The run's span starts at run.started; a ranged export that does not
	// include it writes the span only if it includes run.completed.
	emitRunSpan := inRange(1)

	stepOf := func(ev *transcript.Event) (stepKey, *openStep) {
		k := stepKey{ev.Path, ev.Iteration}
		if s := steps[k]; s != nil {
			return k, s
		}
		return k, nil
	}
	// parentOf returns the span context events of (path, iter) hang under.
	parentOf := func(path string, iter int) (trace.SpanContext, *openStep) {
		if k, ok := parentStep(order, path, iter); ok {
			return steps[k].sc, steps[k]
		}
		return runSC, nil
	}
	endTool := func(call int, t *openTool, at time.Time, dangling bool) {
		if t.span == nil {
			return
		}
		if dangling {
			t.span.SetAttributes(attribute.Bool("twasm.tool.dangling", true))
			t.span.SetStatus(codes.Unset, "")
		}
		t.span.End(trace.WithTimestamp(at))
		delete(tools.open, call)
	}

	err = runEvents(ctx, run, func(ev *transcript.Event) error {
		if runID == "" {
			runID = ev.RunID
			runSC = scFor(traceID, spanIDOf(runID, "run"))
		}
		ts := ev.Timestamp
		if ts.IsZero() {
			ts = lastTime
		}
		lastTime = ts
		sess.note(ev)
		switch ev.Type {
		case transcript.RunStarted:
			runStart = ts
			if emitRunSpan && runSpan == nil {
				runSpan = x.startRun(ctx, ev, info, inh, parent, traceID, runSC, ts)
			}
		case transcript.RunCompleted:
			runEnded = true
			for call, t := range tools.open {
				endTool(call, t, ts, true)
			}
			if runSpan == nil && !emitRunSpan && inRange(ev.Seq) && !(limited && x.opts.RunSpanSent) {
				// A ranged export (record --otlp into a run begun by
				// another process) that ended the run writes the run's
				// span now, from its recorded start.
				start := runStart
				if start.IsZero() {
					start = ts
				}
				runSpan = x.startRun(ctx, ev, info, inh, parent, traceID, runSC, start)
			}
			if runSpan != nil {
				p := ev.Step()
				if p != nil {
					setOutcome(runSpan, p.Status, p.Error)
				}
				if x.opts.Content && len(runInput) > 0 {
					runSpan.SetAttributes(attribute.String(attrInputMessages, clip(jsonString(runInput))))
				}
				runSpan.End(trace.WithTimestamp(ts))
				runSpan = nil
			}
		case transcript.StepStarted, transcript.StepCallWorkflowStarted:
			k := stepKey{ev.Path, ev.Iteration}
			psc, pstep := parentOf(ev.Path, ev.Iteration)
			si := info.steps[ev.Seq]
			if si == nil {
				si = &stepInfo{}
				if p := ev.Step(); p != nil {
					si.name, si.kind = p.Name, string(p.Kind)
				}
			}
			st := &openStep{sc: scFor(traceID, spanIDOf(runID, "step", seqKey(ev.Seq))), info: si, last: ts}
			if pstep != nil {
				st.inh = pstep.inh
			} else {
				st.inh = inh
			}
			if si.result != nil {
				st.inh = inherited{provider: si.result.Provider, model: si.result.Model}
			}
			if inRange(ev.Seq) {
				name, kind, attrs := stepSpanName(ev, si)
				st.span = x.start(ctx, psc, traceID, st.sc.SpanID(), name, kind, ts, attrs...)
			}
			steps[k] = st
			order = append(order, k)
			if ev.ChildRunID != "" && (!limited || x.inRange(ev.Seq)) {
				if err := x.exportChild(ctx, run, ev.ChildRunID, traceID, st, depth); err != nil {
					childErrs = append(childErrs, err)
				}
			}
		case transcript.StepCompleted, transcript.StepCallWorkflowCompleted:
			k, st := stepOf(ev)
			if st == nil {
				return nil
			}
			for call, t := range tools.open {
				if t.step == k {
					endTool(call, t, ts, true)
				}
			}
			if st.span != nil {
				p := ev.Step()
				stepOutcome(st.span, p, st.info)
				if x.opts.Content && len(st.input) > 0 {
					st.span.SetAttributes(attribute.String(attrInputMessages, clip(jsonString(st.input))))
				}
				st.span.End(trace.WithTimestamp(ts))
			}
			delete(steps, k)
			// Every entry: a step restarted while open is one step, and
			// no key left here may name a closed one (parentOf).
			order = slices.DeleteFunc(order, func(o stepKey) bool { return o == k })
		case transcript.MessageUser, transcript.MessageAssistant, transcript.ToolCall, transcript.ToolResult:
			k, st := stepOf(ev)
			psc := runSC
			prev := runLast
			cur := inh
			if st != nil {
				psc, prev, cur = st.sc, st.last, st.inh
			}
			if prev.IsZero() {
				prev = ts
			}
			x.content(ctx, ev, k, st, psc, prev, ts, traceID, runID, cur, tools, &runInput, inRange(ev.Seq))
			if st != nil {
				st.last = ts
			} else {
				runLast = ts
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	// A run still being written, or cut by a crash: close what is open at
	// the last event time, marked unfinished.
	for call, t := range tools.open {
		endTool(call, t, lastTime, true)
	}
	for _, k := range order {
		if st := steps[k]; st != nil && st.span != nil {
			st.span.SetAttributes(attribute.Bool("twasm.unfinished", true))
			st.span.End(trace.WithTimestamp(lastTime))
		}
	}
	if runSpan != nil {
		if !runEnded {
			runSpan.SetAttributes(attribute.Bool("twasm.unfinished", true))
			if st, open := sess.sessionStatus(); open {
				// An archived session that may still grow: the
				// outcome so far, marked open.
				runSpan.SetAttributes(attribute.Bool("twasm.session.open", true))
				setOutcome(runSpan, st, "")
			}
		}
		runSpan.End(trace.WithTimestamp(lastTime))
	}
	return errors.Join(childErrs...)
}

func (x *otlpExport) startRun(ctx context.Context, ev *transcript.Event, info *runInfo, inh inherited,
	parent trace.SpanContext, traceID trace.TraceID, runSC trace.SpanContext, at time.Time) trace.Span {
	name := info.name
	attrs := []attribute.KeyValue{attribute.String("twasm.run.id", ev.RunID)}
	if ev.ParentRunID != "" {
		attrs = append(attrs, attribute.String("twasm.run.parent_id", ev.ParentRunID))
	}
	op, nameAttr := "invoke_workflow", attrWorkflowName
	if info.agentLike {
		// A run with messages of its own and no agent step is a
		// sub-agent's conversation.
		op, nameAttr = "invoke_agent", attrAgentName
		attrs = appendProvider(attrs, inh.provider, inh.model)
	}
	attrs = append(attrs, attribute.String(attrOperation, op))
	spanName := op
	if name != "" {
		attrs = append(attrs, attribute.String(nameAttr, name))
		spanName += " " + name
	}
	return x.start(ctx, parent, traceID, runSC.SpanID(), spanName, trace.SpanKindInternal, at, attrs...)
}

// exportChild exports child run id of a run at depth under its linking
// step st; a child that cannot be followed is reported on st's span and in
// the stats, and the export goes on.
func (x *otlpExport) exportChild(ctx context.Context, run Run, id string, traceID trace.TraceID, st *openStep, depth int) error {
	ce := x.tree.Check(id, depth)
	var child Run
	if ce == nil {
		var err error
		if child, err = run.child(id); err == nil {
			_, err = readHead(ctx, child.Path)
		}
		if err != nil {
			ce = runtree.Opened(id, err)
		}
	}
	if ce == nil {
		x.tree.Visited(id)
		err := x.exportRun(ctx, child, traceID, st.sc, st.inh, depth+1, false)
		if !errors.Is(err, fs.ErrNotExist) || ctx.Err() != nil {
			return err
		}
		ce = runtree.Opened(id, err)
	}
	x.stats.Skipped = append(x.stats.Skipped, ce)
	if st.span != nil {
		if ce.Reason == runtree.Missing {
			st.span.SetAttributes(attribute.String("twasm.child.missing", id))
		} else {
			st.span.SetAttributes(attribute.String("twasm.child.error", ce.Error()))
		}
	}
	return nil
}

func stepSpanName(ev *transcript.Event, si *stepInfo) (string, trace.SpanKind, []attribute.KeyValue) {
	attrs := []attribute.KeyValue{attribute.String("twasm.step.path", ev.Path)}
	if ev.Iteration != 0 {
		attrs = append(attrs, attribute.Int("twasm.step.iteration", ev.Iteration))
	}
	if p := ev.Step(); p != nil && p.Attempt != 0 {
		attrs = append(attrs, attribute.Int("twasm.step.attempt", p.Attempt))
	}
	name := si.name
	if name == "" {
		name = ev.Path
	}
	kind := si.kind
	if kind == "" {
		if p := ev.Step(); p != nil {
			kind = string(p.Kind)
		}
	}
	attrs = append(attrs, attribute.String("twasm.step.kind", kind))
	if kind == string(transcript.KindAgent) {
		// A step named only by the generic default ("agent": record and
		// sync name their step so) is named after the agent that ran
		// it, its provider's name ("invoke_agent claude"), so that the
		// spans of different agents differ.
		if r := si.result; r != nil && r.Provider != "" && (name == "" || name == defaultAgentStep) {
			name = r.Provider
		}
		attrs = append(attrs, attribute.String(attrOperation, "invoke_agent"), attribute.String(attrAgentName, name))
		if r := si.result; r != nil {
			attrs = appendProvider(attrs, r.Provider, r.Model)
			if r.SessionID != "" {
				attrs = append(attrs, attribute.String(attrConversation, r.SessionID))
			}
		}
		return "invoke_agent " + name, trace.SpanKindInternal, attrs
	}
	return kind + " " + name, trace.SpanKindInternal, attrs
}

// defaultAgentStep is the name record and sync give an agent step when
// nothing names it.
const defaultAgentStep = "agent"

func appendProvider(attrs []attribute.KeyValue, provider, model string) []attribute.KeyValue {
	if provider != "" {
		attrs = append(attrs, attribute.String(attrProvider, genAIProvider(provider)), attribute.String("twasm.provider", provider))
	}
	if model != "" {
		attrs = append(attrs, attribute.String(attrRequestModel, model))
	}
	return attrs
}

func usageAttrs(u *transcript.Usage) []attribute.KeyValue {
	if u.IsZero() {
		return nil
	}
	var attrs []attribute.KeyValue
	add := func(k string, v *int64) {
		if v != nil {
			attrs = append(attrs, attribute.Int64(k, *v))
		}
	}
	add(attrInputTokens, u.InputTokens)
	add(attrOutputTokens, u.OutputTokens)
	add(attrCacheRead, u.CacheReadTokens)
	add(attrCacheWrite, u.CacheWriteTokens)
	add("twasm.usage.reasoning_tokens", u.ReasoningTokens)
	b := u.Billed()
	add("twasm.usage.uncached_input_tokens", b.UncachedInputTokens)
	add("twasm.usage.cache_write_1h_tokens", u.CacheWrite1hTokens)
	add("twasm.usage.total_tokens", u.TotalTokens)
	return attrs
}

// setOutcome sets a span's status from a twasm status word.
func setOutcome(sp trace.Span, status, errText string) {
	if status != "" {
		sp.SetAttributes(attribute.String("twasm.status", status))
	}
	switch status {
	case transcript.StatusError, transcript.StatusCancelled, "denied", "failed", "declined":
		if errText == "" {
			errText = status
		}
		sp.SetStatus(codes.Error, errText)
		sp.SetAttributes(attribute.String(attrErrorType, status))
	case transcript.StatusOK:
		sp.SetStatus(codes.Ok, "")
	}
}

func stepOutcome(sp trace.Span, p *transcript.StepPayload, si *stepInfo) {
	if p == nil {
		return
	}
	r := si.result
	status, errText := p.Status, p.Error
	if r != nil {
		if r.Status != "" {
			status = r.Status
		}
		if errText == "" {
			errText = r.Error
		}
		if r.Model != "" {
			sp.SetAttributes(attribute.String(attrResponseModel, r.Model))
		}
		sp.SetAttributes(usageAttrs(r.Usage)...)
		if r.CostUSD != nil {
			sp.SetAttributes(attribute.Float64("twasm.cost_usd", *r.CostUSD))
		}
		if r.ExitCode != nil {
			sp.SetAttributes(attribute.Int("twasm.exit_code", *r.ExitCode))
		}
		if r.ProviderVersion != "" {
			sp.SetAttributes(attribute.String("twasm.provider_version", r.ProviderVersion))
		}
		n := 0
		for _, c := range r.Unmapped {
			n += c
		}
		if n > 0 {
			sp.SetAttributes(attribute.Int("twasm.unmapped_lines", n))
		}
		if len(r.Dangling) > 0 {
			sp.SetAttributes(attribute.Int("twasm.dangling_calls", len(r.Dangling)))
		}
		if len(r.Warnings) > 0 {
			sp.SetAttributes(attribute.StringSlice("twasm.warnings", r.Warnings))
		}
	}
	if r == nil {
		setOutcome(sp, status, errText)
		return
	}
	for _, e := range r.Errors {
		attrs := []attribute.KeyValue{attribute.String("message", e.Message)}
		if e.Code != "" {
			attrs = append(attrs, attribute.String("code", e.Code))
		}
		sp.AddEvent("twasm.provider_error", trace.WithAttributes(attrs...))
	}
	setOutcome(sp, status, errText)
}

// content exports a message or tool event.
func (x *otlpExport) content(ctx context.Context, ev *transcript.Event, k stepKey, st *openStep, psc trace.SpanContext,
	prev, ts time.Time, traceID trace.TraceID, runID string, inh inherited, tools *openTools,
	runInput *[]map[string]any, emit bool) {
	switch ev.Type {
	case transcript.MessageUser:
		if !x.opts.Content {
			return
		}
		m := ev.Message()
		if m == nil {
			return
		}
		msg := messageParts(m)
		if st != nil {
			if len(st.input) < 16 {
				st.input = append(st.input, msg)
			}
		} else if len(*runInput) < 16 {
			*runInput = append(*runInput, msg)
		}
	case transcript.MessageAssistant:
		m := ev.Message()
		if m == nil || !emit {
			return
		}
		model := m.Model
		if model == "" {
			model = inh.model
		}
		name := "chat"
		if model != "" {
			name += " " + model
		}
		attrs := []attribute.KeyValue{attribute.String(attrOperation, "chat"), attribute.Int64("twasm.seq", int64(ev.Seq))}
		attrs = appendProvider(attrs, inh.provider, inh.model)
		if m.Model != "" {
			attrs = append(attrs, attribute.String(attrResponseModel, m.Model))
		}
		if m.ID != "" {
			attrs = append(attrs, attribute.String(attrResponseID, m.ID))
		}
		if m.StopReason != "" {
			attrs = append(attrs, attribute.StringSlice(attrFinishReasons, []string{m.StopReason}))
		}
		attrs = append(attrs, usageAttrs(m.Usage)...)
		if x.opts.Content {
			attrs = append(attrs, attribute.String(attrOutputMsgs, clip(jsonString([]map[string]any{messageParts(m)}))))
		}
		sp := x.start(ctx, psc, traceID, spanIDOf(runID, "chat", seqKey(ev.Seq)), name, trace.SpanKindClient, prev, attrs...)
		sp.End(trace.WithTimestamp(ts))
	case transcript.ToolCall:
		t := ev.Tool()
		if t == nil {
			return
		}
		// Every call is paired, exported or not, so that a result pairs
		// with its own call (a call outside the range has no span).
		call := -1
		if t.CallID != "" {
			// A revised call has one span, at the version before its
			// result (the latest before it), from its first version's
			// time, stating its latest version.
			var again bool
			call, again, _ = tools.pairs.Feed(ev)
			open, from := tools.revised.opens(call, ev.Seq, again)
			if !open {
				return
			}
			if !from.IsZero() {
				ts = from
			}
			if latest := tools.revised.call(call); latest != nil {
				t = latest
			}
		}
		if !emit {
			return
		}
		attrs := []attribute.KeyValue{attribute.String(attrOperation, "execute_tool"), attribute.String(attrToolName, t.Name),
			attribute.String(attrToolType, "function"), attribute.String("twasm.fidelity", string(t.Fidelity))}
		if t.CallID != "" {
			attrs = append(attrs, attribute.String(attrToolCallID, t.CallID))
		}
		if t.Kind != "" {
			attrs = append(attrs, attribute.String("twasm.tool.kind", string(t.Kind)))
		}
		if x.opts.Content {
			if len(t.Input) > 0 {
				attrs = append(attrs, attribute.String(attrToolArgs, clip(string(t.Input))))
			}
			if t.Command != "" {
				attrs = append(attrs, attribute.String("twasm.tool.command", clip(t.Command)))
			}
		}
		name := "execute_tool"
		if t.Name != "" {
			name += " " + t.Name
		}
		sp := x.start(ctx, psc, traceID, spanIDOf(runID, "tool", t.CallID, seqKey(ev.Seq)), name, trace.SpanKindInternal, ts, attrs...)
		if call < 0 {
			// No id to pair a result with: the call is its own span.
			sp.End(trace.WithTimestamp(ts))
			return
		}
		tools.open[call] = &openTool{span: sp, step: k, run: st == nil}
	case transcript.ToolResult:
		t := ev.Tool()
		if t == nil {
			return
		}
		var ot *openTool
		if t.CallID != "" {
			call, again, ok := tools.pairs.Feed(ev)
			if ok && again {
				return // a later version of a result: its call's span states it
			}
			if ok {
				ot = tools.open[call]
				delete(tools.open, call)
				if latest := tools.revised.result(call); latest != nil {
					t = latest
				}
			}
		}
		if ot == nil {
			if !emit {
				return
			}
			// A result whose call was not exported: a span of its own.
			name := "execute_tool"
			if t.Name != "" {
				name += " " + t.Name
			}
			sp := x.start(ctx, psc, traceID, spanIDOf(runID, "result", t.CallID, seqKey(ev.Seq)), name, trace.SpanKindInternal, ts,
				attribute.String(attrOperation, "execute_tool"), attribute.String(attrToolName, t.Name), attribute.String(attrToolCallID, t.CallID))
			ot = &openTool{span: sp}
		}
		sp := ot.span
		if t.ExitCode != nil {
			sp.SetAttributes(attribute.Int("twasm.tool.exit_code", *t.ExitCode))
		}
		if x.opts.Content && t.Output != "" {
			sp.SetAttributes(attribute.String(attrToolResult, clip(t.Output)))
		}
		status := t.Status
		if status == "" && t.Error != "" {
			status = transcript.StatusError
		}
		setOutcome(sp, status, t.Error)
		sp.End(trace.WithTimestamp(ts))
	}
}

// messageParts renders a message in the GenAI conventions' message shape:
// {"role", "parts": [{"type": "text"|"reasoning"|"tool_call"|..., ...}]}.
func messageParts(m *transcript.MessagePayload) map[string]any {
	parts := make([]map[string]any, 0, len(m.Blocks))
	for _, b := range m.Blocks {
		switch b.Type {
		case transcript.BlockText:
			parts = append(parts, map[string]any{"type": "text", "content": b.Text})
		case transcript.BlockThinking:
			parts = append(parts, map[string]any{"type": "reasoning", "content": b.Thinking})
		case transcript.BlockToolUse:
			p := map[string]any{"type": "tool_call", "id": b.ToolID, "name": b.ToolName}
			if len(b.ToolInput) > 0 && json.Valid(b.ToolInput) {
				p["arguments"] = json.RawMessage(b.ToolInput)
			}
			parts = append(parts, p)
		case transcript.BlockToolResult:
			parts = append(parts, map[string]any{"type": "tool_call_response", "id": b.ToolID, "response": b.ToolContent})
		case transcript.BlockCommand:
			parts = append(parts, map[string]any{"type": "text", "content": "$ " + b.Command})
		}
	}
	return map[string]any{"role": m.Role, "parts": parts}
}

func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// clip bounds a content attribute, cutting on a rune boundary.
func clip(s string) string {
	if len(s) <= maxContent {
		return s
	}
	cut := maxContent
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…[cut: " + strconv.Itoa(len(s)) + " bytes]"
}

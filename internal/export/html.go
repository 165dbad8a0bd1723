package export

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twasm/twasm/internal/redact"
	"github.com/twasm/twasm/internal/runtree"
	"github.com/twasm/twasm/internal/views"
	"github.com/twasm/twasm/transcript"
)

// HTMLOptions say how ExportHTML renders.
type HTMLOptions struct {
	// Redactor, when set, masks every event before it is rendered; a line
	// that cannot be decoded (and so cannot be masked) fails the export.
	Redactor *redact.Redactor
	// MaxOutput bounds one output or input block, in bytes (0: 64 KiB); the
	// rest is left out with a note (the transcript keeps it).
	MaxOutput int
	// Title heads the page ("" names the first run).
	Title string
	// Page, when set, makes the page one served by twasm serve (package
	// web) rather than a file to keep: see [HTMLPage].
	Page *HTMLPage
}

// HTMLPage is what a served page changes of the rendering; the events,
// the tree and the escaping are the same as the saved page's.
type HTMLPage struct {
	// Head writes the page up to and including <body> and the page's
	// own header: the styles and scripts it links to (the server sends
	// the Content-Security-Policy). title is unescaped.
	Head func(w io.Writer, title string)
	// Foot writes what closes the page after </main>.
	Foot func(w io.Writer)
	// ChildURL is the address of a linked child run's page: a child run
	// is linked from the tree and from the step that started it, not
	// written into its parent's page.
	ChildURL func(runID string) string
	// RawURL is the address of the line behind an event, linked from
	// the event ("" leaves the link out).
	RawURL func(runID string, seq uint64) string
	// Window, when set, makes the page one part of a long run: see
	// [HTMLWindow].
	Window *HTMLWindow
}

// HTMLWindow is the part of a run a served page shows, so that a run of
// any length opens as fast as a short one: only the events whose seq is
// in [From, To) are written (To 0: up to the end), rendered as on the
// whole page. The steps open at From are opened again (marked
// continued), and a call whose result comes after To says so where the
// result would be.
type HTMLWindow struct {
	From, To uint64
	// Nav writes what leads to the other parts, at the top and at the
	// bottom of <main>; last is the run's last seq.
	Nav func(w io.Writer, last uint64)
}

// foldAt: blocks longer than this many lines or bytes are folded.
const (
	htmlFoldLines = 12
	htmlFoldBytes = 1200
)

// ExportHTML writes one self-contained page for runs and the child runs
// they link to: the execution tree (steps nested by path, as twasm tree
// shows them), each step's dialog (thinking folded), tool calls with
// their results beside them, commands as shell, edits and patches as
// diffs, fidelity, usage and cost, errors and warnings, and a
// search box. It loads nothing: styles and script are inline, and a
// Content-Security-Policy forbids any request and allows only those two,
// by their hashes (pageCSP). It streams: a run's events
// are read twice (the tree, then the page) and written as they come (the
// tree's pass reads each message and tool event's outline only,
// transcript.DecodeOutline: the same lines as the page's pass); a
// result is written where it comes and moved beside its call by the page's
// script, so memory holds no run.
func ExportHTML(ctx context.Context, w io.Writer, runs []Run, opts HTMLOptions) error {
	if opts.MaxOutput <= 0 {
		opts.MaxOutput = 64 << 10
	}
	h := &htmlWriter{w: bufio.NewWriterSize(w, 64<<10), opts: opts, page: opts.Page}
	var trees []*treeNode
	for _, r := range runs {
		t, err := runtree.Walk(ctx, r, h.tree)
		if err != nil {
			return err
		}
		trees = append(trees, t)
	}
	title := opts.Title
	if title == "" && len(trees) > 0 {
		title = orDefault(trees[0].name, trees[0].id)
	}
	h.head(title, trees)
	for _, t := range trees {
		if err := h.run(ctx, t, 0); err != nil {
			return err
		}
	}
	h.foot(trees)
	return h.w.Flush()
}

type treeNode struct {
	run      Run
	id, name string
	status   string
	open     bool // an archived session that may still grow
	started  time.Time
	ended    time.Time
	steps    []*treeStep
	calls    map[string]bool // call ids that have a tool.call event
	// dangling holds the numbers of the calls without a result
	// (transcript.Pairer numbers them in file order).
	dangling map[int]bool
	// replaced are the seqs of the calls and results a later revised
	// version replaces (transcript.Pairer): the page shows them where
	// they are, and the latest version in the call's slot.
	replaced map[uint64]bool
	lastSeq  uint64
	// skipped are the linked child runs not followed (runtree's rules),
	// shown as warnings.
	skipped []*runtree.ChildError
	// fidelity is the fidelity most of the run's blocks and tool events
	// have: stated once for the run, and a badge only on what differs.
	fidelity  transcript.Fidelity
	fidelityN map[transcript.Fidelity]int
}

type treeStep struct {
	seq                uint64
	path, name, kind   string
	status             string
	result             *transcript.AgentResult
	child              *treeNode
	started, completed time.Time
	// steps are the steps nested under this one by path (a call_workflow
	// step "work.sub" under "work"), as in the execution tree of views.
	steps []*treeStep
}

// read streams a run's events to fn, each masked first when the page is
// redacted; with outline, each is transcript.DecodeOutline's (the tree's
// pass, which reads no content).
func (h *htmlWriter) read(ctx context.Context, path string, outline bool, fn func(*transcript.Event) error) error {
	return eachEventStrict(ctx, path, h.opts.Redactor != nil, outline, func(ev *transcript.Event) error {
		if h.opts.Redactor != nil {
			h.opts.Redactor.Mask(ev)
		}
		return fn(ev)
	})
}

// tree reads a run for the execution tree (first pass), a visitor of
// runtree.Walk: its child runs are linked to the steps that start them.
func (h *htmlWriter) tree(ctx context.Context, r Run, _ int) (runtree.Visited[Run, *treeNode], error) {
	n := &treeNode{run: r, status: "running", calls: map[string]bool{}, dangling: map[int]bool{}, fidelityN: map[transcript.Fidelity]int{}}
	var pairs transcript.Pairer
	var callSeq, resultSeq []uint64 // by call number, of its latest version and result
	n.replaced = map[uint64]bool{}
	open := map[stepKey]*treeStep{}
	var order []stepKey // the open steps' keys in start order, to find parents
	// A throwaway redactor: the first pass only must not see secrets; the
	// page's pass counts what it masks.
	saved := h.opts.Redactor
	if saved != nil {
		h.opts.Redactor = redact.New()
	}
	defer func() { h.opts.Redactor = saved }()
	var childIDs []*treeStep
	var sess openSession
	// Only the outline of each message and tool event (its blocks'
	// fidelities, its call id): the page's pass reads the content.
	err := h.read(ctx, r.Path, true, func(ev *transcript.Event) error {
		if n.id == "" {
			n.id = ev.RunID
		}
		sess.note(ev)
		n.lastSeq = max(n.lastSeq, ev.Seq)
		k := stepKey{ev.Path, ev.Iteration}
		switch ev.Type {
		case transcript.RunStarted:
			n.started = ev.Timestamp
			if p := ev.Step(); p != nil {
				n.name = p.Name
			}
		case transcript.RunCompleted:
			n.ended = ev.Timestamp
			n.status = transcript.StatusOK
			if p := ev.Step(); p != nil && p.Status != "" {
				n.status = p.Status
			}
		case transcript.StepStarted, transcript.StepCallWorkflowStarted:
			s := &treeStep{seq: ev.Seq, path: ev.Path, status: "running", started: ev.Timestamp}
			if p := ev.Step(); p != nil {
				s.name, s.kind = p.Name, string(p.Kind)
			}
			if ev.ChildRunID != "" {
				s.child = &treeNode{id: ev.ChildRunID}
				childIDs = append(childIDs, s)
			}
			if pk, ok := parentStep(order, ev.Path, ev.Iteration); ok {
				open[pk].steps = append(open[pk].steps, s)
			} else {
				n.steps = append(n.steps, s)
			}
			open[k] = s
			order = append(order, k)
		case transcript.StepCompleted, transcript.StepCallWorkflowCompleted:
			s := open[k]
			if s == nil {
				return nil
			}
			delete(open, k)
			order = slices.DeleteFunc(order, func(o stepKey) bool { return o == k })
			s.completed = ev.Timestamp
			if p := ev.Step(); p != nil {
				s.status = orDefault(p.Status, transcript.StatusOK)
				if p.Kind == transcript.KindAgent {
					s.result, _ = p.AgentResult()
					if s.result != nil && s.result.Status != "" {
						s.status = s.result.Status
					}
				}
			}
		case transcript.ToolCall:
			if t := ev.Tool(); t != nil {
				k, again, _ := pairs.Feed(ev)
				n.calls[t.CallID] = true
				if again {
					n.replaced[callSeq[k]], callSeq[k] = true, ev.Seq
					break
				}
				callSeq, resultSeq = append(callSeq, ev.Seq), append(resultSeq, 0)
				n.fidelityN[t.Fidelity]++
			}
		case transcript.ToolResult:
			if k, again, ok := pairs.Feed(ev); ok {
				if again {
					n.replaced[resultSeq[k]] = true
				}
				resultSeq[k] = ev.Seq
			}
		case transcript.MessageUser, transcript.MessageAssistant:
			if m := ev.Message(); m != nil {
				for _, b := range m.Blocks {
					n.fidelityN[b.Fidelity]++
				}
			}
		}
		return nil
	})
	if err != nil {
		return runtree.Visited[Run, *treeNode]{}, err
	}
	for _, k := range pairs.Dangling() {
		n.dangling[k] = true
	}
	for f, c := range n.fidelityN {
		if f != "" && (c > n.fidelityN[n.fidelity] || c == n.fidelityN[n.fidelity] && f < n.fidelity) {
			n.fidelity = f
		}
	}
	if st, ok := sess.sessionStatus(); ok && n.ended.IsZero() {
		n.status, n.open = st, true
	}
	v := runtree.Visited[Run, *treeNode]{ID: n.id, Node: n}
	for _, s := range childIDs {
		v.Links = append(v.Links, link(r, s.child.id, func(c *treeNode, ce *runtree.ChildError) {
			s.child = c
			if ce != nil {
				n.skipped = append(n.skipped, ce)
			}
		}))
	}
	return v, nil
}

type htmlWriter struct {
	w    *bufio.Writer
	opts HTMLOptions
	// page is opts.Page: nil for a saved page.
	page *HTMLPage
	// fid is the fidelity of the run being written (treeNode.fidelity);
	// lastDay the date of the last time shown (when).
	fid     transcript.Fidelity
	lastDay string
}

func (h *htmlWriter) p(format string, args ...any) { fmt.Fprintf(h.w, format, args...) }

// esc makes transcript text inert on the page: terminal escapes removed,
// control and bidirectional formatting characters shown as such
// (views.StripEscapes), then HTML-escaped. Every text the page shows goes
// through it.
func esc(s string) string { return html.EscapeString(views.StripEscapes(s)) }

// pageCSP is the page's Content-Security-Policy: nothing may be fetched,
// and the only style and script allowed are the page's own, by their
// hashes: no 'unsafe-inline', so markup that escaped the escaping could
// still run nothing.
func pageCSP() string {
	hash := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	}
	return "default-src 'none'; style-src " + hash(pageCSS) + "; script-src " + hash(pageJS) + "; img-src data:; base-uri 'none'; form-action 'none'"
}

func statusClass(s string) string {
	switch s {
	case transcript.StatusOK, "completed":
		return "ok"
	case "running":
		return "run"
	case transcript.StatusIncomplete, "dangling":
		return "warn"
	}
	return "bad"
}

// StatusClass is the class of a status's badge on the page (ok, run,
// warn, bad), for pages that show statuses beside it (package web).
func StatusClass(s string) string { return statusClass(s) }

func badge(s string) string {
	return `<span class="st ` + statusClass(s) + `">` + esc(s) + `</span>`
}

// fidelity is a block's fidelity badge, shown only where it differs
// from the run's own (stated once in the run's header).
func (h *htmlWriter) fidelity(f transcript.Fidelity) string {
	if f == "" || f == h.fid {
		return ""
	}
	label := "agent"
	if f == transcript.FidelityRouter {
		label = "router"
	}
	return `<span class="fid ` + label + `" title="fidelity: ` + esc(string(f)) + `">` + label + `</span>`
}

func anchor(runID string, seq uint64) string { return "e-" + runID + "-" + strconv.FormatUint(seq, 10) }

// anchor is the id of an event's element: a saved page holds several
// runs (e-RUN-SEQ), a served page one (seq-SEQ, so that a link can say
// #seq-42).
func (h *htmlWriter) anchor(runID string, seq uint64) string {
	if h.page != nil {
		return "seq-" + strconv.FormatUint(seq, 10)
	}
	return anchor(runID, seq)
}

// rawLink is a served page's link to the line behind an event.
func (h *htmlWriter) rawLink(runID string, seq uint64) string {
	if h.page == nil || h.page.RawURL == nil {
		return ""
	}
	return ` <a class="raw" href="` + esc(h.page.RawURL(runID, seq)) + `" title="the transcript line and the provider's raw line">raw</a>`
}

// runHref is where the tree's entry for run n leads: its section on a
// saved page, a child run's own page on a served one.
func (h *htmlWriter) runHref(n *treeNode, child bool) string {
	if child && h.page != nil && h.page.ChildURL != nil {
		return h.page.ChildURL(n.id)
	}
	return "#run-" + n.id
}

func (h *htmlWriter) head(title string, trees []*treeNode) {
	if h.page != nil {
		h.page.Head(h.w, title)
		h.p(`<nav id="tree" aria-label="Execution tree"><h2>Execution tree</h2>`)
	} else {
		h.p(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="%s">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>%s · twasm</title>
<style>%s</style></head><body>
<header><h1>%s</h1><input id="q" type="search" placeholder="Search this page" aria-label="Search this page"><span id="hits"></span></header>
<nav id="tree" aria-label="Execution tree"><h2>Execution tree</h2>`, pageCSP(), esc(title), pageCSS, esc(title))
	}
	for _, t := range trees {
		h.p("<ul>")
		h.treeItem(t, false)
		h.p("</ul>")
	}
	h.p("</nav>\n<main>\n")
	if w := h.window(); w != nil && w.Nav != nil && len(trees) > 0 {
		w.Nav(h.w, trees[0].lastSeq)
	}
}

// window is the part of the run the page shows (nil: all of it).
func (h *htmlWriter) window() *HTMLWindow {
	if h.page == nil {
		return nil
	}
	return h.page.Window
}

// errWindowEnd stops reading a run past the part shown.
var errWindowEnd = errors.New("past the window")

// treeSteps lists steps of run n, each with the steps nested under it
// and the child run it calls.
func (h *htmlWriter) treeSteps(n *treeNode, steps []*treeStep) {
	if len(steps) == 0 {
		return
	}
	h.p("<ul>")
	for _, s := range steps {
		h.p(`<li class="tstep"><a href="#%s">%s</a> <span class="dim">%s</span> %s`, h.anchor(n.id, s.seq), esc(s.path), esc(s.kind), badge(s.status))
		if r := s.result; r != nil {
			h.p(` <span class="dim">%s %s%s</span>`, esc(r.Provider), esc(r.Model), costText(r))
		}
		h.treeSteps(n, s.steps)
		if s.child != nil {
			h.p("<ul>")
			h.treeItem(s.child, true)
			h.p("</ul>")
		}
		h.p("</li>")
	}
	h.p("</ul>")
}

func (h *htmlWriter) treeItem(n *treeNode, child bool) {
	h.p(`<li class="trun"><a href="%s">%s</a> %s`, esc(h.runHref(n, child)), esc(orDefault(n.name, n.id)), badge(n.status))
	if n.open {
		h.p(` <span class="dim">open</span>`)
	}
	if !n.started.IsZero() && !n.ended.IsZero() {
		h.p(` <span class="dim">%s</span>`, esc(views.FormatDuration(n.ended.Sub(n.started).Milliseconds())))
	}
	if child && h.page != nil && h.page.ChildURL != nil {
		h.p("</li>") // its steps are on its own page
		return
	}
	h.treeSteps(n, n.steps)
	for _, ce := range n.skipped {
		why := ce.Error()
		if ce.Reason == runtree.Missing {
			why = "no transcript"
		}
		h.p(`<div class="warnbox">child run %s: %s</div>`, esc(ce.Child), esc(why))
	}
	h.p("</li>")
}

func costText(r *transcript.AgentResult) string {
	var parts []string
	if u := r.Usage; !u.IsZero() {
		parts = append(parts, usageText(u))
	}
	if r.CostUSD != nil {
		parts = append(parts, fmt.Sprintf("$%.4f", *r.CostUSD))
	}
	if len(parts) == 0 {
		return ""
	}
	return " · " + esc(strings.Join(parts, " · "))
}

// block writes a preformatted block, folded when long, cut at MaxOutput.
func (h *htmlWriter) block(summary, class, text string, open bool) {
	text = views.StripEscapes(text) // before cutting: what is shown is measured
	note := ""
	if len(text) > h.opts.MaxOutput {
		cut := h.opts.MaxOutput
		for cut > 0 && text[cut]&0xC0 == 0x80 {
			cut--
		}
		note = fmt.Sprintf(`<div class="dim">%d of %d bytes shown; the transcript keeps all of it.</div>`, cut, len(text))
		text = text[:cut]
	}
	lines := strings.Count(strings.TrimRight(text, "\n"), "\n") + 1
	var body string
	if class == "diff" {
		body = diffHTML(text)
	} else {
		body = esc(text)
	}
	pre := `<pre class="` + class + `">` + body + `</pre>` + note
	if summary != "" && !open && (lines > htmlFoldLines || len(text) > htmlFoldBytes) {
		h.p(`<details class="fold"><summary>%s · %d lines</summary>%s</details>`, esc(summary), lines, pre)
		return
	}
	h.p("%s", pre)
}

func diffHTML(text string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		class := ""
		switch {
		case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
			class = "dh"
		case strings.HasPrefix(line, "+"):
			class = "da"
		case strings.HasPrefix(line, "-"):
			class = "dd"
		case strings.HasPrefix(line, "@@"):
			class = "dn"
		}
		if class != "" {
			// A block-level line ends itself; a newline would double it.
			b.WriteString(`<span class="` + class + `">` + esc(line) + "</span>")
		} else {
			b.WriteString(esc(line) + "\n")
		}
	}
	return b.String()
}

// when shows a time in UTC: with its date the first time and whenever
// the date changed since the last time shown, else HH:MM:SS.
func (h *htmlWriter) when(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	t = t.UTC()
	shown := t.Format("15:04:05")
	if day := t.Format("2006-01-02"); day != h.lastDay {
		h.lastDay = day
		shown = day + " " + shown
	}
	return `<time datetime="` + t.Format(time.RFC3339Nano) + `">` + shown + `</time>`
}

// run writes a run's section; child runs are written inside the step
// that started them.
func (h *htmlWriter) run(ctx context.Context, n *treeNode, depth int) error {
	h.p(`<section class="run" id="run-%s"><h2>%s %s</h2><div class="meta">run <code>%s</code>`, esc(n.id), esc(orDefault(n.name, "run")), badge(n.status), esc(n.id))
	if !n.started.IsZero() {
		h.p(" · started %s", esc(n.started.UTC().Format(time.RFC3339)))
	}
	if n.open {
		h.p(" · open: an archived session that may still grow; its status is its latest part's")
	}
	if n.fidelity != "" {
		h.p(" · fidelity %s", esc(string(n.fidelity)))
		if len(n.fidelityN) > 1 {
			h.p(" (other fidelities marked where they occur)")
		}
	}
	h.p("</div>\n")
	saved := h.fid
	h.fid = n.fidelity
	defer func() { h.fid = saved }()
	// The child runs by the seq of the step that starts them, at any
	// depth of the steps (a call_workflow step nested in another).
	children := map[uint64]*treeNode{}
	var collect func([]*treeStep)
	collect = func(steps []*treeStep) {
		for _, s := range steps {
			if s.child != nil {
				children[s.seq] = s.child
			}
			collect(s.steps)
		}
	}
	collect(n.steps)
	var stack []stepKey
	// A part of the run (a served page's window, the top run only):
	// before it, only the steps' nesting is followed; at its first
	// event the steps open there are opened again.
	win := h.window()
	if depth > 0 {
		win = nil
	}
	// pending: the slots of the calls shown whose result is not, by the
	// calls' numbers.
	before, pending := win != nil && win.From > 0, map[int]string{}
	// A provider may reuse a call id once its call is answered: results
	// pair with calls by transcript.Pairer's rule, from the run's start
	// (as the tree's pass numbers them), and a result takes the slot of
	// the call it answers (slots, of the calls waiting; ord counts the
	// calls of each id; every version of a revised call has the same
	// slot, and a result replaced by a revised one none).
	var pairs transcript.Pairer
	ord, slots := map[string]int{}, map[int]string{}
	closeTo := func(k stepKey) {
		for i := len(stack) - 1; i >= 0; i-- {
			if stack[i] == k {
				if !before {
					for j := len(stack) - 1; j >= i; j-- {
						h.p("</section>\n")
					}
				}
				stack = stack[:i]
				return
			}
		}
	}
	err := h.read(ctx, n.run.Path, false, func(ev *transcript.Event) error {
		if win != nil && win.To > 0 && ev.Seq >= win.To {
			return errWindowEnd
		}
		slot, call := "", -1
		if k, again, ok := pairs.Feed(ev); ok {
			call = k
			if ev.Type == transcript.ToolCall && !again {
				id := ev.Tool().CallID
				ord[id]++
				slots[k] = callSlot(n.id, id, ord[id])
			}
			if !n.replaced[ev.Seq] {
				slot = slots[k]
			}
			if ev.Type == transcript.ToolResult && !n.replaced[ev.Seq] {
				delete(slots, k)
			}
		}
		if win != nil {
			if before && ev.Seq < win.From {
				switch ev.Type {
				case transcript.StepStarted, transcript.StepCallWorkflowStarted:
					stack = append(stack, stepKey{ev.Path, ev.Iteration})
				case transcript.StepCompleted, transcript.StepCallWorkflowCompleted:
					closeTo(stepKey{ev.Path, ev.Iteration})
				case transcript.RunCompleted:
					stack = stack[:0]
				}
				return nil
			}
			if before {
				before = false
				for _, k := range stack {
					h.p(`<section class="step"><h3>%s <span class="dim">continued</span></h3>`, esc(k.path))
				}
			}
			switch {
			case call < 0:
			case ev.Type == transcript.ToolCall:
				pending[call] = slot
			default:
				delete(pending, call)
			}
		}
		switch ev.Type {
		case transcript.StepStarted, transcript.StepCallWorkflowStarted:
			p := ev.Step()
			name, kind := "", ""
			if p != nil {
				name, kind = p.Name, string(p.Kind)
			}
			// The kind and the name only where they say more than the
			// path (an agent step at "agent" is not "agent agent agent").
			last := ev.Path[strings.LastIndexByte(ev.Path, '.')+1:]
			if kind == last {
				kind = ""
			}
			if name == last || name == kind {
				name = ""
			}
			h.p(`<section class="step" id="%s"><h3>%s <span class="dim">%s</span> %s %s%s</h3>`, h.anchor(n.id, ev.Seq), esc(ev.Path), esc(kind), esc(name), h.when(ev.Timestamp), h.rawLink(n.id, ev.Seq))
			stack = append(stack, stepKey{ev.Path, ev.Iteration})
			if c := children[ev.Seq]; c != nil {
				if h.page != nil && h.page.ChildURL != nil {
					h.p(`<div class="subrun" id="child-%s">child run <a href="%s">%s</a> %s</div>`, esc(c.id), esc(h.page.ChildURL(c.id)), esc(orDefault(c.name, c.id)), badge(c.status))
				} else if err := h.run(ctx, c, depth+1); err != nil {
					return err
				}
			}
		case transcript.StepCompleted, transcript.StepCallWorkflowCompleted:
			h.stepFooter(ev)
			closeTo(stepKey{ev.Path, ev.Iteration})
		case transcript.RunCompleted:
			for len(stack) > 0 {
				h.p("</section>\n")
				stack = stack[:len(stack)-1]
			}
			if p := ev.Step(); p != nil && p.Error != "" {
				h.p(`<div class="errbox">run ended %s: %s</div>`, esc(p.Status), esc(p.Error))
			}
		case transcript.MessageUser, transcript.MessageAssistant:
			h.message(n, ev)
		case transcript.ToolCall:
			h.toolCall(n, ev, slot)
		case transcript.ToolResult:
			h.toolResult(n, ev, slot)
		default:
			if _, ok := ev.Payload.(*transcript.RawPayload); ok {
				h.p(`<div class="warnbox" id="%s">unknown event type %s%s</div>`, h.anchor(n.id, ev.Seq), esc(string(ev.Type)), h.rawLink(n.id, ev.Seq))
			}
		}
		return nil
	})
	if errors.Is(err, errWindowEnd) {
		err = nil
		// A call shown here whose result comes in a later part.
		for _, k := range slices.Sorted(maps.Keys(pending)) {
			if !n.dangling[k] {
				h.p(`<div class="result" data-for="%s"><div class="pending">its result comes after this part</div></div>`+"\n", esc(pending[k]))
			}
		}
	}
	if !before {
		for len(stack) > 0 {
			h.p("</section>\n")
			stack = stack[:len(stack)-1]
		}
	}
	h.p("</section>\n")
	return err
}

func (h *htmlWriter) message(n *treeNode, ev *transcript.Event) {
	m := ev.Message()
	if m == nil {
		return
	}
	role := "assistant"
	if ev.Type == transcript.MessageUser {
		role = "user"
	}
	// A turn holding only tool calls, each shown at its tool.call with
	// its result, has nothing of its own to show: no empty bar.
	visible := m.StopReason != "" && m.StopReason != "tool_use"
	for _, b := range m.Blocks {
		if (b.Type != transcript.BlockToolUse && b.Type != transcript.BlockCommand) || !n.calls[b.ToolID] {
			visible = true
		}
	}
	if !visible {
		return
	}
	h.p(`<div class="msg %s ev" id="%s"><div class="who">%s %s%s`, role, h.anchor(n.id, ev.Seq), role, h.when(ev.Timestamp), h.rawLink(n.id, ev.Seq))
	if m.Model != "" {
		h.p(` <span class="dim">%s</span>`, esc(m.Model))
	}
	if !m.Usage.IsZero() {
		h.p(` <span class="dim">%s</span>`, esc(usageText(m.Usage)))
	}
	h.p("</div>")
	for _, b := range m.Blocks {
		switch b.Type {
		case transcript.BlockText:
			switch b.Origin {
			case transcript.OriginSystemPrompt:
				h.p(`<details class="sys"><summary>System prompt %s</summary><div class="text">%s</div></details>`, h.fidelity(b.Fidelity), esc(b.Text))
			case transcript.OriginInjected:
				h.p(`<details class="inj"><summary>Injected context %s</summary><div class="text">%s</div></details>`, h.fidelity(b.Fidelity), esc(b.Text))
			default:
				h.p(`<div class="text">%s %s</div>`, h.fidelity(b.Fidelity), esc(b.Text))
			}
		case transcript.BlockThinking:
			if b.Redacted {
				h.p(`<div class="dim">Thinking redacted by the provider.</div>`)
				continue
			}
			h.p(`<details class="thinking"><summary>Thinking</summary><div class="text">%s</div></details>`, esc(b.Thinking))
		case transcript.BlockToolUse:
			if n.calls[b.ToolID] {
				continue // shown once, at its tool.call, with its result
			}
			h.p(`<div class="tool"><div class="th">requested <b>%s</b> <code>%s</code> %s</div>`, esc(b.ToolName), esc(b.ToolID), h.fidelity(b.Fidelity))
			h.input(b.ToolName, "", b.ToolInput)
			h.p("</div>")
		case transcript.BlockCommand:
			if n.calls[b.ToolID] {
				continue
			}
			h.block("", "sh", "$ "+b.Command, true)
		case transcript.BlockToolResult:
			h.p(`<div class="tres"><div class="th">result of <code>%s</code></div>`, esc(b.ToolID))
			h.block("Output", "out", b.ToolContent, false)
			h.p("</div>")
		case transcript.BlockStream:
			h.block("Output stream", "out", b.Chunk, false)
		}
	}
	if m.StopReason != "" {
		h.p(`<div class="dim">stop: %s</div>`, esc(m.StopReason))
	}
	h.p("</div>\n")
}

func (h *htmlWriter) input(name, command string, raw json.RawMessage) {
	switch kind, text := views.ToolInputView(name, command, raw); kind {
	case views.InputPatch:
		h.block("Patch", "diff", text, false)
	case views.InputEdit:
		h.block("Edit", "diff", text, false)
	case views.InputShell:
		h.block("", "sh", "$ "+text, true)
	case views.InputJSON:
		h.block("Input", "json", text, false)
	}
}

// callSlot names the place of run's k-th call of callID (1-based),
// where its result is moved: the first call of an id by the id alone.
func callSlot(run, callID string, k int) string {
	s := "call-" + run + "-" + callID
	if k > 1 {
		s += "#" + strconv.Itoa(k)
	}
	return s
}

func (h *htmlWriter) toolCall(n *treeNode, ev *transcript.Event, id string) {
	t := ev.Tool()
	if t == nil {
		return
	}
	h.p(`<div class="tool ev" id="%s" data-call="%s"><div class="th">%s <b>%s</b>`, h.anchor(n.id, ev.Seq), esc(id), h.when(ev.Timestamp), esc(orDefault(t.Name, "tool")))
	if t.Kind != "" {
		h.p(` <span class="dim">%s</span>`, esc(string(t.Kind)))
	}
	if t.Revised() {
		h.p(` <span class="dim">revised</span>`)
	}
	h.p(` <code>%s</code> %s%s</div>`, esc(t.CallID), h.fidelity(t.Fidelity), h.rawLink(n.id, ev.Seq))
	h.input(t.Name, t.Command, t.Input)
	if id == "" {
		// A version a later revised one replaces: its result goes there.
		h.p(`<div class="pending">a later version of this call follows</div></div>` + "\n")
		return
	}
	h.p(`<div class="slot" data-slot="%s"><div class="pending">no result recorded (yet)</div></div></div>`+"\n", esc(id))
}

// toolResult writes a result, to be moved into slot id, its call's (""
// for a result that answers no call: it stays where it is).
func (h *htmlWriter) toolResult(n *treeNode, ev *transcript.Event, id string) {
	t := ev.Tool()
	if t == nil {
		return
	}
	status := t.Status
	if status == "" {
		status = transcript.StatusOK
		if t.Error != "" {
			status = transcript.StatusError
		}
	}
	h.p(`<div class="result ev" id="%s" data-for="%s"><div class="th">result %s %s%s`, h.anchor(n.id, ev.Seq), esc(id), badge(status), h.when(ev.Timestamp), h.rawLink(n.id, ev.Seq))
	switch {
	case !n.calls[t.CallID]:
		h.p(` of <b>%s</b> <code>%s</code> (its call is not in the transcript)`, esc(t.Name), esc(t.CallID))
	case n.replaced[ev.Seq]:
		h.p(` of <code>%s</code> <span class="dim">replaced by a later version</span>`, esc(t.CallID))
	case t.Revised():
		h.p(` <span class="dim">revised</span>`)
	}
	if t.ExitCode != nil {
		h.p(` <span class="exit">exit %d</span>`, *t.ExitCode)
	}
	h.p("</div>")
	if t.Error != "" {
		h.p(`<div class="errbox">%s</div>`, esc(t.Error))
	}
	if t.Output != "" {
		h.block("Output", "out", t.Output, false)
	}
	h.p("</div>\n")
}

func (h *htmlWriter) stepFooter(ev *transcript.Event) {
	p := ev.Step()
	if p == nil {
		return
	}
	status := orDefault(p.Status, transcript.StatusOK)
	var r *transcript.AgentResult
	if p.Kind == transcript.KindAgent {
		r, _ = p.AgentResult()
		if r != nil && r.Status != "" {
			status = r.Status
		}
	}
	h.p(`<footer class="stepfoot"><div>step %s %s`, badge(status), h.when(ev.Timestamp))
	if r != nil {
		if r.ExitCode != nil {
			h.p(` · exit %d`, *r.ExitCode)
		}
		h.p(` · %s %s%s`, esc(r.Provider), esc(r.Model), costText(r))
	}
	h.p("</div>")
	if p.Error != "" {
		h.p(`<div class="errbox">%s</div>`, esc(p.Error))
	}
	if r != nil {
		if r.Error != "" && r.Error != p.Error {
			h.p(`<div class="errbox">%s</div>`, esc(r.Error))
		}
		for _, e := range r.Errors {
			code := ""
			if e.Code != "" {
				code = " (" + e.Code + ")"
			}
			h.p(`<div class="errbox">provider error%s: %s</div>`, esc(code), esc(e.Message))
		}
		for _, wn := range r.Warnings {
			h.p(`<div class="warnbox">%s</div>`, esc(wn))
		}
		if len(r.Dangling) > 0 {
			h.p(`<div class="warnbox">calls without a result: %s</div>`, esc(strings.Join(r.Dangling, ", ")))
		}
		if r.FailedLines > 0 {
			h.p(`<div class="errbox">%d raw lines lost to a plugin fault (kept in the raw capture)</div>`, r.FailedLines)
		}
		total := 0
		for _, c := range r.Unmapped {
			total += c
		}
		if total > 0 {
			b, _ := json.Marshal(r.Unmapped)
			h.p(`<div class="warnbox">%d raw lines not mapped: %s</div>`, total, esc(string(b)))
		}
		if r.FinalText != "" {
			h.block("Final answer", "out", r.FinalText, false)
		}
	}
	h.p("</footer>\n")
}

func (h *htmlWriter) foot(trees []*treeNode) {
	if h.page != nil {
		if w := h.window(); w != nil && w.Nav != nil && len(trees) > 0 {
			w.Nav(h.w, trees[0].lastSeq)
		}
		h.p("</main>\n")
		h.page.Foot(h.w)
		return
	}
	h.p("</main>\n<script>%s</script>\n</body></html>\n", pageJS)
}

// PageCSS and PageJS are the page's style and script: inline in a saved
// page, files a served page links to (package web), so that both pages
// look and behave the same.
func PageCSS() string { return pageCSS }

// PageJS: see PageCSS.
func PageJS() string { return pageJS }

const pageCSS = `
:root{--fg:#1d1f23;--dim:#6a707a;--bg:#fff;--line:#e3e5e8;--ok:#1a7f37;--bad:#cf222e;--warn:#9a6700;--code:#f6f8fa}
body{font:14px/1.45 system-ui,sans-serif;color:var(--fg);background:var(--bg);margin:0}
header{position:sticky;top:0;background:var(--bg);border-bottom:1px solid var(--line);padding:8px 16px;display:flex;gap:12px;align-items:center;z-index:2}
header h1{font-size:16px;margin:0;flex:1}
#q{width:280px;padding:4px 8px}
#tree{padding:8px 16px;border-bottom:1px solid var(--line)}
#tree h2{font-size:14px;margin:4px 0}
#tree ul{margin:2px 0;padding-left:18px}
main{padding:8px 16px;max-width:1100px}
section.run{border-left:3px solid var(--line);padding-left:10px;margin:10px 0}
section.step{margin:8px 0 8px 6px}
h2{font-size:15px}h3{font-size:14px;margin:8px 0 4px}
.dim,time{color:var(--dim);font-size:12px}
.st{border-radius:8px;padding:0 6px;font-size:12px;color:#fff}
.st.ok{background:var(--ok)}.st.bad{background:var(--bad)}.st.warn{background:var(--warn)}.st.run{background:var(--dim)}
.fid{font-size:11px;border:1px solid var(--line);border-radius:4px;padding:0 3px;color:var(--dim)}
.msg{margin:6px 0;padding:6px 8px;border-radius:6px}
.msg.user{background:#eef4ff}.msg.assistant{background:#f7f7f8}
.who{font-weight:600;font-size:12px;text-transform:uppercase;color:var(--dim)}
.text{white-space:pre-wrap;word-wrap:break-word}
.tool{border:1px solid var(--line);border-radius:6px;margin:6px 0;padding:4px 8px}
.th{font-size:13px}
pre{background:var(--code);padding:6px;overflow:auto;max-height:480px;margin:4px 0;font-size:12px}
pre.sh{background:#1f2328;color:#e6edf3}
.da{background:#dafbe1;display:block}.dd{background:#ffebe9;display:block}.dn{color:#8250df;display:block}.dh{color:var(--dim);display:block}
.errbox{color:var(--bad);border-left:3px solid var(--bad);padding-left:6px;margin:3px 0;white-space:pre-wrap}
.warnbox{color:var(--warn);border-left:3px solid var(--warn);padding-left:6px;margin:3px 0}
.pending{color:var(--warn);font-size:12px}
.exit{font-family:monospace}
footer.stepfoot{border-top:1px dashed var(--line);margin-top:6px;padding-top:4px}
.hide{display:none}
.ev{content-visibility:auto;contain-intrinsic-size:auto 60px}
mark{background:#fff3b0}
`

// pageJS moves each result beside its call and runs the search box. It
// reads and writes only this page.
const pageJS = `
(function(){
  var slots={};
  document.querySelectorAll('[data-slot]').forEach(function(s){slots[s.getAttribute('data-slot')]=s;});
  document.querySelectorAll('.result[data-for]').forEach(function(r){
    var s=slots[r.getAttribute('data-for')];
    if(s&&!s.dataset.filled){s.dataset.filled='1';s.innerHTML='';s.appendChild(r);}
  });
  var q=document.getElementById('q'),hits=document.getElementById('hits');
  var items=[].slice.call(document.querySelectorAll('.ev'));
  var timer=null;
  function run(){
    var t=q.value.trim().toLowerCase(),n=0;
    items.forEach(function(el){
      var show=!t||el.textContent.toLowerCase().indexOf(t)>=0;
      el.classList.toggle('hide',!show);
      if(show&&t){n++;el.querySelectorAll('details').forEach(function(d){if(d.textContent.toLowerCase().indexOf(t)>=0)d.open=true;});}
    });
    hits.textContent=t?(n+' matching'):'';
  }
  q.addEventListener('input',function(){clearTimeout(timer);timer=setTimeout(run,120);});
})();
`

package export

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/twasm/twasm/internal/regfile"
	"github.com/twasm/twasm/internal/runid"
	"github.com/twasm/twasm/internal/runtree"
	"github.com/twasm/twasm/internal/views"
	"github.com/twasm/twasm/internal/vocab"
	"github.com/twasm/twasm/transcript"
)

// Bounds of the run folder's summary: transcript.md summarises and points
// at the detailed records (events.jsonl, logs/*.jsonl), which keep
// everything.
const (
	maxNotes        = 40
	maxNoteChars    = 600
	maxPrompts      = 8
	maxPromptChars  = 4000
	maxDeliverables = 500
	maxRoleChars    = 600
)

// DirReport says what ExportDir wrote.
type DirReport struct {
	// Runs are the run folders written, root first.
	Runs []string
	// Skipped are the linked child runs not exported (runtree's rules: a
	// missing file, a cycle, too deep, an invalid id, an unreadable
	// file); the parent's transcript.md marks a missing one.
	Skipped []*runtree.ChildError
}

// ExportDir writes the run folder of the original run-recording design for
// run and every child run it links to:
//
//	DIR/runs/<run-id>/events.jsonl      the transcript, byte for byte
//	DIR/runs/<run-id>/transcript.md     a summary a person reads
//	DIR/runs/<run-id>/logs/tools.jsonl  one line per tool call with its result
//	DIR/runs/<run-id>/logs/errors.jsonl every error and recoverable failure
//
// Each folder is written beside its final place and renamed into it, so a
// folder is whole or absent; an existing folder of the same run is
// replaced. Memory is bounded by open tool calls and the summary's bounds.
// A child run that cannot be followed is left out and reported in
// DirReport.Skipped; the rest of the tree is exported.
func ExportDir(ctx context.Context, dir string, run Run) (*DirReport, error) {
	rep := &DirReport{}
	skipped, err := Walk(ctx, run, func(ctx context.Context, r Run, _ int) (RunVisit, error) {
		w, err := beginRunDir(ctx, dir, r)
		if err != nil {
			return RunVisit{}, err
		}
		return RunVisit{Event: w.event, End: func(err error) error {
			if err = w.end(err); err == nil {
				rep.Runs = append(rep.Runs, w.final)
			}
			return err
		}}, nil
	})
	rep.Skipped = skipped
	return rep, err
}

// runDirWriter writes one run's folder: beside its place (tmp), renamed
// into it (final) when whole.
type runDirWriter struct {
	run        Run
	tmp, final string
	// events and ew write events.jsonl when the run is masked (else it
	// is the file copied).
	events *os.File
	ew     *bufio.Writer
	line   []byte
	s      *summary
}

func beginRunDir(ctx context.Context, dir string, run Run) (_ *runDirWriter, err error) {
	head, err := readHead(ctx, run.Path)
	if err != nil {
		return nil, err
	}
	id := head.runID
	if err := runid.Valid(id); err != nil {
		return nil, fmt.Errorf("%s: run id %q cannot name a folder: %w", run.Path, id, err)
	}
	runsDir := filepath.Join(dir, "runs")
	if err := os.MkdirAll(runsDir, 0o700); err != nil {
		return nil, err
	}
	w := &runDirWriter{run: run, final: filepath.Join(runsDir, id)}
	if w.tmp, err = os.MkdirTemp(runsDir, "."+id+"-*"); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			if w.events != nil {
				w.events.Close()
			}
			os.RemoveAll(w.tmp)
		}
	}()
	if err := os.Mkdir(filepath.Join(w.tmp, "logs"), 0o700); err != nil {
		return nil, err
	}
	// events.jsonl is the transcript byte for byte; masked (--redact),
	// it is each event as masked, encoded again.
	if run.Mask == nil {
		if err := copyFile(run.Path, filepath.Join(w.tmp, "events.jsonl")); err != nil {
			return nil, err
		}
	} else {
		if w.events, err = os.OpenFile(filepath.Join(w.tmp, "events.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600); err != nil {
			return nil, err
		}
		w.ew = bufio.NewWriter(w.events)
	}
	if w.s, err = newSummary(w.tmp); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *runDirWriter) event(ev *transcript.Event) error {
	if w.ew != nil {
		var err error
		if w.line, err = transcript.AppendEvent(w.line[:0], ev); err != nil {
			return fmt.Errorf("seq %d: encode masked event: %w", ev.Seq, err)
		}
		if _, err := w.ew.Write(append(w.line, '\n')); err != nil {
			return err
		}
	}
	return w.s.event(ev)
}

// end finishes the folder after its events were read (err: how the read
// ended) and renames it into place; the folder beside is removed whatever
// happens.
func (w *runDirWriter) end(err error) error {
	defer os.RemoveAll(w.tmp)
	if w.events != nil {
		defer w.events.Close()
	}
	if cerr := w.s.close(); err == nil {
		err = cerr
	}
	if w.ew != nil && err == nil {
		err = errors.Join(w.ew.Flush(), w.events.Close())
	}
	if err != nil {
		return err
	}
	md, err := os.OpenFile(filepath.Join(w.tmp, "transcript.md"), os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(md)
	w.s.markdown(bw, w.run.Dir)
	if err := errors.Join(bw.Flush(), md.Close()); err != nil {
		return err
	}
	// Only a run folder is replaced: anything else at its name (a file,
	// a device, a named pipe, a link) is not the export's to remove.
	if fi, err := os.Lstat(w.final); err == nil && !fi.IsDir() {
		return fmt.Errorf("%s is %s, not a run folder: it is left alone and the run is not exported", w.final, regfile.Kind(fi.Mode()))
	}
	if err := os.RemoveAll(w.final); err != nil {
		return err
	}
	return os.Rename(w.tmp, w.final)
}

func copyFile(src, dst string) error {
	in, err := regfile.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return errors.Join(err, out.Close())
}

type pendingCall struct {
	seq       uint64
	path      string
	iteration int
	at        time.Time
	tool      *transcript.ToolPayload
}

// answered is a call with the result its tool line was written with.
type answered struct {
	call   *pendingCall
	resSeq uint64
	status string
}

type toolStats struct {
	calls, ok, failed, denied, cancelled, dangling int
}

type deliverable struct {
	path   string
	ops    []string
	status string
	seq    uint64
}

type stepSummary struct {
	path, name, kind, status, errText string
	iteration                         int
	result                            *transcript.AgentResult
	started, completed                time.Time
	child                             string
}

type note struct {
	seq  uint64
	path string
	text string
}

// summary accumulates what transcript.md says while the logs are written.
type summary struct {
	tools, errs *os.File
	tw, ew      *bufio.Writer

	runID, parent, name, status, errText, producer string
	started, completed                             time.Time
	finished                                       bool
	session                                        openSession
	events                                         int

	prompts     []note
	system      *note
	systemLen   int
	notes       []note
	moreNotes   int
	steps       []*stepSummary
	open        map[stepKey]*stepSummary
	pending     map[int]*pendingCall // calls without a result yet, by their numbers in pairs
	pairs       transcript.Pairer    // a provider may reuse a call id: results pair by its rule
	byTool      map[string]*toolStats
	skills      map[string]int
	deliv       map[string]*deliverable
	delivOrder  []string
	moreDeliv   int
	errorCount  int
	errorSeqs   []uint64 // the seq of each of firstErrors
	warnings    []string
	childSteps  map[string]*stepSummary
	models      map[string]bool
	usage       transcript.Usage
	cost        float64
	costKnown   bool
	firstErrors []string

	// done are the answered calls, by their numbers, and replaced the
	// result seqs whose tool and error lines a revised result (its new
	// version: transcript.Pairer) replaced, which close leaves out.
	done     map[int]*answered
	replaced map[uint64]bool
	dir      string
}

func newSummary(dir string) (*summary, error) {
	tools, err := os.OpenFile(filepath.Join(dir, "logs", "tools.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	errs, err := os.OpenFile(filepath.Join(dir, "logs", "errors.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		tools.Close()
		return nil, err
	}
	return &summary{tools: tools, errs: errs, tw: bufio.NewWriter(tools), ew: bufio.NewWriter(errs),
		open: map[stepKey]*stepSummary{}, pending: map[int]*pendingCall{}, byTool: map[string]*toolStats{},
		done: map[int]*answered{}, replaced: map[uint64]bool{}, dir: dir,
		skills: map[string]int{}, deliv: map[string]*deliverable{}, childSteps: map[string]*stepSummary{},
		models: map[string]bool{}}, nil
}

func (s *summary) close() error {
	// Calls that never got a result are tool lines too, marked dangling.
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(s.pending)) {
		errs = append(errs, s.toolLine(s.pending[k], nil, 0, time.Time{}))
	}
	errs = append(errs, s.tw.Flush(), s.ew.Flush(), s.tools.Close(), s.errs.Close())
	if len(s.replaced) > 0 {
		errs = append(errs, s.dropReplaced("tools.jsonl", "result_seq", ""), s.dropReplaced("errors.jsonl", "seq", "tool_"))
	}
	return errors.Join(errs...)
}

// dropReplaced rewrites logs/name without the lines whose field (and
// kind, starting with kindPrefix, when given) names a result a revised
// one replaced: each call keeps the line of its latest outcome.
func (s *summary) dropReplaced(name, field, kindPrefix string) error {
	path := filepath.Join(s.dir, "logs", name)
	in, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	var out []byte
	for line := range strings.SplitSeq(string(in), "\n") {
		if line == "" {
			continue
		}
		m := map[string]json.RawMessage{}
		var seq uint64
		var kind string
		if json.Unmarshal([]byte(line), &m) == nil && json.Unmarshal(m[field], &seq) == nil && s.replaced[seq] &&
			(kindPrefix == "" || json.Unmarshal(m["kind"], &kind) == nil && strings.HasPrefix(kind, kindPrefix)) {
			continue
		}
		out = append(append(out, line...), '\n')
	}
	if err := os.WriteFile(path, out, 0o600); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// unanswer takes back what the tool line of a's result counted, once a
// revised result replaced it.
func (s *summary) unanswer(a *answered) {
	s.replaced[a.resSeq] = true
	if st := s.byTool[a.call.tool.Name]; st != nil {
		st.count(a.status, -1)
	}
	if a.status == transcript.StatusOK || a.status == "completed" {
		return
	}
	s.errorCount--
	if i := slices.Index(s.errorSeqs, a.resSeq); i >= 0 {
		s.errorSeqs = slices.Delete(s.errorSeqs, i, i+1)
		s.firstErrors = slices.Delete(s.firstErrors, i, i+1)
	}
}

// count adds d to the counter of a result's status.
func (st *toolStats) count(status string, d int) {
	switch status {
	case transcript.StatusOK, "completed":
		st.ok += d
	case "denied", "declined":
		st.denied += d
	case transcript.StatusCancelled:
		st.cancelled += d
	default:
		st.failed += d
	}
}

func (s *summary) writeJSON(w *bufio.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

// errorLine writes one line of logs/errors.jsonl.
func (s *summary) errorLine(kind string, seq uint64, path, message string, extra map[string]any) error {
	s.errorCount++
	if len(s.firstErrors) < 20 {
		where := ""
		if path != "" {
			where = " (" + path + ")"
		}
		s.firstErrors = append(s.firstErrors, fmt.Sprintf("%s%s, seq %d: %s", kind, where, seq, oneLine(message, 300)))
		s.errorSeqs = append(s.errorSeqs, seq)
	}
	m := map[string]any{"run_id": s.runID, "seq": seq, "kind": kind, "message": message}
	if path != "" {
		m["path"] = path
	}
	for k, v := range extra {
		m[k] = v
	}
	return s.writeJSON(s.ew, m)
}

func (s *summary) toolLine(c *pendingCall, res *transcript.ToolPayload, resSeq uint64, resAt time.Time) error {
	t := c.tool
	st := s.byTool[t.Name]
	if st == nil {
		st = &toolStats{}
		s.byTool[t.Name] = st
	}
	m := map[string]any{"run_id": s.runID, "seq": c.seq, "path": c.path, "iteration": c.iteration, "call_id": t.CallID,
		"name": t.Name, "fidelity": t.Fidelity, "started": c.at.UTC().Format(vocab.TimeLayout)}
	if t.Kind != "" {
		m["kind"] = t.Kind
	}
	if t.Command != "" {
		m["command"] = t.Command
	}
	if len(t.Input) > 0 && json.Valid(t.Input) {
		m["input"] = json.RawMessage(t.Input)
	}
	if res == nil {
		st.dangling++
		m["status"] = "dangling"
		if err := s.errorLine("dangling_call", c.seq, c.path, fmt.Sprintf("%s call %s never got a result", t.Name, t.CallID),
			map[string]any{"tool": t.Name, "call_id": t.CallID}); err != nil {
			return err
		}
		return s.writeJSON(s.tw, m)
	}
	status := resultStatus(res)
	st.count(status, 1)
	m["status"], m["result_seq"], m["ended"] = status, resSeq, resAt.UTC().Format(vocab.TimeLayout)
	if !c.at.IsZero() && !resAt.IsZero() {
		m["duration_ms"] = resAt.Sub(c.at).Milliseconds()
	}
	if res.ExitCode != nil {
		m["exit_code"] = *res.ExitCode
	}
	if res.Error != "" {
		m["error"] = res.Error
	}
	if res.Output != "" {
		m["output"] = res.Output
	}
	if status != transcript.StatusOK && status != "completed" {
		msg := res.Error
		if msg == "" {
			msg = oneLine(res.Output, 500)
		}
		extra := map[string]any{"tool": t.Name, "call_id": t.CallID, "status": status}
		if res.ExitCode != nil {
			extra["exit_code"] = *res.ExitCode
		}
		if err := s.errorLine("tool_"+status, resSeq, c.path, msg, extra); err != nil {
			return err
		}
	}
	return s.writeJSON(s.tw, m)
}

// resultStatus is the status of a result's tool line.
func resultStatus(res *transcript.ToolPayload) string {
	if res.Status != "" {
		return res.Status
	}
	if res.Error != "" {
		return transcript.StatusError
	}
	return transcript.StatusOK
}

// noteDeliverables records the files an edit call writes.
func (s *summary) noteDeliverables(seq uint64, t *transcript.ToolPayload) {
	for _, f := range views.ToolFiles(t) {
		d := s.deliv[f.Path]
		if d == nil {
			if len(s.deliv) >= maxDeliverables {
				s.moreDeliv++
				continue
			}
			d = &deliverable{path: f.Path}
			s.deliv[f.Path] = d
			s.delivOrder = append(s.delivOrder, f.Path)
		}
		if len(d.ops) == 0 || d.ops[len(d.ops)-1] != f.Op {
			d.ops = append(d.ops, f.Op)
		}
		d.seq = seq
	}
}

func (s *summary) noteSkill(t *transcript.ToolPayload) {
	if strings.HasPrefix(t.Name, "mcp__") {
		if parts := strings.SplitN(strings.TrimPrefix(t.Name, "mcp__"), "__", 2); len(parts) == 2 {
			s.skills["MCP server "+parts[0]]++
		}
		return
	}
	if t.Name == "Skill" || t.Name == "skill" {
		var in map[string]any
		_ = json.Unmarshal(t.Input, &in)
		for _, k := range []string{"skill", "command", "name"} {
			if v, ok := in[k].(string); ok && v != "" {
				s.skills["skill "+v]++
				return
			}
		}
		s.skills["skill (unnamed)"]++
	}
}

func (s *summary) event(ev *transcript.Event) error {
	s.events++
	s.session.note(ev)
	if s.runID == "" {
		s.runID, s.parent = ev.RunID, ev.ParentRunID
	}
	k := stepKey{ev.Path, ev.Iteration}
	switch ev.Type {
	case transcript.RunStarted:
		s.started = ev.Timestamp
		if p := ev.Step(); p != nil {
			s.name = p.Name
			if p.Producer != nil {
				s.producer = strings.TrimSpace(p.Producer.Name + " " + p.Producer.Version)
			}
		}
	case transcript.RunCompleted:
		s.completed, s.finished = ev.Timestamp, true
		if p := ev.Step(); p != nil {
			s.status, s.errText = p.Status, p.Error
			if s.name == "" {
				s.name = p.Name
			}
			if p.Error != "" || p.Status == transcript.StatusError || p.Status == transcript.StatusCancelled {
				return s.errorLine("run_"+orDefault(p.Status, "error"), ev.Seq, "", orDefault(p.Error, "run ended "+p.Status), nil)
			}
		}
	case transcript.StepStarted, transcript.StepCallWorkflowStarted:
		st := &stepSummary{path: ev.Path, iteration: ev.Iteration, started: ev.Timestamp, status: "running", child: ev.ChildRunID}
		if p := ev.Step(); p != nil {
			st.name, st.kind = p.Name, string(p.Kind)
		}
		s.open[k] = st
		s.steps = append(s.steps, st)
	case transcript.StepCompleted, transcript.StepCallWorkflowCompleted:
		st := s.open[k]
		if st == nil {
			return nil
		}
		delete(s.open, k)
		st.completed = ev.Timestamp
		p := ev.Step()
		if p == nil {
			return nil
		}
		st.status, st.errText = orDefault(p.Status, transcript.StatusOK), p.Error
		if p.Kind == transcript.KindAgent {
			r, _ := p.AgentResult()
			st.result = r
			if r != nil {
				return s.agentResult(ev, r)
			}
		}
		if p.Error != "" || st.status == transcript.StatusError || st.status == transcript.StatusCancelled {
			return s.errorLine("step_"+st.status, ev.Seq, ev.Path, orDefault(p.Error, "step ended "+st.status), nil)
		}
	case transcript.MessageUser:
		m := ev.Message()
		if m == nil {
			return nil
		}
		for _, b := range m.Blocks {
			if b.Type != transcript.BlockText {
				continue
			}
			switch b.Origin {
			case transcript.OriginSystemPrompt:
				if s.system == nil {
					s.system = &note{seq: ev.Seq, path: ev.Path, text: clipRunes(b.Text, maxRoleChars)}
					s.systemLen = len(b.Text)
				}
			case transcript.OriginInjected:
			default:
				if len(s.prompts) < maxPrompts {
					s.prompts = append(s.prompts, note{seq: ev.Seq, path: ev.Path, text: clipRunes(b.Text, maxPromptChars)})
				}
				if strings.HasPrefix(strings.TrimSpace(b.Text), "/") {
					if f := strings.Fields(b.Text); len(f) > 0 && len(f[0]) > 1 && !strings.Contains(f[0][1:], "/") {
						s.skills["command "+f[0]]++
					}
				}
			}
		}
	case transcript.MessageAssistant:
		m := ev.Message()
		if m == nil {
			return nil
		}
		if m.Model != "" {
			s.models[m.Model] = true
		}
		for _, b := range m.Blocks {
			if b.Type != transcript.BlockText || strings.TrimSpace(b.Text) == "" {
				continue
			}
			if len(s.notes) < maxNotes {
				s.notes = append(s.notes, note{seq: ev.Seq, path: ev.Path, text: clipRunes(strings.TrimSpace(b.Text), maxNoteChars)})
			} else {
				s.moreNotes++
			}
		}
	case transcript.ToolCall:
		t := ev.Tool()
		if t == nil {
			return nil
		}
		k, again, _ := s.pairs.Feed(ev)
		if !again {
			s.noteSkill(t)
		}
		s.noteDeliverables(ev.Seq, t)
		c := &pendingCall{seq: ev.Seq, path: ev.Path, iteration: ev.Iteration, at: ev.Timestamp, tool: t}
		switch old := s.pending[k]; {
		case !again:
			s.pending[k] = c
		case old != nil:
			// A new version of a call still waiting (revised): its
			// latest input, from when it started.
			c.at = old.at
			s.pending[k] = c
		}
		// A call revised after its result keeps the line written with
		// that result.
	case transcript.ToolResult:
		t := ev.Tool()
		if t == nil {
			return nil
		}
		var c *pendingCall
		k, again, ok := s.pairs.Feed(ev)
		if ok && again && s.done[k] != nil {
			// A new version of the result (revised): its line replaces
			// the earlier one's.
			c = s.done[k].call
			s.unanswer(s.done[k])
		} else if ok {
			c = s.pending[k]
			delete(s.pending, k)
		}
		if c == nil {
			c = &pendingCall{seq: ev.Seq, path: ev.Path, iteration: ev.Iteration, at: ev.Timestamp,
				tool: &transcript.ToolPayload{Name: t.Name, CallID: t.CallID, Fidelity: t.Fidelity, Kind: t.Kind}}
		}
		if d := s.deliv; len(d) > 0 && t.Status != "" && t.Status != transcript.StatusOK {
			for _, p := range s.delivOrder {
				if d[p].seq == c.seq {
					d[p].status = t.Status
				}
			}
		}
		if ok {
			s.done[k] = &answered{call: c, resSeq: ev.Seq, status: resultStatus(t)}
		}
		return s.toolLine(c, t, ev.Seq, ev.Timestamp)
	}
	return nil
}

func (s *summary) agentResult(ev *transcript.Event, r *transcript.AgentResult) error {
	if r.Model != "" {
		s.models[r.Model] = true
	}
	s.usage.Add(r.Usage)
	if r.CostUSD != nil {
		s.cost += *r.CostUSD
		s.costKnown = true
	}
	for _, e := range r.Errors {
		extra := map[string]any{}
		if e.Code != "" {
			extra["code"] = e.Code
		}
		if e.RawLine != 0 {
			extra["raw_line"] = e.RawLine
		}
		if err := s.errorLine("provider_error", ev.Seq, ev.Path, e.Message, extra); err != nil {
			return err
		}
	}
	if r.Status != transcript.StatusOK && r.Status != "" {
		msg := orDefault(r.Error, "the agent step ended "+r.Status)
		extra := map[string]any{"status": r.Status}
		if r.ExitCode != nil {
			extra["exit_code"] = *r.ExitCode
		}
		if err := s.errorLine("step_"+r.Status, ev.Seq, ev.Path, msg, extra); err != nil {
			return err
		}
	}
	if r.FailedLines > 0 {
		if err := s.errorLine("plugin_fault", ev.Seq, ev.Path, fmt.Sprintf("%d raw lines lost to a plugin fault (kept in the raw capture)", r.FailedLines), nil); err != nil {
			return err
		}
	}
	keys := make([]string, 0, len(r.Unmapped))
	for k := range r.Unmapped {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := s.errorLine("unmapped", ev.Seq, ev.Path, fmt.Sprintf("%d raw lines of type %q the plugin did not map (kept in the raw capture)", r.Unmapped[k], k),
			map[string]any{"type": k, "count": r.Unmapped[k]}); err != nil {
			return err
		}
	}
	for _, w := range r.Warnings {
		s.warnings = append(s.warnings, fmt.Sprintf("%s: %s", ev.Path, w))
		if err := s.errorLine("warning", ev.Seq, ev.Path, w, nil); err != nil {
			return err
		}
	}
	return nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// clipRunes cuts s to about n bytes on a rune boundary, saying so.
func clipRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + fmt.Sprintf(" … (%d more characters)", len(s)-cut)
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	return clipRunes(s, n)
}

// mdQuote writes provider text as a markdown block quote that it cannot
// leave: no line opens a heading or a fence of the summary's own
// structure, and the text is inert (mdInline).
func mdQuote(w io.Writer, text string) {
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		fmt.Fprintf(w, "> %s\n", mdInline(line))
	}
}

// mdInline makes transcript text inert in markdown, whatever renders it:
// terminal escapes removed and control and bidirectional formatting
// characters shown (views.StripEscapes); "<" and ">" written as entities,
// so no raw HTML and no autolink (<javascript:...>) is made; "[" and "]"
// escaped, so no link, image or link definition is made; and a backslash
// escaped, so that it cannot undo the escapes after it. The text reads the
// same once rendered.
func mdInline(s string) string {
	s = views.StripEscapes(s)
	if !strings.ContainsAny(s, "<>[]\\") {
		return s
	}
	return mdEscaper.Replace(s)
}

var mdEscaper = strings.NewReplacer(`\`, `\\`, "<", "&lt;", ">", "&gt;", "[", `\[`, "]", `\]`)

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	return t.UTC().Format(time.RFC3339)
}

func (s *summary) markdown(w io.Writer, dir string) {
	fmt.Fprintf(w, "# Run Transcript\n\n")
	fmt.Fprintf(w, "Run `%s`%s. This file summarises; the full record is [events.jsonl](events.jsonl) (cited below by `seq`), with every tool call in [logs/tools.jsonl](logs/tools.jsonl) and every error in [logs/errors.jsonl](logs/errors.jsonl).\n\n",
		s.runID, map[bool]string{true: ": " + mdInline(oneLine(s.name, 300)), false: ""}[s.name != ""])

	fmt.Fprintf(w, "## Metadata\n\n")
	status := s.status
	if st, open := s.session.sessionStatus(); !s.finished && open {
		status = st + " (so far: an archived session that may still grow)"
	} else if !s.finished {
		status = "running (no run.completed yet)"
	}
	// Each row's value is markdown: text from the transcript goes
	// through mdCell, links twasm makes are kept.
	rows := [][2]string{{"Run id", mdCode(s.runID)}, {"Name", mdCell(s.name)}, {"Status", status}, {"Started", fmtTime(s.started)}}
	if s.finished {
		rows = append(rows, [2]string{"Completed", fmtTime(s.completed)})
		if !s.started.IsZero() {
			rows = append(rows, [2]string{"Duration", s.completed.Sub(s.started).Round(time.Millisecond).String()})
		}
	}
	if s.errText != "" {
		rows = append(rows, [2]string{"Error", mdCell(oneLine(s.errText, 300))})
	}
	if s.parent != "" {
		rows = append(rows, [2]string{"Parent run", fmt.Sprintf("[%s](../%s/transcript.md)", mdCode(s.parent), url.PathEscape(s.parent))})
	}
	if s.producer != "" {
		rows = append(rows, [2]string{"Recorded by", mdCell(s.producer)})
	}
	var providers []string
	for _, st := range s.steps {
		if st.result != nil && st.result.Provider != "" && !containsStr(providers, st.result.Provider) {
			providers = append(providers, st.result.Provider)
		}
	}
	if len(providers) > 0 {
		rows = append(rows, [2]string{"Providers", mdCell(strings.Join(providers, ", "))})
	}
	if len(s.models) > 0 {
		ms := make([]string, 0, len(s.models))
		for m := range s.models {
			ms = append(ms, m)
		}
		sort.Strings(ms)
		rows = append(rows, [2]string{"Models", mdCell(strings.Join(ms, ", "))})
	}
	if !s.usage.IsZero() {
		rows = append(rows, [2]string{"Usage", usageText(&s.usage)})
	}
	if s.costKnown {
		rows = append(rows, [2]string{"Cost", fmt.Sprintf("$%.4f", s.cost)})
	}
	rows = append(rows, [2]string{"Events", fmt.Sprint(s.events)})
	fmt.Fprintf(w, "| | |\n|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s |\n", r[0], r[1])
	}
	if len(s.steps) > 0 {
		fmt.Fprintf(w, "\n| Step | Kind | Status | Provider | Model | Exit |\n|---|---|---|---|---|---|\n")
		for _, st := range s.steps {
			prov, model, exit := "", "", ""
			if r := st.result; r != nil {
				prov, model = r.Provider, r.Model
				if r.ExitCode != nil {
					exit = fmt.Sprint(*r.ExitCode)
				}
			}
			name := st.path
			if st.iteration != 0 {
				name += fmt.Sprintf("[%d]", st.iteration)
			}
			name = mdCell(name)
			if st.child != "" {
				name += fmt.Sprintf(" → [child run](../%s/transcript.md)", url.PathEscape(st.child))
				if p, err := runtree.Path(dir, st.child); err != nil {
					name += " (invalid run id)"
				} else if _, err := os.Stat(p); err != nil {
					name += " (transcript missing)"
				}
			}
			status := st.status
			if st.result != nil && st.result.Status != "" {
				status = st.result.Status
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", name, mdCell(st.kind), mdCell(status), mdCell(prov), mdCell(model), exit)
		}
	}

	fmt.Fprintf(w, "\n## Prompt\n\n")
	if len(s.prompts) == 0 {
		fmt.Fprintf(w, "No prompt is recorded in this run.\n")
	}
	for _, p := range s.prompts {
		fmt.Fprintf(w, "From seq %d%s:\n\n", p.seq, pathSuffix(p.path))
		mdQuote(w, p.text)
		fmt.Fprintln(w)
	}

	fmt.Fprintf(w, "\n## Effective Role Summary\n\n")
	if s.system == nil {
		fmt.Fprintf(w, "No system prompt is recorded: the agent ran with its provider's default role.\n")
	} else {
		fmt.Fprintf(w, "The system prompt (%d characters, seq %d) begins:\n\n", s.systemLen, s.system.seq)
		mdQuote(w, firstParagraph(s.system.text))
		fmt.Fprintln(w)
	}

	fmt.Fprintf(w, "\n## Skills Used\n\n")
	if len(s.skills) == 0 {
		fmt.Fprintf(w, "No skill, slash command or MCP server use is recorded.\n")
	} else {
		keys := make([]string, 0, len(s.skills))
		for k := range s.skills {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(w, "- %s (%d)\n", mdCell(k), s.skills[k])
		}
	}

	fmt.Fprintf(w, "\n## Tool Activity Summary\n\n")
	if len(s.byTool) == 0 {
		fmt.Fprintf(w, "No tool call is recorded.\n")
	} else {
		names := make([]string, 0, len(s.byTool))
		for n := range s.byTool {
			names = append(names, n)
		}
		sort.Slice(names, func(i, j int) bool {
			a, b := s.byTool[names[i]], s.byTool[names[j]]
			if a.calls != b.calls {
				return a.calls > b.calls
			}
			return names[i] < names[j]
		})
		fmt.Fprintf(w, "| Tool | Calls | ok | error | denied | cancelled | no result |\n|---|---|---|---|---|---|---|\n")
		for _, n := range names {
			st := s.byTool[n]
			st.calls = st.ok + st.failed + st.denied + st.cancelled + st.dangling
			fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %d | %d |\n", mdCell(orDefault(n, "(unnamed)")), st.calls, st.ok, st.failed, st.denied, st.cancelled, st.dangling)
		}
		fmt.Fprintf(w, "\nEvery call with its input, output and outcome: [logs/tools.jsonl](logs/tools.jsonl).\n")
	}

	fmt.Fprintf(w, "\n## Work Notes\n\n")
	if len(s.notes) == 0 {
		fmt.Fprintf(w, "The assistant wrote no text.\n")
	}
	for _, n := range s.notes {
		fmt.Fprintf(w, "- seq %d%s:\n", n.seq, pathSuffix(n.path))
		for _, line := range strings.Split(n.text, "\n") {
			fmt.Fprintf(w, "  %s\n", mdInline(line))
		}
	}
	if s.moreNotes > 0 {
		fmt.Fprintf(w, "\n… and %d more passages in events.jsonl.\n", s.moreNotes)
	}

	fmt.Fprintf(w, "\n## Deliverables\n\n")
	if len(s.delivOrder) == 0 {
		fmt.Fprintf(w, "No file written or edited is recorded.\n")
	}
	for _, p := range s.delivOrder {
		d := s.deliv[p]
		st := ""
		if d.status != "" {
			st = " — last change " + d.status
		}
		fmt.Fprintf(w, "- %s (%s; seq %d)%s\n", mdCode(p), mdCell(strings.Join(d.ops, ", ")), d.seq, mdCell(st))
	}
	if s.moreDeliv > 0 {
		fmt.Fprintf(w, "- … and %d more files (logs/tools.jsonl lists every edit)\n", s.moreDeliv)
	}

	fmt.Fprintf(w, "\n## Errors and Warnings\n\n")
	if s.errorCount == 0 {
		fmt.Fprintf(w, "None recorded.\n")
	} else {
		fmt.Fprintf(w, "%d recorded in [logs/errors.jsonl](logs/errors.jsonl)", s.errorCount)
		if s.errorCount > len(s.firstErrors) {
			fmt.Fprintf(w, "; the first %d", len(s.firstErrors))
		}
		fmt.Fprintf(w, ":\n\n")
		for _, e := range s.firstErrors {
			fmt.Fprintf(w, "- %s\n", mdCell(e))
		}
	}
}

func containsStr(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func pathSuffix(p string) string {
	if p == "" {
		return ""
	}
	return " (step " + p + ")"
}

func firstParagraph(s string) string {
	if i := strings.Index(s, "\n\n"); i > 0 && i < len(s)-2 {
		return s[:i] + "\n\n…"
	}
	return s
}

// mdCode writes text as an inline code span, which markdown never
// renders as markup: backticks in it become quotes, so it cannot end the
// span, and it is shown safe (views.StripEscapes) and on one line.
func mdCode(s string) string {
	s = strings.ReplaceAll(views.StripEscapes(s), "`", "'")
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "|", `\|`).Replace(s)
	return "`" + s + "`"
}

// mdCell makes text one inert cell of a markdown table (mdInline, with
// "|" escaped and line ends as spaces).
func mdCell(s string) string {
	s = strings.ReplaceAll(mdInline(s), "|", `\|`)
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}

func usageText(u *transcript.Usage) string { return views.UsageText(u, ", ") }

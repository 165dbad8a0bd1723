package transcript

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/twasm/twasm/internal/vocab"
)

// The codes of [Issue], documented there.
const (
	// Line-level problems.
	codeMalformedLine = "malformed_line"
	codeLineTooLong   = "line_too_long"
	codeTornLine      = "torn_line"
	codeReadError     = "read_error"
	codeInvalidEvent  = "invalid_event"
	codeUsageMismatch = "usage_mismatch"

	// Vocabulary (warnings: a newer writer may know more).
	codeUnknownEventType = "unknown_event_type"
	codeUnknownBlockType = "unknown_block_type"
	codeToolStatusLegacy = "tool_status_legacy"

	// Sequence numbers.
	codeSeqInvalid   = "seq_invalid"
	codeSeqGap       = "seq_gap"
	codeSeqDuplicate = "seq_duplicate"
	codeSeqOrder     = "seq_order"

	// Run identity.
	codeMissingRunID        = "missing_run_id"
	codeRunIDMismatch       = "run_id_mismatch"
	codeRunIDFormat         = "run_id_format"
	codeParentRunIDMismatch = "parent_run_id_mismatch"
	codeRunPathNotEmpty     = "run_path_not_empty"
	codeMissingRunStarted   = "missing_run_started"
	codeRunStartedNotFirst  = "run_started_not_first"
	codeMissingSchema       = "missing_schema"
	codeUnknownSchema       = "unknown_schema"
	codeRunCompletedNotLast = "run_completed_not_last"
	codeUnfinished          = "unfinished"
	codeStepNotStarted      = "step_not_started"
	codeStepDuplicateStart  = "step_duplicate_start"
	codeStepUnclosed        = "step_unclosed"
	codeToolResultNoCall    = "tool_result_without_call"
	codeToolResultDuplicate = "tool_result_duplicate"
	codeToolCallDuplicate   = "tool_call_duplicate"
	codeMissingPath         = "missing_path"
	codeEventOutsideStep    = "event_outside_step"
	codeMissingChildRunID   = "missing_child_run_id"
	codeInvalidChildRunID   = "invalid_child_run_id"
	codeChildRunIDMismatch  = "child_run_id_mismatch"
	codeChildMissing        = "child_missing"
	codeChildParentMismatch = "child_parent_mismatch"
	codeChildUnreadable     = "child_unreadable"
	codeParentMissing       = "parent_missing"
	codeParentLinkMissing   = "parent_link_missing"
	codeParentUnreadable    = "parent_unreadable"
	codeIssuesOmitted       = "issues_omitted"
)

// Issue is one finding of [Validate]. Line is 1-based; 0 means the issue is
// about the file as a whole. Code is stable (a CLI prints it and its JSON
// mode exposes it): codes are never renamed, only added. They are:
//
// Line-level problems:
//
//   - malformed_line: a line that is not a transcript event
//   - line_too_long: a line over the reader's limit
//   - torn_line: final line without LF (error when it did not decode, else warning)
//   - read_error: the input could not be read to its end
//   - invalid_event: a known event type whose content breaks the format rules
//   - usage_mismatch: a usage whose counters disagree: a negative figure,
//     uncached_input_tokens + cache_read_tokens + cache_write_tokens other
//     than input_tokens, cache_write_1h_tokens above cache_write_tokens, or
//     a message's service_tier "mixed" (a message is one request, served at
//     one tier)
//
// Vocabulary (warnings: a newer writer may know more):
//
//   - unknown_event_type: an event type this version does not know
//   - unknown_block_type: a block type this version does not know
//   - tool_status_legacy: a tool status word of older versions (completed, failed, declined...)
//
// Sequence numbers:
//
//   - seq_invalid: seq missing or 0
//   - seq_gap: seqs missing from 1..max
//   - seq_duplicate: a seq already used by an earlier line
//   - seq_order: a seq lower than one earlier in the file
//
// The run: identity, bracket, steps, tool calls, parent and child links:
//
//   - missing_run_id: a line without run_id
//   - run_id_mismatch: run_id differs from the expected run id
//   - run_id_format: run id is not a UUID v4 (warning)
//   - parent_run_id_mismatch: parent_run_id differs from the first line's
//   - run_path_not_empty: a run.* event with a non-empty path
//   - missing_run_started: the first event is not run.started
//   - run_started_not_first: run.started after the first event
//   - missing_schema: run.started without schema
//   - unknown_schema: schema other than [Schema] (warning)
//   - run_completed_not_last: run.completed followed by more events
//   - unfinished: no run.completed (warning)
//   - step_not_started: *.completed with no open *.started for (path, iteration)
//   - step_duplicate_start: *.started while the same (path, iteration) is open
//   - step_unclosed: *.started never completed (error when finished, else warning)
//   - tool_result_without_call: a tool.result whose call id has no tool.call before it
//   - tool_result_duplicate: a second result for a call id
//   - tool_call_duplicate: a call id reused while open (warning)
//   - missing_path: message.*/tool.* without path in a run with steps
//   - event_outside_step: message.*/tool.* whose (path, iteration) is not an open step (warning)
//   - missing_child_run_id: step.call_workflow.started without child_run_id (warning)
//   - invalid_child_run_id: child_run_id unusable as a file name
//   - child_run_id_mismatch: call_workflow.completed names another child than its start
//   - child_missing: the child's file is not beside the parent
//   - child_parent_mismatch: the child's lines do not name this run as parent
//   - child_unreadable: the child's file could not be read
//   - parent_missing: the parent's file is not beside the child (warning)
//   - parent_link_missing: the parent has no call_workflow step naming this run
//   - parent_unreadable: the parent's file could not be read
//   - issues_omitted: more issues of one code than ValidateOptions.MaxIssuesPerCode
type Issue struct {
	Line int    `json:"line"`
	Code string `json:"code"`
	Msg  string `json:"msg"`
}

// String renders the issue as "line N: code: message" (without the line
// part for an issue about the whole file).
func (i Issue) String() string {
	if i.Line == 0 {
		return fmt.Sprintf("%s: %s", i.Code, i.Msg)
	}
	return fmt.Sprintf("line %d: %s: %s", i.Line, i.Code, i.Msg)
}

// DanglingCall is a tool.call that never got a tool.result. It is not an
// error (a timeout or a cut-off stream leaves one) but it is listed.
type DanglingCall struct {
	Line      int    `json:"line"`
	CallID    string `json:"call_id"`
	Name      string `json:"name,omitempty"`
	Path      string `json:"path,omitempty"`
	Iteration int    `json:"iteration,omitempty"`
}

// Report is the result of validating one transcript file.
type Report struct {
	// RunID is the expected run id, or the first line's when none was
	// given.
	RunID       string `json:"run_id"`
	ParentRunID string `json:"parent_run_id,omitempty"`
	// Lines counts every line read; Events the lines that decoded.
	Lines    int            `json:"lines"`
	Events   int            `json:"events"`
	Errors   []Issue        `json:"errors"`
	Warnings []Issue        `json:"warnings"`
	Dangling []DanglingCall `json:"dangling,omitempty"`
	// Children lists the child run ids named by step.call_workflow.started,
	// in file order, without repeats.
	Children []string `json:"children,omitempty"`
	// Finished is true when the run has a run.completed.
	Finished bool `json:"finished"`
	// Omitted counts issues left out per code once MaxIssuesPerCode was
	// reached.
	Omitted map[string]int `json:"omitted,omitempty"`
}

// OK reports whether the file has no errors (warnings allowed).
func (r *Report) OK() bool { return len(r.Errors) == 0 }

// ValidateOptions tunes [Validate] and [ValidateFile].
type ValidateOptions struct {
	// RunID is the run id every line must carry. Empty means: the file
	// name without .jsonl for ValidateFile, the first line's run_id for
	// Validate.
	RunID string
	// FS and Dir locate sibling run files (<run-id>.jsonl) for the child
	// and parent link checks. A nil FS skips those checks. ValidateFile
	// sets them to its own FS and the file's directory when FS is nil.
	FS  fs.FS
	Dir string
	// MaxLineSize is passed to the [Reader]; 0 means the default.
	MaxLineSize int
	// MaxIssuesPerCode bounds how many issues of one code are listed (so a
	// file with a wrong name does not yield one issue per line); the rest
	// are counted in Report.Omitted. 0 means 1000; negative, no limit.
	MaxIssuesPerCode int
}

// ValidateFile validates the transcript name in fsys. The expected run id
// defaults to the file name without ".jsonl", and sibling files of fsys are
// used for the child and parent link checks. The error is non-nil only when
// the file cannot be opened; every problem with its content is in the
// report.
func ValidateFile(fsys fs.FS, name string, opts ValidateOptions) (*Report, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, fmt.Errorf("transcript: validate %s: %w", name, err)
	}
	defer f.Close()
	if opts.RunID == "" {
		opts.RunID = strings.TrimSuffix(path.Base(name), ".jsonl")
	}
	if opts.FS == nil {
		opts.FS, opts.Dir = fsys, path.Dir(name)
	}
	return Validate(f, opts), nil
}

type stepKey struct {
	path string
	iter int
}

type validator struct {
	opts ValidateOptions
	rep  *Report

	counts map[issueCount]int

	expectRunID bool // RunID came from the caller, not from line 1

	firstEvent, lastEvent int // line numbers
	lastType              EventType
	completedLines        []int // lines of run.completed

	// Sequence tracking: seen maps a seq to its first line. Gaps are known
	// only at the end, because a late line may fill them.
	seen    map[uint64]int
	maxSeq  uint64
	maxLine int
	jumps   []seqJump
	late    []uint64 // seqs that arrived below maxSeq

	steps     map[stepKey]int // open step.* by key -> line of start
	calls     map[stepKey]int // open step.call_workflow.* by key -> line
	callChild map[stepKey]string
	hasSteps  bool
	noPath    []int // message/tool lines with empty path

	tools      Pairer
	toolCalls  []DanglingCall // every call, by its number in tools
	toolClosed map[string]int // call id -> line of its (last) result

	childSeen map[string]bool
	childLine map[string]int
}

type seqJump struct {
	from, to uint64 // missing range, inclusive, as of the jump
	line     int
}

// Validate reads a whole transcript from r and checks it against the format
// contract (spec/transcript.md): seq 1..N in file order, one run id, the
// run bracket, vocabularies, step and tool pairing, paths, and links with
// child and parent runs when opts.FS is set. It never fails: read errors
// are reported as issues.
func Validate(r io.Reader, opts ValidateOptions) *Report {
	if opts.MaxIssuesPerCode == 0 {
		opts.MaxIssuesPerCode = 1000
	}
	v := &validator{
		opts:        opts,
		rep:         &Report{RunID: opts.RunID, Errors: []Issue{}, Warnings: []Issue{}},
		expectRunID: opts.RunID != "",
		counts:      map[issueCount]int{},
		seen:        map[uint64]int{},
		steps:       map[stepKey]int{},
		calls:       map[stepKey]int{},
		callChild:   map[stepKey]string{},
		toolClosed:  map[string]int{},
		childSeen:   map[string]bool{},
		childLine:   map[string]int{},
	}
	if v.expectRunID && !isUUIDv4(opts.RunID) {
		v.warn(0, codeRunIDFormat, "run id %q is not a UUID v4", opts.RunID)
	}
	rd := NewReader(r, ReaderOptions{MaxLineSize: opts.MaxLineSize})
	for rd.Next() {
		v.line(rd)
	}
	v.rep.Lines = rd.lineNo
	if err := rd.Err(); err != nil {
		v.errorf(0, codeReadError, "%v", err)
	}
	v.finish()
	return v.rep
}

func (v *validator) add(list *[]Issue, line int, code, format string, args ...any) {
	if v.opts.MaxIssuesPerCode > 0 {
		k := issueCount{list == &v.rep.Errors, code}
		if v.counts[k] >= v.opts.MaxIssuesPerCode {
			if v.rep.Omitted == nil {
				v.rep.Omitted = map[string]int{}
			}
			v.rep.Omitted[code]++
			return
		}
	}
	v.counts[issueCount{list == &v.rep.Errors, code}]++
	*list = append(*list, Issue{Line: line, Code: code, Msg: fmt.Sprintf(format, args...)})
}

type issueCount struct {
	isErr bool
	code  string
}

func (v *validator) errorf(line int, code, format string, args ...any) {
	v.add(&v.rep.Errors, line, code, format, args...)
}

func (v *validator) warn(line int, code, format string, args ...any) {
	v.add(&v.rep.Warnings, line, code, format, args...)
}

func (v *validator) line(rd *Reader) {
	n := rd.lineNo
	if err := rd.lineErr; err != nil {
		switch {
		case errors.Is(err, ErrLineTooLong):
			v.errorf(n, codeLineTooLong, "%v", unwrapLine(err))
		case rd.torn:
			v.errorf(n, codeTornLine, "%v", unwrapLine(err))
		default:
			v.errorf(n, codeMalformedLine, "%v", unwrapLine(err))
		}
		return
	}
	ev := rd.Event()
	v.rep.Events++
	known := ev.Type.valid()
	for _, w := range rd.warns {
		var ut *UnknownTypeError
		switch {
		case errors.As(w, &ut) && ut.Block < 0:
			v.warn(n, codeUnknownEventType, "event type %q is not in the vocabulary", ut.Type)
		case errors.As(w, &ut):
			known = false
			v.warn(n, codeUnknownBlockType, "%s: block %d has type %q, not in the vocabulary", ev.Type, ut.Block, ut.Type)
		case errors.Is(w, ErrTruncated):
			v.warn(n, codeTornLine, "final line has no trailing LF: a writer was cut off")
		}
	}
	if known {
		check := ev
		if tp := ev.Tool(); tp != nil && !validToolStatus(tp.Status) {
			if st, ok := vocab.ToolStatus(tp.Status); ok {
				// A word of older versions: read as its closed-set
				// equivalent, said as a warning.
				v.warn(n, codeToolStatusLegacy, "%s: status %q is a word of older versions; read as %q", ev.Type, tp.Status, st)
				c, cp := *ev, *tp
				cp.Status = st
				c.Payload = &cp
				check = &c
			}
		}
		if err := check.validate(); err != nil {
			v.errorf(n, codeInvalidEvent, "%v", err)
		}
		v.usage(n, ev)
	}
	v.envelope(n, ev)
	v.seq(n, ev.Seq)
	v.bracket(n, ev)
	v.pairing(n, ev)
}

// usage checks the counters of a message's or an agent step result's
// usage against each other (spec §4).
func (v *validator) usage(n int, ev *Event) {
	var u *Usage
	if m := ev.Message(); m != nil {
		u = m.Usage
	} else if s := ev.Step(); s != nil && ev.Type == StepCompleted {
		if r, err := s.AgentResult(); err == nil && r != nil {
			u = r.Usage
		}
	}
	if err := u.Check(); err != nil {
		v.errorf(n, codeUsageMismatch, "%s: %v", ev.Type, err)
	}
	if u != nil && u.ServiceTier == ServiceTierMixed && ev.Message() != nil {
		v.errorf(n, codeUsageMismatch, "%s: service_tier %q: a message is one request, served at one tier", ev.Type, ServiceTierMixed)
	}
}

func unwrapLine(err error) error {
	var le *LineError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

func (v *validator) envelope(n int, ev *Event) {
	first := v.firstEvent == 0
	if first {
		v.firstEvent = n
	}
	v.lastEvent, v.lastType = n, ev.Type
	switch {
	case ev.RunID == "":
		v.errorf(n, codeMissingRunID, "%s has no run_id", ev.Type)
	case v.rep.RunID == "":
		v.rep.RunID = ev.RunID
		if !isUUIDv4(ev.RunID) {
			v.warn(n, codeRunIDFormat, "run id %q is not a UUID v4", ev.RunID)
		}
	case ev.RunID != v.rep.RunID:
		if v.expectRunID {
			v.errorf(n, codeRunIDMismatch, "run_id %q, want %q (the file name)", ev.RunID, v.rep.RunID)
		} else {
			v.errorf(n, codeRunIDMismatch, "run_id %q, want %q (the first line's)", ev.RunID, v.rep.RunID)
		}
	}
	if first {
		v.rep.ParentRunID = ev.ParentRunID
	} else if ev.ParentRunID != v.rep.ParentRunID {
		v.errorf(n, codeParentRunIDMismatch, "parent_run_id %q, but line %d has %q", ev.ParentRunID, v.firstEvent, v.rep.ParentRunID)
	}
	if strings.HasPrefix(string(ev.Type), "run.") && ev.Path != "" {
		v.errorf(n, codeRunPathNotEmpty, "%s has path %q; run events have none", ev.Type, ev.Path)
	}
}

func (v *validator) seq(n int, s uint64) {
	if s == 0 {
		v.errorf(n, codeSeqInvalid, "seq is missing or 0; seqs start at 1")
		return
	}
	if prev, dup := v.seen[s]; dup {
		v.errorf(n, codeSeqDuplicate, "seq %d already used at line %d", s, prev)
		return
	}
	v.seen[s] = n
	switch {
	case s > v.maxSeq:
		if s > v.maxSeq+1 {
			v.jumps = append(v.jumps, seqJump{from: v.maxSeq + 1, to: s - 1, line: n})
		}
		v.maxSeq, v.maxLine = s, n
	default:
		v.errorf(n, codeSeqOrder, "seq %d after seq %d (line %d): not increasing in file order", s, v.maxSeq, v.maxLine)
		v.late = append(v.late, s)
	}
}

func (v *validator) bracket(n int, ev *Event) {
	switch ev.Type {
	case RunStarted:
		if n != v.firstEvent {
			v.errorf(n, codeRunStartedNotFirst, "run.started after the first event (line %d)", v.firstEvent)
			return
		}
		p := ev.Step()
		switch {
		case p == nil || p.Schema == "":
			v.errorf(n, codeMissingSchema, "run.started has no schema; want %q", Schema)
		case p.Schema != Schema:
			v.warn(n, codeUnknownSchema, "schema %q, this reader knows %q", p.Schema, Schema)
		}
	case RunCompleted:
		v.rep.Finished = true
		v.completedLines = append(v.completedLines, n)
	}
	if n == v.firstEvent && ev.Type != RunStarted {
		v.errorf(n, codeMissingRunStarted, "first event is %s, want run.started", ev.Type)
	}
}

func (v *validator) pairing(n int, ev *Event) {
	key := stepKey{ev.Path, ev.Iteration}
	switch ev.Type {
	case StepStarted:
		v.hasSteps = true
		v.open(v.steps, key, n, ev.Type)
	case StepCompleted:
		v.hasSteps = true
		v.close(v.steps, key, n, ev.Type)
	case StepCallWorkflowStarted:
		v.hasSteps = true
		v.open(v.calls, key, n, ev.Type)
		v.callChild[key] = ev.ChildRunID
		v.child(n, ev.ChildRunID)
	case StepCallWorkflowCompleted:
		v.hasSteps = true
		if start, ok := v.calls[key]; ok && ev.ChildRunID != "" && v.callChild[key] != "" && ev.ChildRunID != v.callChild[key] {
			v.errorf(n, codeChildRunIDMismatch, "child_run_id %q, but its start (line %d) has %q", ev.ChildRunID, start, v.callChild[key])
		}
		v.close(v.calls, key, n, ev.Type)
		delete(v.callChild, key)
	case MessageUser, MessageAssistant, ToolCall, ToolResult:
		if ev.Path == "" {
			v.noPath = append(v.noPath, n)
		} else if _, open := v.steps[key]; !open {
			if _, open := v.calls[key]; !open {
				v.warn(n, codeEventOutsideStep, "%s with path %q iteration %d, but no such step is running", ev.Type, ev.Path, ev.Iteration)
			}
		}
		if p := ev.Tool(); p != nil && p.CallID != "" {
			v.tool(n, ev, p)
		}
	}
}

func (v *validator) open(m map[stepKey]int, key stepKey, n int, t EventType) {
	if prev, ok := m[key]; ok {
		v.errorf(n, codeStepDuplicateStart, "%s for path %q iteration %d, already started at line %d", t, key.path, key.iter, prev)
	}
	m[key] = n
}

func (v *validator) close(m map[stepKey]int, key stepKey, n int, t EventType) {
	if _, ok := m[key]; !ok {
		v.errorf(n, codeStepNotStarted, "%s for path %q iteration %d, which was not started", t, key.path, key.iter)
		return
	}
	delete(m, key)
}

func (v *validator) tool(n int, ev *Event, p *ToolPayload) {
	id := p.CallID
	if ev.Type == ToolCall && p.Revised() {
		// A new version of an earlier call: the same call.
		if c, again := v.tools.ReviseCall(id, ev.Path, ev.Iteration); again {
			v.toolCalls[c] = DanglingCall{Line: n, CallID: id, Name: p.Name, Path: ev.Path, Iteration: ev.Iteration}
			return
		}
		v.toolCalls = append(v.toolCalls, DanglingCall{Line: n, CallID: id, Name: p.Name, Path: ev.Path, Iteration: ev.Iteration})
		return
	}
	if ev.Type == ToolCall {
		if open := v.tools.Waiting(id); len(open) > 0 {
			v.warn(n, codeToolCallDuplicate, "call_id %q reused while the call at line %d has no result", id, v.toolCalls[open[0]].Line)
		}
		v.tools.Call(id, ev.Path, ev.Iteration)
		v.toolCalls = append(v.toolCalls, DanglingCall{Line: n, CallID: id, Name: p.Name, Path: ev.Path, Iteration: ev.Iteration})
		return
	}
	// The Pairer prefers the call made by the same step: call ids are
	// only unique within one provider session. A revised result is a new
	// version of the earlier one, not a second result.
	var ok bool
	if p.Revised() {
		_, _, ok = v.tools.ReviseResult(id, ev.Path, ev.Iteration)
	} else {
		_, ok = v.tools.Result(id, ev.Path, ev.Iteration)
	}
	if !ok {
		if prev, ok := v.toolClosed[id]; ok {
			v.errorf(n, codeToolResultDuplicate, "second tool.result for call_id %q (first at line %d)", id, prev)
		} else {
			v.errorf(n, codeToolResultNoCall, "tool.result for call_id %q with no earlier tool.call", id)
		}
		return
	}
	v.toolClosed[id] = n
}

func (v *validator) child(n int, id string) {
	if id == "" {
		v.warn(n, codeMissingChildRunID, "step.call_workflow.started has no child_run_id")
		return
	}
	if !validRunFileName(id) {
		v.errorf(n, codeInvalidChildRunID, "child_run_id %q cannot name a run file", id)
		return
	}
	if !v.childSeen[id] {
		v.childSeen[id] = true
		v.childLine[id] = n
		v.rep.Children = append(v.rep.Children, id)
		if !isUUIDv4(id) {
			v.warn(n, codeRunIDFormat, "child run id %q is not a UUID v4", id)
		}
	}
}

// validRunFileName reports whether id can be used as <id>.jsonl inside one
// directory: no separators, no dot-dot, nothing fs.FS would refuse.
func validRunFileName(id string) bool {
	return id != "" && id != "." && id != ".." && !strings.ContainsAny(id, `/\`) && fs.ValidPath(id+".jsonl")
}

func (v *validator) finish() {
	v.seqGaps()
	for i, n := range v.completedLines {
		if n != v.lastEvent || i != len(v.completedLines)-1 {
			v.errorf(n, codeRunCompletedNotLast, "run.completed is followed by more events (last at line %d)", v.lastEvent)
		}
	}
	if !v.rep.Finished {
		v.warn(0, codeUnfinished, "no run.completed: the run is still going or its writer was stopped")
	}
	unclosed := v.warn
	if v.rep.Finished {
		unclosed = v.errorf
	}
	for _, m := range []map[stepKey]int{v.steps, v.calls} {
		lines := make([]int, 0, len(m))
		keys := map[int]stepKey{}
		for k, n := range m {
			lines = append(lines, n)
			keys[n] = k
		}
		slices.Sort(lines)
		for _, n := range lines {
			unclosed(n, codeStepUnclosed, "step %q iteration %d never completed", keys[n].path, keys[n].iter)
		}
	}
	if v.hasSteps {
		for _, n := range v.noPath {
			v.errorf(n, codeMissingPath, "event without path in a run with steps: it must carry its step's path")
		}
	}
	for _, c := range v.tools.Dangling() {
		v.rep.Dangling = append(v.rep.Dangling, v.toolCalls[c])
	}
	if v.opts.FS != nil && v.rep.RunID != "" {
		v.links()
	}
	sortIssues(v.rep.Errors)
	sortIssues(v.rep.Warnings)
	codes := make([]string, 0, len(v.rep.Omitted))
	for c := range v.rep.Omitted {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	for _, c := range codes {
		v.rep.Warnings = append(v.rep.Warnings, Issue{Code: codeIssuesOmitted,
			Msg: fmt.Sprintf("%d more issues with code %s not listed", v.rep.Omitted[c], c)})
	}
}

func sortIssues(is []Issue) {
	slices.SortStableFunc(is, func(a, b Issue) int { return a.Line - b.Line })
}

func (v *validator) seqGaps() {
	slices.Sort(v.late)
	for _, j := range v.jumps {
		// Late seqs inside the jump's range filled part of it.
		lo := j.from
		i, _ := slices.BinarySearch(v.late, j.from)
		for ; i < len(v.late) && v.late[i] <= j.to; i++ {
			if v.late[i] > lo {
				v.gap(j.line, lo, v.late[i]-1)
			}
			lo = v.late[i] + 1
		}
		if lo <= j.to {
			v.gap(j.line, lo, j.to)
		}
	}
}

func (v *validator) gap(line int, from, to uint64) {
	if from == to {
		v.errorf(line, codeSeqGap, "seq %d is missing", from)
		return
	}
	v.errorf(line, codeSeqGap, "seqs %d..%d are missing", from, to)
}

// links checks both directions of the parent/child link against the
// sibling files in opts.FS.
func (v *validator) links() {
	for _, id := range v.rep.Children {
		n := v.childLine[id]
		name := path.Join(v.opts.Dir, id+".jsonl")
		f, err := v.opts.FS.Open(name)
		if errors.Is(err, fs.ErrNotExist) {
			v.errorf(n, codeChildMissing, "child run %s has no file %s", id, name)
			continue
		}
		if err != nil {
			v.errorf(n, codeChildUnreadable, "child run %s: %v", id, err)
			continue
		}
		bad, first, badVal, events, rerr := scanParent(f, v.rep.RunID, v.opts.MaxLineSize)
		f.Close()
		switch {
		case rerr != nil:
			v.errorf(n, codeChildUnreadable, "child run %s: %v", id, rerr)
		case events == 0:
			v.errorf(n, codeChildParentMismatch, "child run %s: its file has no events", id)
		case bad > 0:
			v.errorf(n, codeChildParentMismatch, "child run %s: %d of %d lines have parent_run_id other than %q (first: line %d, %q)",
				id, bad, events, v.rep.RunID, first, badVal)
		}
	}
	parent := v.rep.ParentRunID
	if parent == "" {
		return
	}
	if !validRunFileName(parent) {
		v.errorf(v.firstEvent, codeParentLinkMissing, "parent_run_id %q cannot name a run file", parent)
		return
	}
	name := path.Join(v.opts.Dir, parent+".jsonl")
	f, err := v.opts.FS.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		v.warn(v.firstEvent, codeParentMissing, "parent run %s has no file %s", parent, name)
		return
	}
	if err != nil {
		v.errorf(v.firstEvent, codeParentUnreadable, "parent run %s: %v", parent, err)
		return
	}
	defer f.Close()
	found, err := scanChildLink(f, v.rep.RunID, v.opts.MaxLineSize)
	switch {
	case err != nil:
		v.errorf(v.firstEvent, codeParentUnreadable, "parent run %s: %v", parent, err)
	case !found:
		v.errorf(v.firstEvent, codeParentLinkMissing, "parent run %s has no step.call_workflow.started with child_run_id %q", parent, v.rep.RunID)
	}
}

// scanParent counts the events of a child file whose parent_run_id is not
// want.
func scanParent(r io.Reader, want string, maxLine int) (bad, firstBad int, badVal string, events int, err error) {
	rd := NewReader(r, ReaderOptions{MaxLineSize: maxLine})
	for rd.Next() {
		ev := rd.Event()
		if ev == nil {
			continue
		}
		events++
		if ev.ParentRunID != want {
			if bad == 0 {
				firstBad, badVal = rd.lineNo, ev.ParentRunID
			}
			bad++
		}
	}
	return bad, firstBad, badVal, events, rd.Err()
}

// scanChildLink reports whether a parent file has a
// step.call_workflow.started naming child.
func scanChildLink(r io.Reader, child string, maxLine int) (bool, error) {
	rd := NewReader(r, ReaderOptions{MaxLineSize: maxLine})
	for rd.Next() {
		if ev := rd.Event(); ev != nil && ev.Type == StepCallWorkflowStarted && ev.ChildRunID == child {
			return true, nil
		}
	}
	return false, rd.Err()
}

// isUUIDv4 reports whether s is a canonical lower- or upper-case UUID
// version 4 (RFC 9562 variant), the form run ids take.
func isUUIDv4(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
			continue
		}
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	if s[14] != '4' {
		return false
	}
	switch s[19] {
	case '8', '9', 'a', 'b', 'A', 'B':
		return true
	}
	return false
}

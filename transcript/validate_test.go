package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// codes flattens issues to "code@line", sorted, for comparison.
func codes(is []Issue) []string {
	out := make([]string, 0, len(is))
	for _, i := range is {
		out = append(out, fmt.Sprintf("%s@%d", i.Code, i.Line))
	}
	slices.Sort(out)
	return out
}

func sortedStrs(s ...string) []string {
	out := append([]string{}, s...)
	slices.Sort(out)
	return out
}

func eqIssues(t *testing.T, kind string, got []Issue, want []string) {
	t.Helper()
	g, w := codes(got), sortedStrs(want...)
	if !slices.Equal(g, w) {
		t.Fatalf("%s:\n got %v\nwant %v\nissues: %+v", kind, g, w, got)
	}
}

// raw turns events into lines, letting a test splice in hand-written ones.
func raw(t *testing.T, parts ...any) []byte {
	t.Helper()
	var b []byte
	for _, p := range parts {
		switch p := p.(type) {
		case *Event:
			b = append(b, jsonl(t, p)...)
		case []*Event:
			b = append(b, jsonl(t, p...)...)
		case string:
			b = append(b, p...)
		default:
			t.Fatalf("raw: %T", p)
		}
	}
	return b
}

func seqs(run string, ns []uint64, evs ...*Event) []*Event {
	for i, e := range evs {
		e.Seq, e.RunID = ns[i], run
	}
	return evs
}

func TestValidate(t *testing.T) {
	ok := func() []*Event { return goodRun(runA) }
	bareRun := func(mid ...*Event) []*Event {
		return seqRun(runA, append(append([]*Event{mk(0, runA, RunStarted, "", 0)}, mid...), mk(0, runA, RunCompleted, "", 0))...)
	}
	tests := []struct {
		name  string
		in    []byte
		opts  ValidateOptions
		errs  []string
		warns []string
		check func(*testing.T, *Report)
	}{
		{name: "good run", in: raw(t, ok()), opts: ValidateOptions{RunID: runA},
			check: func(t *testing.T, r *Report) {
				eq(t, r.OK(), true, "OK")
				eq(t, r.Finished, true, "finished")
				eq(t, r.Events, 8, "events")
				eq(t, r.Lines, 8, "lines")
				eq(t, r.RunID, runA, "run id")
			}},
		{name: "run id from the first line", in: raw(t, ok()),
			check: func(t *testing.T, r *Report) { eq(t, r.RunID, runA, "run id") }},
		{name: "empty file", in: nil, warns: []string{"unfinished@0"},
			check: func(t *testing.T, r *Report) { eq(t, r.Events, 0, "events") }},
		{name: "run without steps may omit paths", in: raw(t, bareRun(mk(0, runA, MessageUser, "", 0)))},
		{name: "seq gap", in: raw(t, seqs(runA, []uint64{1, 2, 5, 6, 9},
			mk(0, "", RunStarted, "", 0), mk(0, "", StepStarted, "s", 0), mk(0, "", StepCompleted, "s", 0),
			mk(0, "", StepStarted, "t", 0), mk(0, "", StepCompleted, "t", 0))),
			errs: []string{"seq_gap@3", "seq_gap@5"}, warns: []string{"unfinished@0"},
			check: func(t *testing.T, r *Report) {
				eq(t, r.Errors[0].Msg, "seqs 3..4 are missing", "gap message")
				eq(t, r.Errors[1].Msg, "seqs 7..8 are missing", "gap message")
			}},
		{name: "seq not starting at 1", in: raw(t, seqs(runA, []uint64{2}, mk(0, "", RunStarted, "", 0))),
			errs: []string{"seq_gap@1"}, warns: []string{"unfinished@0"}},
		{name: "seq duplicate", in: raw(t, seqs(runA, []uint64{1, 2, 2, 3},
			mk(0, "", RunStarted, "", 0), mk(0, "", StepStarted, "s", 0), mk(0, "", StepCompleted, "s", 0), mk(0, "", RunCompleted, "", 0))),
			errs: []string{"seq_duplicate@3"}},
		{name: "seq inversion filling the gap", in: raw(t, seqs(runA, []uint64{1, 3, 2, 4},
			mk(0, "", RunStarted, "", 0), mk(0, "", StepStarted, "s", 0), mk(0, "", StepCompleted, "s", 0), mk(0, "", RunCompleted, "", 0))),
			errs: []string{"seq_order@3"}},
		{name: "seq inversion leaving gaps", in: raw(t, seqs(runA, []uint64{1, 6, 3, 7},
			mk(0, "", RunStarted, "", 0), mk(0, "", StepStarted, "s", 0), mk(0, "", StepCompleted, "s", 0), mk(0, "", RunCompleted, "", 0))),
			errs: []string{"seq_order@3", "seq_gap@2", "seq_gap@2"},
			check: func(t *testing.T, r *Report) {
				var msgs []string
				for _, i := range r.Errors {
					if i.Code == codeSeqGap {
						msgs = append(msgs, i.Msg)
					}
				}
				if !slices.Equal(msgs, []string{"seq 2 is missing", "seqs 4..5 are missing"}) {
					t.Fatalf("gap messages %q", msgs)
				}
			}},
		{name: "seq zero", in: raw(t, seqs(runA, []uint64{1, 0, 2},
			mk(0, "", RunStarted, "", 0), mk(0, "", MessageUser, "", 0), mk(0, "", RunCompleted, "", 0))),
			errs: []string{"seq_invalid@2"}},
		{name: "run id mismatch with the file name", in: raw(t, ok()), opts: ValidateOptions{RunID: runB, MaxIssuesPerCode: -1},
			errs: []string{"run_id_mismatch@1", "run_id_mismatch@2", "run_id_mismatch@3", "run_id_mismatch@4",
				"run_id_mismatch@5", "run_id_mismatch@6", "run_id_mismatch@7", "run_id_mismatch@8"}},
		{name: "run id mismatch with line 1", in: raw(t, func() []*Event {
			evs := bareRun(mk(0, runA, MessageUser, "", 0))
			evs[1].RunID = runB
			return evs
		}()),
			errs: []string{"run_id_mismatch@2"},
			check: func(t *testing.T, r *Report) {
				if !strings.Contains(r.Errors[0].Msg, "first line") {
					t.Fatalf("message %q", r.Errors[0].Msg)
				}
			}},
		{name: "issues capped per code", in: raw(t, ok()), opts: ValidateOptions{RunID: runB, MaxIssuesPerCode: 2},
			errs: []string{"run_id_mismatch@1", "run_id_mismatch@2"}, warns: []string{"issues_omitted@0"},
			check: func(t *testing.T, r *Report) { eq(t, r.Omitted[codeRunIDMismatch], 6, "omitted") }},
		{name: "missing run id", in: raw(t, mk(1, runA, RunStarted, "", 0),
			`{"seq":2,"type":"run.completed","path":"","iteration":0,"timestamp":"2025-05-01T12:00:00.000Z","payload":{"name":"wf","kind":"workflow"}}`+"\n"),
			errs: []string{"missing_run_id@2", "invalid_event@2"}},
		{name: "usage counters that disagree", in: raw(t, bareRun(
			withUsage(mk(0, runA, MessageAssistant, "", 0), Usage{InputTokens: new(int64(10)), UncachedInputTokens: new(int64(3)), CacheReadTokens: new(int64(5))}),
			withUsage(mk(0, runA, MessageAssistant, "", 0), Usage{CacheWriteTokens: new(int64(2)), CacheWrite1hTokens: new(int64(3))}),
			withUsage(mk(0, runA, MessageAssistant, "", 0), Usage{OutputTokens: new(int64(-1))}),
			// Agreeing, and the older shape (no uncached figure): no issue.
			withUsage(mk(0, runA, MessageAssistant, "", 0), Usage{InputTokens: new(int64(10)), UncachedInputTokens: new(int64(3)), CacheReadTokens: new(int64(5)), CacheWriteTokens: new(int64(2)), CacheWrite1hTokens: new(int64(2))}),
			withUsage(mk(0, runA, MessageAssistant, "", 0), Usage{InputTokens: new(int64(10)), CacheReadTokens: new(int64(5))}),
		)),
			errs: []string{"usage_mismatch@2", "usage_mismatch@3", "usage_mismatch@4"}},
		{name: "a message is one request, served at one tier", in: raw(t, bareRun(
			withUsage(mk(0, runA, MessageAssistant, "", 0), Usage{OutputTokens: new(int64(1)), ServiceTier: ServiceTierMixed}),
			withUsage(mk(0, runA, MessageAssistant, "", 0), Usage{OutputTokens: new(int64(1)), ServiceTier: "flex"}),
		)),
			errs: []string{"usage_mismatch@2"}},
		{name: "run id not a UUID", in: raw(t, seqRun("run-1", mk(0, "", RunStarted, "", 0), mk(0, "", RunCompleted, "", 0))),
			warns: []string{"run_id_format@1"}},
		{name: "expected run id not a UUID", in: raw(t, seqRun("run-1", mk(0, "", RunStarted, "", 0), mk(0, "", RunCompleted, "", 0))),
			opts: ValidateOptions{RunID: "run-1"}, warns: []string{"run_id_format@0"}},
		{name: "parent run id inconsistent", in: raw(t, seqRun(runA, withParent(mk(0, "", RunStarted, "", 0), runB),
			withParent(mk(0, "", MessageUser, "", 0), runC), mk(0, "", RunCompleted, "", 0))),
			errs: []string{"parent_run_id_mismatch@2", "parent_run_id_mismatch@3"}},
		{name: "run event with a path", in: raw(t, seqRun(runA, mk(0, "", RunStarted, "x", 0), mk(0, "", RunCompleted, "", 0))),
			errs: []string{"run_path_not_empty@1"}},
		{name: "no run.started", in: raw(t, seqRun(runA, mk(0, "", StepStarted, "s", 0), mk(0, "", StepCompleted, "s", 0), mk(0, "", RunCompleted, "", 0))),
			errs: []string{"missing_run_started@1"}},
		{name: "run.started later", in: raw(t, seqRun(runA, mk(0, "", MessageUser, "", 0), mk(0, "", RunStarted, "", 0), mk(0, "", RunCompleted, "", 0))),
			errs: []string{"missing_run_started@1", "run_started_not_first@2"}},
		{name: "missing schema", in: raw(t, seqRun(runA, func() *Event {
			e := mk(0, "", RunStarted, "", 0)
			e.Step().Schema = ""
			return e
		}(), mk(0, "", RunCompleted, "", 0))), errs: []string{"missing_schema@1"}},
		{name: "unknown schema", in: raw(t, seqRun(runA, func() *Event {
			e := mk(0, "", RunStarted, "", 0)
			e.Step().Schema = "twasm.transcript/2"
			return e
		}(), mk(0, "", RunCompleted, "", 0))), warns: []string{"unknown_schema@1"}},
		{name: "run.completed not last", in: raw(t, seqRun(runA, mk(0, "", RunStarted, "", 0), mk(0, "", RunCompleted, "", 0),
			mk(0, "", MessageUser, "", 0), mk(0, "", RunCompleted, "", 0))),
			errs: []string{"run_completed_not_last@2"}},
		{name: "run.completed then more events", in: raw(t, seqRun(runA, mk(0, "", RunStarted, "", 0), mk(0, "", RunCompleted, "", 0),
			mk(0, "", MessageUser, "", 0))),
			errs:  []string{"run_completed_not_last@2"},
			check: func(t *testing.T, r *Report) { eq(t, r.Finished, true, "finished") }},
		{name: "unfinished with an open step", in: raw(t, seqRun(runA, mk(0, "", RunStarted, "", 0), mk(0, "", StepStarted, "s", 2))),
			warns: []string{"unfinished@0", "step_unclosed@2"},
			check: func(t *testing.T, r *Report) { eq(t, r.Finished, false, "finished") }},
		{name: "finished with open steps", in: raw(t, seqRun(runA, mk(0, "", RunStarted, "", 0), mk(0, "", StepStarted, "s", 0),
			withChild(mk(0, "", StepCallWorkflowStarted, "sub", 0), runB), mk(0, "", StepStarted, "s", 1), mk(0, "", StepCompleted, "s", 1),
			mk(0, "", RunCompleted, "", 0))),
			errs: []string{"step_unclosed@2", "step_unclosed@3"}},
		{name: "step completed without start", in: raw(t, bareRun(mk(0, "", StepStarted, "s", 0), mk(0, "", StepCompleted, "s", 1),
			mk(0, "", StepCompleted, "s", 0), mk(0, "", StepCallWorkflowCompleted, "c", 0))),
			errs: []string{"step_not_started@3", "step_not_started@5"}},
		{name: "step started twice", in: raw(t, bareRun(mk(0, "", StepStarted, "s", 0), mk(0, "", StepStarted, "s", 0), mk(0, "", StepCompleted, "s", 0))),
			errs: []string{"step_duplicate_start@3"}},
		{name: "tool pairing", in: raw(t, bareRun(
			mk(0, "", StepStarted, "s", 0),
			withCall(mk(0, "", ToolCall, "s", 0), "a"),    // 3: dangling
			withCall(mk(0, "", ToolResult, "s", 0), "b"),  // 4: no call
			withCall(mk(0, "", ToolCall, "s", 0), "c"),    // 5
			withCall(mk(0, "", ToolResult, "s", 0), "c"),  // 6
			withCall(mk(0, "", ToolResult, "s", 0), "c"),  // 7: duplicate
			withCall(mk(0, "", ToolCall, "s", 0), "d"),    // 8
			withCall(mk(0, "", ToolCall, "s", 0), "d"),    // 9: reused while open
			withCall(mk(0, "", ToolResult, "s", 0), "d"),  // 10 closes 8
			withCall(mk(0, "", ToolResult, "s", 0), "z1"), // 11: no call
			mk(0, "", StepCompleted, "s", 0),
		)),
			errs:  []string{"tool_result_without_call@4", "tool_result_duplicate@7", "tool_result_without_call@11"},
			warns: []string{"tool_call_duplicate@9"},
			check: func(t *testing.T, r *Report) {
				want := []DanglingCall{{Line: 3, CallID: "a", Name: "bash", Path: "s"}, {Line: 9, CallID: "d", Name: "bash", Path: "s"}}
				if !slices.Equal(r.Dangling, want) {
					t.Fatalf("dangling %+v, want %+v", r.Dangling, want)
				}
			}},
		{name: "tool result matches the call of its own step", in: raw(t, bareRun(
			mk(0, "", StepStarted, "x", 0), mk(0, "", StepStarted, "y", 0),
			withCall(mk(0, "", ToolCall, "x", 0), "item_1"),
			withCall(mk(0, "", ToolCall, "y", 0), "item_1"),
			withCall(mk(0, "", ToolResult, "y", 0), "item_1"),
			mk(0, "", StepCompleted, "y", 0), mk(0, "", StepCompleted, "x", 0))),
			warns: []string{"tool_call_duplicate@5"},
			check: func(t *testing.T, r *Report) {
				if len(r.Dangling) != 1 || r.Dangling[0].Path != "x" {
					t.Fatalf("dangling %+v", r.Dangling)
				}
			}},
		{name: "missing path in a run with steps", in: raw(t, bareRun(mk(0, "", StepStarted, "s", 0), mk(0, "", MessageAssistant, "", 0),
			withCall(mk(0, "", ToolCall, "", 0), "q"), mk(0, "", StepCompleted, "s", 0))),
			errs:  []string{"missing_path@3", "missing_path@4"},
			check: func(t *testing.T, r *Report) { eq(t, len(r.Dangling), 1, "dangling") }},
		{name: "event outside its step", in: raw(t, bareRun(mk(0, "", StepStarted, "s", 0), mk(0, "", StepCompleted, "s", 0),
			mk(0, "", MessageAssistant, "s", 0), mk(0, "", MessageAssistant, "s", 1))),
			warns: []string{"event_outside_step@4", "event_outside_step@5"}},
		{name: "events inside a call_workflow step", in: raw(t, bareRun(withChild(mk(0, "", StepCallWorkflowStarted, "sub", 0), runB),
			mk(0, "", MessageUser, "sub", 0), withChild(mk(0, "", StepCallWorkflowCompleted, "sub", 0), runB))),
			check: func(t *testing.T, r *Report) {
				if !slices.Equal(r.Children, []string{runB}) {
					t.Fatalf("children %v", r.Children)
				}
			}},
		{name: "unknown types", in: raw(t, mk(1, runA, RunStarted, "", 0),
			`{"seq":2,"run_id":"`+runA+`","type":"run.paused","path":"","iteration":0,"timestamp":"2025-05-01T12:00:00.000Z","payload":{}}`+"\n",
			`{"seq":3,"run_id":"`+runA+`","type":"message.assistant","path":"","iteration":0,"timestamp":"2025-05-01T12:00:00.000Z","payload":{"role":"assistant","blocks":[{"type":"image","fidelity":"agent_emitted"}]}}`+"\n",
			mk(4, runA, RunCompleted, "", 0)),
			warns: []string{"unknown_event_type@2", "unknown_block_type@3"}},
		{name: "invalid event", in: raw(t, mk(1, runA, RunStarted, "", 0),
			`{"seq":2,"run_id":"`+runA+`","type":"tool.call","path":"","iteration":0,"timestamp":"2025-05-01T12:00:00.000Z","payload":{"name":"x","call_id":"c","fidelity":"guess"}}`+"\n",
			mk(3, runA, RunCompleted, "", 0)),
			errs: []string{"invalid_event@2"}, check: func(t *testing.T, r *Report) { eq(t, len(r.Dangling), 1, "dangling") }},
		{name: "malformed line", in: raw(t, mk(1, runA, RunStarted, "", 0), "{oops\n", mk(3, runA, RunCompleted, "", 0)),
			errs: []string{"malformed_line@2", "seq_gap@3"}},
		{name: "line too long", in: raw(t, mk(1, runA, RunStarted, "", 0), `{"pad":"`+strings.Repeat("p", 2000)+"\"}\n", mk(2, runA, RunCompleted, "", 0)),
			opts: ValidateOptions{MaxLineSize: 1000}, errs: []string{"line_too_long@2"}},
		{name: "torn tail that decodes", in: bytes.TrimSuffix(raw(t, ok()), []byte("\n")),
			warns: []string{"torn_line@8"}},
		{name: "torn tail cut mid-line", in: func() []byte { b := raw(t, ok()); return b[:len(b)-20] }(),
			errs: []string{"torn_line@8"}, warns: []string{"unfinished@0"},
			check: func(t *testing.T, r *Report) { eq(t, r.Events, 7, "events") }},
		{name: "call_workflow without child id", in: raw(t, bareRun(mk(0, "", StepCallWorkflowStarted, "sub", 0), mk(0, "", StepCallWorkflowCompleted, "sub", 0))),
			warns: []string{"missing_child_run_id@2"}},
		{name: "call_workflow with a bad child id", in: raw(t, bareRun(withChild(mk(0, "", StepCallWorkflowStarted, "sub", 0), "../etc/passwd"),
			mk(0, "", StepCallWorkflowCompleted, "sub", 0))),
			errs: []string{"invalid_child_run_id@2"}},
		{name: "call_workflow child changes", in: raw(t, bareRun(withChild(mk(0, "", StepCallWorkflowStarted, "sub", 0), runB),
			withChild(mk(0, "", StepCallWorkflowCompleted, "sub", 0), runC))),
			errs: []string{"child_run_id_mismatch@3"}},
		{name: "child run id not a UUID", in: raw(t, bareRun(withChild(mk(0, "", StepCallWorkflowStarted, "sub", 0), "child"),
			withChild(mk(0, "", StepCallWorkflowCompleted, "sub", 0), "child"))),
			warns: []string{"run_id_format@2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Validate(bytes.NewReader(tc.in), tc.opts)
			eqIssues(t, "errors", r.Errors, tc.errs)
			eqIssues(t, "warnings", r.Warnings, tc.warns)
			eq(t, r.OK(), len(tc.errs) == 0, "OK")
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}
}

func TestValidateReadError(t *testing.T) {
	r := Validate(&failingReader{data: jsonl(t, mk(1, runA, RunStarted, "", 0)), err: errors.New("EIO")}, ValidateOptions{})
	eqIssues(t, "errors", r.Errors, []string{"read_error@0"})
}

// family builds a parent run calling a child run, both as files of one FS.
func family(t *testing.T, childParent string) fstest.MapFS {
	parent := seqRun(runA,
		mk(0, "", RunStarted, "", 0),
		withChild(mk(0, "", StepCallWorkflowStarted, "sub", 0), runB),
		withChild(mk(0, "", StepCallWorkflowCompleted, "sub", 0), runB),
		mk(0, "", RunCompleted, "", 0))
	child := seqRun(runB, mk(0, "", RunStarted, "", 0), mk(0, "", RunCompleted, "", 0))
	for _, e := range child {
		e.ParentRunID = childParent
	}
	return fstest.MapFS{
		"runs/" + runA + ".jsonl": {Data: jsonl(t, parent...)},
		"runs/" + runB + ".jsonl": {Data: jsonl(t, child...)},
	}
}

func TestValidateFileLinks(t *testing.T) {
	tests := []struct {
		name  string
		fs    func(t *testing.T) fstest.MapFS
		file  string
		errs  []string
		warns []string
	}{
		{name: "parent ok", fs: func(t *testing.T) fstest.MapFS { return family(t, runA) }, file: runA},
		{name: "child ok", fs: func(t *testing.T) fstest.MapFS { return family(t, runA) }, file: runB},
		{name: "child file missing", file: runA, errs: []string{"child_missing@2"},
			fs: func(t *testing.T) fstest.MapFS { m := family(t, runA); delete(m, "runs/"+runB+".jsonl"); return m }},
		{name: "child names another parent", file: runA, errs: []string{"child_parent_mismatch@2"},
			fs: func(t *testing.T) fstest.MapFS { return family(t, runC) }},
		{name: "child names no parent", file: runA, errs: []string{"child_parent_mismatch@2"},
			fs: func(t *testing.T) fstest.MapFS { return family(t, "") }},
		{name: "child file empty", file: runA, errs: []string{"child_parent_mismatch@2"},
			fs: func(t *testing.T) fstest.MapFS {
				m := family(t, runA)
				m["runs/"+runB+".jsonl"] = &fstest.MapFile{}
				return m
			}},
		{name: "child file unreadable", file: runA, errs: []string{"child_unreadable@2"},
			fs: func(t *testing.T) fstest.MapFS {
				m := family(t, runA)
				delete(m, "runs/"+runB+".jsonl")
				m["runs/"+runB+".jsonl/x"] = &fstest.MapFile{}
				return m
			}},
		{name: "parent lacks the link", file: runB, errs: []string{"parent_link_missing@1"},
			fs: func(t *testing.T) fstest.MapFS {
				m := family(t, runA)
				m["runs/"+runA+".jsonl"] = &fstest.MapFile{Data: jsonl(t, seqRun(runA, mk(0, "", RunStarted, "", 0))...)}
				return m
			}},
		{name: "parent file missing", file: runB, warns: []string{"parent_missing@1"},
			fs: func(t *testing.T) fstest.MapFS { m := family(t, runA); delete(m, "runs/"+runA+".jsonl"); return m }},
		{name: "parent file unreadable", file: runB, errs: []string{"parent_unreadable@1"},
			fs: func(t *testing.T) fstest.MapFS {
				m := family(t, runA)
				delete(m, "runs/"+runA+".jsonl")
				m["runs/"+runA+".jsonl/x"] = &fstest.MapFile{}
				return m
			}},
		{name: "parent id cannot name a file", file: runB, errs: []string{"parent_link_missing@1"},
			fs: func(t *testing.T) fstest.MapFS { return family(t, "../"+runA) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ValidateFile(tc.fs(t), "runs/"+tc.file+".jsonl", ValidateOptions{})
			must(t, err)
			eq(t, r.RunID, tc.file, "run id from the file name")
			eqIssues(t, "errors", r.Errors, tc.errs)
			eqIssues(t, "warnings", r.Warnings, tc.warns)
		})
	}
}

func TestValidateFileErrors(t *testing.T) {
	_, err := ValidateFile(fstest.MapFS{}, "nope.jsonl", ValidateOptions{})
	isErr(t, err, fs.ErrNotExist)

	// A file named after another run: every line is a mismatch.
	m := family(t, runA)
	m["runs/"+runC+".jsonl"] = m["runs/"+runA+".jsonl"]
	r, err := ValidateFile(m, "runs/"+runC+".jsonl", ValidateOptions{})
	must(t, err)
	eq(t, len(r.Errors) > 0 && r.Errors[0].Code == codeRunIDMismatch, true, "mismatch reported")
}

func TestReportJSON(t *testing.T) {
	r := Validate(bytes.NewReader(raw(t, seqRun(runA, mk(0, "", RunStarted, "", 0), withCall(mk(0, "", ToolCall, "", 0), "k")))), ValidateOptions{})
	b, err := json.Marshal(r)
	must(t, err)
	for _, want := range []string{`"run_id":"` + runA + `"`, `"code":"unfinished"`, `"dangling":[{"line":2,"call_id":"k","name":"bash"}]`, `"errors":[]`, `"finished":false`} {
		if !strings.Contains(string(b), want) {
			t.Fatalf("JSON %s lacks %s", b, want)
		}
	}
	eq(t, r.Warnings[0].String(), "unfinished: no run.completed: the run is still going or its writer was stopped", "String")
	eq(t, Issue{Line: 3, Code: "x", Msg: "y"}.String(), "line 3: x: y", "String")
}

func TestIsUUIDv4(t *testing.T) {
	for s, want := range map[string]bool{
		runA:                                   true,
		"AAAAAAAA-AAAA-4AAA-BAAA-AAAAAAAAAAAA": true,
		"aaaaaaaa-aaaa-1aaa-8aaa-aaaaaaaaaaaa": false, // version 1
		"aaaaaaaa-aaaa-4aaa-caaa-aaaaaaaaaaaa": false, // variant
		"aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaag": false,
		"aaaaaaaa_aaaa-4aaa-8aaa-aaaaaaaaaaaa": false,
		"aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaa":  false,
		"":                                     false,
	} {
		eq(t, isUUIDv4(s), want, s)
	}
}

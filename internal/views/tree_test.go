package views

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/viewstest"
	"github.com/twasm/twasm/transcript"
)

func TestBuildTreeFixture(t *testing.T) {
	root, _ := fixtureTree(t)
	eq(t, root.RunID, viewstest.Root, "run id")
	eq(t, root.Name, "review-wf", "name")
	eq(t, root.Status, "ok", "status")
	eq(t, root.Finished, true, "finished")
	eq(t, root.Schema, transcript.Schema, "schema")
	eq(t, root.Producer, "twasm 0.1.0", "producer")
	eq(t, *root.DurationMS, int64(12000), "duration")
	eq(t, root.Events, 13, "events")
	eq(t, root.Tools, 2, "tools")
	eq(t, root.Dangling, 1, "dangling")
	eq(t, len(root.Problems), 2, "problems (unknown type, malformed line)")
	eq(t, len(root.Steps), 2, "top-level steps")

	review := root.Steps[0]
	eq(t, review.Path, "review", "path")
	eq(t, review.Kind, "agent", "kind")
	eq(t, review.Status, "ok", "status")
	eq(t, review.Tools, 2, "tools")
	eq(t, review.Messages, 3, "messages")
	eq(t, *review.DurationMS, int64(8000), "step duration")
	if review.Agent == nil {
		t.Fatal("no agent summary")
	}
	eq(t, review.Agent.Provider, "claude", "provider")
	eq(t, review.Agent.SessionID, "sess-1", "session")
	eq(t, *review.Agent.Usage.InputTokens, int64(1000), "usage")

	del := root.Steps[1]
	eq(t, del.Kind, "call_workflow", "kind")
	eq(t, del.Status, "error", "status")
	eq(t, del.Error, "search failed", "error")
	eq(t, del.ChildRunID, viewstest.Child, "child id")
	if del.Child == nil {
		t.Fatalf("child not linked: %s", del.ChildError)
	}
	eq(t, del.Child.ParentRunID, viewstest.Root, "child parent")
	eq(t, del.Child.Steps[0].FullPath, "delegate.search", "child full path")
	eq(t, del.Child.FullPath(""), "delegate", "child scope")
	eq(t, len(root.Runs()), 2, "runs")
	eq(t, root.Source().ID, viewstest.Root, "source")
}

func TestBuildTreeLinks(t *testing.T) {
	const a, b = viewstest.Root, viewstest.Child
	call := func(path, child string) []*transcript.Event {
		return []*transcript.Event{
			{Type: transcript.StepCallWorkflowStarted, Path: path, ChildRunID: child, Payload: &transcript.StepPayload{Name: path, Kind: transcript.KindCallWorkflow}},
			{Type: transcript.StepCallWorkflowCompleted, Path: path, ChildRunID: child, Payload: &transcript.StepPayload{Name: path, Kind: transcript.KindCallWorkflow, Status: "ok"}},
		}
	}
	build := func(id, parent string, calls ...[]*transcript.Event) *viewstest.Builder {
		bl := viewstest.NewBuilder(id, parent).Add(viewstest.Started("wf"))
		for _, c := range calls {
			for _, ev := range c {
				bl.Add(ev)
			}
		}
		return bl.Add(viewstest.Completed("wf", "ok", ""))
	}
	tests := []struct {
		name    string
		files   []*viewstest.Builder
		wantErr string // ChildError of the first call step
		deep    bool
	}{
		{"cycle", []*viewstest.Builder{build(a, "", call("x", b)), build(b, a, call("y", a))}, "", true},
		{"missing child", []*viewstest.Builder{build(a, "", call("x", b))}, "no transcript file", false},
		{"bad child id", []*viewstest.Builder{build(a, "", call("x", "../../etc/passwd"))}, "invalid run id", false},
		{"unreadable child", []*viewstest.Builder{build(a, "", call("x", b))}, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tc.files {
				writeRun(t, dir, f)
			}
			if tc.name == "unreadable child" {
				if err := os.Mkdir(filepath.Join(dir, b+".jsonl"), 0o700); err != nil {
					t.Fatal(err)
				}
			}
			root := loadTree(t, dir, a)
			s := root.Steps[0]
			switch {
			case tc.deep:
				if s.Child == nil {
					t.Fatalf("child not linked: %s", s.ChildError)
				}
				back := s.Child.Steps[0]
				if !strings.Contains(back.ChildError, "cycle") {
					t.Fatalf("cycle not cut: %+v", back)
				}
			case tc.wantErr != "":
				if !strings.Contains(s.ChildError, tc.wantErr) {
					t.Fatalf("child error %q, want %q", s.ChildError, tc.wantErr)
				}
			default:
				if s.ChildError == "" || s.Child != nil {
					t.Fatalf("want a child error, got %+v", s)
				}
			}
			var buf bytes.Buffer
			if err := WriteTree(&buf, root, false); err != nil {
				t.Fatal(err)
			}
			contains(t, buf.String(), "run "+a)
		})
	}
}

func TestBuildRunNesting(t *testing.T) {
	b := viewstest.NewBuilder(viewstest.Root, "").Add(viewstest.Started("wf"))
	st := func(typ transcript.EventType, path string, iter int, kind transcript.StepKind) *transcript.Event {
		return viewstest.Step(typ, path, iter, &transcript.StepPayload{Name: path, Kind: kind, Status: map[bool]string{true: "ok"}[typ == transcript.StepCompleted]})
	}
	b.Add(viewstest.Msg(transcript.MessageUser, "", transcript.TextBlock("run-level prompt")))
	b.Add(st(transcript.StepStarted, "per_file", 0, transcript.KindForEach))
	for i := range 2 {
		b.Add(st(transcript.StepStarted, "per_file.lint", i, transcript.KindCommand))
		b.Add(viewstest.Tool(transcript.ToolCall, "per_file.lint", &transcript.ToolPayload{Name: "sh", CallID: "t" + string(rune('0'+i))}))
		b.Events()[len(b.Events())-1].Iteration = i
		b.Add(st(transcript.StepCompleted, "per_file.lint", i, transcript.KindCommand))
	}
	b.Add(st(transcript.StepCompleted, "per_file", 0, transcript.KindForEach))
	b.Add(st(transcript.StepCompleted, "orphan", 0, transcript.KindCommand))
	b.Add(st(transcript.StepStarted, "never_done", 0, transcript.KindCommand))
	dir := t.TempDir()
	writeRun(t, dir, b)
	root := loadTree(t, dir, viewstest.Root)
	eq(t, root.Status, StatusRunning, "unfinished run")
	eq(t, root.Finished, false, "finished")
	eq(t, len(root.Steps), 3, "top-level steps: per_file, orphan, never_done")
	pf := root.Steps[0]
	eq(t, len(pf.Steps), 2, "loop body steps nested")
	eq(t, pf.Steps[1].Iteration, 1, "iteration")
	eq(t, pf.Steps[1].Tools, 1, "tools in iteration 1")
	eq(t, root.Steps[1].Path, "orphan", "completion without start kept")
	eq(t, root.Steps[2].Status, StatusRunning, "unclosed step")
	eq(t, len(root.events), 2, "run-level events (run.started, prompt)")
	eq(t, root.Dangling, 2, "dangling")
	n := 0
	root.Walk(func(*StepNode, int) bool { n++; return false })
	eq(t, n, 3, "walk without descending")
}

func TestLoadErrors(t *testing.T) {
	_, err := LoadFile(filepath.Join(t.TempDir(), "none.jsonl"))
	if !errors.Is(err, ErrNoRun) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v", err)
	}
	if _, err := LoadFile(t.TempDir()); err == nil {
		t.Fatal("reading a directory should fail")
	}
	if _, err := (Loader{Dir: t.TempDir()}).Load("nope"); err == nil {
		t.Fatal("bad run id accepted")
	}
	// A file whose events carry no run id is named after the file.
	run, err := ReadRun(strings.NewReader("garbage\n"), "/x/"+viewstest.Other+".jsonl")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, run.ID, viewstest.Other, "id from file name")
	if _, err := ReadRun(iotestErr{}, "f"); err == nil {
		t.Fatal("read error not reported")
	}
}

type iotestErr struct{}

func (iotestErr) Read([]byte) (int, error) { return 0, errors.New("boom") }

func TestEventJSON(t *testing.T) {
	root, _ := fixtureTree(t)
	for _, ev := range root.Source().Events {
		line, err := EventJSON(ev)
		if err != nil {
			t.Fatal(err)
		}
		back, err := transcript.DecodeEvent(line)
		if back == nil {
			t.Fatalf("seq %d: %v", ev.Seq, err)
		}
		eq(t, back.Seq, ev.Seq, "seq")
		eq(t, back.Type, ev.Type, "type")
	}
	line, err := EventJSON(&transcript.Event{Seq: 1, Type: "x", ParentRunID: "p", ChildRunID: "c", Extra: map[string]json.RawMessage{"k": json.RawMessage(`1`)}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(line), `"child_run_id":"c"`) || !strings.Contains(string(line), `"k":1`) {
		t.Fatalf("line %s", line)
	}
}

// TestParentStep: the rule by which steps nest (the tree, the HTML
// export's tree, the OTLP spans).
func TestParentStep(t *testing.T) {
	type k struct {
		path string
		iter int
		id   string
	}
	cases := []struct {
		name string
		open []k
		path string
		iter int
		want string // id, "" for none
	}{
		{"nothing open", nil, "a.b", 0, ""},
		{"a top-level step", []k{{"a", 0, "a"}}, "b", 0, ""},
		{"the longest prefix", []k{{"a", 0, "a"}, {"a.b", 0, "ab"}}, "a.b.c", 0, "ab"},
		{"a prefix at a dot only", []k{{"a", 0, "a"}, {"a.b", 0, "ab"}}, "a.bc", 0, "a"},
		{"not the step itself", []k{{"a.b", 0, "ab"}}, "a.b", 0, ""},
		{"a grandparent when the parent is closed", []k{{"a", 0, "a"}}, "a.b.c", 0, "a"},
		{"the same iteration among equals", []k{{"loop", 2, "i2"}, {"loop", 0, "i0"}}, "loop.body", 2, "i2"},
		{"else the newest", []k{{"loop", 1, "old"}, {"loop", 0, "new"}}, "loop.body", 5, "new"},
		{"the newest of the same iteration", []k{{"a", 1, "old"}, {"a", 1, "new"}}, "a.b", 1, "new"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := ParentStep(c.open, func(o k) (string, int) { return o.path, o.iter }, c.path, c.iter)
			if ok != (c.want != "") || got.id != c.want {
				t.Fatalf("ParentStep = %+v, %v; want %q", got, ok, c.want)
			}
		})
	}
}

// TestBuildTreeDanglingReusedID: calls pair with results by call id in
// order, so a call id a provider reused for a new call after the first
// was answered is dangling when the new call got no result.
func TestBuildTreeDanglingReusedID(t *testing.T) {
	for _, c := range []struct {
		name string
		seq  string // c<id> a call, r<id> a result
		want int
	}{
		{"answered", "ca ra", 0},
		{"reused, both answered", "ca ra ca ra", 0},
		{"reused, the second unanswered", "ca ra ca", 1},
		{"one of two ids unanswered", "ca cb rb", 1},
		{"none answered", "ca ca", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := viewstest.NewBuilder(viewstest.Root, "").Add(viewstest.Started("wf"))
			for _, s := range strings.Fields(c.seq) {
				typ := transcript.ToolCall
				if s[0] == 'r' {
					typ = transcript.ToolResult
				}
				b.Add(viewstest.Tool(typ, "", &transcript.ToolPayload{Name: "sh", CallID: s[1:]}))
			}
			dir := t.TempDir()
			writeRun(t, dir, b)
			root := loadTree(t, dir, viewstest.Root)
			eq(t, root.Dangling, c.want, "dangling")
		})
	}
}

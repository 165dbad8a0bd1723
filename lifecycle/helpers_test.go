package lifecycle

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newStore(t *testing.T) recorder.Store {
	t.Helper()
	return recorder.NewStore(t.TempDir())
}

// readRun reads the transcript of runID back line by line and checks the
// invariants every file must hold: seq 1..N in file order, the run id of
// the file name on every line, the same parent_run_id on every line,
// run.started first and run.completed last, path "" on run events, and
// balanced step brackets per (path, iteration) with every message and tool
// event inside an open bracket of its own path and iteration.
//
// It also runs transcript.ValidateFile on the file, sibling links
// included, and fails on any error it reports.
func readRun(t *testing.T, store recorder.Store, runID string) []*transcript.Event {
	t.Helper()
	rep := validate(t, store, runID)
	isTrue(t, rep.OK(), "validator errors: %v", rep.Errors)
	return readEvents(t, store, runID)
}

// validate runs the transcript validator on runID's file.
func validate(t *testing.T, store recorder.Store, runID string) *transcript.Report {
	t.Helper()
	p, err := store.TranscriptPath(runID)
	noErr(t, err)
	rep, err := transcript.ValidateFile(os.DirFS(filepath.Dir(p)), filepath.Base(p), transcript.ValidateOptions{})
	noErr(t, err)
	isTrue(t, rep.Finished, "run.completed written")
	return rep
}

// readEvents is readRun without the validator.
func readEvents(t *testing.T, store recorder.Store, runID string) []*transcript.Event {
	t.Helper()
	p, err := store.TranscriptPath(runID)
	noErr(t, err)
	data, err := os.ReadFile(p)
	noErr(t, err)
	eq(t, strings.TrimSuffix(filepath.Base(p), ".jsonl"), runID)
	var evs []*transcript.Event
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		ev, err := transcript.DecodeEvent(sc.Bytes())
		noErr(t, err, "line %d: %s", len(evs)+1, sc.Text())
		evs = append(evs, ev)
	}
	noErr(t, sc.Err())
	notEmpty(t, evs)
	type key struct {
		path string
		it   int
	}
	open := map[key]int{}
	calls := map[key]int{}
	for i, ev := range evs {
		eq(t, uint64(i+1), ev.Seq, "seq in file order")
		eq(t, runID, ev.RunID)
		eq(t, evs[0].ParentRunID, ev.ParentRunID, "parent_run_id on line %d", i+1)
		k := key{ev.Path, ev.Iteration}
		switch ev.Type {
		case transcript.RunStarted:
			zero(t, i, "run.started first")
			empty(t, ev.Path)
			eq(t, transcript.Schema, ev.Step().Schema)
			eq(t, producerName, ev.Step().Producer.Name)
			notEmpty(t, ev.Step().Producer.Version)
		case transcript.RunCompleted:
			eq(t, len(evs)-1, i, "run.completed last")
			empty(t, ev.Path)
		case transcript.StepStarted:
			zero(t, open[k], "duplicate start %v", k)
			open[k]++
		case transcript.StepCompleted:
			eq(t, 1, open[k], "completion without start %v", k)
			open[k]--
		case transcript.StepCallWorkflowStarted:
			notEmpty(t, ev.ChildRunID)
			calls[k]++
		case transcript.StepCallWorkflowCompleted:
			notEmpty(t, ev.ChildRunID)
			eq(t, 1, calls[k])
			calls[k]--
		default:
			notEmpty(t, ev.Path, "%s outside a step", ev.Type)
			isTrue(t, open[k] == 1 || calls[k] == 1, "%s at %v outside its step", ev.Type, k)
		}
	}
	eq(t, transcript.RunCompleted, evs[len(evs)-1].Type, "run.completed last")
	for k, n := range open {
		zero(t, n, "unclosed step %v", k)
	}
	for k, n := range calls {
		zero(t, n, "unclosed call %v", k)
	}
	return evs
}

// runStatus returns run.completed's status and error.
func runStatus(evs []*transcript.Event) (string, string) {
	p := evs[len(evs)-1].Step()
	return p.Status, p.Error
}

// stepLine is a compact view of a step event for table comparisons.
type stepLine struct {
	Type      transcript.EventType
	Path      string
	Iteration int
	Attempt   int
	Status    string
}

func stepLines(evs []*transcript.Event) []stepLine {
	var out []stepLine
	for _, ev := range evs {
		if p := ev.Step(); p != nil && ev.Path != "" {
			out = append(out, stepLine{ev.Type, ev.Path, ev.Iteration, p.Attempt, p.Status})
		}
	}
	return out
}

func find(evs []*transcript.Event, typ transcript.EventType, path string) []*transcript.Event {
	var out []*transcript.Event
	for _, ev := range evs {
		if ev.Type == typ && (path == "" || ev.Path == path) {
			out = append(out, ev)
		}
	}
	return out
}

func sl(typ transcript.EventType, path string, it, attempt int, status string) stepLine {
	return stepLine{typ, path, it, attempt, status}
}

const (
	ss = transcript.StepStarted
	sc = transcript.StepCompleted
)

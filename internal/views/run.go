package views

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/twasm/twasm/internal/regfile"
	"github.com/twasm/twasm/internal/runid"
	"github.com/twasm/twasm/internal/vocab"
	"github.com/twasm/twasm/transcript"
)

// Run is one transcript file read in full, tolerantly.
type Run struct {
	// ID is the run id: the first event's run_id, else the file name.
	ID string
	// File is where the transcript was read from ("" for a reader).
	File string
	// Events are the decoded events in file order, unknown types included.
	Events []*transcript.Event
	// Problems are the per-line problems and warnings of the reader, each a
	// *transcript.LineError, in file order.
	Problems []error
}

// ReadRun reads a whole transcript from r. file is only used to name the
// run when its events carry no run id. The error is an I/O failure; every
// problem with the content is in Run.Problems.
func ReadRun(r io.Reader, file string) (*Run, error) {
	evs, problems, err := transcript.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	run := &Run{File: file, Events: evs, Problems: problems}
	for _, ev := range evs {
		if ev.RunID != "" {
			run.ID = ev.RunID
			break
		}
	}
	if run.ID == "" && file != "" {
		run.ID = strings.TrimSuffix(filepath.Base(file), ".jsonl")
	}
	return run, nil
}

// ErrNoRun is matched by errors about a run whose transcript file does not
// exist.
var ErrNoRun = errors.New("no such run")

// Loader opens transcript files. Child runs are looked up in Dir, the
// directory that holds <run-id>.jsonl files (<storage>/transcripts, or the
// directory of a transcript named by path, as the validator does).
type Loader struct {
	Dir string
}

// ChildPath returns the path of the transcript of runID inside l.Dir,
// after checking that runID is a canonical run id so that an id read from
// a file cannot name anything outside the directory.
func (l Loader) ChildPath(runID string) (string, error) {
	if err := runid.Valid(runID); err != nil {
		return "", err
	}
	return filepath.Join(l.Dir, runID+".jsonl"), nil
}

// Load reads the transcript of runID from l.Dir.
func (l Loader) Load(runID string) (*Run, error) {
	p, err := l.ChildPath(runID)
	if err != nil {
		return nil, err
	}
	return LoadFile(p)
}

// LoadFile reads the transcript at path. A missing file matches
// [ErrNoRun] and fs.ErrNotExist; anything but a regular file (a FIFO
// planted in the storage) is refused without blocking
// (regfile.ErrNotRegular).
func LoadFile(path string) (*Run, error) {
	f, err := regfile.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: %w", ErrNoRun, err)
		}
		return nil, err
	}
	defer f.Close()
	return ReadRun(f, path)
}

// ErrNotTranscript is matched by the error about a file that is not a
// twasm transcript.
var ErrNotTranscript = errors.New("not a twasm transcript")

// CheckTranscript refuses a file that holds no transcript event: empty,
// or no line that decodes to an event of the format's vocabulary with a
// run id (a text file, a binary, another program's JSON Lines). A
// transcript with some broken lines passes: the views show its problems.
func CheckTranscript(run *Run) error {
	for _, ev := range run.Events {
		if _, unknown := ev.Payload.(*transcript.RawPayload); ev.RunID != "" && !unknown {
			return nil
		}
	}
	switch {
	case len(run.Events) == 0 && len(run.Problems) == 0:
		return fmt.Errorf("%w: the file is empty", ErrNotTranscript)
	case len(run.Problems) > 0:
		return fmt.Errorf("%w: no line is a transcript event (%v)", ErrNotTranscript, run.Problems[0])
	}
	return fmt.Errorf("%w: no line is a transcript event (the first has type %q)", ErrNotTranscript, run.Events[0].Type)
}

// ProblemStrings renders reader problems as "line N: reason" strings.
func ProblemStrings(ps []error) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.Error())
	}
	return out
}

// EventJSON encodes ev as its transcript line. An event of a type this
// version does not know cannot go through the encoder (writers emit only
// the closed vocabulary), so it is rebuilt from its envelope, raw payload
// and extra fields: a reader sees it as it was in the file.
func EventJSON(ev *transcript.Event) (json.RawMessage, error) {
	if line, err := transcript.AppendEvent(nil, ev); err == nil {
		return line, nil
	}
	m := map[string]any{}
	for k, v := range ev.Extra {
		m[k] = v
	}
	m["seq"], m["run_id"], m["type"], m["path"], m["iteration"] = ev.Seq, ev.RunID, string(ev.Type), ev.Path, ev.Iteration
	if ev.ParentRunID != "" {
		m["parent_run_id"] = ev.ParentRunID
	}
	if ev.ChildRunID != "" {
		m["child_run_id"] = ev.ChildRunID
	}
	if !ev.Timestamp.IsZero() {
		m["timestamp"] = ev.Timestamp.UTC().Format(vocab.TimeLayout)
	}
	if p, ok := ev.Payload.(*transcript.RawPayload); ok && len(p.JSON) > 0 {
		m["payload"] = p.JSON
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode event seq %d: %w", ev.Seq, err)
	}
	return b, nil
}

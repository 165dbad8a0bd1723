package export

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/twasm/twasm/internal/runtree"
	"github.com/twasm/twasm/internal/views"
	"github.com/twasm/twasm/transcript"
)

// ErrNotTranscript is matched by the error for a file that holds no
// transcript event at all (an empty file, or some other file named as a
// run).
var ErrNotTranscript = errors.New("not a twasm transcript")

// Run names one transcript file to export. Dir is where its linked child
// runs are looked up (<storage>/transcripts, or the file's own directory).
type Run struct {
	Path string
	Dir  string
	// Mask, when set, masks every event read for an export before it is
	// used (redact.Redactor.Mask, `--redact`); the run's linked child
	// runs are read with it too.
	Mask func(*transcript.Event)
}

// childPath returns the transcript path of a linked child run, after
// checking that the id read from a file is a canonical run id, so that it
// cannot name a file outside dir (runtree.Path).
func (r Run) childPath(id string) (string, error) {
	return runtree.Path(r.Dir, id)
}

// child returns the Run of a linked child, in the same directory.
func (r Run) child(id string) (Run, error) {
	p, err := r.childPath(id)
	if err != nil {
		return Run{}, err
	}
	return Run{Path: p, Dir: r.Dir, Mask: r.Mask}, nil
}

// link is r's link to child run id for runtree.Walk: opening it checks
// that the child's file starts as a transcript (a missing file is
// reported as missing, a file that is not a run as unreadable), so that
// a child is either exported whole or reported.
func link[N any](r Run, id string, attach func(N, *runtree.ChildError)) runtree.Link[Run, N] {
	return runtree.Link[Run, N]{ID: id, Attach: attach,
		Open: func(ctx context.Context) (Run, error) {
			c, err := r.child(id)
			if err != nil {
				return Run{}, err
			}
			if _, err := readHead(ctx, c.Path); err != nil {
				return Run{}, err
			}
			return c, nil
		}}
}

// eachEvent streams the decodable events of the transcript at path to fn,
// in file order, holding one line at a time. Lines the tolerant reader
// cannot decode are skipped (the validator reports them); a file with no
// event at all is [ErrNotTranscript]. A non-regular file is refused
// before it is opened, so a FIFO cannot block an export.
func eachEvent(ctx context.Context, path string, fn func(*transcript.Event) error) error {
	return eachEventStrict(ctx, path, false, false, fn)
}

// runEvents streams the events of run to fn as eachEventStrict does,
// each masked first when the run says so. A masked read is strict: a
// line that cannot be decoded cannot be checked either.
func runEvents(ctx context.Context, run Run, fn func(*transcript.Event) error) error {
	if run.Mask == nil {
		return eachEvent(ctx, run.Path, fn)
	}
	return eachEventStrict(ctx, run.Path, true, false, func(ev *transcript.Event) error {
		run.Mask(ev)
		return fn(ev)
	})
}

// ErrUndecodable is matched by the error of a strict read (an export that
// must see every line, such as a redacted one) that met a line it cannot
// decode.
var ErrUndecodable = errors.New("a transcript line cannot be decoded")

// eachEventStrict is eachEvent; with strict, a line that cannot be decoded
// (malformed, too long) stops the read with [ErrUndecodable] instead of
// being skipped. A final line with no LF that does not decode is skipped
// even so: it is a line still being written (a run being recorded, read
// live by twasm serve) or the torn tail of a killed writer, which the
// recorder repairs; nothing of it is shown. With outline, each event is
// transcript.DecodeOutline's (the same lines read, and the same ones
// skipped or refused, as without).
func eachEventStrict(ctx context.Context, path string, strict, outline bool, fn func(*transcript.Event) error) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s: %w: not a regular file (%s)", path, fs.ErrInvalid, st.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	rd := transcript.NewReader(f, transcript.ReaderOptions{Outline: outline})
	n := 0
	for rd.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if rd.Event() == nil {
			if strict && !tornTail(rd) {
				return fmt.Errorf("%s: %w: %v", path, ErrUndecodable, rd.Problems()[0])
			}
			continue
		}
		n++
		if err := fn(rd.Event()); err != nil {
			return err
		}
	}
	if err := rd.Err(); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w (no event line)", path, ErrNotTranscript)
	}
	return nil
}

// tornTail reports whether the reader's current line is a final line
// with no LF that did not decode.
func tornTail(rd *transcript.Reader) bool {
	for _, p := range rd.Problems() {
		if errors.Is(p, transcript.ErrTruncated) {
			return true
		}
	}
	return false
}

// stepKey identifies one step attempt bracket of a run.
type stepKey struct {
	path string
	iter int
}

// parentStep returns, among the keys of the open steps (oldest first), the
// one a step of (path, iter) nests under (views.ParentStep's rule, the
// execution tree's).
func parentStep(order []stepKey, path string, iter int) (stepKey, bool) {
	return views.ParentStep(order, func(k stepKey) (string, int) { return k.path, k.iter }, path, iter)
}

// IsChild reports whether the transcript at r.Path belongs to a run begun
// as a child of another (its first event names a parent run). An
// unreadable file is not a child.
func IsChild(r Run) bool {
	h, err := readHead(context.Background(), r.Path)
	return err == nil && h.parent != ""
}

// LastStepStart returns the seq of the last step.started of (path,
// iteration) in the transcript at file: where the events of the step a
// process just recorded begin.
func LastStepStart(ctx context.Context, file, path string, iteration int) (uint64, error) {
	var seq uint64
	err := eachEvent(ctx, file, func(ev *transcript.Event) error {
		if ev.Type == transcript.StepStarted && ev.Path == path && ev.Iteration == iteration {
			seq = ev.Seq
		}
		return nil
	})
	if err == nil && seq == 0 {
		err = fmt.Errorf("%s: no step %q (iteration %d)", file, path, iteration)
	}
	return seq, err
}

package runtree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/twasm/twasm/internal/runid"
)

// MaxDepth bounds how deep child runs are followed: at most MaxDepth runs
// from the root to the deepest, the root included. Real workflows nest a
// handful of levels.
const MaxDepth = 64

// Reason says why a link to a child run was not followed.
type Reason string

const (
	// Missing: there is no transcript file for the child.
	Missing Reason = "missing"
	// Cycle: the child was visited already in this walk (a cycle, or the
	// same child linked twice).
	Cycle Reason = "cycle"
	// TooDeep: following the link would go deeper than MaxDepth.
	TooDeep Reason = "too deep"
	// Invalid: the id is not a canonical run id, so it names no file.
	Invalid Reason = "invalid id"
	// Unreadable: the child's file exists but cannot be read as a run.
	Unreadable Reason = "unreadable"
)

// ChildError is a link to a child run that was not followed.
type ChildError struct {
	// Child is the child run id as the link names it.
	Child  string
	Reason Reason
	// Err is the cause, for Missing, Invalid and Unreadable.
	Err error
}

func (e *ChildError) Error() string {
	switch e.Reason {
	case Missing:
		return "no transcript file for child run " + e.Child
	case Cycle:
		return fmt.Sprintf("cycle: run %s is already in the tree", e.Child)
	case TooDeep:
		return fmt.Sprintf("not followed: deeper than %d runs", MaxDepth)
	}
	if e.Err != nil {
		return e.Err.Error()
	}
	return fmt.Sprintf("child run %s: %s", e.Child, e.Reason)
}

func (e *ChildError) Unwrap() error { return e.Err }

// Path returns the transcript file of run id in dir, after checking that
// id is a canonical run id (a [*ChildError] with [Invalid] otherwise).
func Path(dir, id string) (string, error) {
	if err := runid.Valid(id); err != nil {
		return "", &ChildError{Child: id, Reason: Invalid, Err: err}
	}
	return filepath.Join(dir, id+".jsonl"), nil
}

// Tracker holds one walk's state: the runs visited so far. The zero value
// is not ready; use [NewTracker].
type Tracker struct {
	seen map[string]bool
}

// NewTracker returns the state of a new walk.
func NewTracker() *Tracker { return &Tracker{seen: map[string]bool{}} }

// Visited records that run id is visited (the root, or a child being
// followed). An empty id is ignored.
func (t *Tracker) Visited(id string) {
	if id != "" {
		t.seen[id] = true
	}
}

// Check says whether a link to child from a run at depth may be followed:
// nil, or why not ([Cycle], [TooDeep], [Invalid]). It does not record
// the child; the caller calls Visited when it follows the link.
func (t *Tracker) Check(child string, depth int) *ChildError {
	if err := runid.Valid(child); err != nil {
		return &ChildError{Child: child, Reason: Invalid, Err: err}
	}
	if t.seen[child] {
		return &ChildError{Child: child, Reason: Cycle}
	}
	if depth+1 >= MaxDepth {
		return &ChildError{Child: child, Reason: TooDeep}
	}
	return nil
}

// Opened classifies the error of opening or reading a child run: a
// missing file is [Missing], a [*ChildError] stays itself, anything else
// is [Unreadable].
func Opened(child string, err error) *ChildError {
	var ce *ChildError
	switch {
	case errors.As(err, &ce):
		return ce
	case errors.Is(err, fs.ErrNotExist):
		return &ChildError{Child: child, Reason: Missing, Err: err}
	}
	return &ChildError{Child: child, Reason: Unreadable, Err: err}
}

// Link is a visited run's link to a child run.
type Link[R, N any] struct {
	// ID is the child's run id as the parent names it.
	ID string
	// Open reads the child (a missing file wraps fs.ErrNotExist). Walk
	// calls it only when the link may be followed.
	Open func(ctx context.Context) (R, error)
	// Attach receives the outcome: the child's node when it was followed,
	// or why it was not. It may be nil.
	Attach func(child N, err *ChildError)
}

// Visited is what a visitor made of one run.
type Visited[R, N any] struct {
	// ID is the run's id as its file says (recorded as visited besides
	// the link's id).
	ID    string
	Node  N
	Links []Link[R, N]
}

// Visitor reads one run at depth (0 for the root) and returns what it
// made of it with the links to its child runs, in the order they are to
// be followed. An error ends the walk; a child run whose visit fails
// with fs.ErrNotExist is reported to its link as [Missing] instead.
type Visitor[R, N any] func(ctx context.Context, run R, depth int) (Visited[R, N], error)

// Walk visits root, then each child run it links to, depth first, as the
// package doc says, and returns the root's node.
func Walk[R, N any](ctx context.Context, root R, visit Visitor[R, N]) (N, error) {
	return walk(ctx, NewTracker(), root, visit, 0)
}

func walk[R, N any](ctx context.Context, t *Tracker, run R, visit Visitor[R, N], depth int) (N, error) {
	v, err := visit(ctx, run, depth)
	if err != nil {
		return v.Node, err
	}
	t.Visited(v.ID)
	for _, l := range v.Links {
		if err := ctx.Err(); err != nil {
			return v.Node, err
		}
		var zero N
		attach := func(n N, ce *ChildError) {
			if l.Attach != nil {
				l.Attach(n, ce)
			}
		}
		if ce := t.Check(l.ID, depth); ce != nil {
			attach(zero, ce)
			continue
		}
		child, err := l.Open(ctx)
		if err != nil {
			attach(zero, Opened(l.ID, err))
			continue
		}
		t.Visited(l.ID)
		n, err := walk(ctx, t, child, visit, depth+1)
		switch {
		case err == nil:
			attach(n, nil)
		case errors.Is(err, fs.ErrNotExist) && ctx.Err() == nil:
			attach(zero, &ChildError{Child: l.ID, Reason: Missing, Err: err})
		default:
			return v.Node, err
		}
	}
	return v.Node, nil
}

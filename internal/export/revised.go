package export

import (
	"context"
	"errors"
	"time"

	"github.com/twasm/twasm/transcript"
)

// revisions are, by call number (the tool events with a call id, paired
// by transcript.Pairer in file order), the latest version of each call
// and result a later revised one replaced: an export that writes a call
// or result as soon as it reads it (a span, a message) writes the
// latest version at the first one, and leaves the later ones out.
//
// A call revised before its result (read while it streamed, finished in
// a later part) is written at its latest version before the result
// (openAt, a seq), when the earlier parts' steps are over, from when its
// first version was read (started).
type revisions struct {
	pairs                transcript.Pairer
	latestCall, latestRe map[int]*transcript.ToolPayload
	openAt               map[int]uint64
	started              map[int]time.Time
	// first and answered are, by call number, the time of each call's
	// first version and whether a result answered it (the pass's own).
	first    []time.Time
	answered []bool
}

func newRevisions() *revisions {
	return &revisions{latestCall: map[int]*transcript.ToolPayload{}, latestRe: map[int]*transcript.ToolPayload{},
		openAt: map[int]uint64{}, started: map[int]time.Time{}}
}

// note feeds a tool event with a call id (others are left out, as the
// export's own pairing leaves them).
func (r *revisions) note(ev *transcript.Event) {
	t := ev.Tool()
	if t == nil || t.CallID == "" {
		return
	}
	n, again, ok := r.pairs.Feed(ev)
	switch {
	case !ok:
	case ev.Type == transcript.ToolCall && !again:
		r.first, r.answered = append(r.first, ev.Timestamp), append(r.answered, false)
	case ev.Type == transcript.ToolCall:
		r.latestCall[n] = t
		if !r.answered[n] {
			r.openAt[n], r.started[n] = ev.Seq, r.first[n]
		}
	case again:
		r.latestRe[n] = t
	default:
		r.answered[n] = true
	}
}

// opens says whether the call event of number n at seq (again: a new
// version of an earlier one) is the one its span is made at, and from
// when (zero: its own time).
func (r *revisions) opens(n int, seq uint64, again bool) (bool, time.Time) {
	at, ok := r.openAt[n]
	if !ok {
		return !again, time.Time{}
	}
	return at == seq, r.started[n]
}

// call is the latest version of call n; result that of its result.
func (r *revisions) call(n int) *transcript.ToolPayload   { return r.latestCall[n] }
func (r *revisions) result(n int) *transcript.ToolPayload { return r.latestRe[n] }

// revisionsOf reads run for its revisions, of the events keep keeps: a
// pass over the outline first (no content decoded), and a whole one only
// when a tool event of it is marked revised.
func revisionsOf(ctx context.Context, run Run, keep func(*transcript.Event) bool) (*revisions, error) {
	r := newRevisions()
	err := eachEventStrict(ctx, run.Path, run.Mask != nil, true, func(ev *transcript.Event) error {
		if t := ev.Tool(); t != nil && t.Revised() && keep(ev) {
			return errRevised
		}
		return nil
	})
	if !errors.Is(err, errRevised) {
		return r, err
	}
	err = runEvents(ctx, run, func(ev *transcript.Event) error {
		if keep(ev) {
			r.note(ev)
		}
		return nil
	})
	return r, err
}

// errRevised stops the outline pass at the first revised tool event.
var errRevised = errors.New("a revised tool event")

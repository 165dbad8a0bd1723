package export

import (
	"context"
	"errors"

	"github.com/twasm/twasm/transcript"
)

// revisions are, by call number (the tool events with a call id, paired
// by transcript.Pairer in file order), the latest version of each call
// and result a later revised one replaced: an export that writes a call
// or result as soon as it reads it (a span, a message) writes the
// latest version at the first one, and leaves the later ones out.
type revisions struct {
	pairs                transcript.Pairer
	latestCall, latestRe map[int]*transcript.ToolPayload
}

func newRevisions() *revisions {
	return &revisions{latestCall: map[int]*transcript.ToolPayload{}, latestRe: map[int]*transcript.ToolPayload{}}
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
	case !ok || !again:
	case ev.Type == transcript.ToolCall:
		r.latestCall[n] = t
	default:
		r.latestRe[n] = t
	}
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

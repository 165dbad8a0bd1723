package archive

import "github.com/twasm/twasm/transcript"

// PartFilter is the filter the next part of a session's run is written
// through (capture.Options.Filter), as sync writes it: it leaves out the
// calls, results and message blocks the run's transcript (runID, under
// the storage root) holds already, by the provider's ids. renormalize
// uses it to rebuild an archived run part by part.
func PartFilter(root, runID string) (func(*transcript.Event) *transcript.Event, error) {
	s := newArchived()
	if err := s.add(root, runID); err != nil {
		return nil, err
	}
	return s.filter, nil
}

// PartShare turns r, the figures of a part over the whole stream its
// plugin read (the earlier parts' replay included), into the part's own
// share, given the session's totals after the previous part (nil: the
// first part), as sync writes it; it returns the totals after this part.
func PartShare(r *transcript.AgentResult, prev *Totals) *Totals {
	t := totalsOf(r)
	subtract(r, prev)
	return t
}

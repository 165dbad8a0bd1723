package recorder

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/twasm/twasm/internal/runid"
)

// ErrInvalidRunID is matched (errors.Is) by every rejection of a run id
// that is not the canonical lower-case spelling of a UUID v4 (see [Store]).
var ErrInvalidRunID = runid.ErrInvalid

// Store lays out run files under one storage root:
//
//	<Root>/transcripts/<run-id>.jsonl   the transcript
//	<Root>/raw/<run-id>/                raw provider captures (package capture writes them)
//
// A Store is a value with no state of its own; it is safe for concurrent
// use.
type Store struct{ Root string }

// NewStore returns the store rooted at root.
func NewStore(root string) Store { return Store{Root: root} }

// TranscriptPath returns the transcript path of a run after validating the
// run id, so no caller can turn an untrusted id into a path by mistake.
func (s Store) TranscriptPath(runID string) (string, error) {
	if err := runid.Valid(runID); err != nil {
		return "", fmt.Errorf("recorder: transcript path: %w", err)
	}
	return filepath.Join(s.Root, "transcripts", runID+".jsonl"), nil
}

// Open opens (creating or continuing) the transcript of runID; see the
// package-level [Open].
func (s Store) Open(ctx context.Context, runID string, opts ...Options) (*Recorder, error) {
	path, err := s.TranscriptPath(runID)
	if err != nil {
		return nil, err
	}
	return Open(ctx, path, runID, opts...)
}

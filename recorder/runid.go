package recorder

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/uuid"
)

// ErrInvalidRunID is matched (errors.Is) by every run id rejection.
var ErrInvalidRunID = errors.New("invalid run id")

// runIDError says why a run id was rejected. ID is truncated and quoted
// when printed, so a hostile id cannot flood or forge log lines.
type runIDError struct {
	ID     string
	Reason string
}

func (e *runIDError) Error() string {
	id := e.ID
	if len(id) > 64 {
		id = id[:64] + "..."
	}
	return fmt.Sprintf("invalid run id %q: %s", id, e.Reason)
}

// Is makes errors.Is(err, ErrInvalidRunID) true.
func (e *runIDError) Is(target error) bool { return target == ErrInvalidRunID }

// NewRunID returns a fresh random run id (UUID v4, canonical lower case).
func NewRunID() string { return uuid.NewString() }

// ValidRunID accepts only the canonical lower-case text form of a UUID v4
// (8-4-4-4-12 hex digits, version 4, RFC 4122 variant). Being that strict
// is what makes a run id safe to use as a file name: it can hold no path
// separator, no "..", no NUL, no upper/lower-case alias of another run on
// a case-insensitive file system, and exactly one spelling per run.
func ValidRunID(id string) error {
	bad := func(reason string) error { return &runIDError{ID: id, Reason: reason} }
	if len(id) != 36 {
		return bad("not 36 characters (want a canonical UUID v4)")
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return bad(fmt.Sprintf("want '-' at position %d", i))
			}
			continue
		}
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return bad(fmt.Sprintf("want a lower-case hex digit at position %d", i))
		}
	}
	if id[14] != '4' {
		return bad("not a version 4 UUID")
	}
	switch id[19] {
	case '8', '9', 'a', 'b':
	default:
		return bad("not an RFC 4122 variant UUID")
	}
	return nil
}

// Store lays out run files under one storage root:
//
//	<Root>/transcripts/<run-id>.jsonl   the transcript
//	<Root>/raw/<run-id>/                raw provider captures
//
// A Store is a value with no state of its own; it is safe for concurrent
// use.
type Store struct{ Root string }

// NewStore returns the store rooted at root.
func NewStore(root string) Store { return Store{Root: root} }

// TranscriptPath returns the transcript path of a run after validating the
// run id, so no caller can turn an untrusted id into a path by mistake.
func (s Store) TranscriptPath(runID string) (string, error) {
	if err := ValidRunID(runID); err != nil {
		return "", fmt.Errorf("recorder: transcript path: %w", err)
	}
	return filepath.Join(s.Root, "transcripts", runID+".jsonl"), nil
}

// RawDir returns the directory for a run's raw captures, creating it (and
// its parents) with mode 0700.
func (s Store) RawDir(runID string) (string, error) {
	if err := ValidRunID(runID); err != nil {
		return "", fmt.Errorf("recorder: raw dir: %w", err)
	}
	dir := filepath.Join(s.Root, "raw", runID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("recorder: raw dir: %w", err)
	}
	return dir, nil
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

package runid

import (
	"errors"
	"fmt"

	"github.com/google/uuid"
)

// ErrInvalid is matched (errors.Is) by every run id rejection.
var ErrInvalid = errors.New("invalid run id")

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

// Is makes errors.Is(err, ErrInvalid) true.
func (e *runIDError) Is(target error) bool { return target == ErrInvalid }

// New returns a fresh random run id (UUID v4, canonical lower case).
func New() string { return uuid.NewString() }

// Valid accepts only the canonical lower-case text form of a UUID v4
// (8-4-4-4-12 hex digits, version 4, RFC 4122 variant). Being that strict
// is what makes a run id safe to use as a file name: it can hold no path
// separator, no "..", no NUL, no upper/lower-case alias of another run on
// a case-insensitive file system, and exactly one spelling per run.
func Valid(id string) error {
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

// Key is the 16 bytes of a valid run id (Valid): a set of run ids held
// by them takes a quarter of the strings' memory. ok is false for any
// other string. FromKey gives the run id back.
func Key(id string) (k [16]byte, ok bool) {
	if Valid(id) != nil {
		return k, false
	}
	u, err := uuid.Parse(id)
	return u, err == nil
}

// FromKey is the run id of a Key.
func FromKey(k [16]byte) string { return uuid.UUID(k).String() }

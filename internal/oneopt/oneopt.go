package oneopt

import "fmt"

// Get returns the one options value given, or the zero value (the
// defaults) when none was. More than one is a programming error: Get
// panics, naming fn, rather than pick one.
func Get[T any](fn string, opts []T) T {
	switch len(opts) {
	case 0:
		var zero T
		return zero
	case 1:
		return opts[0]
	}
	panic(fmt.Sprintf("%s: %d options values given, at most one is allowed", fn, len(opts)))
}

package normalize

import "context"

// Close ends an Instance its owner took from a plugin: a host instance goes
// back to its plugin's pool (Close with a context), another closes with
// Close() when it has one; an Instance with neither has nothing to end.
func Close(in Instance) error {
	switch c := in.(type) {
	case interface{ Close(context.Context) error }:
		return c.Close(context.Background())
	case interface{ Close() error }:
		return c.Close()
	}
	return nil
}

package capture

import "github.com/twasm/twasm/host"

// A plugin of package host (sandboxed WebAssembly) is a Plugin as it is:
// each capture takes an instance from its pool and gives it back when the
// capture finishes.
var _ Plugin = (*host.Plugin)(nil)

package host

import (
	"errors"
	"fmt"
	"strings"

	"github.com/twasm/twasm/internal/normalize"
)

// Causes of a fault. A *normalize.FaultError returned by an instance wraps
// exactly one of them (the stream reports the fault in the step result's
// warnings, with its message); the message after it gives the detail.
var (
	// errTimeout: the call ran longer than the call timeout.
	errTimeout = errors.New("call timed out")
	// errOutOfMemory: the plugin hit the memory limit.
	errOutOfMemory = errors.New("out of memory")
	// errTrap: the plugin trapped or exited (an unrecovered panic in a Go
	// plugin exits).
	errTrap = errors.New("plugin trapped")
	// errFatalStatus: the plugin returned StatusFatal (the SDK does so
	// for a recovered panic).
	errFatalStatus = errors.New("plugin reported a fatal error")
	// errLimit: the plugin exceeded a limit of the contract (output size).
	errLimit = errors.New("limit exceeded")
	// errContract: the plugin broke the contract: a pointer or length
	// outside its memory, malformed records, an unknown status.
	errContract = errors.New("contract violation")
)

// ErrNoBundledPlugins is returned by New when the Options ask for the
// binary's own bundled plugins (the default) and the binary has none: it
// was built without make (`go build`, `go install`, or a program that
// depends on this module), so internal/bundled/wasm, which is build output,
// held no module. Build with make, or set the bundled plugins explicitly
// (Options.Bundled set to an empty slice runs external plugins only).
var ErrNoBundledPlugins = errors.New("host: this binary was built without its bundled plugins " +
	"(internal/bundled/wasm holds no .wasm module, it is build output): build it with `make` " +
	"(or `make bin/twasm`) from the repository root; a library user who wants external plugins only " +
	"sets host.Options.Bundled to an empty slice")

// errPluginDisabled is wrapped by the errors of a plugin disabled after
// too many consecutive faults: NewInstance (so capture.Start) returns it,
// and the calls of instances already running fail with it (their lines
// are counted as lost). It is normalize.ErrDisabled, so both names match.
var errPluginDisabled = normalize.ErrDisabled

// ErrMemoryLimit is wrapped by New's error when Options.MemoryLimit is
// out of range: the caller names where the value came from.
var ErrMemoryLimit = errors.New("memory limit out of range")

// UnknownProviderError is returned by Lookup when no plugin serves the
// provider.
type UnknownProviderError struct {
	Provider  string
	Available []string // sorted
}

// Error names the provider and the ones the runtime serves.
func (e *UnknownProviderError) Error() string {
	if len(e.Available) == 0 {
		return fmt.Sprintf("host: no plugin serves provider %q (no plugin is loaded)", e.Provider)
	}
	return fmt.Sprintf("host: no plugin serves provider %q; available: %s", e.Provider, strings.Join(e.Available, ", "))
}

// conflictError is returned by Lookup for a provider that two external
// plugins claim: neither serves it until one is removed. (A bundled and an
// external plugin do not conflict: the bundled one keeps the provider
// unless Options.ExternalOverridesBundled says otherwise.)
type conflictError struct {
	Provider string
	Paths    []string // the files claiming it, in load order
}

func (e *conflictError) Error() string {
	return fmt.Sprintf("host: provider %q is claimed by more than one plugin (%s); remove all but one from the plugin path, or name the one to use with --plugin",
		e.Provider, strings.Join(e.Paths, " and "))
}

// abiError is returned by Load for a module that does not follow the
// contract: every problem found is listed.
type abiError struct {
	Path     string
	Problems []string
}

func (e *abiError) Error() string {
	return fmt.Sprintf("host: %s is not a usable twasm plugin: %s", e.Path, strings.Join(e.Problems, "; "))
}

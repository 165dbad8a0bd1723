// Package natives lists the bundled plugins compiled into the test
// binary as plain Go packages (the native build of each
// plugins/<plugin>/ normalizer), for the tests and benchmarks that run
// every bundled plugin natively or look one up by provider name.
//
// Model: one entry per directory plugins/<plugin>/ that has a wasm entry
// point, in the order of that directory's listing (alphabetical), each
// the package's Plugin value. Plugins returns a new slice on every call:
// there is no package state to mutate.
//
// Invariant: the list is the bundled set. TestEveryBundledPlugin fails
// when a plugin directory is added without a line here, or a line names
// a plugin that is gone, so no caller silently leaves a new plugin out.
// Named finds one by its directory's name, for test tables whose rows
// name their plugin once (it panics on a name that is none).
// ForProvider finds a plugin by any provider name its manifest accepts
// (Roo Code's and Kilo Code's "roo" and "kilocode" are the cline
// plugin's), exactly as the host's registry maps a provider to a bundled
// module.
package natives

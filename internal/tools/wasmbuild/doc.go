// Package wasmbuild builds Go packages into twasm plugins (WASI reactors)
// with the go command or TinyGo (the compiler of the bundled plugins, as
// the Makefile finds it), and caches test builds by the hash of their sources
// (for TinyGo also of its version, flags and twasm's runtime patch) so that
// repeated test runs do not pay for the build.
//
// It shells out to the go tool on PATH (and tinygo): it is for tests, benchmarks and
// build scripts, never for the twasm binary itself.
package wasmbuild

// Package bundled holds the plugins built into the twasm binary: the
// .wasm files generated into internal/bundled/wasm/ before `go build`
// (they are not committed). With none generated the package still
// compiles and serves no plugin.
package bundled

// Package bundled holds the plugins built into the twasm binary: the
// .wasm files generated into internal/bundled/wasm/ before `go build`
// (they are not committed), and manifests.json, where the build
// (internal/tools/bundlerecord, run by make) records each module's manifest,
// size and sha256, so that the host maps providers to bundled plugins
// without reading or compiling them. The build also writes that record as
// Go values, manifests_gen.go beside this package's sources
// ([GeneratedFile]), which is read instead when present: no JSON is
// decoded at start. With none generated the package still compiles and
// serves no plugin; without either record the host loads each bundled
// plugin once to learn its manifest, as for an external one.
//
// Module bytes are read only on demand: a run uses one plugin. The host
// reads them in place ([Plugin.Shared]: GeneratedFile also embeds each
// module as a string, which the linker stores once with the embed.FS
// copy); [Plugin.Wasm] copies them out of the binary.
package bundled

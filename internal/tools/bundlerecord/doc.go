// Command record prepares a directory of bundled plugins for embedding:
// it compacts each module's data segments and instruments it with an
// interrupt flag, in place (packages wasmdata and wasminterrupt: the host
// would otherwise do both on every run), then writes the manifests file
// (bundled.ManifestsFile): the manifest, size and sha256 of every module,
// learnt by loading it through the host, as twasm would. The build runs
// it after building the modules, so that twasm maps providers to bundled
// plugins without compiling any. With -go FILE it also writes the record
// as Go values of package bundled (bundled.GeneratedFile), which the host
// reads without decoding JSON:
//
//	go run ./internal/tools/bundlerecord -go internal/bundled/manifests_gen.go internal/bundled/wasm
package main

// Package pluginbench measures normalization throughput of the bundled
// plugins, natively and through the WebAssembly host (trusted and
// sandboxed), on the same corpus in the same run, plus an AWF-style
// encoding/json line decoder as the design's first implementation's
// baseline. `make bench` turns the figures into ratios in BENCHMARKS.md.
//
// The wasm modules are built as the bundled ones are: with TinyGo and the
// Makefile's flags when TinyGo is installed (WASM_TOOLCHAIN=go measures
// standard Go's build); the run prints which. They come from the tests'
// build cache (wasmbuild.TestCacheDir), where make's own builds of the
// bundled plugins leave a copy (internal/tools/pluginbuild): after make,
// the same bytes are measured without building them again.
// TWASM_BENCH_WASM=DIR measures DIR/<plugin>.wasm instead (another build
// of the same plugins, A/B with the same code).
//
// TestPluginMemoryFlat checks, on every run of the suite, that a plugin
// instance's linear memory stops growing: many lines in one stream, then
// many streams on one instance (TWASM_MEMORY_LINES and
// TWASM_MEMORY_STREAMS set the counts: 800,000 lines in the suite,
// 1,000,000 lines and 10,000 streams in `make bench`).
//
// TestAllocsPerLine, a profiling aid skipped unless TWASM_ALLOCS names a
// plugin, counts a TinyGo guest's allocations per line by calling site
// (a wazero listener on runtime.alloc): where a plugin's guest time goes.
package pluginbench

// Package pluginbench measures normalization throughput of the bundled
// plugins, natively and through the WebAssembly host (trusted and
// sandboxed), on the same corpus in the same run, plus an AWF-style
// encoding/json line decoder as the design's first implementation's
// baseline. `make bench` turns the figures into ratios in BENCHMARKS.md.
package pluginbench

// Package plugintest is the test support the plugins share: it runs a
// plugin natively, through normalize.Run as the host would (without
// wasm), or through the bare sdk.Plugin.Driver, and checks what every plugin
// must do whatever its provider.
//
//   - [Conformance] runs every real capture of ../shared/fixtures/<provider>/
//     (next to the repository root; the test skips when there is none): no
//     fault, every tool call of the raw input is a tool.call, every piece
//     of model text lands in a block, and what is unmapped matches the
//     checked-in expectation file <fixture file>.unmapped.json. How to find
//     the tool calls and the model text in the raw input is the provider's
//     own logic and stays in the plugin's test ([Conformance.Facts]).
//   - [CheckUnmapped] compares unmapped counts with an expectation file.
//   - [Run] and [Outcome] run one input and collect tool.call ids and
//     block texts; [CheckRun] is the fuzz body: no failed line, and every
//     event marshals as a transcript line.
//   - [GoldenInputs], [Batches], [Corpus] and [Drive] feed the driver as
//     the host does; [Fuzz] and [Benchmark] are a plugin's fuzz test (the
//     pipeline and the bare driver) and its native benchmark.
//
// It is imported from tests only.
package plugintest

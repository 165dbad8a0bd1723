// Package echoplugin is the smallest normalizer, for tests and benchmarks
// of the SDK and the host: every JSON line with a "text" field becomes one
// assistant message, every other line is unmapped. Its wasm build is
// abi/sdk/testdata/echo; benchmarks run this same package natively as the
// baseline, so the two cannot drift apart.
package echoplugin

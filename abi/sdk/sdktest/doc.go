// Package sdktest checks a twasm plugin from its author's own Go tests,
// as testing/slogtest checks a slog.Handler: the checks twasm's bundled
// plugins run, over the author's golden cases and captures, with the
// plugin compiled in (natively, through the host's own pipeline: lines,
// tapes, batches, records assembled into events).
//
//	var update = flag.Bool("update", false, "rewrite the golden files")
//
//	func TestPlugin(t *testing.T) {
//		sdktest.Test(t, myagent.Plugin, sdktest.Options{
//			Provider: "myagent",
//			Golden:   "testdata/golden",
//			Captures: captures, // real output, no pinned rendering
//			Update:   *update,
//		})
//	}
//
//	func FuzzPlugin(f *testing.F) {
//		sdktest.Fuzz(f, myagent.Plugin, sdktest.Options{Provider: "myagent", Golden: "testdata/golden"})
//	}
//
// [Test] runs, as subtests: the golden cases (each rendering is its
// golden file, package golden); conformance of every input (no line
// lost to a plugin fault, every raw line accounted for as spec §6.8
// wants: it gave a record, or was declared ignored, or counted unmapped;
// a capture's unmapped counts are its hand-written [Expectation]; every
// assembled event a valid transcript line; and the author's own
// [Options.Check]); and batching invariance (the same rendering whether
// the input arrives in full batches, one line a call or three, as a live
// agent's output does). [Fuzz] is a plugin's fuzz body: whatever the
// bytes, no fault, every raw line accounted for, valid events, and
// records that decode with spans inside their input, through the
// pipeline and through the bare driver.
// [CheckKeys] checks that the keys a normalizer reads are declared, and
// [Benchmark] measures the plugin alone. [Run] gives what the host made
// of one input, for table tests of the author's own.
//
// The same checks run the built module: `twasm golden check --plugin
// x.wasm testdata/golden` (the golden cases, through wasm, with either
// toolchain's build). examples/plugin-template in twasm's repository is
// a plugin to copy that uses both.
//
// It is imported from tests only (it links package testing); it is
// public so that a plugin in another module can import it, and its API
// names nothing internal to twasm.
package sdktest

// Package endings holds the cross-plugin conformance test of how a
// session ends (spec §6.3, §6.7, §6.12: "the same situation gets the
// same status in every plugin"). For every bundled plugin whose format
// can express it, a small hand-written input per situation, written from
// the format the plugin's doc.go and its golden inputs show, is run
// through the plugin natively, through its bundled wasm module and
// through the module of the other toolchain (bin/wasm-<toolchain>, which
// `make golden` builds), each through wazero as a capture runs it:
//
//   - a log that ends on an unanswered user prompt is incomplete;
//   - one that ends on a tool call without a result is incomplete, the
//     call dangling;
//   - a provider error (a rate limit, an overloaded or auth error) after
//     the last answered prompt is error, its text kept in the step's
//     errors;
//   - an error followed by a later successful answer is ok, the error
//     still recorded;
//   - a tool result that reports a failure is a tool.result of status
//     error;
//   - a normal finished turn is ok.
//
// Where a format cannot express a situation, the table says why.
// The inputs are Go values built by each plugin's renderer (formats_test.go),
// so a situation is the same sequence of events in every format.
//
// It is imported by nothing: the package is its test.
package endings

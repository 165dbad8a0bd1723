// Package golden pins a plugin's output: it runs a plugin over raw inputs,
// renders what the host assembles into a canonical, reviewable JSONL form,
// and compares it with checked-in expectations.
//
// A golden directory holds pairs: <case>.<ext> (raw provider output, any
// extension) and <case>.golden.jsonl (the expected rendering). The
// rendering has one line per thing the sink received, in order:
//
//	{"event":{...a transcript line...}}            an event (run_id "golden", seq per scope)
//	{"scope_open":{"scope":..,"parent_tool_id":..,"name":..,"description":..}}
//	{"scope_close":{"scope":..,"status":..,"error":..}}
//	{"result":{...the step's AgentResult...}}      always last
//
// Recording-time values are normalized: events without a provider
// timestamp carry the Unix epoch, and the run id is the constant "golden".
// Everything the plugin decided is kept verbatim, so a diff of a golden
// file is a review of a plugin's behaviour.
//
// Rules that keep a check honest:
//
//   - A directory with no case is an error ([ErrNoCases]), naming its
//     subdirectories: an empty or mistyped directory, or the parent of the
//     per-provider directories, must not pass with nothing checked. An
//     expectation without its input is an error too.
//   - A rendering in which lines were lost to a plugin fault (the result's
//     failed_lines, "line(s) lost" warnings) is never accepted as expected
//     output, by check or by update, unless the case has a <case>.fault
//     file saying why; a .fault file on a case without a fault
//     is an error, so the allowance cannot outlive the fault.
//   - An [Outcome]'s Diff shows a changed JSON line as the fields that
//     differ ("path: want → got"), and cuts other lines, so a one-field
//     change in a 1 KB line reads as that field.
//
// [Check] runs every case of a directory through a capture.Plugin (a
// *host.Plugin, sandboxed, or capture.NativePlugin of a plugin compiled
// in) with [Options] (the provider name, and Update to rewrite the
// expectations); [Normalize] renders one input; [Cases] lists a
// directory's cases by the rules Check follows. The same check runs in
// the project's tests (natively and through wasm) and in `twasm golden
// check`, which plugin authors run in their own CI.
//
// Plugin authors check their plugins with this package (golden/goldentest
// runs it as Go subtests, twasm golden check from the command line).
// twasm's public packages are transcript, recorder, lifecycle, capture and
// host; a plugin author imports abi/sdk, abi, golden and, in tests,
// abi/sdk/sdktest; each plugins/<provider> package exports its
// normalizer. Everything else in the
// module is internal (README, Layout).
package golden

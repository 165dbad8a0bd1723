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
// The same check runs in the project's tests (natively and through wasm)
// and in `twasm golden check`, which plugin authors run in their own CI.
package golden

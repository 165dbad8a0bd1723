// Package normalize is the host side of normalization: it cuts raw
// provider output into lines, indexes each JSON line into a tape, sends
// batches to a plugin [Instance] (WebAssembly or native), and assembles the
// records the plugin reports into transcript events, which it hands to a
// [Sink], plus the step's [transcript.AgentResult].
//
// It imports no WebAssembly runtime: package host provides wasm Instances,
// [NativeInstance] runs a plugin in-process. Both go through the same code
// here, so the native build is an exact baseline for the wasm one.
//
// # Model
//
// A [Stream] is one agent step's output. Feed it bytes as they arrive (a
// child process's stdout) and Close it at the end; [Run] does both for a
// reader. A caller that runs many streams one after the other lends
// them its [Buffers] (Options.Buffers), which each takes at NewStream
// and gives back at Close, so that each does not grow its own batch
// buffer. Complete lines are sent at the end of every Feed call, so events
// reach the sink while the agent runs. The assembler follows the record
// semantics of package abi (see abi's package documentation): messages are
// built across lines and written once when closed, deltas are joined,
// repeated snapshots replace their slot, tool calls and results are paired
// by call id (a call id reported again is the same call, unless the first
// call has its result, or a user prompt came after it, and the id's
// tool_use or command block is in another message: then it is a new call
// that reuses the id, as providers whose ids are unique per response do;
// a call or result the plugin marks revised, ABI 1.13, is written again
// as a new version of the one of its id before it, marked
// transcript.RevisedField, and counted once by every reader, with its
// latest input and outcome; with nothing of its id before, it is an
// ordinary one), usage in "set" mode is not
// double-added, provider errors are listed in the result's Errors with
// their raw line, and the final status
// follows spec 6.7 (abi's "Final status": the terminal event, then the
// session rule for formats without one, then error fields, then the exit
// code given with [Stream.ExitCode], else incomplete).
//
// # Invariants
//
//   - Nothing is lost silently: a line a plugin does not map is counted in
//     Unmapped by native type; a line lost to a plugin fault is counted in
//     FailedLines, with the fault in Warnings, and makes a step that
//     would be ok an error; an oversized line is counted
//     as unmapped "oversized_line". A line the plugin reports nothing
//     about (no record, not declared ignored, not counted unmapped) is
//     reported by [Stream.Silent]. The raw bytes are the caller's to keep.
//   - An error the provider reported (wire.OpError, or an error status) is
//     in the result's Errors, never only counted.
//   - Events are handed to the sink in a causal order: a message is emitted
//     before any event reported after it was opened (so a message precedes
//     the tool calls it requested); scope opening precedes the scope's
//     events, which precede its closing.
//   - A sink that holds raw lines back (a [RawSink]: a redacting raw
//     capture) is told, before it is handed an event or a scope, the
//     last raw line it comes from (a message: the line that closed it),
//     so that it writes the raw lines first.
//   - Every event the sink receives is valid for transcript.AppendEvent
//     (the assembler maps out-of-vocabulary values and invalid JSON rather
//     than passing them on).
//   - Memory is bounded by the longest line (at most wire.MaxLineBytes is
//     buffered; a longer line is skipped and counted) plus open messages,
//     plus the line accounting (at most 65,536 pending line numbers) and
//     at most 1,000 listed errors, plus what grows with the stream: per
//     tool call id, one map entry of 40 bytes (idState, keyed by a
//     128-bit hash of the call's scope and id: hashes of the keys of the
//     message whose block named it last and of the answered call's; about
//     78 bytes of live heap an id with the map's slack), and the state of
//     each call without its result (its id, name and kind: kept to the
//     end, so a result that comes however late pairs with its call, and
//     a call that never gets one is listed dangling, spec 6.3); the
//     dangling list holds those calls and at most as many answered ones.
//     No call id is forgotten: the plugins rely on it (they forget the
//     ids they answered after a window, and the assembler drops a call
//     they report again), so two ids of one stream taken for one, by a
//     hash collision, is the only way a call could be dropped (odds
//     under 10⁻²⁰ for a billion ids).
//
// # Concurrency
//
// A Stream, its Instance and its Sink are used by one goroutine at a time.
package normalize

// Package wasminterrupt rewrites a WebAssembly module so that its host can
// stop it cheaply: an interrupt flag the host sets and the module checks at
// loop heads and function entries, in the spirit of wasmtime's epoch
// interruption.
//
// # Model
//
// [Instrument] takes a module's bytes and returns new bytes with:
//
//   - two more globals, mutable i32s appended after the module's own, so
//     that no existing global index moves: the interrupt flag (initialised
//     to 0; its index is the number of imported globals plus the number of
//     defined ones) and a fuel counter (initialised to [Fuel]) after it;
//   - the flag exported as [Export], a name no toolchain produces;
//   - a check right after the block type of every loop instruction, and at
//     the entry of every function that contains a call: decrement the
//     fuel; when it reaches 0, refill it, yield to the host (memory.grow 0,
//     which wazero's compiler runs in Go), and trap with unreachable if the
//     flag is set. Every function body and the code section are
//     re-encoded to their new sizes;
//   - when a body uses a bulk memory or table instruction whose cost grows
//     with its last operand, a length (memory.init, memory.copy,
//     memory.fill, table.init, table.copy, table.grow, table.fill), a
//     charge function appended after every other function (its type
//     appended to the type section, so no index moves), called just before
//     each such instruction: it takes the length and returns it unchanged,
//     and charges 1 + length>>[ChargeShift] checks, yielding and reading
//     the flag when the fuel runs out. A loop whose every pass is one
//     memory.fill of 64 MiB would otherwise read the flag once in Fuel
//     passes: minutes;
//   - with the charge function, two more functions and a type for them
//     (bulk.go): every memory.fill and memory.copy (in their one-byte
//     encodings) becomes a call of fill or copy, which do the
//     instruction's work: a small length with their own loads and stores,
//     uncharged, since their own code bounds that work (wazero's compiler
//     makes each of these instructions one or more calls of Go's memmove,
//     which cost a short length far more than its bytes), any other with
//     the instruction itself, its length charged first with the charge
//     function's code, inlined; the instruction traps for a range outside
//     the memory as before;
//   - a memory.fill whose value and length are the two i32.consts right
//     before it (in their shortest encodings), of 1 to 256 bytes (how
//     TinyGo clears a struct), becomes
//     stores where it is (no call, no charge: the stores are the
//     function's own code), into a local added to the function for the
//     address, the store that ends at the last byte first, so that it
//     traps exactly when the instruction would, before any byte is
//     written.
//
// Every other section is copied byte for byte, custom sections included; a
// global or export section is created, in its place in the section order,
// when the module has none. [Instrumented] recognises the output by its
// export, for a host that trusts where the module comes from.
//
// The host sets the flag to a non-zero value (api.MutableGlobal in wazero)
// from another goroutine when a call must stop; the guest traps within
// Fuel checks. The host resets the flag to 0 between calls, once it is sure
// no write of its own is still coming.
//
// Why the yield: native code compiled by wazero cannot be preempted by the
// Go scheduler, and a garbage collection stops the world by waiting for
// every goroutine to reach a safe point. A guest spinning without ever
// returning to Go would make that wait, and the whole process, including
// the goroutine meant to set the flag, hang forever
// (TestInterruptStopsTightLoop collects garbage while the guest spins).
// wazero's own WithCloseOnContextDone returns to Go at every loop head,
// which is what makes it slow; the fuel makes it every Fuel checks.
//
// # Invariants
//
//   - Any long execution passes checks often, in proportion to its work:
//     a backward branch targets a loop, so an execution that runs long
//     either loops, or makes calls through functions that contain calls
//     (each checked at entry); a function that calls nothing runs at most
//     its own size between checks, plus its bulk instructions, each
//     charged by its length or, when short, bounded by the helper's code
//     that does it. Unbounded recursion also ends in the engine's
//     stack-overflow trap. Tail calls are refused.
//   - The check sees a write made while the module runs: the flag is read
//     after the yield, a call, after which wazero's compiler (wazevo)
//     reloads globals from memory. This is a property of the engine, not of
//     the WebAssembly specification, and the package tests it
//     (TestInterruptStopsTightLoop, TestInterruptStopsRecursion).
//   - The module cannot clear or hide the flag: its own code may not name a
//     global index it did not define (an index out of range is refused, so
//     a module that is invalid on its own cannot become valid and write the
//     flag or the fuel), and a module that already exports [Export] is
//     refused.
//   - A host function that blocks is the host's to bound: no check runs
//     while the guest waits in one.
//   - A module with a start function is refused: its code runs during
//     instantiation, before the host can reach the flag. So is one with
//     checks to insert and no memory, which the yield needs.
//
// Instrument never panics on any input. It returns an *[Error] wrapping
// [ErrUnsupported] for a module that uses something its decoder does not
// know (SIMD, threads, exceptions, tail calls, GC types, multiple
// memories) or cannot instrument (a start function, no memory), and
// [ErrMalformed] for bytes that are not a well-formed module. Either way the caller should run the module unchanged under a
// different mechanism (wazero's WithCloseOnContextDone).
//
// # Threat model
//
// The input is untrusted; a guest may spin, recurse or sleep on purpose.
// The output is only as safe as the agreement
// between this package's decoder and the engine's on where instructions
// begin: a module the two decoders split differently could hide a loop from
// the rewriter. The decoder therefore reads every immediate with the same
// encoding and length limits as wazero (LEB128 of at most 5 bytes for 32-bit
// values, 10 for 64-bit ones, block types as signed 33-bit LEB128), and
// refuses every opcode, prefix, type and section it does not know rather
// than guess its length. The primitives, the section framing and the
// import section are read by internal/wasm/wasmbin, which wasmcheck reads
// modules with too. Validation (types, stack shapes, index ranges other
// than globals') is left to the engine, which compiles the output.
package wasminterrupt

// Package wasmcheck checks the structure of an untrusted WebAssembly
// module before a full decoder (wazero's) sees it.
//
// # Model
//
// wazero's decoder reserves memory for what a module claims before it
// reads it: a slice for every element segment an element section counts, a
// buffer of a custom section's declared size, the locals a function
// declares. A 23-byte file whose element section claims 2^32-1 segments
// made it ask for hundreds of GiB, and the Go runtime aborted the process
// ("fatal error: runtime: out of memory"), which no recover can catch.
// [Check] walks the module's sections, and inside them every vector whose
// count or length a decoder would allocate for, and refuses a module whose
// claims do not fit in the bytes that follow them or break the limits
// below, before wazero allocates anything.
//
// # Invariants
//
//   - Check never panics and allocates nothing proportional to a claim,
//     only to the number of sections.
//   - A module Check accepts makes every count a decoder allocates for at
//     most the bytes that hold its items (each item takes at least one
//     byte) and at most the limits below, so what wazero reserves
//     while decoding and compiling is bounded by a small multiple of the
//     file's size. At instantiation wazero also allocates the tables a
//     module defines, 8 bytes for each element of their minimum sizes,
//     which no byte holds: Check bounds their sum (MaxTableElements,
//     80 MB). Memories are bounded by the host's page limit, which
//     wazero enforces.
//   - A table grows at run time up to its maximum, and wazero lets a
//     table with none grow to 2^32-2 elements (32 GiB, in one
//     allocation). [BoundTables] gives every defined table a maximum,
//     the maxima summing to at most MaxTableElements; a module with no
//     table beyond its share is returned as it is, uncopied.
//   - Check reads every item where wazero reads it: a known section
//     must end where its last item does, as wazero requires, so a
//     disagreement on an item's length is a refusal, not a count
//     misread. (Check once read an element segment's typed reference
//     as one byte, took its heap type for a count of none, and passed
//     a 39-byte module whose real count made wazero reserve 24 GB.)
//   - Every type index Check reads, a function's, an imported function's
//     or tag's, a tag's, names a type of the type section. wazero looks
//     up a function's type by that index before it validates the
//     function (when it validates a call to it), and a module whose
//     function 0 called a function of type index 5, with one type, made
//     its validator panic. Indexes inside function bodies (call_indirect's
//     type, block types, function, table, memory, global indexes), in
//     exports, element segments and the start section, wazero checks
//     before it uses them; Check does not decode function bodies.
//   - Check is a structural pre-filter, not a validator: it accepts
//     modules wazero will refuse, and refuses what it cannot read (an
//     unknown section, element or data form, constant-expression opcode,
//     a typed reference (GC), whose heap type it does not read).
//
// The module is read with internal/wasm/wasmbin, as wasminterrupt reads
// it.
//
// The limits are those of the JavaScript engines' WebAssembly embeddings
// (V8, SpiderMonkey), or lower where they are absurdly high for a plugin;
// real modules, Go's and TinyGo's included, are far below them.
package wasmcheck

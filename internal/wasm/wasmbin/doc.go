// Package wasmbin reads the WebAssembly binary format for the module
// checks and rewriters of internal/wasm: a bounds-checked [Reader] of its
// primitives (bytes, LEB128 integers, names, value types, limits), the
// section framing ([Reader.Section]) and the import section
// ([Reader.Imports]), which wasmcheck and wasminterrupt both read.
//
// # Model
//
// A [Reader] holds a byte slice, the position of the next byte and the
// offset of the slice in the module, so that every error names a byte of
// the module even when the slice is a section's body. Each method reads
// one item and advances past it, or fails with an *[Error] saying where
// and what, and leaves the position where the item went wrong. Callers
// decide what an item may be (a limits flag a rewriter cannot handle, a
// tag import it refuses): the reader only decodes.
//
// # Invariants
//
//   - No method panics, whatever the bytes, and none allocates: names
//     and bodies are sub-slices of the input, and [Reader.Imports] hands
//     each import to a callback instead of building a list, so a claimed
//     count costs nothing before its items are read.
//   - Integers are read as wazero reads them, so that a caller agrees
//     with the engine on where every item ends: a u32 is a LEB128 of at
//     most 5 bytes whose unused bits are zero, a 64-bit memory's limits
//     are LEB128s of at most 10 bytes.
//   - A count of items is refused when it exceeds the caller's limit or
//     the bytes left (every item takes at least one byte), before any
//     item is read.
//   - An *[Error] is Unsupported when the bytes use something the reader
//     does not decode (a typed reference, whose length it does not know),
//     malformed otherwise.
package wasmbin

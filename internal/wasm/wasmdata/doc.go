// Package wasmdata rewrites a WebAssembly module's data section into
// fewer segments that give the same initial memory.
//
// Go's linker writes a module's initialized data as tens of thousands of
// small active segments (25,010 for a twasm plugin: it starts a new one
// after every run of zeros). wazero decodes, validates and copies each
// segment separately on every load, even when the compiled code comes from
// its cache, which was about a fifth of a warm start. Compact merges
// segments whose gaps are at most a given number of bytes, writing the
// gaps as zeros; a plugin's data grows by a few hundred KiB and loads in a
// handful of segments.
//
// # Invariants
//
//   - The memory image at instantiation is unchanged: only active segments
//     of memory 0 with an i32.const offset are merged, sorted by offset;
//     a gap written as zeros is a range no segment writes, and fresh
//     memory is zero there anyway.
//   - Anything Compact does not fully understand leaves the module as it
//     is: passive segments (memory.init and data.drop name segments by
//     index), a data count section, offsets from globals, overlapping
//     segments. It then returns ErrUnsupported, and callers use the
//     original bytes.
//   - Every section other than the data section is copied byte for byte.
//
// # Threat model
//
// The input is an untrusted module. Compact must not panic or allocate
// without bound on any input: it reads through internal/wasm/wasmbin's
// bounds-checked reader and refuses an image larger than a 32-bit memory. It does not validate the
// module; wazero does that afterwards, on the rewritten bytes, and a
// module that was invalid stays invalid (a malformed data section is
// ErrMalformed, and the caller compiles the original to get wazero's
// error).
package wasmdata

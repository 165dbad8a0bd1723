// Package wire is the machine side of the twasm ABI: the names of the
// exports and host functions, the version, the call statuses, the WASI
// allow-list and the limits (contract.go), and the record encoding of what
// a plugin reports (ops, field tags, value kinds, span modes) with its
// encoder and decoder (records.go), the batch a feed call carries
// (batch.go), and the tape of a JSON line that comes with it: tokens, the
// tape builder, key hashes and declared key sets (tape.go), and the JSON
// string unescaping both sides share (unescape.go), and the number
// parsing package abi's values use in place of strconv's, whose error
// values would link reflection into every plugin (number.go), and
// IndexByte, a byte search eight bytes a step in a TinyGo build, whose
// own tests one byte a step (index.go). It imports only the
// standard library; package abi reads tapes through it. The SDK (abi/sdk) and the host (host,
// internal/normalize) implement it; package abi's documentation states
// what each name and record means, so a plugin in another language needs
// only that and the values here.
package wire

// Package wire is the machine side of the twasm ABI: the names of the
// exports and host functions, the version, the call statuses, the WASI
// allow-list and the limits (contract.go), and the record encoding of what
// a plugin reports (ops, field tags, value kinds, span modes) with its
// encoder and decoder (records.go), and the batch a feed call carries
// (batch.go). The SDK (abi/sdk) and the host (host,
// internal/normalize) implement it; package abi's documentation states
// what each name and record means, so a plugin in another language needs
// only that and the values here.
package wire

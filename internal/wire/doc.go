// Package wire is the record encoding of the twasm ABI: the records a
// plugin reports (ops, field tags, value kinds, span modes) and their
// encoder and decoder. The SDK (abi/sdk) encodes, the host (host,
// internal/normalize) decodes; package abi's documentation states what
// each record means, so a plugin in another language needs only that and
// the layout here.
package wire

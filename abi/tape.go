package abi

import "github.com/twasm/twasm/internal/wire"

// Kind is the JSON kind of a value.
type Kind uint8

// The kinds (the values of the tape's tokens, internal/wire).
const (
	KindInvalid Kind = wire.KindInvalid // a missing value
	KindObject  Kind = wire.KindObject
	KindArray   Kind = wire.KindArray
	KindString  Kind = wire.KindString
	KindNumber  Kind = wire.KindNumber
	KindTrue    Kind = wire.KindTrue
	KindFalse   Kind = wire.KindFalse
	KindNull    Kind = wire.KindNull
)

// The tape's flags and key hash (internal/wire builds tapes: natively in
// the host, and for sdk.Parse inside a plugin).
const (
	flagEscaped = wire.FlagEscaped
	flagHashed  = wire.FlagHashed
	flagKeyed   = wire.FlagKeyed
)

func keyHash(key string) uint16 { return wire.KeyHash(key) }

// unescape and unescapedEquals decode JSON string contents as any JSON
// parser does (internal/wire).
func unescape(dst, s []byte) ([]byte, bool) { return wire.Unescape(dst, s) }

func unescapedEquals(s []byte, key string) bool { return wire.UnescapedEquals(s, key) }

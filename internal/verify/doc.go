// Package verify holds what host.Runtime.Verify reports about a plugin
// module, for `twasm plugins verify`: its size and sha256, ABI version,
// imports and exports with their signatures, manifest, and every
// departure from the contract.
package verify

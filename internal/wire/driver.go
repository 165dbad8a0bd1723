package wire

// Driver runs one plugin in process over the wire format: a batch in,
// records out. A plugin's wasm exports call it, and the host runs a native
// plugin through it (internal/normalize). Package abi/sdk implements it:
// sdk.Plugin.Driver returns one.
type Driver interface {
	// Begin starts a stream with the JSON begin options.
	Begin(options []byte) (Status, string)
	// Feed handles one batch. The records are in Output until the next
	// call.
	Feed(batch []byte) (Status, string)
	// End ends the stream. The records are in Output until the next call.
	End() (Status, string)
	// Output returns the records of the last Feed or End call. It aliases
	// the driver's buffer.
	Output() []byte
}

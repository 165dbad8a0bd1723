package sdk

// registered is the plugin a wasm module serves. It is the one piece of
// package state in the SDK: WebAssembly exports are plain functions, so
// they can only reach the plugin through a package variable, set once in
// init.
var registered *driver

// Register makes p the plugin this module serves. Call it once, from the
// wasm entry point's init function. Natively it only records p, which keeps
// entry points buildable (and vetted) on every platform.
func Register(p Plugin) {
	if registered != nil {
		panic("twasm sdk: Register called twice")
	}
	registered = newDriver(p)
}

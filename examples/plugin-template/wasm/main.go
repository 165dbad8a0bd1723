// Command wasm is the plugin's WebAssembly entry point: it registers the
// normalizer with the SDK, which owns every export. Build it with the
// Makefile (TinyGo, or Go with TOOLCHAIN=go).
package main

import (
	"example.com/twasm-plugin-myagent"

	"github.com/twasm/twasm/abi/sdk"
)

// Registration happens in init because a reactor's main never runs.
func init() { sdk.Register(myagent.Plugin) }

func main() {}

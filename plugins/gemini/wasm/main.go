// Command wasm is the WebAssembly entry point of the Gemini CLI normalizer:
// build with GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared.
package main

import (
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/plugins/gemini"
)

// Registration happens in init because a reactor's main never runs.
func init() { sdk.Register(gemini.Plugin) }

func main() {}

// Command wasm is the WebAssembly entry point of the Codex normalizer:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o codex.wasm ./plugins/codex/wasm
package main

import (
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/plugins/codex"
)

// Registration happens in init because a reactor's main never runs.
func init() { sdk.Register(codex.Plugin) }

func main() {}

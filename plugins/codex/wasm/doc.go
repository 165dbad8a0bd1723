// Command wasm is the WebAssembly entry point of the Codex normalizer:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o codex.wasm ./plugins/codex/wasm
package main

// Command wasm is the WebAssembly entry point of the Aider normalizer:
// build with GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared.
package main

// Command wasm is the WebAssembly entry point of the Kimi Code and Kimi
// CLI normalizer: build with GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared.
package main

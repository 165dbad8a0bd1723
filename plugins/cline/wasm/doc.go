// Command wasm is the WebAssembly entry point of the Cline (and Roo Code)
// normalizer: their task folders and their CLIs' machine-readable output.
// Build with GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared.
package main

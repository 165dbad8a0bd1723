module example.com/twasm-plugin-myagent

go 1.26.8

require github.com/twasm/twasm v0.0.0

require (
	github.com/google/uuid v1.6.0 // indirect
	github.com/klauspost/compress v1.20.4 // indirect
	github.com/tetratelabs/wazero v1.12.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)

// The twasm module is not published: point this at a clone of it (the
// path of your clone, relative to this directory or absolute). In twasm's
// own repository the template sits two levels below the root.
replace github.com/twasm/twasm => ../..

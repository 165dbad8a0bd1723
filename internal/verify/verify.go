package verify

import "github.com/twasm/twasm/abi"

// Report is what host.Runtime.Verify found out about a module.
type Report struct {
	SHA256 string
	Size   int
	// ABIVersion is "major.minor" from twasm_abi_version, "" when the
	// module was not instantiated.
	ABIVersion string
	Imports    []Func
	Exports    []Func
	// Manifest is nil when it could not be read.
	Manifest *abi.Manifest
	// Problems lists every departure from the contract; none means the
	// plugin loads and runs a stream.
	Problems []string
}

// Func is an imported or exported function.
type Func struct {
	Module    string // imports only
	Name      string
	Signature string // e.g. "(i32, i32) -> ()"
	Problem   string // why the import is refused, if it is
}

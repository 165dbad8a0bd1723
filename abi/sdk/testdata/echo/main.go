// Command echo is the wasm build of internal/testing/echoplugin, the minimal plugin
// the SDK and host tests use.
package main

import (
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/internal/testing/echoplugin"
)

func init() { sdk.Register(echoplugin.Plugin) }

func main() {}

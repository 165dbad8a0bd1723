package main

import (
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/plugins/pi"
)

// Registration happens in init because a reactor's main never runs.
func init() { sdk.Register(pi.Plugin) }

func main() {}

package main

import (
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/plugins/crush"
)

// Registration happens in init because a reactor's main never runs.
func init() { sdk.Register(crush.Plugin) }

func main() {}

package main

import (
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/plugins/aider"
)

// Registration happens in init because a reactor's main never runs.
func init() { sdk.Register(aider.Plugin) }

func main() {}

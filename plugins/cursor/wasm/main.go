package main

import (
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/plugins/cursor"
)

// Registration happens in init because a reactor's main never runs.
func init() { sdk.Register(cursor.Plugin) }

func main() {}

// Command madeup is an external plugin for an agent twasm does not know,
// "madeup", that keeps one JSON Lines file per session under
// $MADEUP_HOME/sessions (default ~/.madeup/sessions), in a directory per
// project. It declares that store in its manifest (ABI 1.4): dropped into
// a plugin directory, `twasm doctor` lists the store and `twasm sync`
// archives its sessions, with no rebuild and no config file. Every line
// with a "text" field is one assistant message (the echo plugin's rule).
package main

import (
	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/internal/testing/echoplugin"
)

func init() {
	p := echoplugin.Plugin
	p.Manifest = abi.Manifest{Name: "madeup", Version: "0.0.1", Providers: []string{"madeup"}, Formats: []string{"jsonl"},
		Description: "a made-up agent's session logs",
		Stores: []abi.Store{{Name: "Madeup sessions", Roots: []abi.Root{{Env: "MADEUP_HOME"}, {Path: "~/.madeup"}},
			Dir: "sessions", Pattern: "*/*.log.jsonl", RetentionDays: 14}}}
	sdk.Register(p)
}

func main() {}

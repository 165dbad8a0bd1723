// Command abiv17 is a plugin as one built for ABI 1.7 looks to the host:
// it reports version 1.7 and a manifest of the 1.7 shape, a store in
// every project directory (abi.Root.Projects) whose plugin asks for the
// facts line, and normalizes like the echo plugin (rawkit.Echo), the
// facts line too. A 1.8 host hands it a facts line with a member it
// never knew (project): it must load and run as before, and its runs
// state no project, since it reports none.
package main

import "github.com/twasm/twasm/host/testdata/rawkit"

func init() {
	rawkit.Version = 1<<16 | 7
	rawkit.Manifest = []byte(`{"name":"old17","version":"0.0.1","providers":["old17"],"formats":["jsonl"],"source_facts":true,` +
		`"stores":[{"name":"Old17 history","roots":[{"projects":true}],"pattern":".old17.jsonl"}],"sdk":"twasm-go-sdk/1.7"}`)
	rawkit.Feed = rawkit.Echo
}

func main() {}

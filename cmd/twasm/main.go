package main

import (
	"context"
	"os"
	"runtime/debug"

	"github.com/twasm/twasm/internal/cli"
	"github.com/twasm/twasm/internal/cli/iostreams"
)

// memoryLimit is the Go heap's soft limit when GOMEMLIMIT is not set. A
// recording's live heap is 5-20 MB (the plugin's linear memory is a
// mapping of its own, not Go heap); without a limit the collector lets the heap
// reach twice that, and long recordings sat at 150-200 MiB of RSS. A
// sync replaces it while it archives and indexes with one made from its
// live heap and its workers (synccmd's collector), and puts it back; a
// record lowers it while it runs (record's recordMemoryLimit: the limit
// counts Go's memory only, not the plugin's linear memory nor the
// binary's pages).
const memoryLimit = 64 << 20

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	os.Exit(cli.Main(context.Background(), os.Args[1:], iostreams.System(os.Getenv), os.Getenv))
}

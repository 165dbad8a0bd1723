package main

import (
	"context"
	"os"
	"runtime/debug"

	"github.com/twasm/twasm/internal/cli"
	"github.com/twasm/twasm/internal/cli/iostreams"
)

// memoryLimit is the Go heap's soft limit when GOMEMLIMIT is not set. A
// recording's live heap is a few tens of MiB (plugin memory included)
// however long the input; without a limit the collector lets the heap
// reach twice that, and long recordings sat at 150-200 MiB of RSS. A
// sync replaces it while it archives and indexes with one made from its
// live heap and its workers (synccmd's collector), and puts it back.
const memoryLimit = 64 << 20

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	os.Exit(cli.Main(context.Background(), os.Args[1:], iostreams.System(os.Getenv), os.Getenv))
}

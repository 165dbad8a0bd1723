package main

import (
	"context"
	"os"

	"github.com/twasm/twasm/internal/cli"
	"github.com/twasm/twasm/internal/cli/iostreams"
)

func main() {
	os.Exit(cli.Main(context.Background(), os.Args[1:], iostreams.System(os.Getenv), os.Getenv))
}

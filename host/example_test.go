package host_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/host"
)

// A program starts one Runtime, looks a provider's plugin up and hands it
// to package capture, which takes instances from it and returns them.
// It needs the bundled plugins (make builds them); without them New
// says so. It is compiled, not run: its output depends on the build.
func ExampleNew() {
	ctx := context.Background()
	rt, err := host.New(ctx, host.Options{})
	if errors.Is(err, host.ErrNoBundledPlugins) {
		log.Fatal("build the bundled plugins with make first: ", err)
	}
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close(ctx)

	p, err := rt.Lookup(ctx, "claude")
	if err != nil {
		log.Fatal(err)
	}
	plugin := capture.HostPlugin(p) // capture.Options.Plugin
	fmt.Println(plugin.Identity().Name)
}

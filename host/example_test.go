package host_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/host"
	"github.com/twasm/twasm/internal/tools/wasmbuild"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// A program loads a plugin file, here the SDK's echo test plugin (a JSON
// line's "text" becomes an assistant message), and captures an agent's
// output through it: the Plugin goes to capture as it is, which takes an
// instance from its pool and gives it back. host.New with zero Options
// serves the bundled plugins (make builds them; without them New fails
// with ErrNoBundledPlugins) and the external plugins of the plugin path;
// rt.Lookup(ctx, "claude") then finds the plugin of a provider.
func ExampleRuntime_Load() {
	ctx := context.Background()
	wasm, err := echoWasm() // a plugin file: os.ReadFile("echo.wasm")
	if err != nil {
		log.Fatal(err)
	}
	rt, err := host.New(ctx, host.Options{Bundled: []host.Bundled{}, PluginPath: []string{}})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close(ctx)
	p, err := rt.Load(ctx, wasm, host.Source{Path: "echo.wasm"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("plugin:", p.Identity().Name, "providers:", p.Info().Providers)

	dir, err := os.MkdirTemp("", "twasm-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store := recorder.NewStore(dir)
	output := strings.NewReader(`{"text":"hello"}` + "\n" + "not json\n")
	var res *capture.Result
	err = lifecycle.Do(ctx, store, lifecycle.RunOptions{Name: "echo"}, func(ctx context.Context, run *lifecycle.Step) error {
		return run.Step(ctx, "echo", transcript.KindAgent, func(ctx context.Context, s *lifecycle.Step) error {
			res, err = capture.Run(ctx, s, capture.Source{Stdout: output}, capture.Options{Provider: "echo", Store: store, Plugin: p})
			return err
		})
	})
	fmt.Println("error:", err)
	fmt.Println("status:", res.Status, "unmapped:", res.Unmapped)
	// Output:
	// plugin: echo providers: [echo]
	// error: <nil>
	// status: ok unmapped: map[non-json:1]
}

// echoWasm is the SDK's echo test plugin (abi/sdk/testdata/echo) built
// with Go, cached between test runs: the example's plugin file.
func echoWasm() ([]byte, error) {
	path, err := wasmbuild.Cached(context.Background(), filepath.Join("..", "abi", "sdk", "testdata", "echo"), wasmbuild.TestCacheDir())
	if err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

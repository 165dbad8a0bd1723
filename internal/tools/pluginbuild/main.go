package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/twasm/twasm/internal/tools/wasmbuild"
)

func main() {
	toolchain := flag.String("toolchain", "tinygo", "the compiler: tinygo or go")
	out := flag.String("o", "", "the module's path")
	flag.Parse()
	if *out == "" || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: pluginbuild [-toolchain tinygo|go] -o OUT PKGDIR")
		os.Exit(2)
	}
	if err := run(context.Background(), *toolchain, flag.Arg(0), *out, wasmbuild.TestCacheDir()); err != nil {
		fmt.Fprintln(os.Stderr, "pluginbuild:", err)
		os.Exit(1)
	}
}

// run builds the plugin in pkgDir with toolchain at out and keeps a copy
// in cacheDir.
func run(ctx context.Context, toolchain, pkgDir, out, cacheDir string) error {
	var tc wasmbuild.Toolchain
	switch toolchain {
	case "go":
	case "tinygo":
		found, ok := wasmbuild.FindTinyGo(ctx, pkgDir)
		if !ok {
			return errors.New("no TinyGo installed (make installs it: .ci/install-tinygo)")
		}
		tc = found
	default:
		return fmt.Errorf("unknown toolchain %q: tinygo or go", toolchain)
	}
	return tc.BuildInto(ctx, pkgDir, out, cacheDir)
}

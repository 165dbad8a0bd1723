package build

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// Version is the release version. It is the one variable the build sets:
//
//	go build -ldflags "-X github.com/twasm/twasm/internal/cli/build.Version=v1.2.3" ./cmd/twasm
var Version = "dev"

// Info describes the build: the version, then what the Go toolchain
// recorded (module version, VCS revision and time, Go version).
func Info() string {
	var b strings.Builder
	fmt.Fprintf(&b, "twasm version %s", Version)
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b.String() + "\n"
	}
	var rev, when, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = " (modified)"
			}
		}
	}
	fmt.Fprintf(&b, "\nmodule %s %s\n%s", bi.Main.Path, bi.Main.Version, bi.GoVersion)
	if rev != "" {
		fmt.Fprintf(&b, "\nrevision %s%s %s", rev, modified, when)
	}
	return b.String() + "\n"
}

package build

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Version is the release version. It is the one variable the build sets:
//
//	go build -ldflags "-X github.com/twasm/twasm/internal/cli/build.Version=v1.2.3" ./cmd/twasm
var Version = "dev"

// Details are what `twasm version` prints: the version, then what the Go
// toolchain recorded in the binary.
type Details struct {
	Version       string `json:"version"`
	Module        string `json:"module,omitempty"`
	ModuleVersion string `json:"module_version,omitempty"`
	GoVersion     string `json:"go_version"`
	// Revision, RevisionTime and Modified are the VCS state the binary
	// was built from, when the toolchain recorded it.
	Revision     string `json:"revision,omitempty"`
	RevisionTime string `json:"revision_time,omitempty"`
	Modified     bool   `json:"modified,omitempty"`
	OS           string `json:"os"`
	Arch         string `json:"arch"`
}

// Read returns the build's details.
func Read() Details {
	d := Details{Version: Version, GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return d
	}
	d.Module, d.ModuleVersion, d.GoVersion = bi.Main.Path, bi.Main.Version, bi.GoVersion
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			d.Revision = s.Value
		case "vcs.time":
			d.RevisionTime = s.Value
		case "vcs.modified":
			d.Modified = s.Value == "true"
		}
	}
	return d
}

// Info describes the build as text: every field of Details.
func Info() string {
	d := Read()
	var b strings.Builder
	fmt.Fprintf(&b, "twasm version %s\n", d.Version)
	if d.Module != "" {
		fmt.Fprintf(&b, "module %s %s\n", d.Module, d.ModuleVersion)
	}
	fmt.Fprintf(&b, "%s %s/%s\n", d.GoVersion, d.OS, d.Arch)
	if d.Revision != "" {
		modified := ""
		if d.Modified {
			modified = " (modified)"
		}
		fmt.Fprintf(&b, "revision %s%s %s\n", d.Revision, modified, d.RevisionTime)
	}
	return b.String()
}

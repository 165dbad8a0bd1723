package bundled

import (
	"embed"
	"io/fs"
	"path"
	"strings"
)

// The all: prefix keeps the directory embeddable when it holds nothing
// but its README (embed refuses a pattern that matches no file, and
// README.md alone would not match *.wasm).
//
//go:embed all:wasm
var files embed.FS

// Files returns the bundled plugins by file name ("claude.wasm"). The
// byte slices alias the binary's read-only data: callers must not modify
// them. Each call returns a new map.
func Files() map[string][]byte {
	out := map[string][]byte{}
	entries, err := fs.ReadDir(files, "wasm")
	if err != nil {
		// The directory is embedded at build time; it cannot be missing.
		panic("bundled: " + err.Error())
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".wasm") {
			continue
		}
		b, err := files.ReadFile(path.Join("wasm", e.Name()))
		if err != nil {
			panic("bundled: " + err.Error())
		}
		out[e.Name()] = b
	}
	return out
}

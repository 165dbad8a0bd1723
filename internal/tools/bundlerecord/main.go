package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/twasm/twasm/host"
	"github.com/twasm/twasm/internal/bundled"
	"github.com/twasm/twasm/internal/wasm/wasmdata"
	"github.com/twasm/twasm/internal/wasm/wasminterrupt"
)

func main() {
	goFile := flag.String("go", "", "also write the record as Go values of package bundled to this file (bundled.GeneratedFile)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: bundlerecord [-go FILE] DIR")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(context.Background(), flag.Arg(0), "", *goFile); err != nil {
		fmt.Fprintln(os.Stderr, "record:", err)
		os.Exit(1)
	}
}

// run records every *.wasm in dir but dot files. A module that does not load fails the
// whole run: a bundled plugin that cannot load must not ship. The modules
// are compiled in memory, unless cacheDir names a compilation cache (the
// tests': compiling a module under -race costs many seconds, and the
// cache makes it once per module's bytes). With goFile set, the record
// is also written there as Go (goSource), after the manifests file.
func run(ctx context.Context, dir, cacheDir, goFile string) error {
	names, err := filepath.Glob(filepath.Join(dir, "*.wasm"))
	if err != nil {
		return err
	}
	files := map[string][]byte{}
	for _, path := range names {
		if strings.HasPrefix(filepath.Base(path), ".") {
			// A build's temporary file (pluginbuild writes .build-*.wasm
			// and renames it), left by a build that was killed: no
			// module of the bundle (go:embed leaves dot files out too).
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if b, err = compact(path, b); err != nil {
			return err
		}
		files[filepath.Base(path)] = b
	}
	ps := make([]host.Bundled, 0, len(files))
	for _, name := range slices.Sorted(maps.Keys(files)) {
		b := files[name]
		ps = append(ps, host.Bundled{File: name, Wasm: func() ([]byte, error) { return b, nil }})
	}
	rt, err := host.New(ctx, host.Options{NoDiskCache: cacheDir == "", CacheDir: cacheDir, PluginPath: []string{}, Bundled: ps,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	defer rt.Close(ctx)
	out := bundled.Manifests{}
	var errs []error
	for _, info := range rt.List(ctx) {
		if info.Err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", info.File, info.Err))
			continue
		}
		if len(info.Problems) > 0 {
			errs = append(errs, fmt.Errorf("%s: %s", info.File, strings.Join(info.Problems, "; ")))
			continue
		}
		out[info.File] = bundled.Recorded{SHA256: info.SHA256, Size: len(files[info.File]), Manifest: info.Manifest, Reported: info.ManifestJSON}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	if err := replaceFile(filepath.Join(dir, bundled.ManifestsFile), append(b, '\n')); err != nil || goFile == "" {
		return err
	}
	src, err := goSource(out)
	if err != nil {
		return err
	}
	return replaceFile(goFile, src)
}

// compact rewrites the module at path with its data segments merged and
// instrumented with an interrupt flag (package wasminterrupt: the host
// stops every plugin through it, and would otherwise rewrite bundled
// modules on every run), and returns the bytes to record. A module both
// rewriters leave alone (already compacted and instrumented) is kept.
// A rewritten module keeps the modification time the compiler gave it:
// make compares it with the plugin's sources, and a source edited while
// the other modules were still building (after this module was
// compiled, before this rewrite) must still be newer than the module, so
// that the next make builds it again instead of keeping a stale module.
func compact(path string, b []byte) ([]byte, error) {
	c, err := wasmdata.Compact(b, wasmdata.Gap)
	if err != nil {
		c = b
	}
	if !wasminterrupt.Instrumented(c) {
		if code, err := wasminterrupt.Instrument(c); err == nil {
			c = code
		}
	}
	if bytes.Equal(c, b) {
		return b, nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := replaceFile(path, c); err != nil {
		return nil, err
	}
	return c, os.Chtimes(path, st.ModTime(), st.ModTime())
}

// replaceFile writes b to path through a temporary file and a rename, so
// that make never sees half a file. The file is build output like the
// modules beside it (0644), not CreateTemp's private 0600.
func replaceFile(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

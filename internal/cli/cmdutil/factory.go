package cmdutil

import (
	"cmp"
	"log/slog"
	"path/filepath"

	"github.com/twasm/twasm/internal/cli/build"
	"github.com/twasm/twasm/internal/cli/iostreams"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// EnvStorage names the environment variable that sets the storage root
// when --storage is not given.
const EnvStorage = "TWASM_STORAGE"

// DefaultStorage is the storage root when neither --storage nor
// $TWASM_STORAGE is set.
const DefaultStorage = "storage"

// Factory carries the dependencies of commands. Commands read from it
// lazily, when they run, so that persistent flags parsed by the root
// (--storage, --verbose) are already set.
type Factory struct {
	IOStreams *iostreams.IOStreams
	// Getenv reads the environment; tests pass a map lookup.
	Getenv func(string) string
	// StorageFlag is bound to the root's --storage flag.
	StorageFlag string
	// Verbose is bound to the root's --verbose flag.
	Verbose bool
}

// StorageRoot resolves the storage root: --storage, else $TWASM_STORAGE,
// else ./storage.
func (f *Factory) StorageRoot() string {
	env := ""
	if f.Getenv != nil {
		env = f.Getenv(EnvStorage)
	}
	return filepath.Clean(cmp.Or(f.StorageFlag, env, DefaultStorage))
}

// Store returns the transcript store at the storage root.
func (f *Factory) Store() recorder.Store { return recorder.NewStore(f.StorageRoot()) }

// TranscriptDir is where the store keeps <run-id>.jsonl files.
func (f *Factory) TranscriptDir() string { return filepath.Join(f.StorageRoot(), "transcripts") }

// Logger returns the diagnostics logger: text to stderr, debug level with
// --verbose, warnings otherwise, so that stdout carries only data.
func (f *Factory) Logger() *slog.Logger {
	level := slog.LevelWarn
	if f.Verbose {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(f.IOStreams.ErrOut, &slog.HandlerOptions{Level: level}))
}

// Producer is what runs started by the command line write into
// run.started: twasm and the version it was built as.
func (f *Factory) Producer() transcript.Producer {
	return transcript.Producer{Name: "twasm", Version: build.Version}
}

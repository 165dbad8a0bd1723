package cmdutil

import (
	"cmp"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/twasm/twasm/internal/cli/build"
	"github.com/twasm/twasm/internal/cli/iostreams"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// EnvStorage names the environment variable that sets the storage root
// when --storage is not given.
const EnvStorage = "TWASM_STORAGE"

// LocalStorage is the storage root when neither --storage nor
// $TWASM_STORAGE is set and no data directory is known (no $XDG_DATA_HOME
// and no $HOME): ./storage.
const LocalStorage = "storage"

// StorageHelp says how the storage root is chosen, for help texts and for
// the error about a storage root that does not exist.
const StorageHelp = "--storage DIR, else $" + EnvStorage + ", else $XDG_DATA_HOME/twasm, else ~/.local/share/twasm"

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
	// Clock reads the time the commands' relative times (--since 7d,
	// "today") are taken from; nil is time.Now. Tests pass a fixed one.
	Clock func() time.Time
}

// Now returns the time by the factory's clock.
func (f *Factory) Now() time.Time {
	if f.Clock == nil {
		return time.Now()
	}
	return f.Clock()
}

func (f *Factory) getenv(k string) string {
	if f.Getenv == nil {
		return ""
	}
	return f.Getenv(k)
}

// StorageRoot resolves the storage root: --storage, else $TWASM_STORAGE,
// else the XDG data directory ($XDG_DATA_HOME/twasm, else
// $HOME/.local/share/twasm), so that runs recorded in any working directory
// are found from any other; ./storage only when no home is known.
// RATIONALE.md says why.
func (f *Factory) StorageRoot() string {
	if r := cmp.Or(f.StorageFlag, f.getenv(EnvStorage)); r != "" {
		return filepath.Clean(r)
	}
	// The XDG spec ignores a relative $XDG_DATA_HOME.
	if d := f.getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "twasm")
	}
	if h := f.getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "share", "twasm")
	}
	return LocalStorage
}

// ConfigFile is the path of one of twasm's configuration files, named
// name: $XDG_CONFIG_HOME/twasm/name, else $HOME/.config/twasm/name; "" when
// neither is known. The XDG spec ignores a relative $XDG_CONFIG_HOME, and a
// relative (or empty) $HOME would make the file whatever the directory the
// command runs in holds. The plugin limits (config.json), the sync stores
// (sync.json) and an installed price table (prices.json) live there. The
// plugin directory is found by host.PluginPath, by os.UserConfigDir's rules
// for each OS: the same directory on Linux and the BSDs, another on macOS
// and Windows.
func (f *Factory) ConfigFile(name string) string {
	if d := f.getenv("XDG_CONFIG_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "twasm", name)
	}
	if h := f.getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".config", "twasm", name)
	}
	return ""
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

package cmdutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twasm/twasm/internal/views"
	"github.com/twasm/twasm/recorder"
)

// RunRef is a RUN argument resolved to a file.
type RunRef struct {
	// Arg is what the user typed.
	Arg string
	// Path is the transcript file.
	Path string
	// Dir is where sibling runs (children, parent) are looked up: the
	// file's own directory.
	Dir string
}

// IsPathArg reports whether a RUN argument names a file rather than a run
// id: it ends in .jsonl or contains a path separator.
func IsPathArg(arg string) bool {
	return strings.HasSuffix(arg, ".jsonl") || strings.ContainsRune(arg, '/') || strings.ContainsRune(arg, filepath.Separator)
}

// LatestRun is the RUN argument that names the most recently written run
// in storage.
const LatestRun = "latest"

// latestRun returns the run whose transcript was modified last.
func (f *Factory) latestRun() (string, error) {
	ids, err := f.ListRuns()
	if err != nil {
		return "", err
	}
	var best string
	var bestT int64
	for _, id := range ids {
		st, err := os.Stat(filepath.Join(f.TranscriptDir(), id+".jsonl"))
		if err != nil {
			continue
		}
		if t := st.ModTime().UnixNano(); best == "" || t > bestT {
			best, bestT = id, t
		}
	}
	if best == "" {
		return "", errors.New("no run in storage yet")
	}
	return best, nil
}

// ResolveRun turns a RUN argument into a file: "latest" is the run written
// last; a path to a .jsonl file is
// used as is, anything else must be a run id (a canonical UUID v4, checked
// before it becomes a path) under <storage>/transcripts. A bad id is a
// usage error; the file's existence is checked by whoever opens it.
func (f *Factory) ResolveRun(arg string) (RunRef, error) {
	if arg == LatestRun {
		id, err := f.latestRun()
		if err != nil {
			return RunRef{}, &InputError{Path: f.TranscriptDir(), Err: err}
		}
		arg = id
	}
	if IsPathArg(arg) {
		p := filepath.Clean(arg)
		return RunRef{Arg: arg, Path: p, Dir: filepath.Dir(p)}, nil
	}
	p, err := f.Store().TranscriptPath(arg)
	if err != nil {
		return RunRef{}, &FlagError{Err: fmt.Errorf("%q is neither a run id nor a .jsonl file: %w", arg, errors.Unwrap(err))}
	}
	return RunRef{Arg: arg, Path: p, Dir: filepath.Dir(p)}, nil
}

// LoadRun resolves and reads a RUN argument. A file that cannot be read
// is an *InputError naming the path and the reason.
func (f *Factory) LoadRun(arg string) (RunRef, *views.Run, error) {
	ref, err := f.ResolveRun(arg)
	if err != nil {
		return ref, nil, err
	}
	run, err := views.LoadFile(ref.Path)
	if err != nil {
		return ref, nil, PathInputError(ref.Path, err)
	}
	return ref, run, nil
}

// LoadTree reads a RUN argument and the child runs it links to.
func (f *Factory) LoadTree(arg string) (*views.RunNode, error) {
	ref, run, err := f.LoadRun(arg)
	if err != nil {
		return nil, err
	}
	return views.BuildTree(views.Loader{Dir: ref.Dir}, run), nil
}

// PathInputError is the InputError for a file that cannot be used: it
// drops the *fs.PathError layer of err, whose path the InputError already
// prints, so the message names the path once.
func PathInputError(path string, err error) *InputError {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &InputError{Path: path, Err: err}
}

// ListRuns returns the run ids that have a transcript in storage, sorted.
// Files whose names are not run ids are skipped, as the store would never
// have written them.
func (f *Factory) ListRuns() ([]string, error) {
	entries, err := os.ReadDir(f.TranscriptDir())
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if ok && !e.IsDir() && recorder.ValidRunID(id) == nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// CompleteRuns is a cobra completion function offering the run ids in
// storage, then files.
func (f *Factory) CompleteRuns(_ *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
	ids, err := f.ListRuns()
	if err != nil {
		return nil, cobra.ShellCompDirectiveDefault
	}
	var out []cobra.Completion
	for _, id := range ids {
		if strings.HasPrefix(id, prefix) {
			out = append(out, id)
		}
	}
	return out, cobra.ShellCompDirectiveDefault
}

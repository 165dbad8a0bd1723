package cmdutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twasm/twasm/internal/regfile"
	"github.com/twasm/twasm/internal/runid"
	"github.com/twasm/twasm/internal/views"
	"github.com/twasm/twasm/transcript"
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

// LatestRun is the RUN argument that names the run in storage that
// started last.
const LatestRun = "latest"

// ErrNoStorage is matched by the error about a storage root that does not
// exist.
var ErrNoStorage = errors.New("storage root does not exist")

// storageError is the *InputError for a missing storage root: it names the
// path and the ways to set it, and points at ./storage when the working
// directory has one (the default before twasm followed the XDG data
// directory).
func (f *Factory) storageError() error {
	hint := ""
	if st, err := os.Stat(filepath.Join(LocalStorage, "transcripts")); err == nil && st.IsDir() && filepath.Clean(f.StorageRoot()) != LocalStorage {
		hint = "; ./" + LocalStorage + " here holds runs: --storage " + LocalStorage
	}
	return &InputError{Path: f.StorageRoot(), Err: fmt.Errorf("%w (no run recorded there yet?); set it with %s%s", ErrNoStorage, StorageHelp, hint)}
}

// RequireStorage fails, naming the path and the ways to set it, when the
// storage root holds no transcripts directory (for commands that read
// across runs, like search).
func (f *Factory) RequireStorage() error { return f.checkStorage() }

// checkStorage fails with storageError when the storage root has no
// transcripts directory.
func (f *Factory) checkStorage() error {
	if _, err := os.Stat(f.TranscriptDir()); errors.Is(err, fs.ErrNotExist) {
		return f.storageError()
	}
	return nil
}

// latestRun returns the run that started last: the run.started timestamp
// of its first line (the file's modification time when that line cannot
// be read), ties broken by id so the answer does not depend on the
// directory's order.
func (f *Factory) latestRun() (string, error) {
	ids, err := f.ListRuns()
	if err != nil {
		return "", err
	}
	var best string
	var bestT time.Time
	for _, id := range ids {
		t, parent, ok := runHead(filepath.Join(f.TranscriptDir(), id+".jsonl"))
		if !ok || parent != "" {
			continue // a child run is reached through its parent, or by id
		}
		if best == "" || t.After(bestT) || t.Equal(bestT) && id > best {
			best, bestT = id, t
		}
	}
	if best == "" {
		return "", &InputError{Path: f.TranscriptDir(), Err: errors.New("no run in storage yet")}
	}
	return best, nil
}

// RunStart returns when the run in the transcript at path started: the
// timestamp of its first event (run.started), else the file's modification
// time. ok is false when the file cannot be read at all.
func RunStart(path string) (t time.Time, ok bool) {
	t, _, ok = runHead(path)
	return t, ok
}

// runHead is RunStart plus the parent run id its first event names (""
// for a top-level run).
func runHead(path string) (t time.Time, parent string, ok bool) {
	fh, err := regfile.Open(path)
	if err != nil {
		return time.Time{}, "", false
	}
	defer fh.Close()
	r := transcript.NewReader(fh)
	if r.Next() {
		if ev := r.Event(); ev != nil {
			parent = ev.ParentRunID
			if ev.Type == transcript.RunStarted && !ev.Timestamp.IsZero() {
				return ev.Timestamp, parent, true
			}
		}
	}
	st, err := fh.Stat()
	if err != nil {
		return time.Time{}, "", false
	}
	return st.ModTime(), parent, true
}

// maxListed bounds how many candidates an ambiguous prefix error names.
const maxListed = 10

// resolvePrefix returns the one run id that starts with prefix.
func (f *Factory) resolvePrefix(prefix string) (string, error) {
	ids, err := f.ListRuns()
	if err != nil {
		return "", err
	}
	var match []string
	for _, id := range ids {
		if strings.HasPrefix(id, prefix) {
			match = append(match, id)
		}
	}
	switch len(match) {
	case 1:
		return match[0], nil
	case 0:
		return "", &InputError{Path: f.TranscriptDir(), Err: fmt.Errorf("%w: no run id starts with %q", views.ErrNoRun, prefix)}
	}
	shown := match[:min(len(match), maxListed)]
	more := ""
	if len(match) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(match)-len(shown))
	}
	return "", &InputError{Err: fmt.Errorf("run id prefix %q is ambiguous: %d runs match: %s%s", prefix, len(match), strings.Join(shown, ", "), more)}
}

// isIDPrefix reports whether s could be the start of a run id.
func isIDPrefix(s string) bool {
	if s == "" || len(s) > 36 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c == '-') {
			return false
		}
	}
	return true
}

// ResolveRun turns a RUN argument into a file: "latest" is the top-level
// run that started last (a child run, a sub-agent or sub-workflow, is
// reached through its parent or by its id); a path to a file (it ends in .jsonl or holds a path
// separator) is used as is; a run id, or any prefix of one that only one
// run in storage has, names <storage>/transcripts/<id>.jsonl. A missing
// storage root, an unknown or ambiguous prefix are *InputErrors that say
// what to do; an argument that is neither is a usage error. The file's
// existence is checked by whoever opens it.
func (f *Factory) ResolveRun(arg string) (RunRef, error) {
	if IsPathArg(arg) {
		p := filepath.Clean(arg)
		return RunRef{Arg: arg, Path: p, Dir: filepath.Dir(p)}, nil
	}
	id := arg
	switch {
	case arg == LatestRun, isIDPrefix(arg):
		if err := f.checkStorage(); err != nil {
			return RunRef{}, err
		}
		var err error
		if arg == LatestRun {
			id, err = f.latestRun()
		} else if runid.Valid(arg) != nil {
			id, err = f.resolvePrefix(arg)
		}
		if err != nil {
			return RunRef{}, err
		}
	case fileExists(arg):
		// A file in the working directory named without a separator.
		return RunRef{Arg: arg, Path: arg, Dir: "."}, nil
	}
	p, err := f.Store().TranscriptPath(id)
	if err != nil {
		return RunRef{}, &FlagError{Err: fmt.Errorf("%q is neither a run id (or the start of one), %q, nor a file: %w", arg, LatestRun, errors.Unwrap(err))}
	}
	return RunRef{Arg: arg, Path: p, Dir: filepath.Dir(p)}, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
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
	if err := views.CheckTranscript(run); err != nil {
		return ref, nil, &InputError{Path: ref.Path, Err: err}
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
// A storage root that does not exist is an error that says how to set it.
// Files whose names are not run ids are skipped, as the store would never
// have written them.
func (f *Factory) ListRuns() ([]string, error) {
	entries, err := os.ReadDir(f.TranscriptDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, f.storageError()
	}
	if err != nil {
		return nil, &InputError{Path: f.TranscriptDir(), Err: err}
	}
	var ids []string
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if ok && !e.IsDir() && runid.Valid(id) == nil {
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

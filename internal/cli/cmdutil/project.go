package cmdutil

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/twasm/twasm/internal/views"
)

// ProjectHelp is how --project matches, for each command's help.
const ProjectHelp = `only runs of this project directory or one below it (. is the current
directory; ~ your home; relative paths from the current directory; symbolic links
resolved as well). A run's project is its repository root where the agent's
data names one, else the directory the agent ran in`

// ParseProject reads a --project value: "" is no filter; anything else
// is a directory, made absolute from wd (the current directory when "")
// and cleaned, "~" and "~/..." from home, and also taken with its
// symbolic links resolved when it exists and they differ (a run records
// the path the agent saw, which may be either). The directory need not
// exist: runs recorded elsewhere keep their paths.
func ParseProject(arg, wd, home string) (views.ProjectFilter, error) {
	if arg == "" {
		return views.ProjectFilter{}, nil
	}
	p := arg
	if p == "~" || strings.HasPrefix(p, "~"+string(filepath.Separator)) {
		if home == "" {
			return views.ProjectFilter{}, errors.New("~: no home directory")
		}
		p = filepath.Join(home, p[1:])
	}
	if !filepath.IsAbs(p) {
		if wd == "" {
			var err error
			if wd, err = os.Getwd(); err != nil {
				return views.ProjectFilter{}, err
			}
		}
		p = filepath.Join(wd, p)
	}
	p = filepath.Clean(p)
	f := views.ProjectFilter{Dirs: []string{p}}
	if r, err := filepath.EvalSymlinks(p); err == nil && r != p {
		f.Dirs = append(f.Dirs, r)
	}
	return f, nil
}

// ProjectFilter reads a command's --project value (ParseProject from the
// current directory and $HOME) as a flag error when it cannot be read.
func (f *Factory) ProjectFilter(arg string) (views.ProjectFilter, error) {
	home, _ := os.UserHomeDir()
	if h := f.getenv("HOME"); h != "" {
		home = h
	}
	pf, err := ParseProject(arg, "", home)
	if err != nil {
		return pf, FlagErrorf("--project: %v", err)
	}
	return pf, nil
}

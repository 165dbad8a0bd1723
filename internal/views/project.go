package views

import (
	"path/filepath"
	"strings"
)

// ProjectFilter selects runs by project (RunNode.Project): a run whose
// project is the directory or a directory below it. The zero filter
// selects every run; a filter selects no run without a project.
type ProjectFilter struct {
	// Dirs are the forms of the one directory asked for that a run's
	// project may be written in: cleaned absolute paths (as given, and
	// with its symbolic links resolved when they differ).
	Dirs []string
}

// IsZero reports whether the filter selects every run.
func (f ProjectFilter) IsZero() bool { return len(f.Dirs) == 0 }

// Match reports whether project is one of the filter's directories or
// below one (compared path element by path element after cleaning:
// /src/app matches /src/app and /src/app/web, not /src/apple).
func (f ProjectFilter) Match(project string) bool {
	if f.IsZero() {
		return true
	}
	if project == "" {
		return false
	}
	p := filepath.Clean(project)
	for _, d := range f.Dirs {
		if p == d || strings.HasPrefix(p, DirPrefix(d)) {
			return true
		}
	}
	return false
}

// DirPrefix is what every path below the directory dir starts with: dir
// and a separator ("/" for the root itself).
func DirPrefix(dir string) string {
	if strings.HasSuffix(dir, string(filepath.Separator)) {
		return dir
	}
	return dir + string(filepath.Separator)
}

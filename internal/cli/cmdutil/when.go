package cmdutil

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/twasm/twasm/internal/views"
)

// ParseTime reads a --since/--until value of any command (ls, search,
// sync): "" is no bound; "today" or "yesterday" (the start of that local
// day); a date (2026-08-01 or 20260801, the start of that local day), a
// local date and time, RFC 3339, or an age before now (90m, 36h, 7d, 2w).
func ParseTime(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	switch strings.ToLower(s) {
	case "today", "yesterday":
		y, m, d := now.In(time.Local).Date()
		if strings.EqualFold(s, "yesterday") {
			d--
		}
		return time.Date(y, m, d, 0, 0, 0, 0, time.Local), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02", "20060102"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	unit := time.Duration(0)
	switch {
	case strings.HasSuffix(s, "d"):
		unit = 24 * time.Hour
	case strings.HasSuffix(s, "w"):
		unit = 7 * 24 * time.Hour
	}
	if unit != 0 {
		n, err := strconv.ParseFloat(s[:len(s)-1], 64)
		if err == nil && n >= 0 {
			return now.Add(-time.Duration(n * float64(unit))), nil
		}
	} else if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%q is neither a time (today, yesterday, 2026-11-20, 20261120, 2026-11-20T15:04, RFC 3339) nor an age (90m, 36h, 7d, 2w)", s)
}

// Window is the --since, --until and --project flags of the commands
// that select what they show by when it happened and where (ls, stats,
// search, usage): the values as given, read by [Window.Times] and
// [Window.Read].
type Window struct {
	Since, Until, Project string
}

// AddFlags registers the three flags on fl: since and until are the
// help of the two times (what each bounds differs by command), of names
// what --project selects ("runs", "sessions").
func (w *Window) AddFlags(fl *pflag.FlagSet, since, until, of string) {
	fl.StringVar(&w.Since, "since", "", since)
	fl.StringVar(&w.Until, "until", "", until)
	fl.StringVar(&w.Project, "project", "", "only "+of+" of this project `DIR` or below it (. for the current directory)")
}

// Times reads --since and --until ([ParseTime], an age back from now);
// the zero time is no bound. An error is a flag error naming the flag.
func (w Window) Times(now time.Time) (since, until time.Time, err error) {
	if since, err = ParseTime(w.Since, now); err != nil {
		return since, until, FlagErrorf("--since: %v", err)
	}
	if until, err = ParseTime(w.Until, now); err != nil {
		return since, until, FlagErrorf("--until: %v", err)
	}
	return since, until, nil
}

// Read reads the three flags: the times as [Window.Times] does, the
// project as [Factory.ProjectFilter] does.
func (w Window) Read(f *Factory, now time.Time) (since, until time.Time, project views.ProjectFilter, err error) {
	if since, until, err = w.Times(now); err != nil {
		return since, until, project, err
	}
	project, err = f.ProjectFilter(w.Project)
	return since, until, project, err
}

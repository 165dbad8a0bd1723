package cmdutil

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseTime(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Time
		bad  bool
	}{
		{in: ""},
		{in: "7d", want: now.Add(-7 * 24 * time.Hour)},
		{in: "2w", want: now.Add(-14 * 24 * time.Hour)},
		{in: "36h", want: now.Add(-36 * time.Hour)},
		{in: "90m", want: now.Add(-90 * time.Minute)},
		{in: "2026-11-20T15:04:05Z", want: time.Date(2026, 11, 20, 15, 4, 5, 0, time.UTC)},
		{in: "2026-11-20", want: time.Date(2026, 11, 20, 0, 0, 0, 0, time.Local)},
		{in: "-3d", bad: true},
		{in: "20260801", want: time.Date(2026, 8, 1, 0, 0, 0, 0, time.Local)},
		{in: "today", want: startOfLocalDay(now, 0)},
		{in: "yesterday", want: startOfLocalDay(now, -1)},
		{in: "Yesterday", want: startOfLocalDay(now, -1)},
		{in: "tomorrow", bad: true},
		{in: "2026081", bad: true},
		{in: "20261301", bad: true},
	}
	for _, tc := range tests {
		got, err := ParseTime(tc.in, now)
		if tc.bad {
			if err == nil {
				t.Errorf("%q: no error", tc.in)
			}
			continue
		}
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("%q: %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func startOfLocalDay(t time.Time, days int) time.Time {
	y, m, d := t.In(time.Local).Date()
	return time.Date(y, m, d+days, 0, 0, 0, 0, time.Local)
}

// On the first day of a month, yesterday is in the month before.
func TestParseTimeYesterdayAcrossMonths(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.Local)
	got, err := ParseTime("yesterday", now)
	if err != nil || !got.Equal(time.Date(2026, 2, 28, 0, 0, 0, 0, time.Local)) {
		t.Fatalf("yesterday on 2026-03-01: %v, %v", got, err)
	}
}

// TestWindow: the three flags are registered with their help, read into
// times and a project, and a bad value is a usage error naming its flag.
func TestWindow(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	home := t.TempDir()
	f := &Factory{Getenv: func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}}
	tests := []struct {
		argv         []string
		since, until time.Time
		project      []string
		err          string // the flag an error names
	}{
		{argv: nil},
		{argv: []string{"--since", "7d", "--until", "2026-11-20T15:04:05Z"}, since: now.Add(-7 * 24 * time.Hour), until: time.Date(2026, 11, 20, 15, 4, 5, 0, time.UTC)},
		{argv: []string{"--project", "~/src"}, project: []string{filepath.Join(home, "src")}},
		{argv: []string{"--since", "soon"}, err: "--since"},
		{argv: []string{"--until", "-3d"}, err: "--until"},
	}
	for _, tc := range tests {
		var w Window
		fl := pflag.NewFlagSet("x", pflag.ContinueOnError)
		w.AddFlags(fl, "since help", "until help", "runs")
		require.NoError(t, fl.Parse(tc.argv))
		since, until, pf, err := w.Read(f, now)
		if tc.err != "" {
			assert.Equal(t, ExitUsage, ExitCode(err), "%v: %v", tc.argv, err)
			assert.Contains(t, fmt.Sprint(err), tc.err, "%v", tc.argv)
			continue
		}
		require.NoError(t, err, "%v", tc.argv)
		assert.True(t, since.Equal(tc.since) && until.Equal(tc.until), "%v: %v %v", tc.argv, since, until)
		assert.Equal(t, tc.project, pf.Dirs, "%v", tc.argv)
	}
	fl := pflag.NewFlagSet("x", pflag.ContinueOnError)
	new(Window).AddFlags(fl, "since help", "until help", "sessions")
	assert.Equal(t, "since help", fl.Lookup("since").Usage)
	assert.Equal(t, "until help", fl.Lookup("until").Usage)
	assert.Equal(t, "only sessions of this project `DIR` or below it (. for the current directory)", fl.Lookup("project").Usage)
}

package cmdutil

import (
	"testing"
	"time"
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

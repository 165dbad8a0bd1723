package sdk

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestRFC3339 checks RFC3339Millis and RFC3339Seconds against the
// time.Format calls they replace: around every boundary where the
// arithmetic could slip (epoch, leap days, centuries, the four-digit
// years' ends, int64's ends) and on random times over and beyond 0-9999.
func TestRFC3339(t *testing.T) {
	const (
		year0    = -62167219200 // 0000-01-01T00:00:00Z, in seconds
		year9999 = 253402300799 // 9999-12-31T23:59:59Z
	)
	secs := []int64{
		0, -1, 1, 86399, 86400, -86400, -86401,
		951782400,   // 2000-02-29
		951868800,   // 2000-03-01
		4107542400,  // 2100-03-01 (2100 is no leap year)
		-2203891200, // 1900-03-01 (1900 is no leap year either)
		1714566896,  // 2024-05-01T12:34:56Z
		year0, year0 - 1, year0 + 1, year9999, year9999 + 1, year9999 - 1,
		math.MaxInt64 / 1000, math.MinInt64 / 1000,
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		secs = append(secs, year0-1e10+r.Int64N(year9999-year0+2e10))
	}
	for _, s := range secs {
		if got, want := RFC3339Seconds(s), time.Unix(s, 0).UTC().Format("2006-01-02T15:04:05Z"); got != want {
			t.Fatalf("RFC3339Seconds(%d) = %q, want %q", s, got, want)
		}
		for _, ms := range []int64{s * 1000, s*1000 + 1, s*1000 - 1, s*1000 + 999, s*1000 + r.Int64N(1000)} {
			if got, want := RFC3339Millis(ms), time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z"); got != want {
				t.Fatalf("RFC3339Millis(%d) = %q, want %q", ms, got, want)
			}
		}
	}
	for _, ms := range []int64{math.MaxInt64, math.MinInt64, math.MinInt64 + 1} {
		if got, want := RFC3339Millis(ms), time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z"); got != want {
			t.Errorf("RFC3339Millis(%d) = %q, want %q", ms, got, want)
		}
	}
	for _, s := range []int64{math.MaxInt64, math.MinInt64} {
		if got, want := RFC3339Seconds(s), time.Unix(s, 0).UTC().Format("2006-01-02T15:04:05Z"); got != want {
			t.Errorf("RFC3339Seconds(%d) = %q, want %q", s, got, want)
		}
	}
}

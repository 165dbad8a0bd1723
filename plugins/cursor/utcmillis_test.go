//go:build !wasip1

package cursor

import (
	"strconv"
	"testing"
	"time"
)

// TestUTCMillis: the fast path of bubbleTime gives what time.Parse and
// Format give for every time it takes, and takes none that time.Parse
// refuses; what it leaves (an offset, an escape, a comma) bubbleTime
// parses as before.
func TestUTCMillis(t *testing.T) {
	for _, tc := range []struct {
		in   string
		fast bool // taken by the fast path
	}{
		{"2026-01-01T10:00:09.000Z", true},
		{"2025-01-02T03:04:05.678Z", true},
		{"2025-01-02T03:04:05Z", true},
		{"2025-01-02T03:04:05.6Z", true},
		{"2025-01-02T03:04:05.61Z", true},
		{"2025-01-02T03:04:05.123456789Z", true},
		{"2025-01-02T03:04:05.1234567891234Z", true},
		{"0000-01-01T00:00:00Z", true},
		{"9999-12-31T23:59:59.999Z", true},
		{"2024-02-29T12:00:00Z", true},
		{"2000-02-29T12:00:00Z", true},
		{"1900-02-29T12:00:00Z", false},
		{"2023-02-29T12:00:00Z", false},
		{"2023-04-31T12:00:00Z", false},
		{"2023-04-30T12:00:00Z", true},
		{"2023-13-01T12:00:00Z", false},
		{"2023-00-01T12:00:00Z", false},
		{"2023-01-00T12:00:00Z", false},
		{"2023-01-01T24:00:00Z", false},
		{"2023-01-01T23:60:00Z", false},
		{"2023-01-01T23:59:60Z", false},
		{"2023-01-01T23:59:59.Z", false},
		{"2023-01-01T23:59:59.1xZ", false},
		{"2023-01-01T23:59:59.12345678901x2Z", false},
		{"2023-01-01T23:59:59,123Z", false},
		{"2023-01-01t23:59:59Z", false},
		{"2023-01-01T23:59:59z", false},
		{"2023-01-01T23:59:59.123+02:00", false},
		{"2023-01-01T23:59:59.123-00:30", false},
		{"2023-01-01 23:59:59Z", false},
		{"+023-01-01T23:59:59Z", false},
		{"2023-1-01T23:59:59Z", false},
		{"2023-01-01T23:59:5Z", false},
		{"2023-01-01T23:59Z", false},
		{"", false},
		{"Z", false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			raw := []byte(strconv.Quote(tc.in))
			got, ok := utcMillis(raw)
			if ok != tc.fast {
				t.Fatalf("utcMillis(%s) ok = %v, want %v", raw, ok, tc.fast)
			}
			pt, err := time.Parse(time.RFC3339Nano, tc.in)
			if !ok {
				return
			}
			if err != nil {
				t.Fatalf("utcMillis(%s) = %q, but time.Parse refuses it: %v", raw, got, err)
			}
			if want := pt.UTC().Format("2006-01-02T15:04:05.000Z"); got != want {
				t.Fatalf("utcMillis(%s) = %q, want %q", raw, got, want)
			}
		})
	}
	// An escape is never read as the digit it stands for.
	if got, ok := utcMillis([]byte(`"\u0032025-01-02T03:04:05Z"`)); ok {
		t.Fatalf("an escaped time taken: %q", got)
	}
}

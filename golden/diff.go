package golden

import (
	"bytes"
	"fmt"
	"strings"
)

// maxDiffCells bounds the LCS table; larger inputs get a first-difference
// report instead of a full diff.
const maxDiffCells = 4 << 20

// Diff returns a readable line diff of want and got ("-" lines only in
// want, "+" lines only in got, with line numbers), or "" when equal.
func Diff(want, got []byte) string {
	if bytes.Equal(want, got) {
		return ""
	}
	a := splitLines(want)
	b := splitLines(got)
	if d := lineDiff(a, b); d != "" {
		return d
	}
	// The lines are equal: only the final newline differs, which a line
	// diff cannot show (and an empty diff would read as a pass).
	if bytes.HasSuffix(want, []byte("\n")) {
		return "-: newline at end of file\n+: no newline at end of file\n"
	}
	return "-: no newline at end of file\n+: newline at end of file\n"
}

func lineDiff(a, b []string) string {
	if (len(a)+1)*(len(b)+1) > maxDiffCells {
		return firstDifference(a, b)
	}
	// Longest common subsequence, then walk it to print the edits.
	n, m := len(a), len(b)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else if lcs[i+1][j] >= lcs[i][j+1] {
				lcs[i][j] = lcs[i+1][j]
			} else {
				lcs[i][j] = lcs[i][j+1]
			}
		}
	}
	var out strings.Builder
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			i++
			j++
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			fmt.Fprintf(&out, "+%d: %s\n", j+1, b[j])
			j++
		default:
			fmt.Fprintf(&out, "-%d: %s\n", i+1, a[i])
			i++
		}
	}
	return out.String()
}

func splitLines(b []byte) []string {
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func firstDifference(a, b []string) string {
	for i := 0; i < len(a) || i < len(b); i++ {
		// A missing line is told apart from an empty one.
		x, y := " (end of file)", " (end of file)"
		if i < len(a) {
			x = ": " + a[i]
		}
		if i < len(b) {
			y = ": " + b[i]
		}
		if i >= len(a) || i >= len(b) || a[i] != b[i] {
			return fmt.Sprintf("first difference at line %d:\n-%d%s\n+%d%s\n", i+1, i+1, x, i+1, y)
		}
	}
	return ""
}

package golden

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/twasm/twasm/internal/linediff"
)

// showDiff returns a readable line diff of want and got, or "" when equal:
// "-N:" a line only in want, "+N:" a line only in got (cut to maxShown
// bytes), and "~N/+M:" a changed JSON line followed by the fields that
// differ, one per line as "path: want → got", so that a change in one
// field of a 1 KB line shows as that field.
func showDiff(want, got []byte) string {
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
	ops, ok := linediff.Ops(a, b)
	if !ok {
		return firstDifference(a, b)
	}
	// Runs of removed and added lines; a removed line paired with an
	// added one is shown field by field.
	var out strings.Builder
	var dels, adds []int
	flush := func() {
		writeHunk(&out, a, b, dels, adds)
		dels, adds = dels[:0], adds[:0]
	}
	for _, op := range ops {
		switch op.Kind {
		case linediff.Equal:
			flush()
		case linediff.Del:
			dels = append(dels, op.A)
		case linediff.Add:
			adds = append(adds, op.B)
		}
	}
	flush()
	return out.String()
}

// maxShown bounds how much of a line or a value a diff prints.
const maxShown = 160

// writeHunk prints one run of edits: the i-th removed line against the
// i-th added one, as the fields that differ when both are JSON, and the
// lines left over as they are, cut to maxShown bytes.
func writeHunk(out *strings.Builder, a, b []string, dels, adds []int) {
	k := 0
	for ; k < len(dels) && k < len(adds); k++ {
		x, y := a[dels[k]], b[adds[k]]
		fields, ok := fieldDiff(x, y)
		if !ok {
			fmt.Fprintf(out, "-%d: %s\n+%d: %s\n", dels[k]+1, clip(x), adds[k]+1, clip(y))
			continue
		}
		fmt.Fprintf(out, "~%d/+%d: %s\n", dels[k]+1, adds[k]+1, lineLabel(y))
		for _, f := range fields {
			fmt.Fprintf(out, "    %s\n", f)
		}
	}
	for _, d := range dels[k:] {
		fmt.Fprintf(out, "-%d: %s\n", d+1, clip(a[d]))
	}
	for _, d := range adds[k:] {
		fmt.Fprintf(out, "+%d: %s\n", d+1, clip(b[d]))
	}
}

// clip cuts a line to maxShown bytes (on a rune boundary) and says how
// long it was.
func clip(s string) string {
	if len(s) <= maxShown {
		return s
	}
	cut := maxShown
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:cut], len(s))
}

// lineLabel names a rendering line: its kind and, for an event, its type
// and seq.
func lineLabel(line string) string {
	var v struct {
		Event *struct {
			Type string `json:"type"`
			Seq  uint64 `json:"seq"`
		} `json:"event"`
	}
	if json.Unmarshal([]byte(line), &v) == nil && v.Event != nil {
		return fmt.Sprintf("event %s seq %d", v.Event.Type, v.Event.Seq)
	}
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(line), &m) == nil && len(m) == 1 {
		for k := range m {
			return k
		}
	}
	return "line"
}

// fieldDiff compares two JSON lines and lists the leaves that differ as
// "path: want → got" (a field only on one side as "(absent)"). ok is
// false when either line is not JSON.
func fieldDiff(x, y string) (fields []string, ok bool) {
	var vx, vy any
	if json.Unmarshal([]byte(x), &vx) != nil || json.Unmarshal([]byte(y), &vy) != nil {
		return nil, false
	}
	walkDiff("", vx, vy, &fields)
	return fields, len(fields) > 0
}

const absent = "(absent)"

func walkDiff(path string, x, y any, out *[]string) {
	mx, xok := x.(map[string]any)
	my, yok := y.(map[string]any)
	if xok && yok {
		keys := map[string]bool{}
		for k := range mx {
			keys[k] = true
		}
		for k := range my {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			p := k
			if path != "" {
				p = path + "." + k
			}
			vx, inX := mx[k]
			vy, inY := my[k]
			switch {
			case !inX:
				*out = append(*out, fmt.Sprintf("%s: %s → %s", p, absent, shown(vy)))
			case !inY:
				*out = append(*out, fmt.Sprintf("%s: %s → %s", p, shown(vx), absent))
			default:
				walkDiff(p, vx, vy, out)
			}
		}
		return
	}
	ax, xok := x.([]any)
	ay, yok := y.([]any)
	if xok && yok {
		for i := 0; i < len(ax) || i < len(ay); i++ {
			p := fmt.Sprintf("%s[%d]", path, i)
			switch {
			case i >= len(ax):
				*out = append(*out, fmt.Sprintf("%s: %s → %s", p, absent, shown(ay[i])))
			case i >= len(ay):
				*out = append(*out, fmt.Sprintf("%s: %s → %s", p, shown(ax[i]), absent))
			default:
				walkDiff(p, ax[i], ay[i], out)
			}
		}
		return
	}
	if !reflect.DeepEqual(x, y) {
		*out = append(*out, fmt.Sprintf("%s: %s → %s", path, shown(x), shown(y)))
	}
}

// shown is a JSON value as a diff prints it, cut to maxShown bytes.
func shown(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return clip(string(b))
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

package views

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/twasm/twasm/transcript"
)

// ANSI styles, used only when the caller asks for color.
const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiDim    = "\x1b[2m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiBlue   = "\x1b[34m"
	ansiCyan   = "\x1b[36m"
)

func paint(on bool, style, s string) string {
	if !on || s == "" {
		return s
	}
	return style + s + ansiReset
}

// statusStyle colors a status by outcome.
func statusStyle(status string) string {
	switch status {
	case "ok", "completed", "success":
		return ansiGreen
	case "error", "failed", "dangling", "cancelled", "denied":
		return ansiRed
	}
	return ansiYellow
}

// FormatDuration renders a millisecond duration compactly: 850ms, 3.2s,
// 4m05s, 1h02m.
func FormatDuration(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d < 0:
		return "-" + FormatDuration(-ms)
	case d < time.Second:
		return fmt.Sprintf("%dms", ms)
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

func durationString(ms *int64) string {
	if ms == nil {
		return ""
	}
	return FormatDuration(*ms)
}

// Clip shortens s to at most n runes on one line: control characters and
// newlines become spaces (so a hostile text cannot move the cursor or forge
// lines) and an ellipsis marks the cut.
func Clip(s string, n int) string {
	s = oneLine(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:max(n-1, 0)]) + "…"
}

// OneLine is text from a transcript made safe to print as one line of a
// terminal: whitespace runs fold to one space, terminal escape sequences
// (colours, OSC 8 hyperlinks, title changes) and control characters are
// dropped.
func OneLine(s string) string { return oneLine(s) }

// oneLine folds whitespace runs to one space and drops terminal escape
// sequences and control characters.
func oneLine(s string) string {
	s = StripEscapes(s)
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t' || r == '\r' || r == ' ':
			space = true
			continue
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0:
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// sanitize drops terminal escape sequences and control characters other
// than newline and tab from multi-line text that is printed to a
// terminal.
func sanitize(s string) string {
	s = StripEscapes(s)
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isControl(r) {
			return -1
		}
		return r
	}, s)
}

func isControl(r rune) bool {
	return r != '\n' && r != '\t' && (r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0)
}

// ShortID returns the first 8 characters of a run id, enough to tell runs
// apart in a listing.
func ShortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

func timeString(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05.000Z")
}

// UsageFigure is one token counter as reports show it.
type UsageFigure struct {
	// Name is what a person reads: "uncached in", "cache read",
	// "cache write", "cache write 1h", "out", "reasoning", "stated total".
	Name string
	// Key is the counter's JSON name in the transcript.
	Key string
	N   int64
}

// UsageFigures lists u's counters as the providers bill them: the
// uncached input (derived for an older transcript, transcript.Usage.Uncached),
// the cache read, the cache write (and its one-hour part), the output
// (and its reasoning part), and the total the provider states. Every
// report shows these, never an "input" that silently holds the cache:
// the sum of every input token (input_tokens) is left to --json.
func UsageFigures(u *transcript.Usage) []UsageFigure {
	if u.IsZero() {
		return nil
	}
	b := u.Billed()
	var fs []UsageFigure
	add := func(name, key string, p *int64) {
		if p != nil {
			fs = append(fs, UsageFigure{name, key, *p})
		}
	}
	add("uncached in", "uncached_input_tokens", b.UncachedInputTokens)
	add("cache read", "cache_read_tokens", b.CacheReadTokens)
	add("cache write", "cache_write_tokens", b.CacheWriteTokens)
	add("cache write 1h", "cache_write_1h_tokens", b.CacheWrite1hTokens)
	add("out", "output_tokens", b.OutputTokens)
	add("reasoning", "reasoning_tokens", b.ReasoningTokens)
	add("stated total", "total_tokens", b.TotalTokens)
	return fs
}

// UsageText is UsageFigures as "uncached in 54 / cache read 88231 / ...",
// sep between the figures ("" for no usage).
func UsageText(u *transcript.Usage, sep string) string {
	var parts []string
	for _, f := range UsageFigures(u) {
		parts = append(parts, f.Name+" "+strconv.FormatInt(f.N, 10))
	}
	return strings.Join(parts, sep)
}

package cmdutil

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/twasm/twasm/internal/views"
)

// WriteJSON writes v as one line of compact JSON. Every --json output of
// twasm is JSON Lines with snake_case keys: a command about one thing
// prints one line, a listing one line per item (WriteJSONLines).
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

// WriteJSONLines writes each item as one line of compact JSON; no item is
// no output.
func WriteJSONLines[T any](w io.Writer, items []T) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, it := range items {
		if err := enc.Encode(it); err != nil {
			return fmt.Errorf("write json: %w", err)
		}
	}
	return nil
}

// Table prints rows for a person on a terminal (aligned columns under a
// header) and as stable tab-separated lines without a header in a pipe,
// as the GitHub CLI does.
type Table struct {
	w      io.Writer
	tty    bool
	header []string
	rows   [][]string
}

// NewTable returns a table writing to w.
func NewTable(w io.Writer, tty bool, header ...string) *Table {
	return &Table{w: w, tty: tty, header: header}
}

// Row adds a row. Terminal escape sequences are removed, and tabs,
// newlines and other control characters inside cells become spaces, so
// that a cell never splits a line of the tab-separated form and
// transcript text cannot drive the terminal.
func (t *Table) Row(cells ...string) {
	clean := make([]string, len(cells))
	for i, c := range cells {
		clean[i] = strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f {
				return ' '
			}
			return r
		}, views.StripEscapes(c))
	}
	t.rows = append(t.rows, clean)
}

// Render writes the table.
func (t *Table) Render() error {
	if !t.tty {
		for _, r := range t.rows {
			if _, err := fmt.Fprintln(t.w, strings.Join(r, "\t")); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(t.w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(t.header, "\t"))
	for _, r := range t.rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// ExactArgs is cobra.ExactArgs reporting a usage error.
func ExactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return FlagErrorf("%s takes %d argument (%s), got %d", cmd.CommandPath(), n, what, len(args))
		}
		return nil
	}
}

// MinimumArgs is cobra.MinimumNArgs reporting a usage error.
func MinimumArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return FlagErrorf("%s needs at least %d argument (%s)", cmd.CommandPath(), n, what)
		}
		return nil
	}
}

// RedactedSummary says what --redact masked, by kind: "3 value(s):
// aws_key 1, bearer 2", or that nothing matched.
func RedactedSummary(counts map[string]int) string {
	if len(counts) == 0 {
		return "nothing matched a secret pattern"
	}
	kinds := make([]string, 0, len(counts))
	total := 0
	for k, n := range counts {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
		total += n
	}
	sort.Strings(kinds)
	return fmt.Sprintf("%d value(s): %s", total, strings.Join(kinds, ", "))
}

package usagecmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/cli/iostreams"
	"github.com/twasm/twasm/internal/prices"
	"github.com/twasm/twasm/internal/regfile"
)

// PricesOptions are the inputs of the prices commands.
type PricesOptions struct {
	IO     *iostreams.IOStreams
	Prices func() (*prices.Table, string, error)
	// Path is where update installs a table ("" when no home is known).
	Path func() string
	File string
	JSON bool
}

// NewCmdPrices returns the prices command and its update subcommand.
func NewCmdPrices(f *cmdutil.Factory, runF func(*PricesOptions) error) *cobra.Command {
	opts := &PricesOptions{IO: f.IOStreams, Prices: f.Prices, Path: f.PricesPath}
	cmd := &cobra.Command{
		Use:   "prices",
		Short: "The price table usage is priced with: which, of what date, from where",
		Long: `Show the price table in force: the table bundled with twasm, or a newer one
installed with "twasm prices update FILE" (in ` + "$XDG_CONFIG_HOME/twasm/" + prices.FileName + `, else
~/.config/twasm/` + prices.FileName + `), its date, and each model's rates in US dollars per
million tokens (input, cache read, 5-minute and 1-hour cache write, output;
long-context tiers) with the pages they were read from and when. An
installed table older than the bundled one is not used (a newer twasm
brings newer prices). twasm never fetches prices from the network.`,
		Example: `  twasm prices
  twasm prices --json | jq '.models[] | select(.provider == "anthropic")'
  twasm prices update ./prices.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runPrices(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the table in force as JSON")
	cmd.AddCommand(&cobra.Command{
		Use:   "update FILE",
		Short: "Check a price table and install it",
		Long: `Check FILE as a price table (schema twasm.prices/1, a name and a date, for
every model an id, its provider, input and output rates of at most six
decimals, rising tiers, https sources and the date checked; no model named
twice) and install it in place of the one in force. The next usage and
stats price every run with it. The file's format is the bundled table's:
"twasm prices --json" prints it.

A file written for a newer twasm: a later schema, or a field at its top
level this twasm does not know, is refused (and an installed one is not
used: the bundled table is, and twasm says so); a model whose entry has a
field this twasm does not know is installed but not priced, its usage
counted as unpriced with the field named. Fields named info_... are
ignored.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			return runUpdate(opts)
		},
	})
	return cmd
}

func runPrices(opts *PricesOptions) error {
	t, note, err := opts.Prices()
	if err != nil {
		return err
	}
	if note != "" {
		fmt.Fprintf(opts.IO.ErrOut, "twasm: %s\n", note)
	}
	noteUnpriceable(opts, t)
	if opts.JSON {
		return cmdutil.WriteJSON(opts.IO.Out, struct {
			*prices.Table
			Origin string `json:"origin"`
			SHA256 string `json:"sha256"`
		}{t, t.Origin, t.SHA256})
	}
	w := opts.IO.Out
	fmt.Fprintf(w, "price table %s (%s), sha256 %s, %d models\n", t.Version(), t.Origin, t.SHA256[:16], len(t.Models))
	tb := cmdutil.NewTable(w, opts.IO.IsStdoutTTY(), "MODEL", "PROVIDER", "INPUT", "CACHE READ", "WRITE 5M", "WRITE 1H", "OUTPUT", "ABOVE", "BATCH", "FLEX", "CHECKED", "SOURCE")
	or := func(s, d string) string {
		if s == "" {
			return d
		}
		return s
	}
	pct := func(p int) string {
		if p > 0 {
			return fmt.Sprintf("%d%%", p)
		}
		return "-"
	}
	rates := func(label, provider, above string, r prices.Rates, m *prices.Model, checked, source string) {
		w5 := or(r.CacheWrite5m, or(r.Input, ""))
		b, f := "-", "-"
		if m != nil {
			b, f = pct(m.BatchPercent), pct(m.FlexPercent)
		}
		tb.Row(label, provider, r.Input, or(r.CacheRead, r.Input), w5, or(r.CacheWrite1h, w5), r.Output, above, b, f, checked, source)
	}
	for _, m := range t.Models {
		name := m.ID
		if len(m.Aliases) > 0 {
			name += " (" + strings.Join(m.Aliases, ", ") + ")"
		}
		rates(name, m.Provider, "", m.Rates, &m, m.Checked, strings.Join(m.Sources, " "))
		for _, tr := range m.Tiers {
			rates("  "+m.ID, m.Provider, fmt.Sprint(tr.AboveInput), tr.Rates, &m, "", "")
		}
		if p := m.Priority; p != nil {
			// The priority tier's rates, for requests up to MaxInput.
			upTo := ""
			if p.MaxInput > 0 {
				upTo = fmt.Sprintf("up to %d", p.MaxInput)
			}
			rates("  "+m.ID+" priority", m.Provider, upTo, p.Rates, nil, "", "")
		}
	}
	return tb.Render()
}

func runUpdate(opts *PricesOptions) error {
	path := opts.Path()
	if path == "" {
		return &cmdutil.InputError{Err: fmt.Errorf("no config directory: set $XDG_CONFIG_HOME or $HOME")}
	}
	data, err := regfile.ReadFile(opts.File, 16<<20)
	if err != nil {
		return &cmdutil.InputError{Err: fmt.Errorf("read %s: %w", opts.File, err)}
	}
	t, err := prices.Install(path, data)
	if err != nil {
		return &cmdutil.InputError{Err: fmt.Errorf("%s: %w", opts.File, err)}
	}
	fmt.Fprintf(opts.IO.Out, "installed price table %s (%d models) at %s\n", t.Version(), len(t.Models), path)
	noteUnpriceable(opts, t)
	if b := prices.Bundled(); t.Date < b.Date {
		fmt.Fprintf(opts.IO.ErrOut, "twasm: it is older than the bundled table (%s), which stays in force\n", b.Version())
	}
	return nil
}

// noteUnpriceable says on stderr which models of t this twasm leaves
// unpriced because their entries have fields a newer twasm wrote.
func noteUnpriceable(opts *PricesOptions, t *prices.Table) {
	if u := t.Unpriceable(); len(u) > 0 {
		fmt.Fprintf(opts.IO.ErrOut, "twasm: the entries of these models have a field this twasm does not know, so their usage is not priced: %s\n", strings.Join(u, ", "))
	}
}

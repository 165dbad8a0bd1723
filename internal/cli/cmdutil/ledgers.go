package cmdutil

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/twasm/twasm/internal/prices"
	"github.com/twasm/twasm/internal/usage"
)

// PricesPath is where `twasm prices update` installs a price table:
// $XDG_CONFIG_HOME/twasm/prices.json, else ~/.config/twasm/prices.json;
// "" when neither is known.
func (f *Factory) PricesPath() string {
	if d := f.getenv("XDG_CONFIG_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "twasm", prices.FileName)
	}
	if h := f.getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".config", "twasm", prices.FileName)
	}
	return ""
}

// Prices returns the price table in force (prices.Load) and, when an
// installed table is not used, why.
func (f *Factory) Prices() (*prices.Table, string, error) {
	t, note, err := prices.Load(f.PricesPath())
	if err != nil {
		return nil, "", &InputError{Err: err}
	}
	return t, note, nil
}

// UsageLedgers returns each run id's usage ledger priced with tbl, from
// the storage's index for the transcripts unchanged since it last read
// them (keyed by the build and the table's digest, so a new table prices
// every run again once), as RunDigests does; an index that cannot be
// used is an error, for the caller to read the files instead
// (LedgersFromFiles).
func (f *Factory) UsageLedgers(ctx context.Context, ids []string, tbl *prices.Table, w io.Writer) (map[string]*usage.Ledger, error) {
	kind := "usage.Ledger/1/" + digestKind() + "/" + tbl.SHA256
	return derivedOf(ctx, f, kind, ids, w, func(path string) *usage.Ledger { return usage.LedgerFile(path, tbl) })
}

// LedgersFromFiles reads every run's ledger from its transcript.
func (f *Factory) LedgersFromFiles(ids []string, tbl *prices.Table) map[string]*usage.Ledger {
	out := make(map[string]*usage.Ledger, len(ids))
	for _, id := range ids {
		out[id] = usage.LedgerFile(filepath.Join(f.TranscriptDir(), id+".jsonl"), tbl)
	}
	return out
}

// FileModTime is a run's transcript modification time (the zero time
// when it cannot be read), for views.Superseded.
func (f *Factory) FileModTime(id string) (t0 time.Time) {
	if fi, err := os.Stat(filepath.Join(f.TranscriptDir(), id+".jsonl")); err == nil {
		return fi.ModTime()
	}
	return t0
}

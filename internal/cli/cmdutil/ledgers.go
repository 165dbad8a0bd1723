package cmdutil

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/twasm/twasm/internal/prices"
	"github.com/twasm/twasm/internal/usage"
)

// PricesPath is where `twasm prices update` installs a price table:
// [Factory.ConfigFile] prices.json; "" when no configuration directory is
// known.
func (f *Factory) PricesPath() string { return f.ConfigFile(prices.FileName) }

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
// every run again once, and kept in the ledger's binary encoding:
// decoding JSON was most of a report's cost). The index is brought up to
// date from the change journal first and trusted for which files changed,
// as search does (a file appended to by a tool that keeps no journal is
// seen after `twasm index --check`); an index that cannot be used is an
// error, for the caller to read the files instead (LedgersFromFiles).
func (f *Factory) UsageLedgers(ctx context.Context, ids []string, tbl *prices.Table, w io.Writer) (map[string]*usage.Ledger, error) {
	kind := "usage.Ledger/4/" + DigestKind() + "/" + tbl.SHA256
	return derivedOf(ctx, f, kind, ids, w, func(path string) *usage.Ledger { return usage.LedgerFile(path, tbl) },
		codec[usage.Ledger]{marshal: (*usage.Ledger).MarshalBinary, unmarshal: func(b []byte, l *usage.Ledger) error { return l.UnmarshalBinary(b) }}, true)
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

// UsageSource is how a command gets the price table and the runs' usage
// ledgers: from the index (Ledgers), else from the files (Files). A nil
// Prices asks for no cost.
type UsageSource struct {
	Prices  func() (*prices.Table, string, error)
	Ledgers func(ctx context.Context, ids []string, tbl *prices.Table, w io.Writer) (map[string]*usage.Ledger, error)
	Files   func(ids []string, tbl *prices.Table) map[string]*usage.Ledger
}

// UsageSource is the factory's: the table in force, the index, the files.
func (f *Factory) UsageSource() UsageSource {
	return UsageSource{Prices: f.Prices, Ledgers: f.UsageLedgers, Files: f.LedgersFromFiles}
}

// Load returns the table in force and the ledgers of ids, saying on w
// why an installed table is not used; an index that cannot be used is
// read around (the files).
func (u UsageSource) Load(ctx context.Context, ids []string, w io.Writer) (*prices.Table, map[string]*usage.Ledger, error) {
	tbl, note, err := u.Prices()
	if err != nil {
		return nil, nil, err
	}
	if note != "" {
		fmt.Fprintf(w, "twasm: %s\n", note)
	}
	var ledgers map[string]*usage.Ledger
	if u.Ledgers != nil {
		ledgers, _ = u.Ledgers(ctx, ids, tbl, w)
	}
	if ledgers == nil {
		ledgers = u.Files(ids, tbl)
	}
	return tbl, ledgers, nil
}

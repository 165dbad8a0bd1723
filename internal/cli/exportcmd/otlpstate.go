package exportcmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/twasm/twasm/internal/durable"
	"github.com/twasm/twasm/internal/regfile"
)

// otlpState is what `export otlp --new` has sent: for each endpoint, for
// each run, the seq up to which the run's spans reached that collector
// (export.Settled: no step is cut in two). It lives in the storage, at
// otlpStateFile, and is replaced whole, atomically, only after every span
// of an export was accepted, so an export that failed in part is sent
// again from the same point (with the same span ids) by the next one.
type otlpState struct {
	Version   int                          `json:"version"`
	Endpoints map[string]map[string]uint64 `json:"endpoints"`
}

// otlpStateLimit bounds the state file read: about 20 bytes per run and
// endpoint, so millions of runs.
const otlpStateLimit = 64 << 20

func otlpStateFile(storage string) string {
	return filepath.Join(storage, "exports", "otlp.json")
}

func loadOTLPState(path string) (*otlpState, error) {
	st := &otlpState{Version: 1, Endpoints: map[string]map[string]uint64{}}
	b, err := regfile.ReadFile(path, otlpStateLimit)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, fmt.Errorf("what export otlp --new has sent: %w", err)
	}
	if err := json.Unmarshal(b, st); err != nil || st.Version != 1 {
		return nil, fmt.Errorf("what export otlp --new has sent: %s is not a state file of this twasm (remove it to send every run again): %v", path, err)
	}
	if st.Endpoints == nil {
		st.Endpoints = map[string]map[string]uint64{}
	}
	return st, nil
}

// save replaces the state file durably (durable.WriteFile), so a crash
// leaves the old state or the new one.
func (st *otlpState) save(path string) error {
	if err := durable.MkdirAll(filepath.Dir(path), 0o700, durable.SyncDir); err != nil {
		return err
	}
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return durable.WriteFile(path, append(b, '\n'), 0o600)
}

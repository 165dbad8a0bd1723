package index

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
)

// The derived table caches what a command computes from each whole
// transcript (ls's listing line and stats' counts, as JSON the command
// defines), checked against the files as the search documents are: an
// entry whose file has the size and mtime it was computed from is used,
// any other is computed again. It is created on first use, so an index
// built before it existed needs no rebuild.
const derivedSchema = `CREATE TABLE IF NOT EXISTS derived(
  kind TEXT NOT NULL,
  run_id TEXT NOT NULL,
  size INTEGER NOT NULL,
  mtime INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY(kind, run_id)
)`

// DerivedStats say what Derived did.
type DerivedStats struct {
	Cached   int `json:"cached"`   // unchanged files, taken from the index
	Computed int `json:"computed"` // new or changed files, computed again
	Removed  int `json:"removed"`  // entries of files no longer listed
}

type derivedRow struct {
	size, mtime int64
	data        []byte
}

// Derived returns, for each run id, the data compute derives from its
// transcript (<root>/transcripts/<id>.jsonl), from the index when the
// file has not changed since, else computed and stored. kind names the
// data and its version (a new version computes everything again).
// Entries of kind whose run is not in ids are dropped. compute gets the
// file's path; a file that cannot be stat'ed is computed every time.
func (ix *Index) Derived(ctx context.Context, kind string, ids []string, compute func(path string) ([]byte, error)) (map[string][]byte, DerivedStats, error) {
	return ix.derived(ctx, kind, ids, compute, true)
}

// DerivedOf is Derived for some of the runs (a page of a listing): the
// entries of other runs are kept.
func (ix *Index) DerivedOf(ctx context.Context, kind string, ids []string, compute func(path string) ([]byte, error)) (map[string][]byte, DerivedStats, error) {
	return ix.derived(ctx, kind, ids, compute, false)
}

func (ix *Index) derived(ctx context.Context, kind string, ids []string, compute func(path string) ([]byte, error), all bool) (map[string][]byte, DerivedStats, error) {
	var st DerivedStats
	if _, err := ix.db.ExecContext(ctx, derivedSchema); err != nil {
		return nil, st, fmt.Errorf("index: %w", err)
	}
	// Stat every file on every core while the stored entries are read:
	// with the index warm, these two are the work.
	dir := filepath.Join(ix.root, "transcripts")
	type statResult struct {
		info os.FileInfo
		err  error
	}
	stats := make([]statResult, len(ids))
	var wg sync.WaitGroup
	workers := max(1, min(runtime.GOMAXPROCS(0), len(ids)/256))
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(ids); i += workers {
				info, err := os.Stat(filepath.Join(dir, ids[i]+".jsonl"))
				stats[i] = statResult{info, err}
			}
		})
	}
	known, err := ix.derivedRows(ctx, kind, ids, all)
	wg.Wait()
	if err != nil {
		return nil, st, err
	}
	type put struct {
		id          string
		size, mtime int64
		data        []byte
	}
	var puts []put
	out := make(map[string][]byte, len(ids))
	listed := make(map[string]bool, len(ids))
	for i, id := range ids {
		if err := ctx.Err(); err != nil {
			return nil, st, err
		}
		listed[id] = true
		path := filepath.Join(dir, id+".jsonl")
		info, statErr := stats[i].info, stats[i].err
		if r := known[id]; r != nil && statErr == nil && r.size == info.Size() && r.mtime == info.ModTime().UnixNano() {
			out[id] = r.data
			st.Cached++
			continue
		}
		// Stat before reading: a file that grows meanwhile differs next
		// time and is computed again.
		data, err := compute(path)
		if err != nil {
			return nil, st, err
		}
		out[id] = data
		st.Computed++
		if statErr == nil {
			puts = append(puts, put{id, info.Size(), info.ModTime().UnixNano(), data})
		}
	}
	var gone []string
	for id := range known {
		if all && !listed[id] {
			gone = append(gone, id)
		}
	}
	if len(puts) == 0 && len(gone) == 0 {
		return out, st, nil
	}
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, st, fmt.Errorf("index: %w", err)
	}
	defer tx.Rollback()
	for _, p := range puts {
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO derived(kind, run_id, size, mtime, data) VALUES(?, ?, ?, ?, ?)`, kind, p.id, p.size, p.mtime, p.data); err != nil {
			return nil, st, fmt.Errorf("index: %w", err)
		}
	}
	for _, id := range gone {
		if _, err := tx.ExecContext(ctx, `DELETE FROM derived WHERE kind = ? AND run_id = ?`, kind, id); err != nil {
			return nil, st, fmt.Errorf("index: %w", err)
		}
		st.Removed++
	}
	if err := tx.Commit(); err != nil {
		return nil, st, fmt.Errorf("index: %w", err)
	}
	return out, st, nil
}

// derivedRows reads the entries of kind: all of them, or those of ids.
func (ix *Index) derivedRows(ctx context.Context, kind string, ids []string, all bool) (map[string]*derivedRow, error) {
	q, args := `SELECT run_id, size, mtime, data FROM derived WHERE kind = ?`, []any{kind}
	if !all {
		q += ` AND run_id IN (SELECT value FROM json_each(?))`
		b, _ := json.Marshal(ids)
		args = append(args, string(b))
	}
	rows, err := ix.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	defer rows.Close()
	m := map[string]*derivedRow{}
	for rows.Next() {
		var id string
		r := &derivedRow{}
		if err := rows.Scan(&id, &r.size, &r.mtime, &r.data); err != nil {
			return nil, fmt.Errorf("index: %w", err)
		}
		m[id] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	return m, nil
}

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
	// current: the runs table holds the same size and mtime for the
	// file, and the run is not being written (DerivedCurrent).
	current bool
}

// Derived returns, for each run id, the data compute derives from its
// transcript (<root>/transcripts/<id>.jsonl), from the index when the
// file has not changed since, else computed and stored. kind names the
// data and its version (a new version computes everything again).
// Entries of kind whose run is not in ids are dropped. compute gets the
// file's path; a file that cannot be stat'ed is computed every time.
func (ix *Index) Derived(ctx context.Context, kind string, ids []string, compute func(path string) ([]byte, error)) (map[string][]byte, DerivedStats, error) {
	return ix.derived(ctx, kind, ids, compute, true, false)
}

// DerivedOf is Derived for some of the runs (a page of a listing): the
// entries of other runs are kept.
func (ix *Index) DerivedOf(ctx context.Context, kind string, ids []string, compute func(path string) ([]byte, error)) (map[string][]byte, DerivedStats, error) {
	return ix.derived(ctx, kind, ids, compute, false, false)
}

// DerivedCurrent is Derived for a caller that has just brought the index
// up to date (Update): an entry stored for the size and mtime the runs
// table holds for its file (what Update saw, which the change journal
// vouches for, as it does for the search documents) is used without a
// stat of the file; the runs being written (watched, or whose last line
// was partial) and the files the index does not know are stat'ed as
// Derived does. A report over 10,000 runs spent a quarter of its time in
// their stats.
func (ix *Index) DerivedCurrent(ctx context.Context, kind string, ids []string, compute func(path string) ([]byte, error)) (map[string][]byte, DerivedStats, error) {
	return ix.derived(ctx, kind, ids, compute, true, true)
}

func (ix *Index) derived(ctx context.Context, kind string, ids []string, compute func(path string) ([]byte, error), all, current bool) (map[string][]byte, DerivedStats, error) {
	var st DerivedStats
	if _, err := ix.db.ExecContext(ctx, derivedSchema); err != nil {
		return nil, st, fmt.Errorf("index: %w", err)
	}
	dir := filepath.Join(ix.root, "transcripts")
	type statResult struct {
		info os.FileInfo
		err  error
	}
	stats := make([]statResult, len(ids))
	// statAll stats the files of ids that need it on every core.
	statAll := func(need func(i int) bool) {
		var wg sync.WaitGroup
		workers := max(1, min(runtime.GOMAXPROCS(0), len(ids)/256))
		for w := range workers {
			wg.Go(func() {
				for i := w; i < len(ids); i += workers {
					if need(i) {
						info, err := os.Stat(filepath.Join(dir, ids[i]+".jsonl"))
						stats[i] = statResult{info, err}
					}
				}
			})
		}
		wg.Wait()
	}
	var known map[string]*derivedRow
	var err error
	if current {
		if known, err = ix.derivedRows(ctx, kind, ids, all, true); err != nil {
			return nil, st, err
		}
		statAll(func(i int) bool { r := known[ids[i]]; return r == nil || !r.current })
	} else {
		// Stat every file on every core while the stored entries are
		// read: with the index warm, these two are the work.
		done := make(chan struct{})
		go func() { defer close(done); statAll(func(int) bool { return true }) }()
		known, err = ix.derivedRows(ctx, kind, ids, all, false)
		<-done
		if err != nil {
			return nil, st, err
		}
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
		r := known[id]
		if r != nil && r.current {
			out[id] = r.data
			st.Cached++
			continue
		}
		path := filepath.Join(dir, id+".jsonl")
		info, statErr := stats[i].info, stats[i].err
		if r != nil && statErr == nil && r.size == info.Size() && r.mtime == info.ModTime().UnixNano() {
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

// derivedRows reads the entries of kind: all of them, or those of ids;
// current marks those whose size and mtime the runs table holds for
// their file, unless the run is watched or its last line was partial.
func (ix *Index) derivedRows(ctx context.Context, kind string, ids []string, all, current bool) (map[string]*derivedRow, error) {
	q, args := `SELECT d.run_id, d.size, d.mtime, d.data, 0 FROM derived d WHERE d.kind = ?`, []any{kind}
	var watched []string
	if current {
		var err error
		if watched, err = ix.watched(ctx); err != nil {
			return nil, err
		}
		q = `SELECT d.run_id, d.size, d.mtime, d.data, r.size IS NOT NULL AND r.size = d.size AND r.mtime = d.mtime
FROM derived d LEFT JOIN runs r ON r.run_id = d.run_id WHERE d.kind = ?`
	}
	if !all {
		q += ` AND d.run_id IN (SELECT value FROM json_each(?))`
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
		if err := rows.Scan(&id, &r.size, &r.mtime, &r.data, &r.current); err != nil {
			return nil, fmt.Errorf("index: %w", err)
		}
		m[id] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	for _, id := range watched {
		if r := m[id]; r != nil {
			r.current = false
		}
	}
	return m, nil
}

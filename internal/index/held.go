package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/twasm/twasm/internal/views"
)

// heldRecordedSQL finds the runs views.Superseded's rule for a recorded
// run may concern: every run naming a session that a top-level run not
// archived from an agent's store (runs_recorded) names too, when another
// run names it as well (that run among them).
const heldRecordedSQL = `SELECT DISTINCT b.run_id FROM runs r INDEXED BY runs_recorded JOIN sessions a ON a.run_id = r.run_id JOIN sessions b ON b.key = a.key
WHERE r.session = 0 AND r.parent_run_id = '' AND a.key != ''
  AND EXISTS (SELECT 1 FROM sessions c WHERE c.key = a.key AND c.run_id != a.run_id)`

// Held returns the top-level runs another stands for as ls, stats and
// usage decide it (views.Superseded), from what the index notes of each
// run (RunHead's Archived: runs.session; Sessions and Unkeyed: the
// sessions table; RenormalizedFrom: rebuilt; SupersededBy: what the
// run's own end says, in superseded, or, for a rebuild not ended
// (runs.final empty), its original, views.UnfinishedRebuild; a tree's time: the latest mtime of
// its runs' files, by parent_run_id): a run recorded from an agent's
// output whose every session a run archived from the agent's store
// holds, and the original of a renormalize rebuild (or the rebuild,
// when the original's tree was written after it). Only the runs those
// rules can concern are read: those naming a session that a recorded
// run names too, and the rebuilds and the runs they were made from.
// List and search leave these out, as they leave out what the
// superseded table names, unless asked for them.
func (ix *Index) Held(ctx context.Context) (map[string]bool, error) {
	ids := map[string]bool{}
	from := map[string]string{}
	if err := eachRow(ctx, ix.db, heldRecordedSQL, nil, func(rows *sql.Rows) error {
		var id string
		err := rows.Scan(&id)
		ids[id] = true
		return err
	}); err != nil {
		return nil, err
	}
	if err := eachRow(ctx, ix.db, `SELECT run_id, from_run FROM rebuilt`, nil, func(rows *sql.Rows) error {
		var id, f string
		err := rows.Scan(&id, &f)
		ids[id], ids[f], from[id] = true, true, f
		return err
	}); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, nil
	}
	list := make([]string, 0, len(ids))
	for id := range ids {
		list = append(list, id)
	}
	in, err := json.Marshal(list)
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	heads := map[string]views.RunHead{}
	// By run id (the parent's column would have SQLite read every
	// top-level run); as ls, only the top-level runs are heads.
	finished := map[string]bool{}
	if err := eachRow(ctx, ix.db, `SELECT run_id, parent_run_id, session, final != '' FROM runs WHERE run_id IN (SELECT value FROM json_each(?))`, []any{string(in)}, func(rows *sql.Rows) error {
		var h views.RunHead
		var done bool
		if err := rows.Scan(&h.RunID, &h.ParentRunID, &h.Archived, &done); err != nil || h.ParentRunID != "" {
			return err
		}
		h.RenormalizedFrom = from[h.RunID]
		finished[h.RunID] = done
		heads[h.RunID] = h
		return nil
	}); err != nil {
		return nil, err
	}
	if err := eachRow(ctx, ix.db, `SELECT run_id, key FROM sessions WHERE run_id IN (SELECT value FROM json_each(?)) ORDER BY run_id, key`, []any{string(in)}, func(rows *sql.Rows) error {
		var id, key string
		if err := rows.Scan(&id, &key); err != nil {
			return err
		}
		if h, ok := heads[id]; ok {
			if key == "" {
				h.Unkeyed = true
			} else {
				h.Sessions = append(h.Sessions, key)
			}
			heads[id] = h
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if err := eachRow(ctx, ix.db, `SELECT run_id, by_run FROM superseded WHERE src IN (SELECT value FROM json_each(?)) AND run_id = src`, []any{string(in)}, func(rows *sql.Rows) error {
		var id, by string
		if err := rows.Scan(&id, &by); err != nil {
			return err
		}
		if h, ok := heads[id]; ok {
			h.SupersededBy = by
			heads[id] = h
		}
		return nil
	}); err != nil {
		return nil, err
	}
	// A rebuild not ended (a renormalize killed, or still writing it)
	// stands for nothing beside its original, as the digests say.
	for id, h := range heads {
		if by := views.UnfinishedRebuild(h.RenormalizedFrom, finished[id]); h.SupersededBy == "" && by != "" {
			h.SupersededBy = by
			heads[id] = h
		}
	}
	var terr error
	treeTime := func(id string) time.Time {
		var ns int64
		err := ix.db.QueryRowContext(ctx, `WITH RECURSIVE t(id) AS (SELECT ? UNION SELECT r.run_id FROM runs r JOIN t ON r.parent_run_id = t.id)
SELECT coalesce(max(mtime), 0) FROM runs WHERE run_id IN (SELECT id FROM t)`, id).Scan(&ns)
		if err != nil && terr == nil {
			terr = fmt.Errorf("index: %w", err)
		}
		return time.Unix(0, ns)
	}
	held := views.Superseded(heads, treeTime)
	return held, terr
}

// eachRow runs a query and calls row for each of its rows.
func eachRow(ctx context.Context, db *sql.DB, query string, args []any, row func(*sql.Rows) error) error {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := row(rows); err != nil {
			return fmt.Errorf("index: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	return nil
}

// heldJSON is Held's runs as the JSON array goneSQL reads.
func (ix *Index) heldJSON(ctx context.Context) (string, error) {
	held, err := ix.Held(ctx)
	if err != nil {
		return "", err
	}
	list := make([]string, 0, len(held))
	for id := range held {
		list = append(list, id)
	}
	b, err := json.Marshal(list)
	if err != nil {
		return "", fmt.Errorf("index: %w", err)
	}
	return string(b), nil
}

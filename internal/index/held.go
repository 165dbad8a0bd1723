package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/twasm/twasm/internal/views"
)

// The session flags (sessions.flags) of a run's rows: what Held's rule
// asks of the runs naming a session, kept beside the session so that a
// session named by thousands of runs is not read whole to answer it.
const (
	// sessRecorded: a top-level run not archived from an agent's store
	// (recorded, or begun by twasm run), whose sessions an archived run
	// may hold.
	sessRecorded = 1
	// sessHolds: a top-level run that may hold a recorded run's
	// sessions: archived from an agent's store, or a rebuild (of an
	// archived run, views.Superseded decides).
	sessHolds = 2
)

// flagsSQL is a run's session flags, from its row in runs r.
const flagsSQL = `((r.parent_run_id = '' AND r.session = 0) | ((r.parent_run_id = '' AND (r.session != 0 OR EXISTS(SELECT 1 FROM rebuilt b WHERE b.run_id = r.run_id))) << 1))`

// Held returns the top-level runs another stands for as ls, stats and
// usage decide it (views.Superseded): the held table, which every write
// transaction keeps (batch.refreshHeld) for the runs it may concern, so
// that a listing or a search reads it and no run.
func (ix *Index) Held(ctx context.Context) (map[string]bool, error) {
	held := map[string]bool{}
	err := addEach(ctx, ix.db, `SELECT run_id FROM held`, nil, held)
	return held, err
}

// querier is what heldOf reads through: the index, or a transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// heldCandidatesSQL keeps, of the runs its argument names (a JSON array
// of ids), those views.Superseded's rules can concern (Held read them
// and no other): a rebuild and the run it was made from, and every run
// naming a session that a top-level recorded run (sessRecorded) names
// too, when another run names it as well (that run among them).
const heldCandidatesSQL = `SELECT j.value FROM json_each(?) j WHERE EXISTS(SELECT 1 FROM rebuilt b WHERE b.run_id = j.value OR b.from_run = j.value)
  OR EXISTS(SELECT 1 FROM sessions s WHERE s.run_id = j.value AND s.key != ''
    AND EXISTS(SELECT 1 FROM sessions c WHERE c.key = s.key AND c.flags & 1)
    AND (SELECT count(*) FROM (SELECT 1 FROM sessions n WHERE n.key = s.key LIMIT 2)) = 2)`

// heldOf decides which of the runs ids views.Superseded finds held, from
// what the index notes of each run (RunHead's Archived: runs.session;
// Sessions and Unkeyed: the sessions table; RenormalizedFrom: rebuilt;
// SupersededBy: what the run's own end says, in superseded, or, for a
// rebuild not ended (runs.final empty), its original,
// views.UnfinishedRebuild; a tree's time: the latest mtime of its runs'
// files, by parent_run_id): a run recorded from an agent's output whose
// every session a run archived from the agent's store holds, and the
// original of a renormalize rebuild (or the rebuild, when the original's
// tree was written after it). The rule is applied to the runs that can
// decide each of ids: itself, the runs its rebuilds link it to, and the
// runs that may hold its sessions (sessHolds) with theirs; of those, to
// the runs the rule concerns (heldCandidatesSQL), as it would be to all.
func heldOf(ctx context.Context, q querier, ids []string) (map[string]bool, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	asked := toSet(ids)
	set := maps.Clone(asked)
	in, err := jsonList(set)
	if err != nil {
		return nil, err
	}
	// Of ids, those the rule may hold (the rest it holds not, and need
	// no more reading, as in a build of recorded runs no run holds): a
	// run naming a session another that may hold it names, a rebuild
	// and its original (below), a run its own end supersedes.
	possible := map[string]bool{}
	if err := eachRow(ctx, q, `SELECT DISTINCT a.run_id, h.run_id FROM sessions a JOIN sessions h INDEXED BY sessions_holds ON h.key = a.key AND h.flags & 2
WHERE a.run_id IN (SELECT value FROM json_each(?)) AND a.key != ''`, []any{in}, func(rows *sql.Rows) error {
		var a, h string
		err := rows.Scan(&a, &h)
		set[h], possible[a] = true, possible[a] || a != h
		return err
	}); err != nil {
		return nil, err
	}
	if err := addEach(ctx, q, `SELECT run_id FROM superseded WHERE src IN (SELECT value FROM json_each(?)) AND run_id = src AND by_run != run_id`, []any{in}, possible); err != nil {
		return nil, err
	}
	if in, err = jsonList(set); err != nil {
		return nil, err
	}
	from := map[string]string{}
	if err := eachRow(ctx, q, `SELECT run_id, from_run FROM rebuilt WHERE run_id IN (SELECT value FROM json_each(?1)) OR from_run IN (SELECT value FROM json_each(?1))`, []any{in}, func(rows *sql.Rows) error {
		var id, f string
		err := rows.Scan(&id, &f)
		set[id], set[f], from[id] = true, true, f
		possible[id], possible[f] = possible[id] || asked[id], possible[f] || asked[f]
		return err
	}); err != nil {
		return nil, err
	}
	if !slices.Contains(slices.Collect(maps.Values(possible)), true) {
		return nil, nil
	}
	if in, err = jsonList(set); err != nil {
		return nil, err
	}
	var cands []string
	if err := eachRow(ctx, q, heldCandidatesSQL, []any{in}, func(rows *sql.Rows) error {
		var id string
		err := rows.Scan(&id)
		cands = append(cands, id)
		return err
	}); err != nil {
		return nil, err
	}
	if len(cands) == 0 {
		return nil, nil
	}
	if in, err = jsonList(toSet(cands)); err != nil {
		return nil, err
	}
	heads := map[string]views.RunHead{}
	// By run id (the parent's column would have SQLite read every
	// top-level run); as ls, only the top-level runs are heads.
	finished := map[string]bool{}
	if err := eachRow(ctx, q, `SELECT run_id, parent_run_id, session, final != '' FROM runs WHERE run_id IN (SELECT value FROM json_each(?))`, []any{in}, func(rows *sql.Rows) error {
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
	if err := eachRow(ctx, q, `SELECT run_id, key FROM sessions WHERE run_id IN (SELECT value FROM json_each(?)) ORDER BY run_id, key`, []any{in}, func(rows *sql.Rows) error {
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
	if err := eachRow(ctx, q, `SELECT run_id, by_run FROM superseded WHERE src IN (SELECT value FROM json_each(?)) AND run_id = src`, []any{in}, func(rows *sql.Rows) error {
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
		err := q.QueryRowContext(ctx, `WITH RECURSIVE t(id) AS (SELECT ? UNION SELECT r.run_id FROM runs r JOIN t ON r.parent_run_id = t.id)
SELECT coalesce(max(mtime), 0) FROM runs WHERE run_id IN (SELECT id FROM t)`, id).Scan(&ns)
		if err != nil && terr == nil {
			terr = fmt.Errorf("index: %w", err)
		}
		return time.Unix(0, ns)
	}
	held := views.Superseded(heads, treeTime)
	maps.DeleteFunc(held, func(id string, _ bool) bool { return !asked[id] })
	return held, terr
}

// heldTrace is what Held's rule reads of runs that can decide another's
// answer: each run's session flags and the sessions it names (” left
// out), by run (a run naming none has no entry), the runs their
// rebuilds link them to (rebuilt, either way) and their ancestors (by
// parent_run_id), whose trees' times they are part of.
type heldTrace struct {
	flags     map[string]int
	keys      map[string][]string
	partners  []string
	ancestors []string
}

// traceOf is what the index notes now of the runs in (a JSON array of
// ids): three statements, whatever their number. The flags are the
// sessions rows', which refreshHeld keeps.
func traceOf(ctx context.Context, q querier, in string) (heldTrace, error) {
	t := heldTrace{flags: map[string]int{}, keys: map[string][]string{}}
	if err := eachRow(ctx, q, `SELECT run_id, key, flags FROM sessions WHERE run_id IN (SELECT value FROM json_each(?)) AND key != ''`, []any{in}, func(rows *sql.Rows) error {
		var id, key string
		var flags int
		err := rows.Scan(&id, &key, &flags)
		t.flags[id] |= flags
		t.keys[id] = append(t.keys[id], key)
		return err
	}); err != nil {
		return t, err
	}
	if err := eachRow(ctx, q, `SELECT run_id, from_run FROM rebuilt WHERE run_id IN (SELECT value FROM json_each(?1)) OR from_run IN (SELECT value FROM json_each(?1))`, []any{in}, func(rows *sql.Rows) error {
		var id, from string
		err := rows.Scan(&id, &from)
		t.partners = append(t.partners, id, from)
		return err
	}); err != nil {
		return t, err
	}
	err := eachRow(ctx, q, `WITH RECURSIVE up(id) AS (SELECT parent_run_id FROM runs WHERE run_id IN (SELECT value FROM json_each(?)) UNION SELECT r.parent_run_id FROM runs r JOIN up ON r.run_id = up.id)
SELECT id FROM up WHERE id != ''`, []any{in}, func(rows *sql.Rows) error {
		var id string
		err := rows.Scan(&id)
		t.ancestors = append(t.ancestors, id)
		return err
	})
	return t, err
}

// touchHeld notes what Held's rule reads of run id before the batch's
// transaction changes it (once a transaction: what the index held
// before it), so that refreshHeld finds every run the change can
// concern; existed is false for a run new to the index, which held
// nothing of it.
func (b *batch) touchHeld(ctx context.Context, id string, existed bool) error {
	if b.held[id] {
		return nil
	}
	if b.held == nil {
		b.held = map[string]bool{}
	}
	b.held[id] = true
	if !existed {
		return nil
	}
	in, err := json.Marshal([]string{id})
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	t, err := traceOf(ctx, b.tx, string(in))
	if err != nil {
		return err
	}
	b.before.add(t)
	return nil
}

// add adds u's runs, partners and ancestors to t's.
func (t *heldTrace) add(u heldTrace) {
	if t.flags == nil {
		t.flags, t.keys = map[string]int{}, map[string][]string{}
	}
	maps.Copy(t.flags, u.flags)
	maps.Copy(t.keys, u.keys)
	t.partners = append(t.partners, u.partners...)
	t.ancestors = append(t.ancestors, u.ancestors...)
}

// refreshHeld brings the held table up to date for the runs the
// transaction changed (touchHeld), before it commits: Held's answer for
// every run it can concern, decided again (heldOf) and written in place
// of the old. A run's answer is read from its own rows, its rebuilds',
// its tree's times, and, for a recorded run, the runs that may hold its
// sessions (sessHolds) and whether a recorded run and another name each
// of its sessions (heldCandidatesSQL): so the runs decided again are
// those changed, the runs their rebuilds link them to (before and
// after), their ancestors and theirs, every run naming a session that a
// changed run that may hold it names (before or after), and every run
// naming a session whose "a recorded run and another name it" turned.
func (b *batch) refreshHeld(ctx context.Context) error {
	if len(b.held) == 0 {
		return nil
	}
	before, touched := b.before, b.held
	b.before, b.held = heldTrace{}, nil
	changed, err := jsonList(touched)
	if err != nil {
		return err
	}
	exec := func(q string, args ...any) error {
		if _, err := b.tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("index: held: %w", err)
		}
		return nil
	}
	// The session flags of the runs changed, as their rows now say.
	if err := exec(`UPDATE sessions SET flags = f.flags FROM (SELECT r.run_id AS id, `+flagsSQL+` AS flags FROM runs r WHERE r.run_id IN (SELECT value FROM json_each(?))) f
WHERE sessions.run_id = f.id AND sessions.flags != f.flags`, changed); err != nil {
		return err
	}
	now, err := traceOf(ctx, b.tx, changed)
	if err != nil {
		return err
	}
	affected := maps.Clone(touched)
	linked := map[string]bool{} // the runs rebuilds link to those changed
	keys := map[string]bool{}   // the sessions whose every run is decided again
	type delta struct{ recorded, runs int }
	counts := map[string]*delta{}
	for _, c := range []struct {
		t  heldTrace
		by int
	}{{before, -1}, {now, 1}} {
		for _, p := range c.t.partners {
			affected[p], linked[p] = true, true
		}
		for _, a := range c.t.ancestors {
			affected[a] = true
		}
		for id, ks := range c.t.keys {
			flags := c.t.flags[id]
			for _, k := range ks {
				if flags&sessHolds != 0 {
					keys[k] = true
				}
				d := counts[k]
				if d == nil {
					d = &delta{}
					counts[k] = d
				}
				d.runs += c.by
				if flags&sessRecorded != 0 {
					d.recorded += c.by
				}
			}
		}
	}
	// The rebuilds' partners of the ancestors (their trees' times), and
	// the sessions of the runs rebuilds link to the changed (a rebuild
	// holds as its original was archived).
	var anc []string
	for id := range affected {
		if !touched[id] && !linked[id] {
			anc = append(anc, id)
		}
	}
	if len(anc) > 0 {
		in, err := jsonList(toSet(anc))
		if err != nil {
			return err
		}
		if err := addEach(ctx, b.tx, `SELECT from_run FROM rebuilt WHERE run_id IN (SELECT value FROM json_each(?1)) UNION SELECT run_id FROM rebuilt WHERE from_run IN (SELECT value FROM json_each(?1))`, []any{in}, affected); err != nil {
			return err
		}
	}
	if len(linked) > 0 {
		in, err := jsonList(linked)
		if err != nil {
			return err
		}
		if err := addEach(ctx, b.tx, `SELECT key FROM sessions WHERE run_id IN (SELECT value FROM json_each(?)) AND key != '' AND flags & 2`, []any{in}, keys); err != nil {
			return err
		}
	}
	// A session whose runs changed: whether a recorded run and another
	// name it, now and before (the counts now less the changes),
	// counted no further than that needs.
	var countStmt *sql.Stmt
	defer func() {
		if countStmt != nil {
			countStmt.Close()
		}
	}()
	for k, d := range counts {
		if (d.recorded == 0 && d.runs == 0) || keys[k] {
			continue
		}
		if countStmt == nil {
			if countStmt, err = b.tx.PrepareContext(ctx, `SELECT (SELECT count(*) FROM (SELECT 1 FROM sessions WHERE key = ?1 AND flags & 1 LIMIT ?2)), (SELECT count(*) FROM (SELECT 1 FROM sessions WHERE key = ?1 LIMIT ?3))`); err != nil {
				return fmt.Errorf("index: held: %w", err)
			}
		}
		var rec, runs int
		if err := countStmt.QueryRowContext(ctx, k, max(1, 1+d.recorded), max(2, 2+d.runs)).Scan(&rec, &runs); err != nil {
			return fmt.Errorf("index: held: %w", err)
		}
		if (rec >= 1 && runs >= 2) != (rec >= 1+d.recorded && runs >= 2+d.runs) {
			keys[k] = true
		}
	}
	if len(keys) > 0 {
		in, err := jsonList(keys)
		if err != nil {
			return err
		}
		if err := addEach(ctx, b.tx, `SELECT run_id FROM sessions WHERE key IN (SELECT value FROM json_each(?))`, []any{in}, affected); err != nil {
			return err
		}
	}
	ids := slices.Collect(maps.Keys(affected))
	held, err := heldOf(ctx, b.tx, ids)
	if err != nil {
		return err
	}
	in, err := jsonList(affected)
	if err != nil {
		return err
	}
	if err := exec(`DELETE FROM held WHERE run_id IN (SELECT value FROM json_each(?))`, in); err != nil {
		return err
	}
	if len(held) > 0 {
		if in, err = jsonList(held); err != nil {
			return err
		}
		if err := exec(`INSERT OR IGNORE INTO held(run_id) SELECT value FROM json_each(?)`, in); err != nil {
			return err
		}
	}
	return nil
}

// toSet is ids as a set.
func toSet(ids []string) map[string]bool {
	s := make(map[string]bool, len(ids))
	for _, id := range ids {
		s[id] = true
	}
	return s
}

// jsonList is the keys of set as a JSON array, in order.
func jsonList(set map[string]bool) (string, error) {
	b, err := json.Marshal(slices.Sorted(maps.Keys(set)))
	if err != nil {
		return "", fmt.Errorf("index: %w", err)
	}
	return string(b), nil
}

// addEach runs a query of one text column and adds each row's value to
// set.
func addEach(ctx context.Context, q querier, query string, args []any, set map[string]bool) error {
	return eachRow(ctx, q, query, args, func(rows *sql.Rows) error {
		var v string
		err := rows.Scan(&v)
		set[v] = true
		return err
	})
}

// eachRow runs a query and calls row for each of its rows.
func eachRow(ctx context.Context, q querier, query string, args []any, row func(*sql.Rows) error) error {
	rows, err := q.QueryContext(ctx, query, args...)
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

package index

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ListQuery selects a page of runs from the index, newest first (by the
// time the run started, then by run id), without reading a transcript:
// 10,000 runs page as fast as 10.
type ListQuery struct {
	// Filters: empty means any. Provider and Model as Query's; Status is
	// the run's status ("open" selects the open runs: archived sessions
	// that may still grow); Project the run's project, exactly.
	Provider, Model, Status, Project string
	// Since and Until bound the run's start (Until excluded).
	Since, Until time.Time
	// Children lists child runs (sub-agents' runs) too.
	Children bool
	// Superseded lists the runs another holds again (the superseded
	// table: a sub-agent archived again as a child run, a damaged archive
	// repaired by sync; and Held's: a run recorded from an agent's output
	// whose session a run archived from the agent's store holds, the
	// original of a renormalize rebuild) and their child runs too,
	// marked (ListedRun.Superseded); by default they are left out, as
	// ls, stats, usage and search leave them out, so that a session is
	// listed once.
	Superseded bool
	// After is the Cursor of the last run of the previous page ("": the
	// first page).
	After string
	Limit int
}

// ListedRun is one run of a listing page.
type ListedRun struct {
	RunID   string
	Name    string
	Title   string
	Parent  string
	Status  string
	Session bool
	// Open marks an archived session that may still grow (no
	// run.completed, no step open): views.RunNode.Open's rule.
	Open      bool
	Project   string
	Started   time.Time
	Ended     time.Time
	Providers []string
	Models    []string
	Steps     int
	Tools     int
	// Errors counts the run's failed tool calls and its step and run
	// errors (its documents whose own outcome is error; a call and its
	// result count once).
	Errors int
	// Superseded marks a run another holds again, listed because
	// ListQuery.Superseded asked for it.
	Superseded bool
	// Cursor is the key to pass as ListQuery.After for the next page.
	Cursor string
}

// List returns one page of runs, newest first, and whether there are
// more. The key is (started, run_id), so that a run added meanwhile does
// not shift the next page.
func (ix *Index) List(ctx context.Context, q ListQuery) ([]ListedRun, bool, error) {
	// The runs another holds again: left out, or marked when asked for.
	gone := `run_id IN (` + goneSQL + ` SELECT id FROM gone)`
	mark := `0`
	where := []string{"1"}
	var args []any
	if q.Superseded {
		mark = gone
	} else {
		where = append(where, "NOT "+gone)
	}
	if !q.Children {
		where = append(where, "parent_run_id = ''")
	}
	if q.Provider != "" {
		where = append(where, `providers LIKE ? ESCAPE '\'`)
		args = append(args, "%,"+likeEscape(q.Provider)+",%")
	}
	if q.Model != "" {
		where = append(where, `models LIKE ? ESCAPE '\'`)
		args = append(args, "%,"+likeEscape(q.Model)+"%")
	}
	switch q.Status {
	case "":
	case "open":
		where = append(where, "session != 0 AND final = '' AND open_steps = 0")
	default:
		where = append(where, "status = ?")
		args = append(args, q.Status)
	}
	if q.Project != "" {
		where = append(where, "project = ?")
		args = append(args, q.Project)
	}
	if !q.Since.IsZero() {
		where = append(where, "started >= ?")
		args = append(args, q.Since.UnixMilli())
	}
	if !q.Until.IsZero() {
		where = append(where, "started < ?")
		args = append(args, q.Until.UnixMilli())
	}
	if q.After != "" {
		started, id, ok := strings.Cut(q.After, ".")
		ms, err := strconv.ParseInt(started, 10, 64)
		if !ok || err != nil {
			return nil, false, fmt.Errorf("index: list: bad cursor %q", q.After)
		}
		where = append(where, "(started < ? OR started = ? AND run_id > ?)")
		args = append(args, ms, ms, id)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 50
	}
	args = append(args, limit+1)
	rows, err := ix.db.QueryContext(ctx, `SELECT run_id, name, title, parent_run_id, status, session, final, open_steps, project, started, ended, providers, models, steps, tools, errors, `+mark+`
FROM runs WHERE `+strings.Join(where, " AND ")+` ORDER BY started DESC, run_id LIMIT ?`, args...)
	if err != nil {
		return nil, false, fmt.Errorf("index: list: %w", err)
	}
	defer rows.Close()
	var out []ListedRun
	for rows.Next() {
		var r ListedRun
		var started, ended int64
		var final, providers, models string
		var openSteps int
		if err := rows.Scan(&r.RunID, &r.Name, &r.Title, &r.Parent, &r.Status, &r.Session, &final, &openSteps, &r.Project, &started, &ended, &providers, &models, &r.Steps, &r.Tools, &r.Errors, &r.Superseded); err != nil {
			return nil, false, fmt.Errorf("index: list: %w", err)
		}
		r.Open = r.Session && final == "" && openSteps == 0
		if started != 0 {
			r.Started = time.UnixMilli(started).UTC()
		}
		if ended != 0 {
			r.Ended = time.UnixMilli(ended).UTC()
		}
		r.Providers, r.Models = splitList(providers), splitList(models)
		r.Cursor = strconv.FormatInt(started, 10) + "." + r.RunID
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("index: list: %w", err)
	}
	more := len(out) > limit
	if more {
		out = out[:limit]
	}
	return out, more, nil
}

// Gone returns the runs another holds again and their child runs, down
// every level: what List and Search leave out unless asked for them, and
// mark when asked (ListQuery.Superseded, Query.Superseded). It reads the
// superseded and held tables the index keeps, not every run.
func (ix *Index) Gone(ctx context.Context) (map[string]bool, error) {
	gone := map[string]bool{}
	err := addEach(ctx, ix.db, goneSQL+` SELECT DISTINCT id FROM gone`, nil, gone)
	return gone, err
}

// Facets are the values the listing's filters can take, each list
// sorted.
type Facets struct {
	Providers, Models, Projects, Statuses []string
}

// Facets returns the distinct providers, models, projects and statuses
// of the top-level runs a listing shows: without those another holds
// again (the superseded and held tables, as List leaves them out),
// unless superseded asks for every run (ListQuery.Superseded). A value
// only a held run has is not offered where choosing it lists nothing.
func (ix *Index) Facets(ctx context.Context, superseded bool) (Facets, error) {
	var f Facets
	q := `SELECT DISTINCT providers, models, project, status FROM runs WHERE parent_run_id = ''`
	if !superseded {
		q += ` AND run_id NOT IN (` + supersededSQL + ` UNION ALL SELECT run_id FROM held)`
	}
	rows, err := ix.db.QueryContext(ctx, q)
	if err != nil {
		return f, fmt.Errorf("index: %w", err)
	}
	defer rows.Close()
	seen := map[string]bool{}
	add := func(list *[]string, kind, v string) {
		if v != "" && !seen[kind+v] {
			seen[kind+v] = true
			*list = append(*list, v)
		}
	}
	for rows.Next() {
		var providers, models, project, status string
		if err := rows.Scan(&providers, &models, &project, &status); err != nil {
			return f, fmt.Errorf("index: %w", err)
		}
		for _, p := range splitList(providers) {
			add(&f.Providers, "p", p)
		}
		for _, m := range splitList(models) {
			add(&f.Models, "m", m)
		}
		add(&f.Projects, "j", project)
		add(&f.Statuses, "s", status)
	}
	for _, l := range []*[]string{&f.Providers, &f.Models, &f.Projects, &f.Statuses} {
		slices.Sort(*l)
	}
	return f, rows.Err()
}

// projectsSQL reads the projects of the top-level runs from the index
// runs_project alone (a covering index: no row of runs is read).
const projectsSQL = `SELECT DISTINCT project FROM runs WHERE parent_run_id = '' AND project != '' ORDER BY project`

// Projects returns the distinct projects of the top-level runs, sorted
// (Facets' Projects, without reading the other columns of every run:
// every sync asks, to look for a store in each project directory).
func (ix *Index) Projects(ctx context.Context) ([]string, error) {
	rows, err := ix.db.QueryContext(ctx, projectsSQL)
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, fmt.Errorf("index: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// likeEscape makes a value match as text in a LIKE pattern with
// ESCAPE '\'.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(s)
}

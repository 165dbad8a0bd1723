package index

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/twasm/twasm/internal/views"
)

// Query is a search: words (every one must match, in any order; a quoted
// "phrase" must match as is) and filters.
type Query struct {
	Text string
	// Raw passes Text to SQLite FTS5 as a query expression (AND, OR,
	// NOT, NEAR, prefix*) instead of quoting each word.
	Raw bool
	// Filters: empty means any. Status is a hit's own outcome where it
	// has one (a tool call's or result's: ok, error, denied, cancelled;
	// error for an error), else its run's status.
	Provider, Model, Status, Run, Tool, Kind, Role string
	Since, Until                                   time.Time
	// Projects selects the hits of runs whose project (a sub-run without
	// one: its parent run's) is one of these directories or below it
	// (views.ProjectFilter's Dirs: cleaned absolute paths).
	Projects []string
	Limit    int
	// Every returns every hit, none folded into another (Hit.Also).
	Every bool
	// Mark is put around every match in the snippet ("" gives «»).
	MarkOpen, MarkClose string
	// WithText fills Hit.Text with the document's whole indexed text (a
	// reader that masks secrets masks it, not a snippet that may cut one).
	WithText bool
	// RankAmong bounds the work of ranking: when more documents than
	// this match the words and filters, only the newest this many (the
	// last the index read: the highest document ids) are ranked by
	// relevance, and Results.RankedAmong says so. 0 means
	// DefaultRankAmong; a negative value ranks every match. It does not
	// apply when the query asks for more rows than it (no limit, as
	// twasm search without --limit): every match is then ranked.
	RankAmong int
	// From, when not nil, is where the page before ended
	// (Results.Next): the hits after it, in the same order, over the
	// same matches, each hit once across the pages.
	From *Cursor
	// Superseded finds the hits of runs another holds again too (see
	// ListQuery.Superseded), which are left out by default.
	Superseded bool
}

// DefaultRankAmong is how many matches a search ranks at most when its
// query says none (Query.RankAmong): a page of 50 hits of a word found
// in 200,000 messages took 410 ms of CPU ranking them all, 46 ms ranking
// the newest 2,000.
const DefaultRankAmong = 2000

// Results are a search's hits and how they were ranked.
type Results struct {
	Hits []Hit
	// RankedAmong, when not 0, says more than RankedAmong documents
	// matched and the hits were ranked among the newest RankedAmong of
	// them (Query.RankAmong): an older match may rank higher.
	RankedAmong int
	// Next, when not nil, is where this page ended, for Query.From: the
	// page is full and more hits may follow.
	Next *Cursor
}

// Cursor is where a page of hits ended: the order key of its last hit's
// row (injected, rank, time, document id: the statement's order, which
// is total), how many rows of the statement reached it, and the range of
// document ids ranked (the bound of the first page, and the newest id
// then), so that the next page ranks the same matches as the first and
// costs what it did, not the pages before it as well. It pages exactly
// while the index is unchanged: an update between pages changes the
// ranks (bm25 counts the whole index), and a page then may repeat or
// pass over a hit near its start.
type Cursor struct {
	Injected bool    `json:"i,omitempty"`
	Rank     float64 `json:"r,omitempty"`
	TS       int64   `json:"t,omitempty"`
	ID       int64   `json:"d"`
	// Rows is how many rows of the statement were read up to it; Shown
	// how many hits the pages up to it showed.
	Rows  int `json:"n"`
	Shown int `json:"s"`
	// After and Top: the matches ranked are the fts rows above After
	// (allRows, -1: all; the documents sharing a row, docs.fid, rank
	// with it; the rows shared across runs, texts, are below 0) and the
	// documents at most Top. RankedAmong is the first page's
	// Results.RankedAmong.
	After       int64 `json:"a"`
	Top         int64 `json:"m"`
	RankedAmong int   `json:"b,omitempty"`
	// Tags: the first page matched the filters' tags (ftsExpr).
	Tags bool `json:"g,omitempty"`
}

// String is c as text for a URL (ParseCursor reads it back).
func (c Cursor) String() string {
	b, _ := json.Marshal(c) // a struct of numbers: never fails
	return base64.RawURLEncoding.EncodeToString(b)
}

// ParseCursor reads a Cursor written by its String.
func ParseCursor(s string) (*Cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("search cursor: %w", err)
	}
	var c Cursor
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("search cursor: %w", err)
	}
	if c.Rows < 0 || c.Shown < 0 {
		return nil, fmt.Errorf("search cursor: negative count")
	}
	return &c, nil
}

// before reports whether the row whose order key is r comes after c's in
// the statement's order (searchSQL: injected first, then rank, then
// newest time and id).
func (c *Cursor) before(r Cursor) bool { return c.compare(r) < 0 }

// compare orders the rows whose keys are c and r as searchSQL's
// statement does: negative when c comes first.
func (c *Cursor) compare(r Cursor) int {
	switch {
	case c.Injected != r.Injected:
		if r.Injected {
			return -1
		}
		return 1
	case c.Rank != r.Rank:
		return cmp.Compare(c.Rank, r.Rank)
	case c.TS != r.TS:
		return cmp.Compare(r.TS, c.TS)
	}
	return cmp.Compare(r.ID, c.ID)
}

// Hit is one matching document.
type Hit struct {
	RunID   string `json:"run_id"`
	RunName string `json:"run_name"`
	// RunTitle is the run's first prompt (views.RunNode.Title), and
	// RunSession marks an archived agent session, whose name twasm made
	// up: together they say what to call the run (views.DisplayName).
	RunTitle   string    `json:"run_title,omitempty"`
	RunSession bool      `json:"run_session,omitempty"`
	RunStatus  string    `json:"run_status"`
	Seq        uint64    `json:"seq"`
	Path       string    `json:"path"`
	Iteration  int       `json:"iteration"`
	Time       time.Time `json:"time,omitzero"`
	Kind       string    `json:"kind"`
	Role       string    `json:"role,omitempty"`
	Tool       string    `json:"tool,omitempty"`
	Providers  []string  `json:"providers,omitempty"`
	// Status is the hit's own outcome (a tool call's or result's), or
	// its run's status.
	Status string `json:"status,omitempty"`
	// Injected marks text the agent's tooling put in the conversation
	// (injected context, a system prompt), ranked below the rest.
	Injected bool   `json:"injected,omitempty"`
	Snippet  string `json:"snippet"`
	// Text is the document's indexed text, with Query.WithText.
	Text string `json:"-"`
	// Also counts the hits folded into this one: the same kind of
	// document with the same text in other places (the same injected
	// instructions in every session), the best ranked of which stands
	// for all.
	Also int `json:"also,omitempty"`
}

// HasFilter reports whether q has a filter besides its words.
func (q Query) HasFilter() bool {
	return q.Provider != "" || q.Model != "" || q.Status != "" || q.Run != "" || q.Tool != "" || q.Kind != "" || q.Role != "" ||
		!q.Since.IsZero() || !q.Until.IsZero() || len(q.Projects) > 0
}

// limit is how many hits the query shows (20 when it says none).
func (q Query) limit() int {
	if q.Limit <= 0 {
		return 20
	}
	return q.Limit
}

// MatchExpr turns words into an FTS5 expression: each word matches the
// words it starts (python finds python3), a "quoted phrase" matches as
// is, all of them required. Nothing a user types is taken as FTS5 syntax.
func MatchExpr(text string) string {
	var terms []string
	for _, t := range queryTerms(text) {
		q := `"` + strings.ReplaceAll(t.text, `"`, `""`) + `"`
		if !t.phrase {
			q += "*"
		}
		terms = append(terms, q)
	}
	return strings.Join(terms, " ")
}

// queryTerm is one word or "quoted phrase" of what a user typed.
type queryTerm struct {
	text   string
	phrase bool
}

// queryTerms splits what a user typed into words and "quoted phrases"
// (an unclosed quote runs to the end), dropping empty ones.
func queryTerms(text string) []queryTerm {
	var out []queryTerm
	rest := strings.TrimSpace(text)
	for rest != "" {
		var term string
		phrase := rest[0] == '"'
		if phrase {
			if i := strings.IndexByte(rest[1:], '"'); i >= 0 {
				term, rest = rest[1:1+i], rest[2+i:]
			} else {
				term, rest = rest[1:], ""
			}
		} else if i := strings.IndexAny(rest, " \t\n"); i >= 0 {
			term, rest = rest[:i], rest[i+1:]
		} else {
			term, rest = rest, ""
		}
		rest = strings.TrimSpace(rest)
		if term = strings.TrimSpace(term); term != "" {
			out = append(out, queryTerm{term, phrase})
		}
	}
	return out
}

// Search runs q and returns the hits, best first: what a person or the
// model wrote before what the agent's tooling injected, then by
// relevance, then newest first. A run superseded by another (which holds
// what it holds again: lifecycle.SupersedesField,
// lifecycle.SupersededByField; Held's runs) and its sub-runs are left
// out, unless Query.Superseded. Hits of
// the same kind with the same
// text are folded into the first (Hit.Also), so that text repeated in
// every session does not fill the list. A query with no words and a
// filter lists the filtered documents, newest first.
func (ix *Index) Search(ctx context.Context, q Query) ([]Hit, error) {
	res, err := ix.SearchResults(ctx, q)
	return res.Hits, err
}

// SearchResults is Search, saying how the hits were ranked: a query whose
// words and filters match more than Query.RankAmong documents has only
// the newest of them ranked (the rest are not), so that a word found in
// every session does not pay for ranking every one.
func (ix *Index) SearchResults(ctx context.Context, q Query) (Results, error) {
	expr := q.Text
	if !q.Raw {
		expr = MatchExpr(q.Text)
	}
	words := strings.TrimSpace(expr) != ""
	if !words && !q.HasFilter() {
		return Results{}, fmt.Errorf("empty query: give words to find or a filter")
	}
	// The words, and the words with the filters' tags: the tags on a
	// first page that may match more than are ranked (newestRanked) and
	// the pages after it, where they leave out before any document is
	// read what the filters do not keep.
	plain, tagged := expr, expr
	if words {
		plain, tagged = ftsExpr(q, expr, false), ftsExpr(q, expr, true)
	}
	expr = plain
	open, close := q.MarkOpen, q.MarkClose
	if open == "" && close == "" {
		open, close = "«", "»"
	}
	queryErr := func(err error) error {
		if strings.Contains(err.Error(), "fts5: syntax error") || strings.Contains(err.Error(), "no such column") {
			return fmt.Errorf("query %q: %w", q.Text, err)
		}
		return fmt.Errorf("index: search: %w", err)
	}
	var res Results
	// Ranking computes the rank of every match before the first row:
	// when more than among match, the newest among are ranked. A page
	// after the first ranks what the first did.
	var after, top int64 = allRows, 0
	var useTags bool
	if q.From != nil {
		after, top, res.RankedAmong, useTags = q.From.After, q.From.Top, q.From.RankedAmong, q.From.Tags
	} else if err := ix.db.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM docs`).Scan(&top); err != nil {
		return res, fmt.Errorf("index: search: %w", err)
	}
	var list []searchRow
	if among := q.rankAmong(); q.From == nil && words && among > 0 && q.rows() < among {
		// The first page of a search that may match more than are
		// ranked: one statement finds and ranks the newest among.
		useTags = tagged != plain
		var bounded bool
		var err error
		if list, after, bounded, err = ix.newestRanked(ctx, q, tagged, among, top); err != nil {
			return res, queryErr(err)
		}
		if bounded {
			res.RankedAmong = among
		}
	} else {
		if useTags {
			expr = tagged
		}
		sqlq, args := searchSQL(q, expr, words, after, top)
		var err error
		if list, err = ix.searchRows(ctx, sqlq, args); err != nil {
			return res, queryErr(err)
		}
	}
	limit := q.limit()
	// Snippets and texts come from the transcripts (the index keeps no
	// copy), marked as the query's words match.
	var terms []markTerm
	if words {
		terms = markTerms(q.Text, q.Raw)
	}
	src := newLines(ix.root)
	defer src.close()
	var hits []Hit
	first := map[string]int{} // kind and text → index in hits, -1: shown on a page before
	shown := 0
	if q.From != nil {
		shown = q.From.Shown
	}
	for i, r := range list {
		n := i + 1 // rows read
		h := r.hit
		at := r.key
		key := h.Kind + "\x00" + strconv.FormatInt(r.thash, 10)
		if q.From != nil && !q.From.before(at) {
			first[key] = -1 // a page before showed it or what it folds into
			continue
		}
		if i, ok := first[key]; ok && !q.Every {
			if i >= 0 {
				hits[i].Also++
			}
			continue
		}
		if len(hits) == limit {
			continue // only folding into the hits shown from here on
		}
		// Only a hit shown is read from its transcript.
		d, err := src.doc(h.RunID, r.off, r.part, h.Seq)
		if errors.Is(err, errMoved) || errors.Is(err, fs.ErrNotExist) {
			continue // rewritten or removed since the index saw it: the next update reads it
		}
		if err != nil {
			return res, fmt.Errorf("index: search: %w", err)
		}
		h.Snippet = strings.Join(strings.Fields(snippet(d.text, terms, open, close)), " ")
		if q.WithText {
			h.Text = d.text
		}
		if at.TS != 0 {
			h.Time = time.UnixMilli(at.TS).UTC()
		}
		for _, p := range strings.Split(strings.Trim(r.providers, ","), ",") {
			if p != "" {
				h.Providers = append(h.Providers, p)
			}
		}
		first[key] = len(hits)
		hits = append(hits, h)
		if len(hits) == limit {
			next := at
			next.Rows, next.Shown = n, shown+len(hits)
			next.After, next.Top, next.RankedAmong, next.Tags = after, top, res.RankedAmong, useTags
			res.Next = &next
		}
	}
	res.Hits = hits
	return res, nil
}

// searchRow is a row of a search's statement: the hit as the index
// knows it (no snippet yet), its order key (Cursor: injected, rank,
// time, document id), and where its text is.
type searchRow struct {
	hit       Hit
	key       Cursor
	off       int64
	part      int
	thash     int64
	providers string
}

// searchColumns are the columns of a searchRow (scanRow), rank the
// expression of its rank.
func searchColumns(rank string) string {
	return `r.run_id, r.name, r.title, r.session, r.status, d.seq, d.path, d.iteration, d.ts, d.kind, d.role, d.tool, r.providers,
  CASE WHEN d.status != '' THEN d.status ELSE r.status END,
  d.origin IN ('injected_context', 'system_prompt') AS injected, d.off, d.part, d.thash, ` + rank + `, d.id`
}

func scanRow(rows *sql.Rows) (searchRow, error) {
	var r searchRow
	h := &r.hit
	var kind int
	err := rows.Scan(&h.RunID, &h.RunName, &h.RunTitle, &h.RunSession, &h.RunStatus, &h.Seq, &h.Path, &h.Iteration, &r.key.TS, &kind, &h.Role, &h.Tool, &r.providers, &h.Status, &h.Injected,
		&r.off, &r.part, &r.thash, &r.key.Rank, &r.key.ID)
	r.key.Injected = h.Injected
	h.Kind = kindName(kind)
	return r, err
}

// searchRows reads the rows of a search's statement (searchSQL), in its
// order.
func (ix *Index) searchRows(ctx context.Context, sqlq string, args []any) ([]searchRow, error) {
	rows, err := ix.db.QueryContext(ctx, sqlq, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []searchRow
	for rows.Next() {
		r, err := scanRow(rows)
		if err != nil {
			return nil, fmt.Errorf("index: search: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// RunInfo is a run as the index knows it.
type RunInfo struct {
	RunID     string    `json:"run_id"`
	Name      string    `json:"name"`
	Parent    string    `json:"parent_run_id,omitempty"`
	Status    string    `json:"status"`
	Error     string    `json:"error,omitempty"`
	Started   time.Time `json:"started,omitzero"`
	Ended     time.Time `json:"ended,omitzero"`
	Providers []string  `json:"providers,omitempty"`
	Models    []string  `json:"models,omitempty"`
	Steps     int       `json:"steps"`
	Tools     int       `json:"tools"`
	Events    int       `json:"events"`
}

// Runs lists the indexed runs, newest first.
func (ix *Index) Runs(ctx context.Context) ([]RunInfo, error) {
	rows, err := ix.db.QueryContext(ctx, `SELECT run_id, name, parent_run_id, status, error, started, ended, providers, models, steps, tools, events FROM runs ORDER BY started DESC, run_id`)
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	defer rows.Close()
	var out []RunInfo
	for rows.Next() {
		var r RunInfo
		var started, ended int64
		var providers, models string
		if err := rows.Scan(&r.RunID, &r.Name, &r.Parent, &r.Status, &r.Error, &started, &ended, &providers, &models, &r.Steps, &r.Tools, &r.Events); err != nil {
			return nil, fmt.Errorf("index: %w", err)
		}
		if started != 0 {
			r.Started = time.UnixMilli(started).UTC()
		}
		if ended != 0 {
			r.Ended = time.UnixMilli(ended).UTC()
		}
		r.Providers = splitList(providers)
		r.Models = splitList(models)
		out = append(out, r)
	}
	return out, rows.Err()
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(strings.Trim(s, ","), ",") {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// projectCond is the condition that the project expr names is one of
// dirs or below one, as views.ProjectFilter matches it: equal, or in the
// range of the strings that start with the directory and a separator
// (a range, so that an index on the column can answer it).
func projectCond(expr string, dirs []string) (string, []any) {
	var or []string
	var args []any
	for _, d := range dirs {
		prefix := views.DirPrefix(d)
		// The first string after every one starting with prefix: its last
		// byte (a separator, never 0xff) incremented.
		next := prefix[:len(prefix)-1] + string(rune(prefix[len(prefix)-1]+1))
		or = append(or, fmt.Sprintf("((%[1]s) = ? OR (%[1]s) >= ? AND (%[1]s) < ?)", expr))
		args = append(args, d, prefix, next)
	}
	return "(" + strings.Join(or, " OR ") + ")", args
}

// filterTags is the tags column of a document's fts row: a term for each
// of its kind, role and tool that is not empty: zq, the letter k, r or t
// and the value's bytes in hex (one token whatever the value holds, and
// one no word starts with unless it starts with zq: mayMatchTags).
func filterTags(kind, role, tool string) string {
	var tags []string
	for _, t := range [...]struct{ letter, v string }{{"k", kind}, {"r", role}, {"t", tool}} {
		if t.v != "" {
			tags = append(tags, "zq"+t.letter+hex.EncodeToString([]byte(t.v)))
		}
	}
	return strings.Join(tags, " ")
}

// ftsExpr is the FTS5 expression a search matches: the words (expr) and,
// withTags, the tags of q's kind, role and tool filters (filterTags), so that FTS5
// itself leaves out the documents they do not match before any is read
// from docs. The filters are still applied to docs as well
// (searchWhere): the tags only narrow the work. The words are matched in
// the text column alone when there are tags to match or a word could
// match a tag (mayMatchTags; a raw expression always): a column filter
// costs a common word a fifth more, so a query that needs none has none.
func ftsExpr(q Query, expr string, withTags bool) string {
	var tags string
	if withTags {
		tags = tagsExpr(q)
	}
	if tags == "" && !q.Raw && !mayMatchTags(q.Text) {
		return expr
	}
	out := "{text} : (" + expr + ")"
	if tags != "" {
		out += " AND " + tags
	}
	return out
}

// mayMatchTags reports whether a word of text could match a term of the
// tags column (filterTags: they start with zq): a token of it (a run of
// letters and digits, as FTS5's unicode61 splits them) that is z, starts
// with zq in any case, or holds a letter outside ASCII (which FTS5 may
// fold into one of those).
func mayMatchTags(text string) bool {
	for _, tok := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) }) {
		lower := strings.ToLower(tok)
		if lower == "z" || strings.HasPrefix(lower, "zq") {
			return true
		}
		for _, r := range tok {
			if r > unicode.MaxASCII {
				return true
			}
		}
	}
	return false
}

// tagsExpr is the FTS5 expression of q's kind, role and tool filters
// (filterTags), "" when it has none.
func tagsExpr(q Query) string {
	var and []string
	for _, t := range strings.Fields(filterTags(q.Kind, q.Role, q.Tool)) {
		and = append(and, "{tags} : "+t)
	}
	return strings.Join(and, " AND ")
}

// allRows, as the bound after which fts rows are ranked (Cursor.After),
// ranks them all: no fts row is -1 (a document's own row is its id, from
// 1 up; a row shared across runs is below -1<<62, textBase).
const allRows = -1

// searchSQL is the statement of a search and its arguments: expr the
// FTS5 expression of the words (words: there are some); after, when not
// allRows, leaves out the documents whose id is not above it (the matches
// older than the newest Query.RankAmong, or than the oldest: newestRanked),
// and top, when not 0, those above it (the newest when the first page
// was read: Cursor). The order is total, by document id last, and each
// row says its rank and id (Cursor); a page after another reads the rows
// of the pages before as well (their keys only, folding into them).
func searchSQL(q Query, expr string, words bool, after, top int64) (string, []any) {
	from, where, args := searchWhere(q, expr, words)
	order, rank := `injected, d.ts DESC, d.id DESC`, `0.0`
	if words {
		order, rank = `injected, fts.rank, d.ts DESC, d.id DESC`, `fts.rank`
	}
	if after != allRows {
		where += ` AND fts.rowid > ?`
		args = append(args, after)
	}
	if top > 0 {
		// With words, FTS5 reads the rows up to top alone; a document
		// sharing one of them (docs.fid) may be newer.
		if words {
			where += ` AND fts.rowid <= ?`
			args = append(args, top)
		}
		where += ` AND d.id <= ?`
		args = append(args, top)
	}
	rows := q.rows()
	if q.From != nil {
		rows += q.From.Rows
	}
	return `SELECT ` + searchColumns(rank) + `
FROM ` + from + `
WHERE ` + where + `
ORDER BY ` + order + ` LIMIT ?`, append(args, rows)
}

// newestRanked is the first page of a search whose words may match more
// documents than are ranked (among, with fewer rows asked). One FTS5
// statement (newestSQL) reads the matches of q's words (expr, their
// FTS5 expression) and filters newest first, in FTS5's own order of ids
// (none sorted), each with its order key (Cursor: its rank computed for
// the rows read only), up to the (among+1)th match at or below top.
// When there is one, only the newest among are ranked (bounded) and
// after is its id; else every match is, and after is below the oldest.
// They are put here in the order of searchSQL's statement
// (Cursor.compare), and the first q.rows() of them read whole (rowsByID)
// and returned: the rows that statement gives over the ids above after,
// up to top, which a page after this one reads (Cursor). Before, three
// FTS5 queries did it (the words' newest among+1 alone, the same with
// the filters, then the ranking of those), and each built again the
// merged list of a prefix word's terms, which was most of a search's
// CPU.
func (ix *Index) newestRanked(ctx context.Context, q Query, expr string, among int, top int64) (list []searchRow, after int64, bounded bool, err error) {
	sqlq, args := newestSQL(q, expr, among, top)
	rows, err := ix.db.QueryContext(ctx, sqlq, args...)
	if err != nil {
		return nil, -1, false, err
	}
	defer rows.Close()
	keys, ftsRows, err := scanNewest(rows, nil, nil)
	if err != nil {
		return nil, -1, false, err
	}
	after = allRows
	switch {
	case len(keys) > among:
		after, bounded = ftsRows[among], true
		if ftsRows[among-1] == after {
			// The bound falls among the documents sharing one fts row
			// (a text their run repeats, or an injected text shared
			// across runs: docs.fid), which rank as one:
			// the row is ranked whole, with its documents the
			// statement left out, so that the pages after (fts.rowid
			// above after) leave none out.
			i := slices.Index(ftsRows, after)
			keys, ftsRows = keys[:i], ftsRows[:i]
			rowq, rowArgs := newestSQL(q, expr, -1, after)
			more, err := ix.db.QueryContext(ctx, rowq, rowArgs...)
			if err != nil {
				return nil, -1, false, err
			}
			if keys, _, err = scanNewest(more, keys, ftsRows); err != nil {
				return nil, -1, false, err
			}
			after--
		} else {
			keys = keys[:among]
		}
	case len(keys) > 0:
		after = ftsRows[len(keys)-1] - 1
	}
	slices.SortFunc(keys, func(a, b Cursor) int { return a.compare(b) })
	keys = keys[:min(len(keys), q.rows())]
	byID, err := ix.rowsByID(ctx, keys)
	if err != nil {
		return nil, -1, false, err
	}
	for _, k := range keys {
		if r, ok := byID[k.ID]; ok { // a document removed since is left out
			r.key = k
			list = append(list, r)
		}
	}
	return list, after, bounded, nil
}

// newestSQL is the statement of newestRanked: the ids, order keys and
// fts rows of the newest among+1 matches of q (expr the FTS5 expression
// of its words) at or below top, read by fts row, newest first, from
// FTS5's own order; among -1: every match of the fts row top alone.
func newestSQL(q Query, expr string, among int, top int64) (string, []any) {
	from, where, args := searchWhere(q, expr, true)
	sel := `SELECT d.id, d.origin IN ('injected_context', 'system_prompt'), fts.rank, d.ts, fts.rowid
FROM ` + from + `
WHERE ` + where
	if among < 0 {
		return sel + ` AND fts.rowid = ?`, append(args, top)
	}
	return sel + ` AND fts.rowid <= ?
ORDER BY fts.rowid DESC LIMIT ?`, append(args, top, among+1)
}

// scanNewest appends the rows of newestSQL's statement to keys (their
// order keys) and ftsRows (their fts rows), and closes rows.
func scanNewest(rows *sql.Rows, keys []Cursor, ftsRows []int64) ([]Cursor, []int64, error) {
	defer rows.Close()
	for rows.Next() {
		var k Cursor
		var row int64
		if err := rows.Scan(&k.ID, &k.Injected, &k.Rank, &k.TS, &row); err != nil {
			return nil, nil, err
		}
		keys, ftsRows = append(keys, k), append(ftsRows, row)
	}
	return keys, ftsRows, rows.Err()
}

// rowsByID reads the search rows of the documents keys name (their
// order keys left to the caller), by their ids.
func (ix *Index) rowsByID(ctx context.Context, keys []Cursor) (map[int64]searchRow, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	ids := make([]any, len(keys))
	for i, k := range keys {
		ids[i] = k.ID
	}
	list, err := ix.searchRows(ctx, `SELECT `+searchColumns(`0.0`)+`
FROM docs d JOIN runs r ON r.rid = d.rid
WHERE d.id IN (?`+strings.Repeat(`, ?`, len(ids)-1)+`)`, ids)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]searchRow, len(list))
	for _, r := range list {
		byID[r.key.ID] = r
	}
	return byID, nil
}

// rows is how many rows the statement of q reads: folding may merge
// many into one, so more than are shown, within a bound.
func (q Query) rows() int {
	if q.Every {
		return q.limit()
	}
	return min(q.limit()*8, q.limit()+2000)
}

// rankAmong is how many matches q ranks at most (Query.RankAmong).
func (q Query) rankAmong() int {
	if q.RankAmong == 0 {
		return DefaultRankAmong
	}
	return q.RankAmong
}

// goneSQL names, as the common table gone(id), the runs another holds
// again (the superseded table, and Held's runs: the held table) and
// their child runs, down every level: what searches and listings leave
// out.
const goneSQL = `WITH RECURSIVE gone(id) AS (` + supersededSQL + ` UNION ALL SELECT run_id FROM held
  UNION SELECT r2.run_id FROM runs r2 JOIN gone ON r2.parent_run_id = gone.id)`

// supersededSQL selects the runs the superseded table says another holds
// again, as views.Superseded reads the same fields: a run's start that
// names ended runs it holds again (supersedes_runs: a row whose by_run
// is the run that said it, src) holds nothing when the run's own end
// names a run holding it again (a sync --repair of an ended run a kill
// cut short before its first part: the damaged run stands).
const supersededSQL = `SELECT s.run_id FROM superseded s WHERE NOT (s.by_run = s.src AND s.run_id != s.src
  AND EXISTS (SELECT 1 FROM superseded e WHERE e.run_id = s.src AND e.src = s.src))`

// searchWhere is the tables a search reads (docs d and runs r, and fts
// when there are words), its condition and their arguments: the words
// and filters of q (expr the FTS5 expression of the words).
func searchWhere(q Query, expr string, words bool) (string, string, []any) {
	// A run another holds again (a superseded sub-agent's run, an
	// interrupted archive of a session archived whole elsewhere, a
	// recorded run whose session an archived run holds, the original of
	// a rebuild: Held) and its sub-runs are left out, unless asked for:
	// each thing said is found once.
	where := []string{"1"}
	var args []any
	from := `docs d`
	if words {
		// A match is an fts row: the document whose id it is and
		// those sharing it (docs.fid: the text its run repeats, or an
		// injected text every run that has it shares, a row of texts).
		from = `fts JOIN docs d ON (d.id = fts.rowid OR d.fid = fts.rowid)`
		where = []string{"fts MATCH ?"}
		args = append(args, expr)
	}
	if !q.Superseded {
		where = append(where, `d.rid NOT IN (`+goneSQL+` SELECT g.rid FROM runs g WHERE g.run_id IN (SELECT id FROM gone))`)
	}
	from += ` JOIN runs r ON r.rid = d.rid`
	status := `CASE WHEN d.status != '' THEN d.status ELSE r.status END`
	eq := func(col, v string) {
		if v != "" {
			where = append(where, col+" = ?")
			args = append(args, v)
		}
	}
	eq("d.tool", q.Tool)
	if q.Kind != "" {
		where = append(where, "d.kind = ?")
		args = append(args, kindCode(q.Kind))
	}
	eq("d.role", q.Role)
	eq(status, q.Status)
	if q.Run != "" {
		where = append(where, "r.run_id LIKE ?")
		args = append(args, strings.ReplaceAll(q.Run, "%", "")+"%")
	}
	if q.Provider != "" {
		where = append(where, "r.providers LIKE ?")
		args = append(args, "%,"+q.Provider+",%")
	}
	if q.Model != "" {
		where = append(where, "r.models LIKE ?")
		args = append(args, "%,"+q.Model+"%")
	}
	if len(q.Projects) > 0 {
		cond, a := projectCond(`CASE WHEN r.project != '' THEN r.project ELSE (SELECT p.project FROM runs p WHERE p.run_id = r.parent_run_id) END`, q.Projects)
		where = append(where, cond)
		args = append(args, a...)
	}
	if !q.Since.IsZero() {
		where = append(where, "d.ts >= ?")
		args = append(args, q.Since.UnixMilli())
	}
	if !q.Until.IsZero() {
		where = append(where, "d.ts < ?")
		args = append(args, q.Until.UnixMilli())
	}
	return from, strings.Join(where, " AND "), args
}

package web

import (
	"bytes"
	"context"
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/twasm/twasm/internal/export"
	"github.com/twasm/twasm/internal/index"
	"github.com/twasm/twasm/internal/redact"
	"github.com/twasm/twasm/internal/views"
	"github.com/twasm/twasm/transcript"
)

// funcs are the templates' helpers. Every value reaches the page through
// html/template's contextual escaping; text from transcripts goes
// through clean (views.StripEscapes) first, so terminal escapes and
// bidirectional controls are shown, not obeyed.
var funcs = template.FuncMap{
	"clean": views.StripEscapes,
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04")
	},
	"iso":  func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"join": strings.Join,
	"usage": func(u *transcript.Usage) string {
		if u.IsZero() {
			return ""
		}
		return views.UsageText(u, " · ")
	},
	"cost": func(c *float64) string {
		if c == nil {
			return ""
		}
		return "$" + strconv.FormatFloat(*c, 'f', 4, 64)
	},
	"short": views.ShortID,
	"list":  func(v ...string) []string { return v },
	// stclass is a status's badge class, as on export's page.
	"stclass": export.StatusClass,
}

// masker masks secrets in what one request serves (a Redactor counts
// what it masks, so each request has its own), or leaves text as it is.
type masker struct{ r *redact.Redactor }

func (s *Server) masker() masker {
	if s.opts.Redact {
		return masker{redact.New()}
	}
	return masker{}
}

func (m masker) text(v string) string {
	if m.r == nil {
		return v
	}
	return m.r.MaskString(v)
}

// render executes a template into a buffer, then sends it: an error is a
// whole error page, never half a page.
func (s *Server) render(w http.ResponseWriter, name string, data any) {
	s.renderStatus(w, http.StatusOK, name, data)
}

// renderStatus is render with a status other than 200.
func (s *Server) renderStatus(w http.ResponseWriter, code int, name string, data any) {
	var b bytes.Buffer
	if err := s.tmpl.ExecuteTemplate(&b, name, data); err != nil {
		s.opts.Logger.Error("render", "page", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(b.Bytes())
}

// facets are the values the filters offer, masked with --redact (a
// value masked then selects nothing: better than serving a secret in a
// path): those of the runs listed by default, or of every run when
// superseded (?superseded=1) lists those another holds again too.
func (s *Server) facets(ctx context.Context, m masker, superseded bool) index.Facets {
	f, err := s.opts.Index.Facets(ctx, superseded)
	if err != nil {
		s.opts.Logger.Warn("facets", "err", err)
	}
	for _, l := range [][]string{f.Providers, f.Models, f.Projects, f.Statuses} {
		for i := range l {
			l[i] = m.text(l[i])
		}
	}
	return f
}

// row is one run of the listing.
type row struct {
	index.ListedRun
	Display  string
	Duration string
	Usage    *transcript.Usage
	CostUSD  *float64
	Children int
	// Day heads the rows of a day (UTC): set on the first row of each.
	Day string
}

type listPage struct {
	Rows   []row
	Facets index.Facets
	Filter url.Values
	Next   string // the next page's address, "" on the last
	Live   string
	Error  string
}

// list is the sessions page: every top-level run newest first, a page at
// a time from the index, with the run's tokens and cost as ls counts
// them (its digest and its child runs', from the index's cache). A run
// another holds again (index.ListQuery.Superseded: what ls leaves out)
// is listed, marked, only with ?superseded=1, as ls --superseded.
func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	version := s.dirVersion()
	s.update(ctx)
	q := r.URL.Query()
	lq := index.ListQuery{Provider: q.Get("provider"), Model: q.Get("model"), Status: q.Get("status"), Project: q.Get("project"),
		After: q.Get("after"), Limit: s.opts.PageSize, Children: q.Get("children") != "", Superseded: q.Get("superseded") != ""}
	page := listPage{Filter: q, Live: "/live/list?v=" + version}
	if d := q.Get("day"); d != "" {
		day, err := time.Parse("2006-01-02", d)
		if err != nil {
			page.Error = "day: want YYYY-MM-DD"
		} else {
			lq.Since, lq.Until = day, day.AddDate(0, 0, 1)
		}
	}
	m := s.masker()
	var runs []index.ListedRun
	var more bool
	if page.Error == "" { // a filter not understood lists nothing
		var err error
		if runs, more, err = s.opts.Index.List(ctx, lq); err != nil {
			page.Error = err.Error()
		}
	}
	page.Facets = s.facets(ctx, m, lq.Superseded)
	sums := s.summaries(ctx, runs)
	lastDay := ""
	for _, lr := range runs {
		lr.Title, lr.Name, lr.Project = m.text(lr.Title), m.text(lr.Name), m.text(lr.Project)
		rw := row{ListedRun: lr}
		rw.Display = views.DisplayName(views.RunHead{RunID: lr.RunID, Name: lr.Name, Title: lr.Title, AutoName: views.IsAutoName(lr.Name, lr.Session)})
		if !lr.Started.IsZero() && !lr.Ended.IsZero() {
			rw.Duration = views.FormatDuration(lr.Ended.Sub(lr.Started).Milliseconds())
		}
		if sum, ok := sums[lr.RunID]; ok {
			rw.Usage, rw.CostUSD, rw.Children = sum.UsageInAll, sum.CostUSD, sum.ChildRuns
		}
		if day := lr.Started.UTC().Format("2006-01-02 Monday"); !lr.Started.IsZero() && day != lastDay {
			rw.Day, lastDay = day, day
		}
		page.Rows = append(page.Rows, rw)
	}
	if more && len(runs) > 0 {
		nq := url.Values{}
		for k, v := range q {
			nq[k] = v
		}
		nq.Set("after", runs[len(runs)-1].Cursor)
		page.Next = "/?" + nq.Encode()
	}
	s.render(w, "list.html", page)
}

// summaries folds each listed run with its child runs into its listing
// line (views.SummarizeDigests, as ls does), from the digests the index
// keeps; a run whose digests cannot be had is shown without figures.
func (s *Server) summaries(ctx context.Context, runs []index.ListedRun) map[string]views.RunSummary {
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.RunID
	}
	digests := map[string]*views.RunDigest{}
	fetch := func(ids []string) {
		data, _, err := s.opts.Index.DerivedOf(ctx, s.opts.DigestKind, ids, func(path string) ([]byte, error) {
			return json.Marshal(views.DigestFile(path))
		})
		if err != nil {
			s.opts.Logger.Warn("digests", "err", err)
			return
		}
		for id, b := range data {
			d := &views.RunDigest{}
			if json.Unmarshal(b, d) == nil {
				digests[id] = d
			}
		}
	}
	fetch(ids)
	lookup := func(id string) (*views.RunDigest, bool) {
		if _, ok := digests[id]; !ok {
			if _, err := os.Stat(s.runPath(id)); err == nil {
				fetch([]string{id})
			}
		}
		d, ok := digests[id]
		return d, ok
	}
	out := map[string]views.RunSummary{}
	for _, id := range ids {
		if d, ok := digests[id]; ok && d.LoadErr == "" {
			out[id] = views.SummarizeDigests(views.DigestTree(d, lookup))
		}
	}
	return out
}

// A search shows searchPageSize hits a page (limit asks for up to
// maxSearchHits); the next page starts where the page before ended
// (from: index.Cursor), so that it costs what the first did.
const searchPageSize, maxSearchHits = 50, 800

type searchPage struct {
	Query  url.Values
	Text   string
	Hits   []hit
	Facets index.Facets
	Error  string
	Done   bool
	More   string // the same search's next page, "" when all are shown
	// Start is the number of the page's first hit (1 on the first page).
	Start int
	// RankedAmong, when not 0: more documents matched, and the hits were
	// ranked among the newest RankedAmong (index.Results.RankedAmong).
	RankedAmong int
}

// hit is a search hit as shown: its snippet cut into text and matches,
// so that the template escapes every piece and marks the matches.
type hit struct {
	index.Hit
	Display string
	Pieces  []piece
	Href    string
	// Superseded marks a hit of a run another holds again (superseded=1).
	Superseded bool
}

type piece struct {
	Text  string
	Match bool
}

// markOpen and markClose delimit a match in a snippet from the index
// (private-use runes no transcript text is taken for).
const markOpen, markClose = "\ue000", "\ue001"

// search is the search page: the filters of twasm search, hits with
// snippets, each linking to its run's page at its event.
func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	page := searchPage{Query: q, Text: q.Get("q")}
	page.Facets = s.facets(ctx, s.masker(), q.Get("superseded") != "")
	iq := index.Query{Text: q.Get("q"), Provider: q.Get("provider"), Model: q.Get("model"), Status: q.Get("status"),
		Run: q.Get("run"), Tool: q.Get("tool"), Kind: q.Get("type"), Role: q.Get("role"), Limit: searchPageSize,
		Every: q.Get("every") != "", MarkOpen: markOpen, MarkClose: markClose, WithText: s.opts.Redact, RankAmong: s.rankAmong,
		Superseded: q.Get("superseded") != ""}
	if n, err := strconv.Atoi(q.Get("limit")); err == nil && n > 0 {
		iq.Limit = min(n, maxSearchHits)
	}
	page.Start = 1
	if v := q.Get("from"); v != "" {
		c, err := index.ParseCursor(v)
		if err != nil {
			page.Error = "from: not a page of this search"
		} else {
			iq.From, page.Start = c, c.Shown+1
		}
	}
	// A project as the list's filter names it (the index's value): that
	// directory or below it, as twasm search --project.
	if p := q.Get("project"); p != "" {
		if !filepath.IsAbs(p) {
			page.Error = "project: want an absolute directory"
		}
		iq.Projects = []string{filepath.Clean(p)}
	}
	for _, f := range []struct {
		name string
		dst  *time.Time
	}{{"since", &iq.Since}, {"until", &iq.Until}} {
		if v := q.Get(f.name); v != "" {
			t, err := time.Parse("2006-01-02", v)
			if err != nil {
				page.Error = f.name + ": want YYYY-MM-DD"
			}
			*f.dst = t
		}
	}
	if page.Error == "" && (strings.TrimSpace(iq.Text) != "" || iq.HasFilter()) {
		s.update(ctx)
		res, err := s.opts.Index.SearchResults(ctx, iq)
		if err != nil {
			page.Error = err.Error()
		}
		hits := res.Hits
		page.RankedAmong = res.RankedAmong
		// The hits of a run another holds again are marked, as the
		// list marks the run.
		var gone map[string]bool
		if iq.Superseded && len(hits) > 0 {
			if gone, err = s.opts.Index.Gone(ctx); err != nil {
				page.Error = err.Error()
			}
		}
		m := s.masker()
		for _, h := range hits {
			snippet := h.Snippet
			if m.r != nil {
				// A snippet may cut a secret so that no rule knows it:
				// the whole text is masked, then cut.
				snippet = snippetOf(m.text(h.Text), iq.Text)
				h.RunTitle, h.RunName = m.text(h.RunTitle), m.text(h.RunName)
			}
			h.Text = ""
			page.Hits = append(page.Hits, hit{Hit: h, Pieces: pieces(snippet), Superseded: gone[h.RunID],
				Display: views.DisplayName(views.RunHead{RunID: h.RunID, Name: h.RunName, Title: h.RunTitle, AutoName: views.IsAutoName(h.RunName, h.RunSession)}),
				Href:    eventHref(h.RunID, h.Seq)})
		}
		page.Done = true
		if res.Next != nil {
			more := url.Values{}
			for k, v := range q {
				more[k] = v
			}
			more.Set("from", res.Next.String())
			page.More = "/search?" + more.Encode()
		}
	}
	s.render(w, "search.html", page)
}

// pieces cuts a marked snippet into text and matches.
func pieces(snippet string) []piece {
	var out []piece
	for snippet != "" {
		i := strings.Index(snippet, markOpen)
		if i < 0 {
			out = append(out, piece{Text: snippet})
			break
		}
		if i > 0 {
			out = append(out, piece{Text: snippet[:i]})
		}
		rest := snippet[i+len(markOpen):]
		j := strings.Index(rest, markClose)
		if j < 0 {
			out = append(out, piece{Text: rest, Match: true})
			break
		}
		out = append(out, piece{Text: rest[:j], Match: true})
		snippet = rest[j+len(markClose):]
	}
	return out
}

// snippetOf cuts up to 200 bytes of text around the first word of query
// it holds (case-insensitive), marking that word, on one line.
func snippetOf(text, query string) string {
	text = strings.Join(strings.Fields(text), " ")
	lower := strings.ToLower(text)
	at, n := -1, 0
	for _, w := range strings.Fields(strings.ReplaceAll(query, `"`, " ")) {
		if i := strings.Index(lower, strings.ToLower(w)); i >= 0 && (at < 0 || i < at) {
			at, n = i, len(w)
		}
	}
	if at < 0 {
		return views.Clip(text, 160)
	}
	start, end := max(0, at-80), min(len(text), at+n+120)
	for start > 0 && start < len(text) && text[start]&0xC0 == 0x80 {
		start--
	}
	for end < len(text) && text[end]&0xC0 == 0x80 {
		end++
	}
	out := text[start:at] + markOpen + text[at:at+n] + markClose + text[at+n:end]
	if start > 0 {
		out = "…" + out
	}
	if end < len(text) {
		out += "…"
	}
	return out
}

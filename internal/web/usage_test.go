package web

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/prices"
	"github.com/twasm/twasm/internal/testing/viewstest"
	"github.com/twasm/twasm/internal/usage"
	"github.com/twasm/twasm/internal/views"
	"github.com/twasm/twasm/transcript"
)

// filesUsage reads every run's ledger from its transcript under root,
// priced with the bundled table: what twasm usage reads when the index
// cannot be used.
func filesUsage(root string) UsageSource {
	return func(context.Context) (usage.Sources, string, error) {
		dir := filepath.Join(root, "transcripts")
		entries, err := os.ReadDir(dir)
		if err != nil {
			return usage.Sources{}, "", err
		}
		tbl := prices.Bundled()
		src := usage.Sources{Ledgers: map[string]*usage.Ledger{}}
		for _, e := range entries {
			id, ok := strings.CutSuffix(e.Name(), ".jsonl")
			if !ok {
				continue
			}
			src.IDs = append(src.IDs, id)
			src.Ledgers[id] = usage.LedgerFile(filepath.Join(dir, e.Name()), tbl)
		}
		slices.Sort(src.IDs)
		return src, tbl.Version(), nil
	}
}

var (
	cellRE = regexp.MustCompile(`<t[hd][^>]*>([^<]*)</t[hd]>`)
	barRE  = regexp.MustCompile(`<g class="bar" data-key="([^"]*)">`)
)

// TestUsagePage: each chart's total row is usage.Build's total over the
// same storage and filters (figure for figure, cost as its decimal
// text, its source and the models of unknown cost), the chart by day has
// one bar per day the report has, in order, and the hostile model and
// project names are escaped.
func TestUsagePage(t *testing.T) {
	root := store(t)
	// A run of a model the price table lacks: its cost is unknown.
	const unknownID = "abababab-abab-4bab-8bab-abababababab"
	b := viewstest.NewBuilder(unknownID, "")
	b.Add(viewstest.Started(""))
	b.Add(viewstest.Step(transcript.StepStarted, "agent", 0, &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent}))
	res := mustJSON(t, map[string]any{"provider": "gemini", "model": "mystery-model-9", "status": "ok", "project": "/work/mystery",
		"usage": map[string]int{"input_tokens": 10, "output_tokens": 2}})
	b.Add(viewstest.Step(transcript.StepCompleted, "agent", 0, &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent, Status: transcript.StatusOK, Result: res}))
	b.Add(viewstest.Completed("", transcript.StatusOK, ""))
	later(b, 72*time.Hour)
	viewstest.WriteFile(t, filepath.Join(root, "transcripts", unknownID+".jsonl"), b.Bytes(t))
	for _, tc := range []struct {
		name, query string
		opt         usage.Options
		minDays     int
	}{
		{"everything", "", usage.Options{}, 3},
		{"redacted", "", usage.Options{}, 3},
		{"one agent", "?provider=claude", usage.Options{Provider: "claude"}, 1},
		{"a model", "?model=SONNET", usage.Options{Model: "SONNET"}, 1},
		{"a day", "?since=" + viewstest1Day(t, root) + "&until=" + viewstest1Day(t, root), usage.Options{}, 1},
		{"nothing", "?provider=none", usage.Options{Provider: "none"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, root, Options{Usage: filesUsage(root), Redact: tc.name == "redacted", Location: time.UTC})
			w := get(t, s, "/usage"+tc.query)
			if w.Code != http.StatusOK {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			body := w.Body.String()
			src, table, err := filesUsage(root)(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			opt := tc.opt
			opt.Location = time.UTC
			if strings.Contains(tc.query, "since=") {
				d, _ := time.Parse(time.DateOnly, viewstest1Day(t, root))
				opt.Since, opt.Until = d, d.AddDate(0, 0, 1)
			}
			for _, by := range []string{usage.ByDay, usage.ByModel, usage.ByProvider} {
				opt.By = by
				rep, err := usage.Build(src, table, opt)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := totalCells(t, body, by), wantTotal(&rep.Total); !slices.Equal(got, want) {
					t.Errorf("by %s: total row %q, usage.Build's %q", by, got, want)
				}
				bars := barKeys(t, body, by)
				if len(bars) != len(rep.Groups) {
					t.Errorf("by %s: %d bars, %d groups", by, len(bars), len(rep.Groups))
				}
				if by == usage.ByDay {
					if len(bars) < tc.minDays {
						t.Errorf("%d day bars, want at least %d", len(bars), tc.minDays)
					}
					for i, g := range rep.Groups {
						if i < len(bars) && bars[i] != g.Key {
							t.Errorf("bar %d is %q, day %q", i, bars[i], g.Key)
						}
					}
				}
			}
			if tc.query == "" && !strings.Contains(body, `<span id="unknown">mystery-model-9</span>`) {
				t.Error("the model of unknown cost is not named")
			}
			// By project: one bar per project, the projects' figures add
			// up to the total.
			var sessions, output int64
			for _, row := range tbodyRows(t, body, "project") {
				n, _ := strconv.ParseInt(row[1], 10, 64)
				o, _ := strconv.ParseInt(row[6], 10, 64)
				sessions, output = sessions+n, output+o
			}
			total := totalCells(t, body, "project")
			if strconv.FormatInt(sessions, 10) != total[1] || strconv.FormatInt(output, 10) != total[6] {
				t.Errorf("by project: sessions %d, output %d; total row %q", sessions, output, total)
			}
			if !slices.Equal(total, totalCells(t, body, usage.ByDay)) {
				t.Errorf("by project: total row %q, by day %q", total, totalCells(t, body, usage.ByDay))
			}
			if n := len(barKeys(t, body, "project")); n != len(tbodyRows(t, body, "project")) {
				t.Errorf("by project: %d bars, %d rows", n, len(tbodyRows(t, body, "project")))
			}
			for _, p := range payloads {
				if strings.Contains(body, p) && strings.ContainsAny(p, "<>") {
					t.Errorf("a hostile text is served unescaped: %q", p)
				}
			}
		})
	}
}

// viewstest1Day is the first day (UTC) of the fixture's usage.
func viewstest1Day(t *testing.T, root string) string {
	t.Helper()
	src, table, err := filesUsage(root)(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := usage.Build(src, table, usage.Options{Location: time.UTC})
	if err != nil || len(rep.Groups) == 0 {
		t.Fatalf("no usage in the fixture: %v", err)
	}
	return rep.Groups[0].Key
}

// part is the page's text from the first start to the end that follows
// it.
func part(t *testing.T, body, start, end string) string {
	t.Helper()
	i := strings.Index(body, start)
	j := strings.Index(body[max(i, 0):], end)
	if i < 0 || j < 0 {
		t.Fatalf("no %s...%s on the page", start, end)
	}
	return body[i : i+j]
}

// cells are the texts of a row's cells.
func cells(tr string) []string {
	var out []string
	for _, m := range cellRE.FindAllStringSubmatch(tr, -1) {
		out = append(out, m[1])
	}
	return out
}

func totalCells(t *testing.T, body, by string) []string {
	return cells(part(t, body, `<tfoot id="total-`+by+`">`, "</tfoot>"))
}

func wantTotal(g *usage.Group) []string {
	fig := map[string]int64{}
	for _, f := range views.UsageFigures(g.Usage) {
		fig[f.Key] = f.N
	}
	n := func(k string) string { return strconv.FormatInt(fig[k], 10) }
	usd := g.Cost.USD
	if g.Cost.Source == prices.SourceUnknown {
		usd = "?"
	}
	return []string{"total", strconv.Itoa(g.Sessions), strconv.Itoa(g.Requests), n("uncached_input_tokens"), n("cache_read_tokens"),
		n("cache_write_tokens"), n("output_tokens"), usd, g.Cost.Source, strings.Join(g.Cost.UnpricedModels, ", ")}
}

func tbodyRows(t *testing.T, body, by string) [][]string {
	sec := part(t, body, `id="chart-`+by+`"`, "</tbody>")
	var out [][]string
	for _, tr := range strings.Split(sec[strings.Index(sec, "<tbody>"):], "<tr>")[1:] {
		out = append(out, cells(tr))
	}
	return out
}

func barKeys(t *testing.T, body, by string) []string {
	var out []string
	for _, m := range barRE.FindAllStringSubmatch(part(t, body, `id="chart-`+by+`"`, "</svg>"), -1) {
		out = append(out, m[1])
	}
	return out
}

// TestUsagePageRefuses: a bound that is not a day is a 400 naming it, a
// source that fails a 500, a server given no source a 404, each an HTML
// page saying why.
func TestUsagePageRefuses(t *testing.T) {
	root := store(t)
	for _, tc := range []struct {
		name, target string
		opts         Options
		code         int
		want         string
	}{
		{"since not a day", "/usage?since=yesterday", Options{Usage: filesUsage(root)}, http.StatusBadRequest, "since: "},
		{"until not a day", "/usage?until=2026-13-01", Options{Usage: filesUsage(root)}, http.StatusBadRequest, "until: "},
		{"a source that fails", "/usage", Options{Usage: func(context.Context) (usage.Sources, string, error) {
			return usage.Sources{}, "", os.ErrPermission
		}}, http.StatusInternalServerError, "usage could not be read"},
		{"no source", "/usage", Options{}, http.StatusNotFound, "usage is not available"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := get(t, newServer(t, root, tc.opts), tc.target)
			if body := w.Body.String(); w.Code != tc.code || !strings.Contains(body, `<div class="errbox">`+tc.want) || strings.Contains(body, "<svg") ||
				w.Header().Get("Content-Type") != "text/html; charset=utf-8" {
				t.Fatalf("%d\n%s", w.Code, body)
			}
		})
	}
}

// TestChartColumns: a chart by day has a column per day however many,
// the largest as tall as the plot and the others in proportion, the
// labels no closer than a label's room, and the largest figure named.
func TestChartColumns(t *testing.T) {
	for _, days := range []int{1, 2, 31, 365} {
		t.Run(strconv.Itoa(days), func(t *testing.T) {
			rep := &usage.Report{By: usage.ByDay}
			for i := range days {
				micro := int64(i%7+1) * 1000
				rep.Groups = append(rep.Groups, usage.Group{Key: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i).Format(time.DateOnly),
					Cost: usage.Cost{MicroUSD: micro, USD: prices.FormatMicro(micro), Source: prices.SourcePriced}})
				rep.Total.Cost.MicroUSD += micro
			}
			c := chartOf(usage.ByDay, "By day", rep, masker{})
			if !c.Columns || len(c.Bars) != days {
				t.Fatalf("columns %v, %d bars for %d days", c.Columns, len(c.Bars), days)
			}
			top := int64(min(days, 7)) * 1000
			labels, last := 0, -chartLabel
			for i, b := range c.Bars {
				micro := int64(i%7+1) * 1000
				if want := max(1, int(micro*chartColsH/top)); b.Height != want || b.Y+b.Height != c.AxisY || b.BarX+b.Width > c.Width {
					t.Fatalf("bar %d: height %d (want %d), y %d, x %d+%d in %d", i, b.Height, want, b.Y, b.BarX, b.Width, c.Width)
				}
				if b.ShowLabel {
					if b.LabelX-last < chartLabel {
						t.Fatalf("label %d at %d, the one before at %d", i, b.LabelX, last)
					}
					labels, last = labels+1, b.LabelX
				}
			}
			if labels == 0 || !strings.Contains(c.Top, "$"+prices.FormatMicro(top)) {
				t.Fatalf("%d labels, top %q", labels, c.Top)
			}
		})
	}
}

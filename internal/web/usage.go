package web

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/twasm/twasm/internal/index"
	"github.com/twasm/twasm/internal/usage"
	"github.com/twasm/twasm/internal/views"
)

// UsageSource gives what twasm usage reads: the runs, their ledgers
// (from the index, as cmdutil.UsageSource loads them) and the version of
// the price table they were priced with.
type UsageSource func(ctx context.Context) (src usage.Sources, table string, err error)

// usageCharts are the report's groupings the usage page charts, in
// order.
var usageCharts = []struct{ By, Title string }{
	{usage.ByDay, "By day"},
	{usage.ByModel, "By model"},
	{usage.ByProvider, "By agent"},
	{usage.ByProject, "By project"},
}

// Chart geometry (SVG user units): a row per group, its label left of
// its bar, its figure right of it.
const (
	chartLabelW = 220
	chartBarW   = 420
	chartValueW = 140
	chartRowH   = 22
	chartBarH   = 16
	// A chart by day: a column per day, days left to right.
	chartColsW = 780 // the plot's width, unless the days need more
	chartColsH = 160 // the tallest column
	chartTop   = 22  // above the plot: the largest figure
	chartFoot  = 18  // below it: the days' labels
	chartLabel = 72  // the room a day's label needs
)

type usagePage struct {
	Query  url.Values
	Facets index.Facets
	Charts []usageChart
	Prices string
	// Unknown names the models whose cost is unknown (not in the price
	// table, not stated by their provider), over everything shown.
	Unknown    []string
	Unreadable int
	// Zone names the time zone the days are cut in.
	Zone  string
	Error string
}

type usageChart struct {
	By, Title string
	// Metric is what the bars measure: "cost" (micro-dollars) or, when
	// no group has a known cost, "tokens".
	Metric string
	// Columns draws a column per group, left to right (by day), rather
	// than a row per group.
	Columns bool
	// Top is the largest bar's figure, written above the columns.
	Top string
	// AxisY is where the columns stand.
	AxisY  int
	Width  int
	Height int
	Bars   []usageBar
	Rows   []usageRow
	Total  usageRow
}

type usageBar struct {
	Key, Value    string
	Y, TextY      int
	Width, Height int
	LabelX        int
	BarX          int
	ValueX        int
	// ShowLabel says whether a column's label is written (every day's
	// is in its title; the axis names as many as fit).
	ShowLabel bool
}

// usageRow is one group's exact figures, as twasm usage prints them.
type usageRow struct {
	Key                                     string
	Sessions, Requests                      int
	Uncached, CacheRead, CacheWrite, Output int64
	USD, Source                             string
	Unknown                                 []string
}

// usagePage answers /usage: usage.Build's reports by day, model and
// agent over the whole storage, filtered as twasm usage's --since,
// --until (a day: up to its end), --provider and --model; days are cut
// in Options.Location, as twasm usage cuts them.
func (s *Server) usage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	ctx := r.Context()
	s.update(ctx)
	page := usagePage{Query: q, Facets: s.facets(ctx, s.masker(), false)} // usage counts no run another holds again
	if s.opts.Usage == nil {
		page.Error = "usage is not available from this server"
		s.renderStatus(w, http.StatusNotFound, "usage.html", page)
		return
	}
	loc := s.opts.Location
	page.Zone = loc.String()
	opt := usage.Options{Provider: q.Get("provider"), Model: q.Get("model"), Location: loc}
	var err error
	if opt.Since, err = parseDay(q.Get("since"), loc); err != nil {
		page.Error = "since: " + err.Error()
	} else if opt.Until, err = parseDay(q.Get("until"), loc); err != nil {
		page.Error = "until: " + err.Error()
	} else if !opt.Until.IsZero() {
		opt.Until = opt.Until.AddDate(0, 0, 1)
	}
	if page.Error != "" {
		s.renderStatus(w, http.StatusBadRequest, "usage.html", page)
		return
	}
	src, table, err := s.opts.Usage(ctx)
	if err != nil {
		s.opts.Logger.Error("usage", "err", err)
		page.Error = "usage could not be read"
		s.renderStatus(w, http.StatusInternalServerError, "usage.html", page)
		return
	}
	m := s.masker()
	for _, c := range usageCharts {
		opt.By = c.By
		rep, err := usage.Build(src, table, opt)
		if err != nil {
			page.Error = err.Error()
			break
		}
		page.Prices = rep.Prices
		page.Unreadable = len(rep.Unreadable)
		page.Unknown = maskAll(m, rep.Total.Cost.UnpricedModels)
		page.Charts = append(page.Charts, chartOf(c.By, c.Title, rep, m))
	}
	s.render(w, "usage.html", page)
}

// parseDay reads a date field (YYYY-MM-DD, its start in loc); "" is no
// bound.
func parseDay(v string, loc *time.Location) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	return time.ParseInLocation(time.DateOnly, v, loc)
}

func maskAll(m masker, l []string) []string {
	out := make([]string, len(l))
	for i, v := range l {
		out[i] = m.text(v)
	}
	return out
}

func rowOf(g *usage.Group, m masker) usageRow {
	r := usageRow{Key: m.text(g.Key), Sessions: g.Sessions, Requests: g.Requests, USD: g.Cost.USD, Source: g.Cost.Source,
		Unknown: maskAll(m, g.Cost.UnpricedModels)}
	for _, f := range views.UsageFigures(g.Usage) {
		switch f.Key {
		case "uncached_input_tokens":
			r.Uncached = f.N
		case "cache_read_tokens":
			r.CacheRead = f.N
		case "cache_write_tokens":
			r.CacheWrite = f.N
		case "output_tokens":
			r.Output = f.N
		}
	}
	return r
}

func (r usageRow) tokens() int64 { return r.Uncached + r.CacheRead + r.CacheWrite + r.Output }

// chartOf lays out a report as bars: each group's cost, scaled to the
// largest, or its tokens when no cost is known.
func chartOf(by, title string, rep *usage.Report, m masker) usageChart {
	c := usageChart{By: by, Title: title, Metric: "cost", Total: rowOf(&rep.Total, m)}
	if rep.Total.Cost.MicroUSD == 0 {
		c.Metric = "tokens"
	}
	var top int64
	vals := make([]int64, len(rep.Groups))
	for i := range rep.Groups {
		g := &rep.Groups[i]
		row := rowOf(g, m)
		c.Rows = append(c.Rows, row)
		vals[i] = g.Cost.MicroUSD
		if c.Metric == "tokens" {
			vals[i] = row.tokens()
		}
		top = max(top, vals[i])
	}
	if by == usage.ByDay {
		return columnsOf(c, vals, top)
	}
	c.Width = chartLabelW + chartBarW + chartValueW
	c.Height = max(1, len(c.Rows)) * chartRowH
	for i, row := range c.Rows {
		b := usageBar{Key: row.Key, Y: i*chartRowH + (chartRowH-chartBarH)/2, TextY: i*chartRowH + chartRowH - 6,
			LabelX: chartLabelW - 6, BarX: chartLabelW, Height: chartBarH}
		if top > 0 {
			b.Width = max(1, int(vals[i]*chartBarW/top))
		}
		if vals[i] == 0 {
			b.Width = 0
		}
		b.ValueX = chartLabelW + b.Width + 6
		b.Value = c.figure(row)
		b.Key = views.Clip(b.Key, 30) // as much as the label's room holds
		c.Bars = append(c.Bars, b)
	}
	return c
}

// figure is what a bar says of its group: its cost (usage's decimal
// text, "?" when unknown) or its tokens.
func (c *usageChart) figure(row usageRow) string {
	if c.Metric == "tokens" {
		return strconv.FormatInt(row.tokens(), 10) + " tokens"
	}
	if row.Source == "unknown" {
		return "?"
	}
	return "$" + row.USD
}

// columnsOf lays out a chart by day as columns, scaled to the largest,
// the day's label under as many as fit.
func columnsOf(c usageChart, vals []int64, top int64) usageChart {
	c.Columns = true
	n := max(1, len(c.Rows))
	step := min(64, max(4, chartColsW/n)) // a few days: no wall of colour
	c.Width = max(chartColsW, n*step)
	c.Height = chartTop + chartColsH + chartFoot
	c.AxisY = chartTop + chartColsH
	every := max(1, (chartLabel+step-1)/step)
	for i, row := range c.Rows {
		b := usageBar{Key: row.Key, Value: c.figure(row), BarX: i*step + step/8, Width: max(2, step*3/4), LabelX: i*step + step/2,
			TextY: chartTop + chartColsH + chartFoot - 4, ShowLabel: i%every == 0}
		if top > 0 && vals[i] > 0 {
			b.Height = max(1, int(vals[i]*chartColsH/top))
		}
		b.Y = chartTop + chartColsH - b.Height
		if vals[i] == top {
			c.Top = "largest: " + b.Value + " (" + row.Key + ")"
		}
		c.Bars = append(c.Bars, b)
	}
	return c
}

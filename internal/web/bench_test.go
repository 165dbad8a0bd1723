package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/twasm/twasm/internal/testing/benchtest"
	"github.com/twasm/twasm/internal/testing/browsertest"
	"github.com/twasm/twasm/internal/testing/viewstest"
	"github.com/twasm/twasm/transcript"
)

// bigID is the run of 20,000 events the session page benchmarks serve.
const bigID = "77777777-7777-4777-8777-777777777777"

// bigStore writes a storage holding one run of 20,000 events (5,000
// turns of a prompt, an answer, a tool call and its result) and returns
// its root.
func bigStore(b *testing.B) string {
	root := b.TempDir()
	rb := viewstest.NewBuilder(bigID, "")
	rb.Add(viewstest.Started("big"))
	rb.Add(viewstest.Step(transcript.StepStarted, "agent", 0, &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent}))
	for i := range 5000 {
		n := strconv.Itoa(i)
		rb.Add(viewstest.Msg(transcript.MessageUser, "agent", transcript.TextBlock("step "+n+": run the tests again")))
		rb.Add(viewstest.Msg(transcript.MessageAssistant, "agent", transcript.TextBlock("Running them now, turn "+n+".")))
		rb.Add(viewstest.Tool(transcript.ToolCall, "agent", &transcript.ToolPayload{Name: "Bash", CallID: "c" + n, Kind: transcript.ToolExecute,
			Command: "go test ./...", Input: json.RawMessage(`{"command":"go test ./..."}`)}))
		rb.Add(viewstest.Tool(transcript.ToolResult, "agent", &transcript.ToolPayload{Name: "Bash", CallID: "c" + n, Output: "ok  \tpkg\t0.1s\n", Status: transcript.StatusOK}))
	}
	viewstest.WriteStore(b, root)
	viewstest.WriteFile(b, filepath.Join(root, "transcripts", bigID+".jsonl"), rb.Bytes(b))
	return root
}

// BenchmarkServeSession serves the page of a run of 20,000 events, as a
// browser opening it asks for it: the server's side of the issue's
// bound (a first screen within a second). It reports the page's size,
// the CPU time per page and when its first byte was written.
func BenchmarkServeSession(b *testing.B) {
	s := newServer(b, bigStore(b), Options{})
	h := s.Handler()
	var first, cpu time.Duration
	b.ResetTimer()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodGet, "/s/"+bigID, nil)
		r.Host = "127.0.0.1"
		w := &firstWrite{ResponseRecorder: httptest.NewRecorder(), start: time.Now()}
		c0 := benchtest.CPUTime()
		h.ServeHTTP(w, r)
		cpu += benchtest.CPUTime() - c0
		if w.Code != 200 {
			b.Fatal(w.Code)
		}
		first += w.first
		b.ReportMetric(float64(w.Body.Len())/(1<<20), "MiB/page")
	}
	b.ReportMetric(float64(first.Milliseconds())/float64(b.N), "first-byte-ms")
	if cpu > 0 {
		b.ReportMetric(cpu.Seconds()*1e3/float64(b.N), "cpu-ms/page")
	}
}

// firstWrite notes when the first byte of the body was written.
type firstWrite struct {
	*httptest.ResponseRecorder
	start time.Time
	first time.Duration
}

func (f *firstWrite) Write(p []byte) (int, error) {
	if f.first == 0 {
		f.first = time.Since(f.start)
	}
	return f.ResponseRecorder.Write(p)
}

// BenchmarkServeSessionBrowser opens the page of a run of 20,000 events
// in a real Chromium (skipped where there is none), each time from
// about:blank, and reads the browser's own clock (Navigation and Paint
// Timing, from the start of the navigation): the first byte, the first
// contentful paint, the largest contentful paint of the first screen,
// DOMContentLoaded (the page parsed and its scripts run: results beside
// their calls, the search box and keys wired; the "usable") and
// load.
func BenchmarkServeSessionBrowser(b *testing.B) {
	exe := browsertest.Chromium(b)
	base := serve(b, newServer(b, bigStore(b), Options{}))
	br := browsertest.Open(b, exe, 10*time.Minute)
	b.ResetTimer()
	var sum timings
	for b.Loop() {
		br.Do(b, chromedp.Navigate("about:blank"))
		br.Do(b, chromedp.Navigate(base+"/s/"+bigID))
		br.Until(b, `document.readyState === 'complete'`)
		t, err := chromedp.Run(br.Ctx, chromedp.Evaluate[timings](pageTimings, chromedp.EvalAwaitPromise))
		if err != nil {
			b.Fatal(err)
		}
		sum.TTFB += t.TTFB
		sum.FCP += t.FCP
		sum.LCP += t.LCP
		sum.DCL += t.DCL
		sum.Load += t.Load
	}
	n := float64(b.N)
	b.ReportMetric(sum.TTFB/n, "ttfb-ms")
	b.ReportMetric(sum.FCP/n, "fcp-ms")
	b.ReportMetric(sum.LCP/n, "lcp-ms")
	b.ReportMetric(sum.DCL/n, "dcl-ms")
	b.ReportMetric(sum.Load/n, "load-ms")
}

// timings are a page's milliseconds from the start of its navigation.
type timings struct {
	TTFB, FCP, LCP, DCL, Load float64
}

// pageTimings reads the page's timings (the largest contentful paint
// from a buffered observer: it has no entry to ask for).
const pageTimings = `new Promise(function (done) {
  var nav = performance.getEntriesByType('navigation')[0];
  var fcp = performance.getEntriesByName('first-contentful-paint')[0];
  new PerformanceObserver(function (list) {
    var e = list.getEntries();
    done({TTFB: nav.responseStart, FCP: fcp ? fcp.startTime : -1, LCP: e[e.length-1].startTime,
      DCL: nav.domContentLoadedEventEnd, Load: nav.loadEventEnd});
  }).observe({type: 'largest-contentful-paint', buffered: true});
})`

// The list and search benchmarks share one storage of
// TWASM_BENCH_SESSIONS (default 10,000; make bench sets it) Claude
// sessions made by viewstest.ClaudeSessions, written once in a temporary
// directory removed by TestMain, its index built before the first
// measure (a user's serve finds it built by sync or search).
var (
	archiveOnce sync.Once
	archiveRoot string
	archiveN    int
	archiveErr  error
)

func benchArchive(b *testing.B) (*Server, int) {
	b.Helper()
	archiveOnce.Do(func() {
		if archiveRoot, archiveErr = os.MkdirTemp("", "twasm-web-bench-"); archiveErr != nil {
			return
		}
		archiveN = viewstest.BenchSessions()
		viewstest.ClaudeSessions(b, archiveRoot, archiveN)
	})
	if archiveErr != nil {
		b.Fatal(archiveErr)
	}
	s := newServer(b, archiveRoot, Options{})
	if _, err := s.opts.Index.Update(context.Background()); err != nil {
		b.Fatal(err)
	}
	return s, archiveN
}

// target is a page a benchmark asks for, named in its metrics.
type target struct{ name, path string }

// benchPages asks s for each target rounds times in turn, as a loopback
// client does, checking each answer holds want; it reports the median
// wall time of every answer (ms/<unit>) and of each target's
// (ms/<unit>-<name>), and the CPU time per answer (cpu-ms/<unit>).
func benchPages(b *testing.B, s *Server, unit string, targets []target, want string) {
	const rounds = 10
	h := s.Handler()
	for range 2 { // warm: templates, the index's pages in the cache
		for _, tg := range targets {
			benchGet(b, h, tg.path, want)
		}
	}
	walls := make([][]float64, len(targets))
	var cpu time.Duration
	b.ResetTimer()
	for b.Loop() {
		for range rounds {
			for i, tg := range targets {
				t0, c0 := time.Now(), benchtest.CPUTime()
				benchGet(b, h, tg.path, want)
				cpu += benchtest.CPUTime() - c0
				walls[i] = append(walls[i], float64(time.Since(t0))/1e6)
			}
		}
	}
	var all []float64
	for i, w := range walls {
		b.ReportMetric(benchtest.Median(w), "ms/"+unit+"-"+targets[i].name)
		all = append(all, w...)
	}
	b.ReportMetric(benchtest.Median(all), "ms/"+unit)
	if cpu > 0 {
		b.ReportMetric(cpu.Seconds()*1e3/float64(len(all)), "cpu-ms/"+unit)
	}
}

func benchGet(b *testing.B, h http.Handler, target, want string) {
	r := httptest.NewRequest(http.MethodGet, target, nil)
	r.Host = "127.0.0.1"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 200 || !strings.Contains(w.Body.String(), want) {
		b.Fatalf("%s: %d, no %q in %.300s", target, w.Code, want, w.Body.String())
	}
}

// BenchmarkServeList is the sessions page of serve over the archive: the
// first page (50 runs, newest first), and the same filtered by project;
// each answer with the index's check against the files, its facets and
// the runs' figures, as a browser gets it.
func BenchmarkServeList(b *testing.B) {
	s, n := benchArchive(b)
	benchPages(b, s, "page", []target{{"first", "/"}, {"project", "/?project=%2Fwork%2Fproject07"}}, `data-run=`)
	b.ReportMetric(float64(n), "sessions")
}

// BenchmarkServeSearch is serve's search page over the archive: a word
// of one session's prompt, a word of every session's answers, and a word
// of every prompt among the user's messages only; 50 hits a page, the
// index's check included.
func BenchmarkServeSearch(b *testing.B) {
	s, n := benchArchive(b)
	benchPages(b, s, "search", []target{{"rare", "/search?q=" + strconv.Itoa(n/2)}, {"common", "/search?q=tests"},
		{"common-user", "/search?q=test&role=user"}}, `class="hitlink"`)
	b.ReportMetric(float64(n), "sessions")
}

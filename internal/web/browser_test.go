package web

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/twasm/twasm/internal/testing/browsertest"
	"github.com/twasm/twasm/internal/testing/viewstest"
	"github.com/twasm/twasm/transcript"
)

// TestServeInBrowser drives a real Chromium through the app: the list,
// a filter by agent and one by project, keyboard navigation, a search
// and its hit opened at its event, a sub-agent's run and back, a hostile run's page, the usage
// page's charts (opened from the navigation, then filtered), and live
// updates of a run's page and of the list; no page logs a problem or
// asks anything of another origin.
func TestServeInBrowser(t *testing.T) {
	exe := browsertest.Chromium(t)
	root := store(t)
	s := newServer(t, root, Options{Usage: filesUsage(root)})
	base := serve(t, s)
	b := browsertest.Open(t, exe, 5*time.Minute)
	q := strconv.Quote

	t.Run("list", func(t *testing.T) {
		b.Do(t, chromedp.Navigate(base+"/"))
		b.Until(t, `document.querySelectorAll('#runs tr.run').length === 3`)
		if got := b.Str(t, `[].map.call(document.querySelectorAll('#runs tr.run'), function(r){return r.dataset.run}).join(' ')`); got != strings.Join([]string{secretID, hostileID, viewstest.Root}, " ") {
			t.Fatalf("rows %q: want newest first", got)
		}
		if got := b.Str(t, `document.querySelector('#runs tr[data-run="`+hostileID+`"] a.title').textContent`); !strings.Contains(got, `<script>window.pwned="script"</script>`) || !strings.Contains(got, "[U+202E]") {
			t.Fatalf("the hostile title is not shown as text: %q", got)
		}
	})
	t.Run("filter", func(t *testing.T) {
		for _, f := range []struct{ name, value, param string }{
			{"provider", "codex", "provider=codex"},
			{"project", "/work/deploy", "project=%2Fwork%2Fdeploy"},
		} {
			b.Do(t, chromedp.Navigate(base+"/"))
			b.Until(t, `document.readyState === 'complete' && document.querySelectorAll('#runs tr.run').length === 3`)
			b.Str(t, `(function(){document.querySelector('#filters select[name=`+f.name+`]').value=`+q(f.value)+`;return ''})()`)
			b.Click(t, `#filters button[type=submit]`)
			b.Until(t, `location.search.indexOf(`+q(f.param)+`) >= 0 && document.readyState === 'complete' && document.querySelectorAll('#runs tr.run').length === 1`)
			if got := b.Str(t, `document.querySelector('#runs tr.run').dataset.run`); got != secretID {
				t.Fatalf("filtered by %s to %s", f.name, got)
			}
		}
	})
	t.Run("keyboard", func(t *testing.T) {
		b.Do(t, chromedp.Navigate(base+"/"))
		// The keys are the page's script's: sent once it is wired.
		b.Until(t, `document.querySelectorAll('#runs tr.run').length === 3 && document.body.getAttribute('data-ready') === '1'`)
		b.Do(t, chromedp.KeyEvent("j"))
		b.Do(t, chromedp.KeyEvent("j"))
		b.Until(t, `document.activeElement && document.activeElement.getAttribute('href') === '/s/`+hostileID+`'`)
		b.Do(t, chromedp.KeyEvent("\r"))
		b.Until(t, `location.pathname === '/s/`+hostileID+`' && document.readyState === 'complete'`)
	})
	t.Run("search and open a hit at its event", func(t *testing.T) {
		b.Do(t, chromedp.Navigate(base+"/"))
		b.Until(t, `document.readyState === 'complete' && !!document.querySelector('nav.top')`)
		b.Click(t, `nav.top a[href="/search"]`)
		b.Until(t, `location.pathname === '/search' && !!document.getElementById('sq')`)
		b.SendKeys(t, `#sq`, "diff\r")
		b.Until(t, `document.querySelectorAll('#hits a.hitlink').length > 0`)
		href := b.Str(t, `document.querySelector('#hits a.hitlink').getAttribute('href')`)
		// The assistant's short answer ranks first (TestSearch).
		if href != "/s/"+viewstest.Root+"#seq-9" {
			t.Fatalf("first hit %q", href)
		}
		b.Click(t, `#hits a.hitlink`)
		b.Until(t, `location.pathname === '/s/`+viewstest.Root+`' && location.hash === '#seq-9' && document.readyState === 'complete' && !!document.getElementById('seq-9')`)
		b.Until(t, `(function(){var r=document.getElementById('seq-9').getBoundingClientRect();return r.top >= 0 && r.top < innerHeight})()`)
		if got := b.Str(t, `document.getElementById('seq-9').textContent`); !strings.Contains(got, "The diff looks fine") {
			t.Fatalf("the event at #seq-9: %q", got)
		}
	})
	t.Run("sub-agent and back", func(t *testing.T) {
		b.Click(t, `#child-`+viewstest.Child+` a`)
		b.Until(t, `location.pathname === '/s/`+viewstest.Child+`' && document.readyState === 'complete' && !!document.getElementById('parent')`)
		if got := b.Str(t, `document.querySelector('main').textContent`); !strings.Contains(got, "grep -rn TODO") {
			t.Fatalf("the child's page: %q", got)
		}
		b.Click(t, `#parent`)
		b.Until(t, `location.pathname === '/s/`+viewstest.Root+`' && location.hash === '#child-`+viewstest.Child+`' && !!document.getElementById('child-`+viewstest.Child+`')`)
	})
	t.Run("raw line", func(t *testing.T) {
		b.Click(t, `#seq-3 a.raw`)
		b.Until(t, `location.pathname === '/raw/`+viewstest.Root+`/3' && document.body && document.body.textContent.indexOf('transcript line (seq 3)') >= 0`)
	})
	t.Run("hostile run executes nothing", func(t *testing.T) {
		b.Do(t, chromedp.Navigate(base+"/s/"+hostileID))
		// The page's own script ran (it moves each result beside its call)...
		b.Until(t, `document.querySelectorAll('.tool .slot .result').length >= 2`)
		b.Str(t, `(function(){document.querySelectorAll('summary, details').forEach(function(e){e.click()});return ''})()`)
		for _, probe := range []string{
			`typeof window.pwned === 'undefined' ? '' : String(window.pwned)`,
			`document.querySelectorAll('main script, main img, main svg, main iframe, #jslink, header script').length ? 'markup' : ''`,
			`[].filter.call(document.querySelectorAll('a[href]'), function(a){return a.protocol !== 'http:' || a.host !== location.host}).map(function(a){return a.href}).join(' ')`,
		} {
			if got := b.Str(t, probe); got != "" {
				t.Fatalf("%s: %q", probe, got)
			}
		}
		shown := b.Str(t, `document.querySelector('main').textContent + document.title`)
		for _, want := range []string{`<script>window.pwned="script"</script>`, "[U+202E]", "[U+2066]", "osc link", "red"} {
			if !strings.Contains(shown, want) {
				t.Fatalf("the page does not show %q as text", want)
			}
		}
	})
	t.Run("usage charts", func(t *testing.T) {
		b.Do(t, chromedp.Navigate(base+"/"))
		b.Until(t, `document.readyState === 'complete' && !!document.querySelector('nav.top a[href="/usage"]')`)
		b.Click(t, `nav.top a[href="/usage"]`)
		b.Until(t, `location.pathname === '/usage' && document.readyState === 'complete' && !!document.getElementById('chart-project')`)
		// Two days of the fixture have usage; the bars are drawn (the CSS
		// applies: a bar has a width and a fill).
		if got := b.Str(t, `String(document.querySelectorAll('#chart-day g.bar').length)`); got != "2" {
			t.Fatalf("%s day bars, want 2", got)
		}
		if got := b.Str(t, `(function(){var r=document.querySelector('#chart-day rect.barfill');return r.getBoundingClientRect().width > 0 && getComputedStyle(r).fill !== 'none' ? '' : 'not drawn'})()`); got != "" {
			t.Fatal("the day chart's bar is " + got)
		}
		if got := b.Str(t, `document.querySelector('#usage-project table').textContent`); !strings.Contains(got, `<script>window.pwned="script"</script>`) {
			t.Fatalf("the hostile project is not shown as text: %q", got)
		}
		b.Str(t, `(function(){document.querySelector('#usageform select[name=provider]').value='codex';return ''})()`)
		b.Click(t, `#usageform button[type=submit]`)
		b.Until(t, `location.search.indexOf('provider=codex') >= 0 && document.readyState === 'complete' && document.querySelectorAll('#chart-provider g.bar').length === 1`)
		if got := b.Str(t, `typeof window.pwned === 'undefined' ? '' : String(window.pwned)`); got != "" {
			t.Fatalf("the hostile project ran: %q", got)
		}
	})
	t.Run("live run", func(t *testing.T) {
		const id = "99999999-9999-4999-8999-999999999999"
		path := filepath.Join(root, "transcripts", id+".jsonl")
		lb := viewstest.NewBuilder(id, "")
		lb.Add(viewstest.Started("growing"))
		lb.Add(viewstest.Step(transcript.StepStarted, "agent", 0, &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent}))
		viewstest.WriteFile(t, path, lb.Bytes(t))
		b.Do(t, chromedp.Navigate(base+"/s/"+id))
		b.Until(t, `document.body.getAttribute('data-live-open') === '1'`)
		for i := range 3 {
			lb.Add(viewstest.Msg(transcript.MessageAssistant, "agent", transcript.TextBlock("live word "+strconv.Itoa(i))))
			appendLines(t, path, lb.Line(t, lb.Len()-1))
			seq := strconv.Itoa(lb.Len())
			b.Until(t, `!!document.getElementById('seq-`+seq+`') && document.getElementById('seq-`+seq+`').textContent.indexOf(`+q("live word "+strconv.Itoa(i))+`) >= 0`)
		}
	})
	t.Run("live list", func(t *testing.T) {
		b.Do(t, chromedp.Navigate(base+"/"))
		b.Until(t, `document.body.getAttribute('data-live-open') === '1' && document.querySelectorAll('#runs tr.run').length === 4`)
		const id = "88888888-8888-4888-8888-888888888888"
		nb := viewstest.NewBuilder(id, "")
		nb.Add(viewstest.Started("a new session"))
		for _, ev := range nb.Events() {
			ev.Timestamp = time.Now().UTC()
		}
		viewstest.WriteFile(t, filepath.Join(root, "transcripts", id+".jsonl"), nb.Bytes(t))
		b.Until(t, `!!document.querySelector('#runs tr[data-run="`+id+`"]')`)
		if got := b.Str(t, `document.querySelector('#runs tr.run').dataset.run`); got != id {
			t.Fatalf("the new run is not first: %s", got)
		}
	})
	b.Check(t, base+"/")
}

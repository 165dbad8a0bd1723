package browsertest

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Payloads are what a hostile transcript carries in every field a page
// shows: markup that would run (setting window.pwned), links that would
// run, terminal escapes (an OSC 8 link, colours) and bidirectional
// controls. A page passes when window.pwned stays undefined and the text
// is shown as text.
var Payloads = []string{
	`<script>window.pwned="script"</script>`,
	`<img src=x onerror="window.pwned='onerror'">`,
	`<svg onload="window.pwned='svg'"><script>window.pwned='svg2'</script></svg>`,
	`<a href="javascript:window.pwned='link'" id="jslink">click</a>`,
	`"><iframe srcdoc="<script>parent.pwned='iframe'</script>">`,
	"\x1b]8;;javascript:window.pwned='osc8'\x1b\\osc link\x1b]8;;\x1b\\ \x1b[31mred\x1b[0m",
	"if (isAdmin) \u202e } \u2066 { begin admin only \u2069",
}

// Chromium returns the browser's executable ($TWASM_CHROMIUM, else
// Debian's), skipping the test when there is none, or failing it when
// $CI is set (CI must install it: .ci/run does).
func Chromium(t testing.TB) string {
	t.Helper()
	for _, p := range []string{os.Getenv("TWASM_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p == "" {
			continue
		}
		if _, err := exec.LookPath(p); err == nil {
			return p
		}
	}
	msg := "no Chromium: install Debian's chromium package (apt-get install chromium) to run the browser tests"
	if os.Getenv("CI") != "" {
		t.Fatal(msg + "; CI must install it (.ci/run does)")
	}
	t.Skip(msg)
	return ""
}

// Browser is a headless Chromium with a page's requests and problems
// recorded.
type Browser struct {
	Ctx      context.Context
	mu       sync.Mutex
	requests []string
	problems []string
}

// Do runs an action, failing t on an error (t is the test or subtest
// running it: FailNow must be called from its own goroutine).
func (b *Browser) Do(t testing.TB, a chromedp.Action[chromedp.Void]) {
	t.Helper()
	if _, err := chromedp.Run(b.Ctx, a); err != nil {
		t.Fatal(err)
	}
}

// Click clicks the first node sel matches as a person would, with the
// mouse at the node's place; SendKeys types keys into it. A page's script
// or a live update may replace the node between the query that found it
// and the click (CDP then answers that the node id is unknown, and
// nothing was clicked or typed): the action is tried again on the page
// as it is now, bounded only by the browser's context. Any other error
// fails t.
func (b *Browser) Click(t testing.TB, sel string) {
	t.Helper()
	b.retryStale(t, func() chromedp.Action[chromedp.Void] { return chromedp.Click(sel) })
}

// SendKeys types keys into the first node sel matches (see Click).
func (b *Browser) SendKeys(t testing.TB, sel, keys string) {
	t.Helper()
	b.retryStale(t, func() chromedp.Action[chromedp.Void] { return chromedp.SendKeys(sel, keys) })
}

func (b *Browser) retryStale(t testing.TB, action func() chromedp.Action[chromedp.Void]) {
	t.Helper()
	for {
		_, err := chromedp.Run(b.Ctx, action())
		if err == nil {
			return
		}
		if !staleNode(err) || b.Ctx.Err() != nil {
			t.Fatal(err)
		}
		_, _ = chromedp.Run(b.Ctx, chromedp.Sleep(50*time.Millisecond))
	}
}

// staleNode reports whether err is CDP's answer about a node that is no
// longer in the document, which the action found before it was replaced.
func staleNode(err error) bool {
	msg := err.Error()
	for _, s := range []string{"Could not find node with given id", "No node with given id found", "Node is detached from document", "Node with given id does not belong to the document"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// Num evaluates expr to a number, failing t on an error.
func (b *Browser) Num(t testing.TB, expr string) int {
	t.Helper()
	v, err := chromedp.Run(b.Ctx, chromedp.Evaluate[int](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// Str evaluates expr to a string, failing t on an error.
func (b *Browser) Str(t testing.TB, expr string) string {
	t.Helper()
	v, err := chromedp.Run(b.Ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// Open starts a browser for the test (ended with it). timeout bounds the
// whole test's browsing (a hang, never a measure).
func Open(t testing.TB, exe string, timeout time.Duration) *Browser {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true))
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	b := &Browser{Ctx: bctx}
	if err := chromedp.Listen(bctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			b.requests = append(b.requests, e.Request.URL)
		case *runtime.EventConsoleAPICalled:
			if e.Type == "error" || e.Type == "warning" || e.Type == "assert" {
				b.problems = append(b.problems, "console "+string(e.Type))
			}
		case *runtime.EventExceptionThrown:
			b.problems = append(b.problems, "exception: "+e.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError {
				b.problems = append(b.problems, "log: "+e.Entry.Text)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	return b
}

// Check fails the test if a page requested anything but addresses
// starting with one of allowed (and data: and about:blank), or reported
// a problem.
func (b *Browser) Check(t testing.TB, allowed ...string) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, u := range b.requests {
		ok := strings.HasPrefix(u, "data:") || u == "about:blank"
		for _, a := range allowed {
			ok = ok || strings.HasPrefix(u, a)
		}
		if !ok {
			t.Fatalf("the page made a request: %s (all: %v)", u, b.requests)
		}
	}
	if len(b.problems) > 0 {
		t.Fatalf("console errors: %v", b.problems)
	}
}

// Until evaluates expr until it is true: a wait for what the page
// shows, bounded only by the browser's context (a hang, never a
// measure). An evaluation that fails while a page is being replaced is
// tried again.
func (b *Browser) Until(t testing.TB, expr string) {
	t.Helper()
	for {
		ok, err := chromedp.Run(b.Ctx, chromedp.Evaluate[bool](expr))
		if err == nil && ok {
			return
		}
		if b.Ctx.Err() != nil {
			t.Fatalf("waiting for %s: %v (last error %v)", expr, b.Ctx.Err(), err)
		}
		_, _ = chromedp.Run(b.Ctx, chromedp.Sleep(50*time.Millisecond))
	}
}

// Problems returns the problems reported so far.
func (b *Browser) Problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.problems...)
}

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// The HTML export is checked in a real headless Chromium (Debian's
// package), driven over the DevTools protocol: what a person sees (the
// tree, a tool call with its result beside it, a diff, a folded thinking
// block, search), no console error, and no request leaving the page.

func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("TWASM_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p == "" {
			continue
		}
		if _, err := exec.LookPath(p); err == nil {
			return p
		}
	}
	msg := "no Chromium: install Debian's chromium package (apt-get install chromium) to run the HTML export test"
	if os.Getenv("CI") != "" {
		t.Fatal(msg + "; CI must install it (.ci/run does)")
	}
	t.Skip(msg)
	return ""
}

func recordRun(t *testing.T, storage, provider, file string, extra ...string) string {
	t.Helper()
	if !filepath.IsAbs(file) {
		file = filepath.Join(root, file)
	}
	args := append([]string{"--storage", storage, "record", "--json", "--provider", provider, "--input", file}, extra...)
	r := twasm(t, args...)
	var out struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(lastLine(r.out)), &out); err != nil || out.RunID == "" {
		t.Fatalf("record %s: %v\n%v", file, err, r)
	}
	return out.RunID
}

func TestExportHTMLInBrowser(t *testing.T) {
	exe := chromium(t)
	storage := t.TempDir()
	tools := recordRun(t, storage, "claude", "testdata/golden/claude/stream_json_tool_kinds.jsonl", "--prompt", "tidy the demo files")
	thinking := recordRun(t, storage, "claude", "testdata/golden/claude/session_log.jsonl")
	failed := recordRun(t, storage, "codex", "testdata/golden/codex/exec_command_failed.jsonl")
	page := filepath.Join(t.TempDir(), "run.html")
	twasmOK(t, "--storage", storage, "export", "html", "-o", page, tools, thinking, failed)

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true))
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()

	var mu sync.Mutex
	var requests, problems []string
	if err := chromedp.Listen(bctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			requests = append(requests, e.Request.URL)
		case *runtime.EventConsoleAPICalled:
			if e.Type == "error" || e.Type == "warning" || e.Type == "assert" {
				problems = append(problems, "console "+string(e.Type))
			}
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+e.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError {
				problems = append(problems, "log: "+e.Entry.Text)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	do := func(a chromedp.Action[chromedp.Void]) {
		t.Helper()
		if _, err := chromedp.Run(bctx, a); err != nil {
			t.Fatal(err)
		}
	}
	num := func(expr string) int {
		t.Helper()
		v, err := chromedp.Run(bctx, chromedp.Evaluate[int](expr))
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		return v
	}
	str := func(expr string) string {
		t.Helper()
		v, err := chromedp.Run(bctx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		return v
	}
	do(chromedp.Navigate("file://" + page))
	do(chromedp.WaitReady("#hits"))
	title, err := chromedp.Run(bctx, chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	runs := num(`document.querySelectorAll('#tree li.trun').length`)
	steps := num(`document.querySelectorAll('#tree li.tstep').length`)
	// The sub-agent's call_workflow step ("agent.<name>_<call id>") stands
	// under the agent step whose path it extends, not beside it.
	links := func(sel string) string {
		return str(`[].map.call(document.querySelectorAll('` + sel + `'),function(a){return a.textContent}).join(' ')`)
	}
	nested := links(`#tree li.tstep > ul > li.tstep > a`)
	topLevel := links(`#tree li.trun > ul > li.tstep > a`)
	slotted := num(`document.querySelectorAll('.tool .slot .result').length`)
	readResult := str(`(function(){var c=document.querySelector('[data-call$="-toolu_K1"]');if(!c)return '';var r=c.querySelector('.slot .result');return r?r.textContent:''})()`)
	diffAdd := num(`document.querySelectorAll('pre.diff .da').length`)
	diffDel := num(`document.querySelectorAll('pre.diff .dd').length`)
	thinkingTotal := num(`document.querySelectorAll('details.thinking').length`)
	thinkingClosed := num(`[].filter.call(document.querySelectorAll('details.thinking'),function(d){return !d.open && d.getBoundingClientRect().height<40}).length`)
	exitShown := str(`(function(){var e=document.querySelector('.result .exit');return e?e.textContent:''})()`)
	// Typing into the search box: its value changes and it fires input.
	str(`(function(){var q=document.getElementById('q');q.focus();q.value='Grep';q.dispatchEvent(new Event('input',{bubbles:true}));return 'typed'})()`)
	do(chromedp.Sleep(400 * time.Millisecond))
	hits := str(`document.getElementById('hits').textContent`)
	matching := num(`[].filter.call(document.querySelectorAll('.ev'),function(e){return !e.classList.contains('hide')}).length`)
	all := num(`document.querySelectorAll('.ev').length`)
	if matching >= all {
		t.Fatalf("search hid nothing: %d of %d events shown", matching, all)
	}
	if !strings.Contains(title, "twasm") {
		t.Fatalf("title %q", title)
	}
	if runs < 4 || steps < 3 {
		t.Fatalf("execution tree: %d runs, %d steps; want the 3 runs and a sub-agent run", runs, steps)
	}
	if !strings.HasPrefix(nested, "agent.") || strings.Contains(topLevel, ".") {
		t.Fatalf("steps under a step in the tree: %q, steps of a run: %q; want the sub-agent's call_workflow step under its agent step", nested, topLevel)
	}
	if slotted < 10 {
		t.Fatalf("%d results stand beside their calls", slotted)
	}
	if !strings.Contains(readResult, "hello") || !strings.Contains(readResult, "ok") {
		t.Fatalf("the Read call's result beside it: %q", readResult)
	}
	if diffAdd == 0 || diffDel == 0 {
		t.Fatalf("the Edit call is not a rendered diff (+%d -%d)", diffAdd, diffDel)
	}
	if thinkingTotal == 0 || thinkingClosed != thinkingTotal {
		t.Fatalf("thinking blocks: %d, folded: %d", thinkingTotal, thinkingClosed)
	}
	if !strings.Contains(exitShown, "exit") {
		t.Fatalf("the failed command's exit code is not shown: %q", exitShown)
	}
	if matching == 0 || !strings.Contains(hits, "matching") {
		t.Fatalf("search for Grep: %d events shown, hits %q", matching, hits)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, u := range requests {
		if !strings.HasPrefix(u, "file://"+page) && !strings.HasPrefix(u, "data:") && u != "about:blank" {
			t.Fatalf("the page made a request: %s (all: %v)", u, requests)
		}
	}
	if len(problems) > 0 {
		t.Fatalf("console errors: %v", problems)
	}
}

func TestExportHTMLRedacts(t *testing.T) {
	storage := t.TempDir()
	secret := "ghp_" + strings.Repeat("a1B2", 9)
	in := filepath.Join(t.TempDir(), "s.jsonl")
	src, err := os.ReadFile(filepath.Join(root, "testdata/golden/claude/stream_json_tool_kinds.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, []byte(strings.Replace(string(src), "go 1.26 release", "token "+secret, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	id := recordRun(t, storage, "claude", in)
	plain := twasmOK(t, "--storage", storage, "export", "html", id)
	if !strings.Contains(plain.out, secret) {
		t.Fatal("the secret is not in the transcript to begin with")
	}
	r := twasmOK(t, "--storage", storage, "export", "html", "--redact", id)
	if strings.Contains(r.out, secret) {
		t.Fatal("--redact left the secret in the page")
	}
	if !strings.Contains(r.errOut, "redacted: ") || strings.Contains(r.errOut, "nothing matched") {
		t.Fatalf("--redact does not say what it masked: %v", r.errOut)
	}
	// Fail closed: a transcript line that cannot be decoded cannot be
	// checked, so no page is written.
	p := transcriptPath(storage, id)
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString(`{"seq": "broken ` + secret + "\n")
	f.Close()
	out := filepath.Join(t.TempDir(), "x.html")
	r = twasm(t, "--storage", storage, "export", "html", "--redact", "-o", out, id)
	if r.code == 0 || !strings.Contains(r.errOut, "no page written") {
		t.Fatalf("an unredactable export must fail: %v", r)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatal("a failed redacted export left a page")
	}
}

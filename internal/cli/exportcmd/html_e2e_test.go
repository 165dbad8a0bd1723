package exportcmd_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/twasm/twasm/internal/testing/browsertest"
	"github.com/twasm/twasm/internal/testing/clitest"
)

// The HTML export is checked in a real headless Chromium (Debian's
// package), driven over the DevTools protocol: what a person sees (the
// tree, a tool call with its result beside it, a diff, a folded thinking
// block, search), no console error, and no request leaving the page.

func TestExportHTMLInBrowser(t *testing.T) {
	exe := browsertest.Chromium(t)
	storage := t.TempDir()
	tools := clitest.RecordAny(t, storage, "claude", clitest.Golden("claude", "stream_json_tool_kinds.jsonl"), "--prompt", "tidy the demo files")
	thinking := clitest.RecordAny(t, storage, "claude", clitest.Golden("claude", "session_log.jsonl"))
	failed := clitest.RecordAny(t, storage, "codex", clitest.Golden("codex", "exec_command_failed.jsonl"))
	page := filepath.Join(t.TempDir(), "run.html")
	clitest.RunOK(t, clitest.Plain(), "--storage", storage, "export", "html", "-o", page, tools, thinking, failed)

	b := browsertest.Open(t, exe, clitest.HangBound)
	do := func(a chromedp.Action[chromedp.Void]) { b.Do(t, a) }
	num := func(e string) int { return b.Num(t, e) }
	str := func(e string) string { return b.Str(t, e) }
	bctx := b.Ctx
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
	b.Check(t, "file://"+page)
}

func TestExportHTMLRedacts(t *testing.T) {
	storage := t.TempDir()
	secret := "ghp_" + strings.Repeat("a1B2", 9)
	in := filepath.Join(t.TempDir(), "s.jsonl")
	src, err := os.ReadFile(clitest.Golden("claude", "stream_json_tool_kinds.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, []byte(strings.Replace(string(src), "go 1.26 release", "token "+secret, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	id := clitest.RecordAny(t, storage, "claude", in)
	plain := clitest.RunOK(t, clitest.Plain(), "--storage", storage, "export", "html", id)
	if !strings.Contains(plain.Out, secret) {
		t.Fatal("the secret is not in the transcript to begin with")
	}
	r := clitest.RunOK(t, clitest.Plain(), "--storage", storage, "export", "html", "--redact", id)
	if strings.Contains(r.Out, secret) {
		t.Fatal("--redact left the secret in the page")
	}
	if !strings.Contains(r.ErrOut, "redacted: ") || strings.Contains(r.ErrOut, "nothing matched") {
		t.Fatalf("--redact does not say what it masked: %v", r.ErrOut)
	}
	// Fail closed: a transcript line that cannot be decoded cannot be
	// checked, so no page is written.
	p := clitest.TranscriptPath(storage, id)
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString(`{"seq": "broken ` + secret + "\n")
	f.Close()
	out := filepath.Join(t.TempDir(), "x.html")
	r = clitest.Run(t, clitest.Plain(), "--storage", storage, "export", "html", "--redact", "-o", out, id)
	if r.Code == 0 || !strings.Contains(r.ErrOut, "no page written") {
		t.Fatalf("an unredactable export must fail: %v", r)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatal("a failed redacted export left a page")
	}
}

// TestExportHTMLHostileInBrowser: a transcript whose prompt, messages,
// tool names, inputs, file names and outputs carry script tags, event
// handlers, javascript: links, SVG, terminal escapes and bidirectional
// overrides executes nothing in the page, shows the controls instead of
// obeying them, and the page's policy allows no inline script but its
// own.
func TestExportHTMLHostileInBrowser(t *testing.T) {
	exe := browsertest.Chromium(t)
	storage := t.TempDir()
	payloads := browsertest.Payloads
	hostile := strings.Join(payloads, " ")
	str := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	lines := []string{
		`{"type":"system","subtype":"init","cwd":"/work/x","session_id":"h1","tools":["Bash"],"model":"claude-sonnet-4-5","uuid":"u0"}`,
		`{"type":"assistant","message":{"model":"claude-sonnet-4-5","id":"msg_H1","type":"message","role":"assistant","content":[{"type":"text","text":` + str(hostile) + `},{"type":"tool_use","id":"toolu_H1","name":` + str(payloads[2]) + `,"input":{"file_path":` + str("/work/"+payloads[1]+"\u202egpj.exe") + `}},{"type":"tool_use","id":"toolu_H2","name":"Bash","input":{"command":` + str("echo "+hostile) + `}}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}},"session_id":"h1","uuid":"a1"}`,
		`{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_H1","type":"tool_result","content":` + str(hostile) + `,"is_error":true},{"tool_use_id":"toolu_H2","type":"tool_result","content":` + str(hostile) + `}]},"session_id":"h1","uuid":"u1"}`,
		`{"type":"result","subtype":"success","is_error":false,"duration_ms":10,"num_turns":1,"result":` + str(hostile) + `,"session_id":"h1","total_cost_usd":0.001,"usage":{"input_tokens":1,"output_tokens":1},"uuid":"r1"}`,
	}
	in := filepath.Join(t.TempDir(), "hostile.jsonl")
	if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	id := clitest.RecordAny(t, storage, "claude", in, "--prompt", hostile)
	page := filepath.Join(t.TempDir(), "hostile.html")
	clitest.RunOK(t, clitest.Plain(), "--storage", storage, "export", "html", "-o", page, id)
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	if strings.Contains(text, "unsafe-inline") {
		t.Fatal("the page's Content-Security-Policy allows inline script or style")
	}
	for _, c := range []string{"\x1b", "\u202e", "\u2066", "\u2069", "\u009d"} {
		if strings.Contains(text, c) {
			t.Fatalf("the page keeps the control %q", c)
		}
	}

	b := browsertest.Open(t, exe, clitest.HangBound)
	b.Do(t, chromedp.Navigate("file://"+page))
	b.Do(t, chromedp.WaitReady("#hits"))
	// The page's own script ran (it moves each result beside its call)...
	if n := b.Num(t, `document.querySelectorAll('.tool .slot .result').length`); n < 2 {
		t.Fatalf("the page's script did not run: %d results beside their calls", n)
	}
	// ...and nothing from the transcript did, nor became markup.
	for _, probe := range []string{
		`typeof window.pwned === 'undefined' ? '' : String(window.pwned)`,
		`document.querySelectorAll('main script, main img, main svg, main iframe, #jslink').length ? 'markup' : ''`,
		`[].filter.call(document.querySelectorAll('a[href]'), function(a){return !/^#/.test(a.getAttribute('href'))}).map(function(a){return a.href}).join(' ')`,
	} {
		if got := b.Str(t, probe); got != "" {
			t.Fatalf("%s: %q", probe, got)
		}
	}
	shown := b.Str(t, `document.querySelector('main').textContent`)
	for _, want := range []string{`<script>window.pwned="script"</script>`, "[U+202E]", "[U+2066]", "osc link", "red"} {
		if !strings.Contains(shown, want) {
			t.Fatalf("the page does not show %q as text", want)
		}
	}
	// Clicking every link and summary runs nothing either.
	b.Str(t, `(function(){document.querySelectorAll('summary, a').forEach(function(e){e.click()});return ''})()`)
	if got := b.Str(t, `typeof window.pwned === 'undefined' ? '' : String(window.pwned)`); got != "" {
		t.Fatalf("a click ran transcript code: %q", got)
	}
	b.Check(t, "file://"+page)
}

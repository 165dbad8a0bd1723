package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/twasm/twasm/internal/testing/browsertest"
)

// TestServeLiveRecord: twasm serve shows a run that twasm record --live
// is writing, in a real Chromium: the page opened mid-run shows the
// events so far, and the agent step's end appears in it when the agent
// goes on, without a reload; the list shows the run; SIGINT stops the
// server with exit 0.
func TestServeLiveRecord(t *testing.T) {
	exe := browsertest.Chromium(t)
	storage := t.TempDir()
	// A storage with no run yet (serve refuses a root with no
	// transcripts directory, as search does: a mistyped --storage).
	if err := os.Mkdir(filepath.Join(storage, "transcripts"), 0o700); err != nil {
		t.Fatal(err)
	}
	srv := start(t, nil, nil, "--storage", storage, "serve", "--addr", "127.0.0.1:0")
	var base string
	addr := regexp.MustCompile(`twasm serve: (http://127\.0\.0\.1:\d+)/`)
	waitFor(t, "serve to say its address", hangBound, func() bool {
		m := addr.FindStringSubmatch(srv.out.String())
		if m != nil {
			base = m[1]
		}
		return m != nil
	})

	gate := filepath.Join(t.TempDir(), "gate")
	rec := start(t, nil, fakeEnv(fakeInput, example(), fakeDelay, "10ms", fakeGateAfter, "5", fakeGate, gate, fakeExit, "0"),
		"--storage", storage, "record", "--provider", "claude", "--live", "--", fake)
	var id string
	waitFor(t, "a tool.call in the transcript while the agent runs", hangBound, func() bool {
		m, _ := filepath.Glob(filepath.Join(storage, "transcripts", "*.jsonl"))
		if len(m) != 1 {
			return false
		}
		b, _ := os.ReadFile(m[0])
		id = strings.TrimSuffix(filepath.Base(m[0]), ".jsonl")
		return strings.Contains(string(b), `"type":"tool.call"`)
	})

	b := browsertest.Open(t, exe, hangBound)
	b.Do(t, chromedp.Navigate(base+"/s/"+id))
	b.Until(t, `document.body.getAttribute('data-live-open') === '1' && document.querySelectorAll('main .tool').length > 0`)
	if n := b.Num(t, `document.querySelectorAll('footer.stepfoot').length`); n != 0 {
		t.Fatalf("the agent step is shown ended (%d footers) while the agent runs", n)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	b.Until(t, `document.querySelectorAll('footer.stepfoot').length > 0`)
	if r := rec.wait(t, hangBound); r.code != 0 {
		t.Fatalf("record: %v", r)
	}
	b.Do(t, chromedp.Navigate(base+"/"))
	b.Until(t, `!!document.querySelector('#runs tr[data-run="`+id+`"]')`)
	b.Check(t, base+"/")

	if err := srv.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if r := srv.wait(t, hangBound); r.code != 0 {
		t.Fatalf("serve after SIGINT: %v", r)
	}
}

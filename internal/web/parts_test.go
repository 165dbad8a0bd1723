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

const (
	longID    = "12121212-1212-4212-8212-121212121212"
	longChild = "34343434-3434-4434-8434-343434343434"
)

// longRun writes a run of 2,502 events: its agent step opened at seq 2,
// prompts, a tool call at seq 1,000 whose result is seq 1,001 (the
// first part's last event and the second's first), a child run's step
// (seq 1,500 and 1,501), the step's end (2,501) and the run's (2,502).
func longRun(t testing.TB) string {
	root := t.TempDir()
	viewstest.WriteStore(t, root)
	b := viewstest.NewBuilder(longID, "")
	b.Add(viewstest.Started("long"))
	b.Add(viewstest.Step(transcript.StepStarted, "agent", 0, &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent}))
	for b.Len() < 2500 {
		switch b.Len() + 1 {
		case 1000:
			b.Add(viewstest.Tool(transcript.ToolCall, "agent", &transcript.ToolPayload{Name: "Bash", CallID: "across", Kind: transcript.ToolExecute, Command: "make"}))
		case 1001:
			b.Add(viewstest.Tool(transcript.ToolResult, "agent", &transcript.ToolPayload{Name: "Bash", CallID: "across", Output: "built it", Status: transcript.StatusOK}))
		case 1500:
			b.Add(&transcript.Event{Type: transcript.StepCallWorkflowStarted, Path: "agent.sub", ChildRunID: longChild,
				Payload: &transcript.StepPayload{Name: "sub", Kind: transcript.KindCallWorkflow}})
		case 1501:
			b.Add(&transcript.Event{Type: transcript.StepCallWorkflowCompleted, Path: "agent.sub", ChildRunID: longChild,
				Payload: &transcript.StepPayload{Name: "sub", Kind: transcript.KindCallWorkflow, Status: transcript.StatusOK}})
		default:
			b.Add(viewstest.Msg(transcript.MessageUser, "agent", transcript.TextBlock("prompt number "+strconv.Itoa(b.Len()+1))))
		}
	}
	b.Add(viewstest.AgentDone(t, "agent", &transcript.AgentResult{Provider: "claude", Status: transcript.StatusOK}))
	b.Add(viewstest.Completed("long", transcript.StatusOK, ""))
	viewstest.WriteFile(t, filepath.Join(root, "transcripts", longID+".jsonl"), b.Bytes(t))
	c := viewstest.NewBuilder(longChild, longID)
	c.Add(viewstest.Started("the sub-run"))
	c.Add(viewstest.Msg(transcript.MessageAssistant, "task", transcript.TextBlock("done below")))
	c.Add(viewstest.Completed("the sub-run", transcript.StatusOK, ""))
	viewstest.WriteFile(t, filepath.Join(root, "transcripts", longChild+".jsonl"), c.Bytes(t))
	return root
}

// TestSessionParts: a long run's page shows one part of its events
// (partEvents by seq), with the steps open at its start opened again,
// links to the other parts, and a call whose result is in the next part
// saying so; every part closes what it opens.
func TestSessionParts(t *testing.T) {
	s := newServer(t, longRun(t), Options{})
	for _, tc := range []struct {
		target      string
		code        int
		has, hasNot []string
	}{
		{"/s/" + longID, 200,
			[]string{`id="seq-2"`, `id="seq-1000"`, "events 1–1000 of 2502 (part 1 of 3)", `href="/s/` + longID + `?part=2"`,
				`<div class="result" data-for="call-` + longID + `-across"><div class="pending">its result comes after this part</div></div>`},
			[]string{`id="seq-1001"`, "continued", "← earlier"}},
		{"/s/" + longID + "?part=2", 200,
			[]string{`id="seq-1001"`, `id="seq-2000"`, "built it", `<section class="step"><h3>agent <span class="dim">continued</span></h3>`,
				"events 1001–2000 of 2502 (part 2 of 3)", `<div class="subrun" id="child-` + longChild + `">`, `href="/s/` + longID + `?part=1"`, `href="/s/` + longID + `?part=3"`},
			[]string{`id="seq-1000"`, `id="seq-2001"`, "comes after this part"}},
		{"/s/" + longID + "?part=3", 200,
			[]string{`id="seq-2001"`, `id="seq-2500"`, "stepfoot", "events 2001–2502 of 2502 (part 3 of 3)"},
			[]string{`id="seq-2000"`, "later →"}},
		{"/s/" + longID + "?part=0", 400, nil, nil},
		{"/s/" + longID + "?part=two", 400, nil, nil},
	} {
		t.Run(tc.target, func(t *testing.T) {
			w := get(t, s, tc.target)
			if w.Code != tc.code {
				t.Fatalf("status %d, want %d: %.300s", w.Code, tc.code, w.Body)
			}
			body := w.Body.String()
			for _, want := range tc.has {
				if !strings.Contains(body, want) {
					t.Errorf("no %q", want)
				}
			}
			for _, not := range tc.hasNot {
				if strings.Contains(body, not) {
					t.Errorf("%q shown", not)
				}
			}
			if tc.code == 200 && strings.Count(body, "<section") != strings.Count(body, "</section>") {
				t.Errorf("%d sections opened, %d closed", strings.Count(body, "<section"), strings.Count(body, "</section>"))
			}
		})
	}
}

// TestEventHref: a search hit links to the part of its run's page that
// holds its event.
func TestEventHref(t *testing.T) {
	for _, tc := range []struct {
		seq  uint64
		want string
	}{
		{0, "/s/R#seq-0"},
		{1, "/s/R#seq-1"},
		{1000, "/s/R#seq-1000"},
		{1001, "/s/R?part=2#seq-1001"},
		{2500, "/s/R?part=3#seq-2500"},
	} {
		if got := eventHref("R", tc.seq); got != tc.want {
			t.Errorf("eventHref(%d) = %q, want %q", tc.seq, got, tc.want)
		}
	}
}

// TestLongRunInBrowser: a link to an event of a long run's later part
// (#seq-N with no part, as a person writes it) opens that part at the
// event, and so does a child run's link back to the step that started
// it; the part's links lead to the others; no page reports a problem.
func TestLongRunInBrowser(t *testing.T) {
	exe := browsertest.Chromium(t)
	base := serve(t, newServer(t, longRun(t), Options{}))
	b := browsertest.Open(t, exe, 5*time.Minute)
	b.Do(t, chromedp.Navigate(base+"/s/"+longID+"#seq-2400"))
	b.Until(t, `location.search === '?part=3' && location.hash === '#seq-2400' && document.readyState === 'complete' && !!document.getElementById('seq-2400')`)
	b.Until(t, `(function(){var r=document.getElementById('seq-2400').getBoundingClientRect();var h=document.querySelector('header').getBoundingClientRect();return r.top >= h.bottom - 1 && r.top < innerHeight})()`)
	if got := b.Str(t, `document.getElementById('seq-2400').textContent`); !strings.Contains(got, "prompt number 2400") {
		t.Fatalf("the event at #seq-2400: %q", got)
	}
	// The first part: the call's result is said to come later, and the
	// next part shows it beside nothing (its call is in the part before).
	b.Do(t, chromedp.Navigate(base+"/s/"+longID))
	b.Until(t, `document.readyState === 'complete' && !!document.querySelector('[data-slot] .pending')`)
	if got := b.Str(t, `document.querySelector('#seq-1000 [data-slot]').textContent`); got != "its result comes after this part" {
		t.Fatalf("the call's slot says %q", got)
	}
	b.Click(t, `nav.parts a[href$="?part=2"]`)
	b.Until(t, `location.search === '?part=2' && document.readyState === 'complete' && !!document.getElementById('seq-1001')`)
	// The child run's link back to its parent opens the part that holds
	// the step that started it.
	b.Do(t, chromedp.Navigate(base+"/s/"+longChild))
	b.Until(t, `document.readyState === 'complete' && !!document.getElementById('parent')`)
	b.Click(t, `#parent`)
	b.Until(t, `location.pathname === '/s/`+longID+`' && location.search === '?part=2' && location.hash === '#child-`+longChild+`' && document.readyState === 'complete' && !!document.getElementById('child-`+longChild+`')`)
	b.Check(t, base+"/")
}

//go:build !wasip1

package cline_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/cline"
)

// TestRewoundRequests: a checkpoint restore, or a message deleted or
// edited, cuts the UI's messages back (Roo Code's MessageManager
// performRewind, RooCodeInc/Roo-Code cb83656718: clineMessages.slice(0,
// toIndex)), and the task goes on: its next API request is written at an
// index a request the cut removed had. Each request is told by its ts:
// the one cut away was made and counts, and so does the one after it.
// The same request written again as it completes (its ts kept) counts
// once; without a ts, its index tells it.
func TestRewoundRequests(t *testing.T) {
	rewound, err := os.ReadFile(filepath.Join(goldenDir, "roo_rewound_task.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	const file = `{"$twasm":"file","path":"ui_messages.json","size":1,"mtime":"2026-03-01T10:00:10Z","document":true}`
	req := func(ts, figures string) string {
		if ts != "" {
			ts = `"ts":` + ts + `,`
		}
		return `{` + ts + `"type":"say","say":"api_req_started","text":"{\"request\":\"x\"` + figures + `}"}`
	}
	doc := func(els ...string) string { return file + "\n[" + strings.Join(els, ",") + "]" }
	const done = `,\"tokensIn\":100,\"tokensOut\":10,\"cacheWrites\":0,\"cacheReads\":0,\"cost\":0.01`
	tests := []struct {
		name        string
		in          string
		input, outp int64
	}{
		{"a rewound task: the request cut away and the one after it", string(rewound), 4250, 310},
		{"a request completed in place", strings.Join([]string{doc(req("1772359200100", "")), doc(req("1772359200100", done)), doc(req("1772359200100", done))}, "\n"), 100, 10},
		{"without ts, by its index", strings.Join([]string{doc(req("", "")), doc(req("", done)), doc(req("", done))}, "\n"), 100, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _, _, in := plugintest.Turns(t, cline.Plugin, "cline", []byte(tt.in+"\n"))
			out := int64(-1)
			if u := r.Step.Usage; u != nil && u.OutputTokens != nil {
				out = *u.OutputTokens
			}
			if in != tt.input || out != tt.outp {
				t.Errorf("usage in %d out %d; want %d, %d", in, out, tt.input, tt.outp)
			}
		})
	}
}

// TestRewoundUIOnly: a task folder holding only ui_messages.json (read
// from the UI's copy of the conversation) rewound and continued, in a
// later part: the messages after the rewind are the task's too, though
// they come at indices messages cut away had, under names of their own.
// Read whole, as one stream, the first part's conversation (written at
// the second part's facts line) comes first, the turn the rewind cut
// away included: it happened, and the first part's run holds it. (Sync
// replays the first part with its output dropped and leaves out what it
// holds, by the messages' ids: TestSyncRooRewoundUIOnly.)
func TestRewoundUIOnly(t *testing.T) {
	const facts = `{"$twasm":"source","store":"Roo Code tasks (Code)","path":"t1","name":"t1","size":1,"mtime":"2026-03-01T10:02:05Z"}`
	const file = `{"$twasm":"file","path":"ui_messages.json","size":1,"mtime":"2026-03-01T10:02:05Z","document":true}`
	say := func(ts, kind, text string) string {
		return `{"ts":` + ts + `,"type":"say","say":"` + kind + `","text":"` + text + `"}`
	}
	req := func(ts string) string {
		return say(ts, "api_req_started", `{\"tokensIn\":100,\"tokensOut\":10,\"cacheWrites\":0,\"cacheReads\":0,\"cost\":0.01}`)
	}
	first := []string{say("1772359200000", "text", "Add a test"), req("1772359200100"), say("1772359205000", "text", "Added TestParse."),
		say("1772359260000", "user_feedback", "Also cover empty input"), req("1772359260100"), say("1772359265000", "text", "Added an empty case.")}
	rewound := append(append([]string{}, first[:3]...), say("1772359320000", "user_feedback", "Cover nil instead"), req("1772359320100"), say("1772359325000", "text", "Added a nil case."))
	in := strings.Join([]string{facts, file, "[" + strings.Join(first, ",") + "]", facts, file, "[" + strings.Join(rewound, ",") + "]"}, "\n") + "\n"
	_, texts, _, input := plugintest.Turns(t, cline.Plugin, "cline", []byte(in))
	if want := "Added TestParse.|Added an empty case.|Added a nil case."; texts != want || input != 300 {
		t.Errorf("assistant texts %q, %d input tokens; want %q, 300", texts, input, want)
	}
}

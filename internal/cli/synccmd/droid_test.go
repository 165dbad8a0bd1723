package synccmd_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// TestSyncDroidSession: a home directory with a Factory Droid session in
// its default store (~/.factory/sessions/<cwd>/<id>.jsonl) and its
// settings document beside it (<id>.settings.json, the session's usage).
// `twasm doctor` lists the store with the session not archived; `twasm
// sync` archives it with the settings' usage and model; a second sync
// archives nothing; the session grown by its next messages, and its
// settings rewritten with the new totals, add one part to the same run
// whose usage is the difference; doctor then says archived.
func TestSyncDroidSession(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	session, settings := droidFiles(t, "session_settings_tools.jsonl")
	id := droidParent
	dir := droidDir
	h.Put(filepath.Join(dir, id+".jsonl"), bytes.Join(session[:4], nil), time.Hour) // up to the first results
	h.Put(filepath.Join(dir, id+".settings.json"),
		[]byte(`{"model":"claude-sonnet-4-5-20250929","providerLock":"anthropic","tokenUsage":{"inputTokens":2100,"outputTokens":300,"cacheCreationTokens":18034,"cacheReadTokens":20000,"thinkingTokens":64}}`), time.Hour)

	store := filepath.Join(h.Dir, ".factory", "sessions")
	doctor := func() map[string]doctorStore { t.Helper(); return doctorStores(t, h, store) }
	sync := func(what string, want map[string]int) map[string][]string {
		t.Helper()
		return syncWant(t, h, store, what, want)
	}
	if s := doctor()["Factory Droid sessions"]; !s.Found || s.Sessions != 1 || s.NotArchived != 1 || s.Provider != "droid" || s.Dir != store {
		t.Fatalf("doctor before sync: %+v", s)
	}
	sync("first sync", map[string]int{"new": 1})
	sync("second sync with nothing new", nothing)
	h.Put(filepath.Join(dir, id+".jsonl"), bytes.Join(session, nil), 30*time.Minute)
	h.Put(filepath.Join(dir, id+".settings.json"), settings, 30*time.Minute)
	got := sync("sync after the session went on", map[string]int{"grown": 1})
	if s := doctor()["Factory Droid sessions"]; s.Archived != 1 || s.NotArchived != 0 {
		t.Errorf("doctor after sync: %+v", s)
	}

	r := tallyRun(t, clitest.TranscriptPath(h.Stor, got0(t, got["grown"])))
	if len(r.parts) != 2 || len(r.calls) != 4 {
		t.Fatalf("run: %d parts, %d calls (want 2, 4)", len(r.parts), len(r.calls))
	}
	if res := r.results["toolu_01"]; res == nil || res.Status != "error" || res.ExitCode == nil || *res.ExitCode != 1 {
		t.Errorf("the failed test run: %+v", res)
	}
	// The parts' usage adds up to the settings' last totals: output
	// 612 + 128 thinking, counted once.
	if r.output != 740 {
		t.Errorf("output tokens over the parts: %d, the settings state 612 + 128 thinking", r.output)
	}
	last := r.parts[len(r.parts)-1]
	if last.SessionID != id || last.Model != "claude-sonnet-4-5-20250929" {
		t.Errorf("session %q, model %q", last.SessionID, last.Model)
	}
}

// droidFiles splits a droid golden input, the stream the host hands the
// plugin (a file line, the session's lines, a file line, the settings
// document), back into the session's lines and its settings document.
func droidFiles(t *testing.T, golden string) (session [][]byte, settings []byte) {
	t.Helper()
	for _, f := range clitest.ReadGoldenSource(t, "droid", golden).Files {
		// Each line as the agent wrote it, with its newline.
		data := append(f.Data, '\n')
		if strings.HasSuffix(f.Path, ".settings.json") {
			settings = data
			continue
		}
		session = bytes.SplitAfter(data, []byte("\n"))
		session = session[:len(session)-1]
	}
	return session, settings
}

// droidParent is the session of golden session_settings_tools.jsonl,
// whose Task call toolu_03 ("inspect the fixture") started the
// sub-session of golden session_task_subsession.jsonl (droidSub), both
// in droidDir of a home.
const (
	droidParent = "3f1c2b7e-6a4d-4f0e-9b8a-1c2d3e4f5a6b"
	droidSub    = "9d2e4c61-7b8a-4f35-a0c2-5e6f7a8b9c0d"
	droidDir    = ".factory/sessions/-home-me-proj"
)

// TestSyncDroidTaskSubSession: a Factory Droid session whose Task call
// (toolu_03) started a sub-session, a session file of its own beside it
// whose session_start names the session and the call (callingSessionId,
// callingToolUseId: the shape of a Droid Worker session's first line in
// entireio/cli's tests; no licensed real sub-session file is public, so
// the sub-session's lines are written by hand, golden
// session_task_subsession.jsonl). `twasm sync` archives the sub-session
// as a child run of the session's run, linked in the agent step at the
// Task call (path agent.<sub-session id>_toolu_03, named by the call's
// description, in the part that holds the call), whether the store
// lists the sub-session before its session (its id sorts first), after
// it, or the sub-session appears after two parts of the session were
// synced, the call in the first; ls lists the session alone, its
// sub_run_usage the sub-session's settings' tokens, tree counts the
// child run and its call, and renormalize rebuilds it with the session's
// run. Before, the sub-session was a session of its own, its tokens in
// no session's totals.
func TestSyncDroidTaskSubSession(t *testing.T) {
	t.Parallel()
	session, settings := droidFiles(t, "session_settings_tools.jsonl")
	sub, subSettings := droidFiles(t, "session_task_subsession.jsonl")
	for _, c := range []struct {
		name, subID string
		// later: the session is synced in two parts, the Task call and
		// its result in the first, before the sub-session is written.
		later bool
	}{
		{name: "sub-session listed first", subID: "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"},
		{name: "sub-session listed after its session", subID: "fa1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"},
		{name: "sub-session written after two parts of its session", subID: droidSub, later: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := clitest.NewHome(t)
			store := filepath.Join(h.Dir, ".factory", "sessions")
			parentPath := h.Put(filepath.Join(droidDir, droidParent+".jsonl"), bytes.Join(session, nil), time.Hour)
			h.Put(filepath.Join(droidDir, droidParent+".settings.json"), settings, time.Hour)
			putSub := func() string {
				p := h.Put(filepath.Join(droidDir, c.subID+".jsonl"), bytes.ReplaceAll(bytes.Join(sub, nil), []byte(droidSub), []byte(c.subID)), time.Hour)
				h.Put(filepath.Join(droidDir, c.subID+".settings.json"), subSettings, time.Hour)
				return p
			}
			var subPath string
			runs := map[string]string{} // path -> run id
			syncNew := func(what string, want int) {
				t.Helper()
				var r clitest.Result
				clitest.Unchanged(t, store, "sync", func() { r = h.OK("sync") })
				n := 0
				for _, l := range strings.Split(strings.TrimSpace(r.Out), "\n") {
					if f := strings.Split(l, "\t"); len(f) >= 4 && f[0] == "new" {
						runs[f[3]] = f[1]
						n++
					}
				}
				if n != want || len(clitest.Outcomes(r.Out)) != 1 {
					t.Fatalf("%s: want %d new runs and nothing else: %v", what, want, r)
				}
			}
			if c.later {
				h.Put(filepath.Join(droidDir, droidParent+".jsonl"), bytes.Join(session[:6], nil), time.Hour) // up to the Task's result
				syncNew("sync of the session alone", 1)
				h.Put(filepath.Join(droidDir, droidParent+".jsonl"), bytes.Join(session, nil), 30*time.Minute)
				syncWant(t, h, store, "sync of the session's second part", map[string]int{"grown": 1})
				subPath = putSub()
				syncNew("sync after the sub-session was written", 1)
			} else {
				subPath = putSub()
				syncNew("sync", 2)
			}
			parent, child := runs[parentPath], runs[subPath]
			if parent == "" || child == "" {
				t.Fatalf("runs %v: want the session's and the sub-session's", runs)
			}
			// Linked at the Task call: in the agent step that holds it,
			// named by the call's description.
			wantLinkedAt(t, h, parent, child, "toolu_03", "agent."+c.subID+"_toolu_03", "inspect the fixture")

			// ls: the session alone, the sub-session's tokens (its
			// settings': 900 uncached input, 120 output) its sub-runs'.
			row := lsRow(t, h, parent)
			if row.SubRunUsage["uncached_input_tokens"] != 900 || row.SubRunUsage["output_tokens"] != 120 ||
				row.UsageInAll["uncached_input_tokens"] != 4210+900 || row.UsageInAll["output_tokens"] != 740+120 {
				t.Errorf("ls --json: sub_run_usage %v, usage_in_all %v; want the sub-session's 900 uncached input and 120 output, in all 5110 and 860", row.SubRunUsage, row.UsageInAll)
			}
			wantSubRuns(t, h, parent, 1, 1)
			// Linked in the agent step, the sub-session's run is rebuilt
			// with the session's (a link at path "subagent" is left out).
			wantRenormalized(t, h, parent)
		})
	}
}

package synccmd_test

import (
	"bytes"
	"path/filepath"
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
	// The golden input is the stream the host hands the plugin: the
	// session's lines, then the settings document; split them back
	// into the two files.
	var session [][]byte
	var settings []byte
	inSettings := false
	for _, l := range bytes.SplitAfter(clitest.ReadFile(t, clitest.Golden("droid", "session_settings_tools.jsonl")), []byte("\n")) {
		switch {
		case bytes.HasPrefix(l, []byte(`{"$twasm":"file"`)):
			inSettings = bytes.Contains(l, []byte(".settings.json"))
		case inSettings && len(l) > 0:
			settings = l
		case len(l) > 0:
			session = append(session, l)
		}
	}
	id := "3f1c2b7e-6a4d-4f0e-9b8a-1c2d3e4f5a6b"
	dir := filepath.Join(".factory", "sessions", "-home-me-proj")
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

package synccmd_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// TestSyncDroppedInPlugin: an external plugin for an agent twasm has never
// heard of declares its store in its manifest (ABI 1.4); dropped into the
// plugin directory, `twasm doctor` lists the store and `twasm sync`
// archives its sessions, with no rebuild and no config file, twice with
// nothing new the second time, and the agent's files are left exactly as
// they were. A plugin built for ABI 1.3 (no stores in its manifest) beside
// it still loads and syncs a store the config file names.
func TestSyncDroppedInPlugin(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	dropPlugin(t, h, filepath.Join(clitest.Root, "host", "testdata", "madeup"), "madeup")
	dropPlugin(t, h, filepath.Join(clitest.Root, "host", "testdata", "abiv13"), "old")
	h.Put(".madeup/sessions/proj-a/s1.log.jsonl", []byte(`{"text":"hello"}`+"\n"+`{"text":"world"}`+"\n"), time.Hour)
	h.Put(".madeup/sessions/proj-b/s2.log.jsonl", []byte(`{"text":"another session, its own content"}`+"\n"), time.Hour)
	h.Put(".madeup/sessions/proj-b/notes.jsonl", []byte(`{"text":"not a session file"}`+"\n"), time.Hour)
	h.Put("old-agent/x.jsonl", []byte(`{"text":"an old plugin's session"}`+"\n"), time.Hour)
	h.Put(".config/twasm/sync.json", []byte(`{"stores":[{"provider":"old","dir":"~/old-agent"}]}`), time.Hour)
	agentFiles := func() map[string]string {
		all := clitest.HashTree(t, filepath.Join(h.Dir, ".madeup"))
		for k, v := range clitest.HashTree(t, filepath.Join(h.Dir, "old-agent")) {
			all[k] = v
		}
		return all
	}
	before := agentFiles()

	r := h.OK("doctor", "--json")
	var doc struct {
		Stores []struct {
			Name, Provider, Plugin, Dir, From string
			Found                             bool
			Sessions                          int
			NotArchived                       int `json:"not_archived"`
			RetentionDays                     int `json:"retention_days"`
		}
	}
	if err := json.Unmarshal([]byte(r.Out), &doc); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, r.Out)
	}
	byName := map[string]int{}
	for i, s := range doc.Stores {
		byName[s.Name] = i
		if s.Provider == "old" && s.Name != "old (config)" {
			t.Errorf("the 1.3 plugin declared no store, yet doctor lists %+v", s)
		}
	}
	i, ok := byName["Madeup sessions"]
	if !ok {
		t.Fatalf("doctor does not list the dropped-in plugin's store:\n%s", r.Out)
	}
	if s := doc.Stores[i]; !s.Found || s.Sessions != 2 || s.NotArchived != 2 || s.Provider != "madeup" || s.Plugin != "madeup" ||
		s.Dir != filepath.Join(h.Dir, ".madeup", "sessions") || s.From != "default" || s.RetentionDays != 14 {
		t.Errorf("madeup store: %+v", s)
	}
	if _, ok := byName["Claude Code projects"]; !ok {
		t.Errorf("the bundled stores are gone:\n%s", r.Out)
	}
	r = h.OK("doctor")
	if !strings.Contains(r.Out, "Madeup sessions") || !strings.Contains(r.Out, "after 14 days:") {
		t.Errorf("doctor:\n%s", r.Out)
	}

	r = h.OK("sync")
	got := clitest.Outcomes(r.Out)
	if len(got["new"]) != 3 || !strings.Contains(r.Out, "\tmadeup\t") || !strings.Contains(r.Out, "\told\t") {
		t.Fatalf("first sync: %v", r)
	}
	var files []string
	for _, id := range got["new"] {
		files = append(files, clitest.TranscriptPath(h.Stor, id))
	}
	clitest.Validate(t, files...)
	for _, f := range files {
		b := string(clitest.ReadFile(t, f))
		if strings.Contains(b, `"provider":"madeup"`) && !strings.Contains(b, "hello") && !strings.Contains(b, "another session") {
			t.Errorf("%s holds no message of its session", f)
		}
	}
	syncWant(t, h, h.Dir, "second sync", nothing)
	r = h.OK("doctor", "--json")
	if !strings.Contains(r.Out, `"name":"Madeup sessions"`) || !strings.Contains(r.Out, `"archived":2`) {
		t.Errorf("doctor after sync: %s", r.Out)
	}

	after := agentFiles()
	if len(before) != 4 || len(after) != len(before) {
		t.Fatalf("agent files: %d before, %d after", len(before), len(after))
	}
	for p, s := range before {
		if after[p] != s {
			t.Errorf("%s changed: %s -> %s", p, s, after[p])
		}
	}
}

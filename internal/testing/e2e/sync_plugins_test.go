package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
	"github.com/twasm/twasm/internal/tools/wasmbuild"
)

// dropPlugin builds the test plugin in dir and drops it into the user's
// plugin directory of h ($XDG_CONFIG_HOME/twasm/plugins).
func (h *fakeHome) dropPlugin(dir, name string) {
	h.t.Helper()
	b := wasmbuild.ForTest(h.t, dir)
	h.put(filepath.Join(".config", "twasm", "plugins", name+".wasm"), b, time.Hour)
}

// hashTree returns the sha256 of every regular file under dir, by path.
func hashTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	return clitest.HashTree(t, dir)
}

// unchangedBy runs cmd and fails the test for every file under dir that
// cmd added, removed or changed (its bytes, modification time or mode):
// twasm reads an agent's store, it never writes there.
func unchangedBy(t *testing.T, dir, what string, cmd func()) {
	t.Helper()
	clitest.Unchanged(t, dir, what, cmd)
}

// doctorStore is one store of `twasm doctor --json`.
type doctorStore = clitest.DoctorStore

// doctorStores runs `twasm doctor --json`, which must leave the agent's
// files under dir as they were, and returns its stores by name.
func (h *fakeHome) doctorStores(dir string) map[string]doctorStore {
	h.t.Helper()
	var r result
	unchangedBy(h.t, dir, "doctor", func() { r = h.ok("doctor", "--json") })
	return clitest.DoctorStores(h.t, r.out)
}

// syncOutcomes runs `twasm sync`, which must leave the agent's files
// under dir as they were, and returns its outcomes (outcomes).
func (h *fakeHome) syncOutcomes(dir string) map[string][]string {
	h.t.Helper()
	var r result
	unchangedBy(h.t, dir, "sync", func() { r = h.ok("sync") })
	return outcomes(r.out)
}

// TestSyncDroppedInPlugin: an external plugin for an agent twasm has never
// heard of declares its store in its manifest (ABI 1.4); dropped into the
// plugin directory, `twasm doctor` lists the store and `twasm sync`
// archives its sessions, with no rebuild and no config file, twice with
// nothing new the second time, and the agent's files are left exactly as
// they were. A plugin built for ABI 1.3 (no stores in its manifest) beside
// it still loads and syncs a store the config file names.
func TestSyncDroppedInPlugin(t *testing.T) {
	t.Parallel()
	h := newFakeHome(t)
	h.dropPlugin(filepath.Join(root, "host", "testdata", "madeup"), "madeup")
	h.dropPlugin(filepath.Join(root, "host", "testdata", "abiv13"), "old")
	h.put(".madeup/sessions/proj-a/s1.log.jsonl", []byte(`{"text":"hello"}`+"\n"+`{"text":"world"}`+"\n"), time.Hour)
	h.put(".madeup/sessions/proj-b/s2.log.jsonl", []byte(`{"text":"another session, its own content"}`+"\n"), time.Hour)
	h.put(".madeup/sessions/proj-b/notes.jsonl", []byte(`{"text":"not a session file"}`+"\n"), time.Hour)
	h.put("old-agent/x.jsonl", []byte(`{"text":"an old plugin's session"}`+"\n"), time.Hour)
	h.put(".config/twasm/sync.json", []byte(`{"stores":[{"provider":"old","dir":"~/old-agent"}]}`), time.Hour)
	agentFiles := func() map[string]string {
		all := hashTree(t, filepath.Join(h.dir, ".madeup"))
		for k, v := range hashTree(t, filepath.Join(h.dir, "old-agent")) {
			all[k] = v
		}
		return all
	}
	before := agentFiles()

	r := h.ok("doctor", "--json")
	var doc struct {
		Stores []struct {
			Name, Provider, Plugin, Dir, From string
			Found                             bool
			Sessions                          int
			NotArchived                       int `json:"not_archived"`
			RetentionDays                     int `json:"retention_days"`
		}
	}
	if err := json.Unmarshal([]byte(r.out), &doc); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, r.out)
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
		t.Fatalf("doctor does not list the dropped-in plugin's store:\n%s", r.out)
	}
	if s := doc.Stores[i]; !s.Found || s.Sessions != 2 || s.NotArchived != 2 || s.Provider != "madeup" || s.Plugin != "madeup" ||
		s.Dir != filepath.Join(h.dir, ".madeup", "sessions") || s.From != "default" || s.RetentionDays != 14 {
		t.Errorf("madeup store: %+v", s)
	}
	if _, ok := byName["Claude Code projects"]; !ok {
		t.Errorf("the bundled stores are gone:\n%s", r.out)
	}
	r = h.ok("doctor")
	if !strings.Contains(r.out, "Madeup sessions") || !strings.Contains(r.out, "after 14 days:") {
		t.Errorf("doctor:\n%s", r.out)
	}

	r = h.ok("sync")
	got := outcomes(r.out)
	if len(got["new"]) != 3 || !strings.Contains(r.out, "\tmadeup\t") || !strings.Contains(r.out, "\told\t") {
		t.Fatalf("first sync: %v", r)
	}
	var files []string
	for _, id := range got["new"] {
		files = append(files, transcriptPath(h.stor, id))
	}
	validate(t, files...)
	for _, f := range files {
		b := string(readFile(t, f))
		if strings.Contains(b, `"provider":"madeup"`) && !strings.Contains(b, "hello") && !strings.Contains(b, "another session") {
			t.Errorf("%s holds no message of its session", f)
		}
	}
	r = h.ok("sync")
	if got := outcomes(r.out); len(got) != 0 || !strings.Contains(r.errOut, "0 new") {
		t.Errorf("second sync: %v", r)
	}
	r = h.ok("doctor", "--json")
	if !strings.Contains(r.out, `"name":"Madeup sessions"`) || !strings.Contains(r.out, `"archived":2`) {
		t.Errorf("doctor after sync: %s", r.out)
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

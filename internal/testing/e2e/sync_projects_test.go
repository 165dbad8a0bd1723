package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runProjects are the runs `twasm ls --json` lists, each with its
// project as ls shows it ("" for none).
func (h *fakeHome) runProjects() map[string]string {
	h.t.Helper()
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(h.ok("ls", "--json").out), "\n") {
		var row struct {
			RunID   string `json:"run_id"`
			Project string `json:"project"`
		}
		if err := json.Unmarshal([]byte(line), &row); err != nil || row.RunID == "" {
			h.t.Fatalf("ls --json line %q: %v", line, err)
		}
		out[row.RunID] = row.Project
	}
	return out
}

// usageByProject is `twasm usage --by project --json`: the sessions of
// each project ("(no project)" for those that state none).
func (h *fakeHome) usageByProject() map[string]int {
	h.t.Helper()
	r := h.ok("usage", "--by", "project", "--json")
	var rep struct {
		Groups []struct {
			Key      string
			Sessions int
		}
	}
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		h.t.Fatalf("usage --by project --json: %v\n%s", err, r.out)
	}
	out := map[string]int{}
	for _, g := range rep.Groups {
		out[g.Key] += g.Sessions
	}
	return out
}

// TestSyncABI17Plugin: a plugin built for ABI 1.7 (its version, its
// manifest's shape: a store in every project directory, the facts line
// asked for) dropped into the plugin directory still loads and syncs on
// this host, whose facts line has a member it never knew (project, ABI
// 1.8): the plugin gets it (it echoes every line) and works as before,
// and its run states no project, since the plugin reports none (the host
// does not put words in an older plugin's mouth).
func TestSyncABI17Plugin(t *testing.T) {
	t.Parallel()
	h := newFakeHome(t)
	h.dropPlugin(filepath.Join(root, "host", "testdata", "abiv17"), "old17")
	repo := filepath.Join(h.dir, "src", "app")
	h.put(filepath.Join("src", "app", ".old17.jsonl"), []byte(`{"text":"hello"}`+"\n"), time.Hour)
	cfg, err := json.Marshal(map[string]any{"projects": []string{repo}})
	if err != nil {
		t.Fatal(err)
	}
	h.put(filepath.Join(".config", "twasm", "sync.json"), cfg, time.Hour)

	got := h.syncOutcomes(repo)
	if len(got["new"]) != 1 || len(got) != 1 {
		t.Fatalf("sync: want the 1.7 plugin's session new: %v", got)
	}
	run := got["new"][0]
	tr := transcriptPath(h.stor, run)
	validate(t, tr)
	b := string(readFile(t, tr))
	for _, want := range []string{`{\"$twasm\":\"source\",\"store\":\"Old17 history\"`, `\"project\":\"` + repo + `\"`, `{\"text\":\"hello\"}`} {
		if !strings.Contains(b, want) {
			t.Errorf("the 1.7 plugin's run lacks %s:\n%s", want, b)
		}
	}
	if p, ok := h.runProjects()[run]; !ok || p != "" {
		t.Errorf("ls: run %s project %q (listed %v), want listed with none", run, p, ok)
	}
	if got := h.syncOutcomes(repo); len(got) != 0 {
		t.Errorf("second sync: %v", got)
	}
}

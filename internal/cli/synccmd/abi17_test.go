package synccmd_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// TestSyncABI17Plugin: a plugin built for ABI 1.7 (its version, its
// manifest's shape: a store in every project directory, the facts line
// asked for) dropped into the plugin directory still loads and syncs on
// this host, whose facts line has a member it never knew (project, ABI
// 1.8): the plugin gets it (it echoes every line) and works as before,
// and its run states no project, since the plugin reports none (the host
// does not put words in an older plugin's mouth).
func TestSyncABI17Plugin(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	dropPlugin(t, h, filepath.Join(clitest.Root, "host", "testdata", "abiv17"), "old17")
	repo := filepath.Join(h.Dir, "src", "app")
	h.Put(filepath.Join("src", "app", ".old17.jsonl"), []byte(`{"text":"hello"}`+"\n"), time.Hour)
	cfg, err := json.Marshal(map[string]any{"projects": []string{repo}})
	if err != nil {
		t.Fatal(err)
	}
	h.Put(filepath.Join(".config", "twasm", "sync.json"), cfg, time.Hour)

	got := syncWant(t, h, repo, "sync: the 1.7 plugin's session", map[string]int{"new": 1})
	run := got["new"][0]
	b := runText(t, h, run)
	for _, want := range []string{`{\"$twasm\":\"source\",\"store\":\"Old17 history\"`, `\"project\":\"` + repo + `\"`, `{\"text\":\"hello\"}`} {
		if !strings.Contains(b, want) {
			t.Errorf("the 1.7 plugin's run lacks %s:\n%s", want, b)
		}
	}
	if p, ok := runProjects(t, h)[run]; !ok || p != "" {
		t.Errorf("ls: run %s project %q (listed %v), want listed with none", run, p, ok)
	}
	syncWant(t, h, repo, "second sync", nothing)
}

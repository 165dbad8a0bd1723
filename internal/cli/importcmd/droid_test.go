package importcmd_test

import (
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// TestImportDroidSettings: `twasm import` of a Factory Droid session file
// in its store's layout (<sessions>/<cwd>/<id>.jsonl) reads the settings
// document beside it (<id>.settings.json, the session's usage and
// model) as `twasm sync` does, through the store's declaration: the
// tokens stats and usage count, and the model, are sync's, whether the
// provider is named or detected, and a sync after the import finds the
// session archived. Before, import read the JSONL alone: no usage.
func TestImportDroidSettings(t *testing.T) {
	t.Parallel()
	const (
		dir = ".factory/sessions/-home-me-proj/"
		id  = "3f1c2b7e-6a4d-4f0e-9b8a-1c2d3e4f5a6b"
	)
	var files [][]byte // the golden input's files, as the host hands them
	for _, l := range strings.SplitAfter(string(clitest.ReadFile(t, clitest.Golden("droid", "session_settings_tools.jsonl"))), "\n") {
		switch {
		case strings.HasPrefix(l, `{"$twasm":"file"`):
			files = append(files, nil)
		case l != "":
			files[len(files)-1] = append(files[len(files)-1], l...)
		}
	}
	if len(files) != 2 {
		t.Fatalf("the golden input holds %d files, want the session and its settings", len(files))
	}
	put := func(h *clitest.Home) string {
		t.Helper()
		p := h.Put(dir+id+".jsonl", files[0], time.Hour)
		h.Put(dir+id+".settings.json", files[1], time.Hour)
		return p
	}
	hs := clitest.NewHome(t)
	put(hs)
	hs.OK("sync")
	want := totalsOf(t, hs)
	if want.statsOut == 0 || want.usageOut != want.statsOut || want.sessions != 1 {
		t.Fatalf("sync's totals: %+v, want the settings' tokens in one session", want)
	}
	for _, provider := range []string{"droid", "auto"} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			h := clitest.NewHome(t)
			p := put(h)
			h.OK("import", "--provider", provider, p)
			if got := totalsOf(t, h); got != want {
				t.Errorf("import's totals %+v, sync's %+v", got, want)
			}
			var ids []string
			for _, l := range strings.Split(strings.TrimSpace(h.OK("ls", "--json").Out), "\n") {
				ids = append(ids, strings.SplitN(strings.TrimPrefix(l, `{"run_id":"`), `"`, 2)[0])
			}
			if len(ids) != 1 || !strings.Contains(string(clitest.ReadFile(t, clitest.TranscriptPath(h.Stor, ids[0]))), `"model":"claude-sonnet-4-5-20250929"`) {
				t.Errorf("the imported run (%v) lacks the settings' model", ids)
			}
			if got := clitest.Outcomes(h.OK("sync").Out); len(got["new"]) != 0 || len(got["grown"]) != 0 || len(got["continued"]) != 0 {
				t.Errorf("sync after the import archives the session again: %v", got)
			}
		})
	}
}

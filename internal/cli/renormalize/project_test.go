package renormalize_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
	"github.com/twasm/twasm/transcript"
)

// TestAiderProject: an Aider chat history sits in its repository, and
// the runs imported from it are that project's. Imported session by
// session, each run's agent step states the file's directory as its
// project (the facts line import now gives the plugin); imported whole
// (--whole, no facts line, as every import did before) it states none,
// and renormalize gives the rebuild the project from the file the run
// names as its source, saying so, while the original is superseded:
// usage counts the session once, under the project.
func TestAiderProject(t *testing.T) {
	t.Parallel()
	history := clitest.ReadFile(t, filepath.Join(clitest.Root, "testdata", "captures", "aider", "coding_aider_edits_commits.md"))
	for _, c := range []struct {
		name        string
		whole       bool
		wantImport  bool // the imported run states the project
		wantWarning bool // renormalize says where the project came from
	}{
		{name: "session by session", wantImport: true},
		{name: "whole", whole: true, wantWarning: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := clitest.NewHome(t)
			repo := filepath.Join(h.Dir, "src", "app")
			file := h.Put(filepath.Join("src", "app", ".aider.chat.history.md"), history, time.Hour)
			args := []string{"import", "--provider", "aider", "--json", file}
			if c.whole {
				args = append(args, "--whole")
			}
			var first struct {
				RunID      string `json:"run_id"`
				Transcript string `json:"transcript"`
			}
			out := h.OK(args...).Out
			if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &first); err != nil {
				t.Fatalf("import: %v\n%s", err, out)
			}
			if got := agentResult(t, first.Transcript).ProjectDir(); (got == repo) != c.wantImport || got != "" && got != repo {
				t.Fatalf("imported run's project %q, want %q: %v", got, map[bool]string{true: repo}[c.wantImport], c.wantImport)
			}
			var sum struct {
				Transcript string `json:"transcript"`
			}
			if err := json.Unmarshal([]byte(h.OK("renormalize", "--json", first.RunID).Out), &sum); err != nil {
				t.Fatal(err)
			}
			res := agentResult(t, sum.Transcript)
			warned := false
			for _, w := range res.Warnings {
				warned = warned || strings.Contains(w, "project "+repo+": the directory of the session's file")
			}
			if res.ProjectDir() != repo || warned != c.wantWarning {
				t.Errorf("rebuild: project %q warnings %q, want %q (a warning: %v)", res.ProjectDir(), res.Warnings, repo, c.wantWarning)
			}
			var rep struct {
				Groups []struct {
					Key      string
					Sessions int
				}
			}
			if err := json.Unmarshal([]byte(h.OK("usage", "--by", "project", "--json").Out), &rep); err != nil {
				t.Fatal(err)
			}
			if len(rep.Groups) != 1 || rep.Groups[0].Key != repo || c.whole && rep.Groups[0].Sessions != 1 {
				t.Errorf("usage by project: %+v, want every session under %s (the whole file once)", rep.Groups, repo)
			}
		})
	}
}

// agentResult is the first agent step's result in the run file at path.
func agentResult(t *testing.T, path string) *transcript.AgentResult {
	t.Helper()
	for _, ev := range clitest.ReadRun(t, path) {
		if p := ev.Step(); ev.Type == transcript.StepCompleted && p != nil && p.Kind == transcript.KindAgent {
			r, err := p.AgentResult()
			if err != nil || r == nil {
				t.Fatalf("agent result: %v", err)
			}
			return r
		}
	}
	t.Fatalf("%s: no agent step", path)
	return nil
}

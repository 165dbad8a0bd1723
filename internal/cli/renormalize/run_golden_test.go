package renormalize_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/runid"
	"github.com/twasm/twasm/internal/testing/clitest"
	"github.com/twasm/twasm/transcript"
)

// env is the whole environment of each command line of these tests.
var env = clitest.Plain()

// renormalizeJSON is the --json summary of renormalize.
type renormalizeJSON struct {
	Original   string `json:"original"`
	New        string `json:"new"`
	Transcript string `json:"transcript"`
	Status     string `json:"status"`
	Steps      []struct {
		Path         string `json:"path"`
		Renormalized bool   `json:"renormalized"`
		Old, New     struct {
			Status, AgentStatus string
		}
	} `json:"steps"`
	LeftOut []string `json:"left_out"`
}

// checkRenormalized renormalizes the run file into storage and checks the
// new run against the original: it validates, has the same messages and
// tool events, names the original, and the original is unchanged.
func checkRenormalized(t *testing.T, storage, file string) renormalizeJSON {
	t.Helper()
	before, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	rawDir := filepath.Join(filepath.Dir(filepath.Dir(file)), "raw", strings.TrimSuffix(filepath.Base(file), ".jsonl"))
	rawBefore := dirDigest(t, rawDir)
	r := clitest.RunOK(t, env, "--storage", storage, "renormalize", "--json", file)
	var s renormalizeJSON
	if err := json.Unmarshal([]byte(r.Out), &s); err != nil {
		t.Fatalf("renormalize --json: %v\n%s", err, r.Out)
	}
	orig := clitest.ReadRun(t, file)
	if s.Original != orig[0].RunID || s.New == "" || s.New == s.Original || s.Transcript != clitest.TranscriptPath(storage, s.New) {
		t.Fatalf("summary %+v", s)
	}
	after, _ := os.ReadFile(file)
	if !bytes.Equal(before, after) {
		t.Fatalf("%s was modified", file)
	}
	if got := dirDigest(t, rawDir); got != rawBefore {
		t.Fatalf("the raw captures of %s were modified", file)
	}
	clitest.Validate(t, s.Transcript)
	evs := clitest.ReadRun(t, s.Transcript)
	head := evs[0].Step()
	if head.Name != "renormalize "+s.Original || string(head.Extra["renormalized_from"]) != `"`+s.Original+`"` {
		t.Errorf("run.started %+v", head)
	}
	if a, b := clitest.MessagesOf(t, orig), clitest.MessagesOf(t, evs); !slices.Equal(a, b) {
		t.Errorf("%s: messages differ\noriginal:\n%s\nnew:\n%s", filepath.Base(file), strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
	if a, b := clitest.RunEnd(t, orig), clitest.RunEnd(t, evs); a.Status != b.Status {
		t.Errorf("run status %q, originally %q", b.Status, a.Status)
	}
	for _, st := range s.Steps {
		if !st.Renormalized || st.Old.Status != st.New.Status {
			t.Errorf("step %+v", st)
		}
	}
	return s
}

// dirDigest lists the files of dir with their contents.
func dirDigest(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		c, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(e.Name() + "\x00" + string(c) + "\x00")
	}
	return b.String()
}

// TestRenormalizeGolden renormalizes recorded golden cases of claude and
// codex, among them sub-agents, dangling calls and cut streams.
func TestRenormalizeGolden(t *testing.T) {
	t.Parallel()
	cases := map[string][]string{
		"claude": {"session_log_sidechain.jsonl", "stream_json_background_agent.jsonl", "stream_json_truncated.jsonl",
			"stream_json_result_is_error.jsonl", "stream_json_tool_kinds.jsonl"},
		"codex": {"exec_command_dangling.jsonl", "exec_reconnect_then_turn_failed.jsonl", "rollout_exec_command_v0143.jsonl",
			"legacy_patch_mcp.jsonl", "exec_web_search_todo_plan_collab.jsonl"},
	}
	for provider, names := range cases {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			inputs := make([]string, len(names))
			for i, name := range names {
				inputs[i] = clitest.Golden(provider, name)
			}
			recorded := t.TempDir()
			ids := make([]string, len(inputs))
			for i, in := range inputs {
				ids[i] = clitest.Record(t, recorded, provider, in)
			}
			storage := t.TempDir()
			for _, id := range ids {
				checkRenormalized(t, storage, clitest.TranscriptPath(recorded, id))
			}
		})
	}
}

// TestRenormalizeRun renormalizes a run of several steps recorded by
// several invocations of record, with prompts, a sub-run and a run that failed; and by
// run id in its own storage.
func TestRenormalizeRun(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	id := clitest.RunOK(t, env, "--storage", storage, "run", "begin", "--name", "multi").Out
	id = strings.TrimSpace(id)
	clitest.RunOK(t, env, "--storage", storage, "record", "--run-id", id, "--path", "plan", "--provider", "claude",
		"--input", clitest.Example(), "--prompt", "plan it", "--system-prompt", "be brief")
	clitest.RunOK(t, env, "--storage", storage, "record", "--run-id", id, "--path", "loop.fix", "--iteration", "2", "--provider", "codex",
		"--input", clitest.Golden("codex", "exec_command.jsonl"), "--prompt", "fix it")
	child := strings.TrimSpace(clitest.RunOK(t, env, "--storage", storage, "run", "begin", "--parent", id, "--path", "sub").Out)
	clitest.RunOK(t, env, "--storage", storage, "run", "end", child)
	clitest.RunOK(t, env, "--storage", storage, "run", "end", id, "--error", "tests still failing")

	s := checkRenormalized(t, storage, clitest.TranscriptPath(storage, id))
	if len(s.Steps) != 2 || s.Status != transcript.StatusError {
		t.Errorf("summary %+v", s)
	}
	if len(s.LeftOut) != 1 || !strings.Contains(s.LeftOut[0], child) {
		t.Errorf("left out %v, want the sub-run %s", s.LeftOut, child)
	}
	evs := clitest.ReadRun(t, s.Transcript)
	var iters []int
	for _, ev := range clitest.OfType(evs, transcript.StepCompleted) {
		if ev.Path == "loop.fix" {
			iters = append(iters, ev.Iteration)
		}
	}
	if !slices.Equal(iters, []int{2}) {
		t.Errorf("loop.fix iterations %v", iters)
	}

	// By run id, plain output: the new id on stdout.
	r := clitest.RunOK(t, env, "--storage", storage, "renormalize", id)
	newID := strings.TrimSpace(r.Out)
	if newID == id || runid.Valid(newID) != nil {
		t.Fatalf("stdout %q", r.Out)
	}
	clitest.Validate(t, clitest.TranscriptPath(storage, newID))

	r = clitest.Run(t, env, "--storage", storage, "renormalize", "11111111-1111-4111-8111-111111111111")
	if r.Code != 2 {
		t.Errorf("missing run: %v", r)
	}
	// A raw capture that is gone: the step is copied, reported, exit 1.
	if err := os.RemoveAll(filepath.Join(storage, "raw", id)); err != nil {
		t.Fatal(err)
	}
	r = clitest.Run(t, env, "--storage", storage, "renormalize", id)
	if r.Code != 1 || !strings.Contains(r.ErrOut, "copied, not renormalized") {
		t.Errorf("missing raw capture: %v", r)
	}
}

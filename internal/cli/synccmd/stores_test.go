package synccmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/archive"
	"github.com/twasm/twasm/internal/testing/clitest"
	"github.com/twasm/twasm/transcript"
)

func TestSyncStores(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	session := clitest.ReadFile(t, clitest.Golden("claude", "session_log.jsonl"))
	lines := bytes.SplitAfter(session, []byte("\n"))
	half := bytes.Join(lines[:len(lines)/2], nil)
	claudeFile := h.Put(".claude/projects/-home-me-app/5f1c.jsonl", half, time.Hour)
	h.Put(".claude/settings.json", []byte(`{"cleanupPeriodDays": 20}`), time.Hour)
	rollout := clitest.ReadFile(t, clitest.Golden("codex", "rollout_exec_command_v0143.jsonl"))
	h.Put(".codex/sessions/2025/10/26/rollout-2025-10-26T10-00-00-abc.jsonl", rollout, 30*24*time.Hour)
	h.Put(".codex/sessions/2025/10/26/notes.txt", []byte("not a session\n"), time.Hour)

	// doctor: both stores found, nothing archived, the old claude
	// retention warned about.
	r := h.OK("doctor")
	for _, want := range []string{"Claude Code projects", "Codex sessions", "not found", "not archived", "after 20 days"} {
		if !strings.Contains(r.Out, want) {
			t.Errorf("doctor lacks %q:\n%s", want, r.Out)
		}
	}

	// --dry-run says what it would do and writes nothing.
	r = h.OK("sync", "--dry-run")
	if got := clitest.Outcomes(r.Out); len(got["new"]) != 2 {
		t.Errorf("dry run: %v", r)
	}
	if _, err := os.Stat(filepath.Join(h.Stor, "transcripts")); err == nil {
		t.Errorf("dry run wrote transcripts")
	}

	r = h.OK("sync")
	got := clitest.Outcomes(r.Out)
	if len(got["new"]) != 2 || !strings.Contains(r.ErrOut, "2 new") {
		t.Fatalf("first sync: %v", r)
	}
	var claudeRun string
	for _, l := range strings.Split(r.Out, "\n") {
		if strings.Contains(l, "\tclaude\t") {
			claudeRun = strings.Split(l, "\t")[1]
		}
	}
	var files []string
	for _, id := range got["new"] {
		files = append(files, clitest.TranscriptPath(h.Stor, id))
	}
	clitest.Validate(t, files...)
	evs := clitest.ReadRun(t, clitest.TranscriptPath(h.Stor, claudeRun))
	if y := evs[0].Timestamp.Year(); y == time.Now().Year() && evs[0].Timestamp.After(time.Now().Add(-2*time.Hour)) {
		t.Errorf("run.started dated %v: the sync's time, not the session's", evs[0].Timestamp)
	}
	var src archive.SourceRef
	if err := json.Unmarshal(evs[0].Step().Extra["source"], &src); err != nil || src.Path != claudeFile {
		t.Errorf("run.started source: %s (%v)", evs[0].Step().Extra["source"], err)
	}

	// Twice: nothing new.
	syncWant(t, h, h.Dir, "second sync", nothing)

	// The session grows: one more part in the same run.
	h.Put(".claude/projects/-home-me-app/5f1c.jsonl", session, 50*time.Minute)
	r = h.OK("sync", "--provider", "claude")
	if got := clitest.Outcomes(r.Out); len(got["grown"]) != 1 || got["grown"][0] != claudeRun {
		t.Fatalf("grown sync: %v", r)
	}
	evs = clitest.ReadRun(t, clitest.TranscriptPath(h.Stor, claudeRun))
	clitest.CheckSeq(t, evs)
	parts := 0
	calls := map[string]int{}
	for _, ev := range evs {
		if ev.Type == transcript.StepCompleted && ev.Path == "agent" {
			parts++
		}
		if ev.Type == transcript.ToolCall {
			calls[ev.Tool().CallID]++
		}
	}
	if parts != 2 {
		t.Errorf("%d parts, want 2", parts)
	}
	for id, n := range calls {
		if n != 1 {
			t.Errorf("call %s recorded %d times", id, n)
		}
	}

	// import of the same bytes: recognised and skipped.
	r = h.OK("import", "--provider", "claude", claudeFile)
	if !strings.Contains(r.ErrOut, "already imported as run "+claudeRun) {
		t.Errorf("import of synced bytes: %v", r)
	}
	entries, _ := filepath.Glob(filepath.Join(h.Stor, "transcripts", "*.jsonl"))
	if len(entries) != 2 {
		t.Errorf("%d transcripts, want 2", len(entries))
	}

	// The agent deletes the session: its run is ended.
	if err := os.Remove(claudeFile); err != nil {
		t.Fatal(err)
	}
	r = h.OK("sync")
	if got := clitest.Outcomes(r.Out); len(got["closed"]) != 1 {
		t.Errorf("deleted session: %v", r)
	}
	evs = clitest.ReadRun(t, clitest.TranscriptPath(h.Stor, claudeRun))
	if last := evs[len(evs)-1]; last.Type != transcript.RunCompleted {
		t.Errorf("run not ended: %s", last.Type)
	}
	clitest.Validate(t, clitest.TranscriptPath(h.Stor, claudeRun))
	r = h.OK("doctor", "--json")
	if !strings.Contains(r.Out, `"archived":1`) {
		t.Errorf("doctor after sync: %s", r.Out)
	}
}

func TestSyncBadInput(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	session := clitest.ReadFile(t, clitest.Golden("claude", "session_log.jsonl"))
	lines := bytes.SplitAfter(session, []byte("\n"))
	// Garbage in the middle and a last line cut short: archived as far
	// as it goes, the rest counted, nothing refused.
	var corrupt []byte
	corrupt = append(corrupt, bytes.Join(lines[:3], nil)...)
	corrupt = append(corrupt, []byte("\x00\x01 not json at all\n")...)
	corrupt = append(corrupt, bytes.Join(lines[3:len(lines)-1], nil)...)
	corrupt = append(corrupt, lines[len(lines)-1][:len(lines[len(lines)-1])/2]...)
	h.Put(".claude/projects/p/corrupt.jsonl", corrupt, time.Hour)
	// Being written right now, its last line incomplete: only complete
	// lines are taken.
	writing := h.Put(".claude/projects/p/writing.jsonl", append(bytes.Join(lines[:4], nil), lines[4][:20]...), 0)
	r := h.OK("sync", "--json")
	var pending int64
	for _, l := range strings.Split(strings.TrimSpace(r.Out), "\n") {
		var o archive.Outcome
		if json.Unmarshal([]byte(l), &o) != nil || o.Path == "" {
			continue
		}
		if o.Action != archive.ActionNew {
			t.Errorf("%s: %s (%s)", o.Path, o.Action, o.Reason)
		}
		if o.Path == writing {
			pending = o.Bytes
		}
	}
	if want := int64(len(bytes.Join(lines[:4], nil))); pending != want {
		t.Errorf("the file being written: %d bytes archived, want its %d complete bytes", pending, want)
	}

	// Another sync holds the archive: this one says so.
	lock, err := archive.AcquireLock(context.Background(), h.Stor, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	r = h.Run("sync")
	lock.Release()
	if r.Code != 2 || !strings.Contains(r.ErrOut, "another twasm sync or import is running") {
		t.Errorf("concurrent sync: %v", r)
	}

	// A store given in the config that does not exist is reported, not
	// fatal; a bad config is an error that names the file.
	h.Put(".config/twasm/sync.json", []byte(`{"stores":[{"provider":"claude","dir":"~/gone"}]}`), time.Hour)
	r = h.OK("doctor")
	if !strings.Contains(r.Out, filepath.Join(h.Dir, "gone")) {
		t.Errorf("doctor does not list the config store: %s", r.Out)
	}
	h.Put(".config/twasm/sync.json", []byte(`{"stores":[{"dir":"x"}]}`), time.Hour)
	r = h.Run("sync")
	if r.Code != 2 || !strings.Contains(r.ErrOut, "sync.json") {
		t.Errorf("bad config: %v", r)
	}
}

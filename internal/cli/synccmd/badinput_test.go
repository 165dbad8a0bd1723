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

// syncJSON runs sync --json and returns its outcomes by path.
func syncJSON(t *testing.T, h *clitest.Home, args ...string) (map[string]archive.Outcome, clitest.Result) {
	t.Helper()
	r := h.OK(append([]string{"sync", "--json"}, args...)...)
	m := map[string]archive.Outcome{}
	for _, l := range strings.Split(strings.TrimSpace(r.Out), "\n") {
		var o archive.Outcome
		if json.Unmarshal([]byte(l), &o) == nil && o.Path != "" {
			m[o.Path] = o
		}
	}
	return m, r
}

// The bad input of issue 15, through the binary: a corrupt and truncated
// session is archived as far as it is valid and reported; a session
// being written is read to its last complete line and continued next
// time; a store that vanishes is reported and ends nothing; a damaged
// index is rebuilt and reported by ls and stats too, with the same
// answer; a second sync at the same time is refused.
func TestSyncBadInputReported(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	session := clitest.ReadFile(t, clitest.Golden("claude", "session_log.jsonl"))
	lines := bytes.SplitAfter(session, []byte("\n"))

	var corrupt []byte
	corrupt = append(corrupt, bytes.Join(lines[:3], nil)...)
	corrupt = append(corrupt, []byte("\x00\x01 not json at all\n")...)
	corrupt = append(corrupt, bytes.Join(lines[3:len(lines)-1], nil)...)
	corrupt = append(corrupt, lines[len(lines)-1][:len(lines[len(lines)-1])/2]...)
	corruptFile := h.Put(".claude/projects/p/corrupt.jsonl", corrupt, time.Hour)
	cut := len(lines) / 2
	written := append(bytes.Join(lines[:cut], nil), lines[cut][:len(lines[cut])/2]...)
	writing := h.Put(".claude/projects/p/writing.jsonl", written, 0)

	outs, r := syncJSON(t, h)
	o := outs[corruptFile]
	if o.Action != archive.ActionNew || o.Unmapped == 0 || !strings.Contains(o.Reason, "could not map") {
		t.Errorf("corrupt session: %+v\n%v", o, r)
	}
	w := outs[writing]
	if want := int64(len(bytes.Join(lines[:cut], nil))); w.Action != archive.ActionNew || w.Bytes != want {
		t.Fatalf("the file being written: %+v, want %d complete bytes", w, want)
	}
	// The human line says it too.
	h.Put(".claude/projects/p/corrupt2.jsonl", append([]byte("garbage first\n"), session...), time.Hour)
	if r := h.OK("sync"); !strings.Contains(r.Out, "could not map") {
		t.Errorf("the unmapped lines are not reported: %v", r)
	}

	// The agent finishes the line and the session: the next sync
	// continues where the last one stopped.
	h.Put(".claude/projects/p/writing.jsonl", session, 50*time.Minute)
	outs, r = syncJSON(t, h)
	g := outs[writing]
	if g.Action != archive.ActionGrown || g.RunID != w.RunID || g.Bytes != int64(len(session))-w.Bytes {
		t.Fatalf("continued: %+v (first part %d bytes)\n%v", g, w.Bytes, r)
	}
	evs := clitest.ReadRun(t, clitest.TranscriptPath(h.Stor, w.RunID))
	calls := map[string]int{}
	for _, ev := range evs {
		if ev.Type == transcript.ToolCall {
			calls[ev.Tool().CallID]++
		}
	}
	for id, n := range calls {
		if n != 1 {
			t.Errorf("call %s archived %d times across the cut", id, n)
		}
	}
	clitest.Validate(t, clitest.TranscriptPath(h.Stor, w.RunID), clitest.TranscriptPath(h.Stor, o.RunID))

	// ls and stats before the index is damaged.
	ls := h.OK("ls", "--json").Out
	stats := h.OK("stats", "--all", "--json").Out
	idx := filepath.Join(h.Stor, "index.db")
	for _, s := range []string{"", "-wal", "-shm"} {
		os.Remove(idx + s)
	}
	if err := os.WriteFile(idx, bytes.Repeat([]byte("garbage "), 512), 0o600); err != nil {
		t.Fatal(err)
	}
	r = h.OK("ls", "--json")
	if r.Out != ls || !strings.Contains(r.ErrOut, "rebuilt from the transcripts") {
		t.Errorf("ls on a damaged index: %v\nbefore:\n%s", r, ls)
	}
	if err := os.WriteFile(idx, bytes.Repeat([]byte("garbage "), 512), 0o600); err != nil {
		t.Fatal(err)
	}
	r = h.OK("stats", "--all", "--json")
	if r.Out != stats || !strings.Contains(r.ErrOut, "rebuilt from the transcripts") {
		t.Errorf("stats on a damaged index: %v\nbefore:\n%s", r, stats)
	}

	// The store vanishes (a home on an unmounted disk): said, and the
	// open runs stay open.
	if err := os.RemoveAll(filepath.Join(h.Dir, ".claude")); err != nil {
		t.Fatal(err)
	}
	r = h.OK("sync")
	if !strings.Contains(r.ErrOut, "is gone") || !strings.Contains(r.ErrOut, "keep their runs") || strings.Contains(r.Out, "closed") {
		t.Errorf("vanished store: %v", r)
	}
	if last := clitest.ReadRun(t, clitest.TranscriptPath(h.Stor, w.RunID)); last[len(last)-1].Type == transcript.RunCompleted {
		t.Errorf("a run was ended because its store vanished")
	}

	// Two syncs at once: the second says which process runs (its
	// waiting with --wait is e2e's TestSyncWaitsForTheLock, a second
	// process at the same time).
	lock, err := archive.AcquireLock(context.Background(), h.Stor, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	if r := h.Run("sync"); r.Code != 2 || !strings.Contains(r.ErrOut, "another twasm sync or import is running") {
		t.Errorf("concurrent sync: %v", r)
	}
}

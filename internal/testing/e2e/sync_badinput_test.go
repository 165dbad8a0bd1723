package e2e

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
	"github.com/twasm/twasm/transcript"
)

// syncOutcomes runs sync --json and returns its outcomes by path.
func syncOutcomes(t *testing.T, h *fakeHome, args ...string) (map[string]archive.Outcome, result) {
	t.Helper()
	r := h.ok(append([]string{"sync", "--json"}, args...)...)
	m := map[string]archive.Outcome{}
	for _, l := range strings.Split(strings.TrimSpace(r.out), "\n") {
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
// answer; a second sync waits with --wait.
func TestSyncBadInputReported(t *testing.T) {
	t.Parallel()
	h := newFakeHome(t)
	session := readFile(t, golden("claude", "session_log.jsonl"))
	lines := bytes.SplitAfter(session, []byte("\n"))

	var corrupt []byte
	corrupt = append(corrupt, bytes.Join(lines[:3], nil)...)
	corrupt = append(corrupt, []byte("\x00\x01 not json at all\n")...)
	corrupt = append(corrupt, bytes.Join(lines[3:len(lines)-1], nil)...)
	corrupt = append(corrupt, lines[len(lines)-1][:len(lines[len(lines)-1])/2]...)
	corruptFile := h.put(".claude/projects/p/corrupt.jsonl", corrupt, time.Hour)
	cut := len(lines) / 2
	written := append(bytes.Join(lines[:cut], nil), lines[cut][:len(lines[cut])/2]...)
	writing := h.put(".claude/projects/p/writing.jsonl", written, 0)

	outs, r := syncOutcomes(t, h)
	o := outs[corruptFile]
	if o.Action != archive.ActionNew || o.Unmapped == 0 || !strings.Contains(o.Reason, "could not map") {
		t.Errorf("corrupt session: %+v\n%v", o, r)
	}
	w := outs[writing]
	if want := int64(len(bytes.Join(lines[:cut], nil))); w.Action != archive.ActionNew || w.Bytes != want {
		t.Fatalf("the file being written: %+v, want %d complete bytes", w, want)
	}
	// The human line says it too.
	h.put(".claude/projects/p/corrupt2.jsonl", append([]byte("garbage first\n"), session...), time.Hour)
	if r := h.ok("sync"); !strings.Contains(r.out, "could not map") {
		t.Errorf("the unmapped lines are not reported: %v", r)
	}

	// The agent finishes the line and the session: the next sync
	// continues where the last one stopped.
	h.put(".claude/projects/p/writing.jsonl", session, 50*time.Minute)
	outs, r = syncOutcomes(t, h)
	g := outs[writing]
	if g.Action != archive.ActionGrown || g.RunID != w.RunID || g.Bytes != int64(len(session))-w.Bytes {
		t.Fatalf("continued: %+v (first part %d bytes)\n%v", g, w.Bytes, r)
	}
	evs := readRun(t, transcriptPath(h.stor, w.RunID))
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
	validate(t, transcriptPath(h.stor, w.RunID), transcriptPath(h.stor, o.RunID))

	// ls and stats before the index is damaged.
	ls := h.ok("ls", "--json").out
	stats := h.ok("stats", "--all", "--json").out
	idx := filepath.Join(h.stor, "index.db")
	for _, s := range []string{"", "-wal", "-shm"} {
		os.Remove(idx + s)
	}
	if err := os.WriteFile(idx, bytes.Repeat([]byte("garbage "), 512), 0o600); err != nil {
		t.Fatal(err)
	}
	r = h.ok("ls", "--json")
	if r.out != ls || !strings.Contains(r.errOut, "rebuilt from the transcripts") {
		t.Errorf("ls on a damaged index: %v\nbefore:\n%s", r, ls)
	}
	if err := os.WriteFile(idx, bytes.Repeat([]byte("garbage "), 512), 0o600); err != nil {
		t.Fatal(err)
	}
	r = h.ok("stats", "--all", "--json")
	if r.out != stats || !strings.Contains(r.errOut, "rebuilt from the transcripts") {
		t.Errorf("stats on a damaged index: %v\nbefore:\n%s", r, stats)
	}

	// The store vanishes (a home on an unmounted disk): said, and the
	// open runs stay open.
	if err := os.RemoveAll(filepath.Join(h.dir, ".claude")); err != nil {
		t.Fatal(err)
	}
	r = h.ok("sync")
	if !strings.Contains(r.errOut, "is gone") || !strings.Contains(r.errOut, "keep their runs") || strings.Contains(r.out, "closed") {
		t.Errorf("vanished store: %v", r)
	}
	if last := readRun(t, transcriptPath(h.stor, w.RunID)); last[len(last)-1].Type == transcript.RunCompleted {
		t.Errorf("a run was ended because its store vanished")
	}

	// Two syncs at once: the second says which process runs, or waits
	// with --wait until the first is done.
	lock, err := archive.AcquireLock(context.Background(), h.stor, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := h.run("sync"); r.code != 2 || !strings.Contains(r.errOut, "another twasm sync or import is running") {
		t.Errorf("concurrent sync: %v", r)
	}
	p := start(t, nil, h.env, "--storage", h.stor, "sync", "--wait")
	waitFor(t, "the second sync to say it waits", hangBound, func() bool {
		return strings.Contains(p.errOut.String(), "waiting for another sync")
	})
	lock.Release()
	if r := p.wait(t, hangBound); r.code != 0 {
		t.Errorf("sync --wait: %v", r)
	}
}

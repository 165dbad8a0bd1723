package synccmd_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/archive"
	"github.com/twasm/twasm/internal/rawfile"
	"github.com/twasm/twasm/internal/testing/clitest"
)

// TestSyncSealCutShort: a sync killed while it sealed the raw capture of
// a run it had just ended (the session synced in two parts, then gone)
// leaves the capture whole in a frame per part and, beside it, the copy
// cut short. Doctor names the run and changes nothing; the next sync
// settles it (the copy removed, never taken; the capture sealed from
// itself, holding the session's bytes), and the sync after it has
// nothing to do. The state a kill leaves is made from a real sync's: the
// capture before its seal, the ledger without the line that cleared the
// mark, half the sealed capture as the copy.
func TestSyncSealCutShort(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	session := clitest.ReadFile(t, clitest.Golden("claude", "session_log.jsonl"))
	lines := bytes.SplitAfter(session, []byte("\n"))
	dir := filepath.Join(h.Dir, ".claude")
	file := h.Put(".claude/projects/p/s.jsonl", bytes.Join(lines[:len(lines)/2], nil), time.Hour)
	runID := syncWant(t, h, dir, "first part", map[string]int{"new": 1})["new"][0]
	h.Put(".claude/projects/p/s.jsonl", session, 50*time.Minute)
	syncGrown(t, h, dir, "second part", runID)
	raws, err := filepath.Glob(filepath.Join(h.Stor, "raw", runID, "*.raw"+rawfile.Ext))
	if err != nil || len(raws) != 1 {
		t.Fatalf("raw captures of %s: %v %v", runID, raws, err)
	}
	raw := raws[0]
	unsealed := clitest.ReadFile(t, raw)
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	syncWant(t, h, dir, "session gone", map[string]int{"closed": 1})
	sealed := clitest.ReadFile(t, raw)
	if len(sealed) >= len(unsealed) {
		t.Fatalf("the ended run's capture was not sealed: %d bytes, %d before", len(sealed), len(unsealed))
	}

	// What a kill during the seal leaves.
	lf := archive.LedgerFile(h.Stor)
	ls := strings.SplitAfter(strings.TrimSuffix(string(clitest.ReadFile(t, lf)), "\n"), "\n")
	if !strings.Contains(ls[len(ls)-2], `"seal":true`) || strings.Contains(ls[len(ls)-1], `"seal":true`) {
		t.Fatalf("the ledger's last lines do not mark then clear the seal:\n%s%s", ls[len(ls)-2], ls[len(ls)-1])
	}
	for p, b := range map[string][]byte{lf: []byte(strings.Join(ls[:len(ls)-1], "")), raw: unsealed, raw + rawfile.SealExt: sealed[:len(sealed)/2]} {
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}

	var r clitest.Result
	clitest.Unchanged(t, h.Stor, "doctor", func() { r = h.Run("doctor") })
	if r.Code != 0 || !strings.Contains(r.Out, "of run "+runID) || !strings.Contains(r.Out, "is not sealed yet") {
		t.Errorf("doctor does not name the run whose seal was cut short (exit 0):\n%v", r)
	}
	got := syncWant(t, h, dir, "after the kill", map[string]int{"settled": 1})
	if got["settled"][0] != runID {
		t.Errorf("settled %v, want run %s", got, runID)
	}
	if _, err := os.Lstat(raw + rawfile.SealExt); err == nil {
		t.Error("the copy cut short is still beside the capture")
	}
	if b := clitest.ReadFile(t, raw); !bytes.Equal(b, sealed) {
		t.Errorf("the capture is not sealed again: %d bytes, want %d", len(b), len(sealed))
	}
	if b, err := rawfile.ReadFile(raw); err != nil || !bytes.Equal(b, session) {
		t.Errorf("the capture does not hold the session's bytes: %v", err)
	}
	if r := h.Run("doctor"); r.Code != 0 || strings.Contains(r.Out, "not sealed") {
		t.Errorf("doctor after the sync:\n%v", r)
	}
	syncWant(t, h, dir, "nothing left", nothing)
}

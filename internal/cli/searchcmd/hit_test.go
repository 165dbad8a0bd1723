package searchcmd_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
)

func TestSearchAndViewAtHit(t *testing.T) {
	t.Parallel()
	h := clitest.NewHome(t)
	session := clitest.ReadFile(t, clitest.Golden("claude", "session_log.jsonl"))
	h.Put(".claude/projects/p/s.jsonl", session, time.Hour)
	h.OK("sync")
	// sync indexed what it wrote
	if _, err := os.Stat(filepath.Join(h.Stor, "index.db")); err != nil {
		t.Fatalf("no index after sync: %v", err)
	}
	r := h.OK("search", "--json", "--tool", "Bash", "go test")
	var hit struct {
		RunID   string `json:"run_id"`
		Seq     uint64 `json:"seq"`
		Path    string `json:"path"`
		Kind    string `json:"kind"`
		Snippet string `json:"snippet"`
		Time    string `json:"time"`
	}
	lines := strings.Split(strings.TrimSpace(r.Out), "\n")
	if err := json.Unmarshal([]byte(lines[0]), &hit); err != nil || hit.RunID == "" || hit.Seq == 0 || hit.Path != "agent" || !strings.Contains(hit.Snippet, "«test»") || !strings.HasPrefix(hit.Time, "2026-01-05") {
		t.Fatalf("search --json: %v (%v)", r, err)
	}
	r = h.OK("view", hit.RunID, "--seq", strconv.Itoa(int(hit.Seq)))
	if !strings.HasPrefix(r.Out, "> seq "+strconv.Itoa(int(hit.Seq))) || !strings.Contains(r.Out, "go test") {
		t.Errorf("view --seq: %v", r)
	}
	r = h.Run("view", hit.RunID, "--seq", "99999")
	if r.Code != 2 || !strings.Contains(r.ErrOut, "no event with that seq") {
		t.Errorf("view --seq of a seq not in the run: %v", r)
	}

	// Nothing matches: exit 1, as grep.
	if r := h.Run("search", "xylophone-never-said"); r.Code != 1 || !strings.Contains(r.ErrOut, "no match") {
		t.Errorf("no match: %v", r)
	}
	if r := h.Run("search", "--since", "yesterdayish", "x"); r.Code != 2 {
		t.Errorf("bad --since: %v", r)
	}

	// The index is derived: deleted, it comes back; damaged, it is
	// rebuilt and said so.
	idx := filepath.Join(h.Stor, "index.db")
	for _, s := range []string{"", "-wal", "-shm"} {
		os.Remove(idx + s)
	}
	h.OK("search", "go test")
	for _, s := range []string{"", "-wal", "-shm"} {
		os.Remove(idx + s)
	}
	if err := os.WriteFile(idx, bytes.Repeat([]byte("not sqlite "), 100), 0o600); err != nil {
		t.Fatal(err)
	}
	r = h.OK("search", "--json", "--tool", "Bash", "go test")
	if !strings.Contains(r.ErrOut, "rebuilt") || !strings.Contains(r.Out, hit.RunID) {
		t.Errorf("damaged index: %v", r)
	}
}

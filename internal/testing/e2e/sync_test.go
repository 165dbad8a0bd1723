package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/archive"
	"github.com/twasm/twasm/internal/testing/clitest"
)

// fakeHome builds agent session stores in a temporary home from the
// project's testdata and the shared fixtures; every file is dated an hour
// ago, as a finished session would be.
type fakeHome struct {
	t    *testing.T
	dir  string
	env  []string
	stor string
}

func newFakeHome(t *testing.T) *fakeHome {
	h := &fakeHome{t: t, dir: t.TempDir(), stor: t.TempDir()}
	h.env = []string{"HOME=" + h.dir, "XDG_CONFIG_HOME=" + filepath.Join(h.dir, ".config")}
	return h
}

func (h *fakeHome) put(rel string, b []byte, age time.Duration) string {
	h.t.Helper()
	p := filepath.Join(h.dir, rel)
	clitest.Put(h.t, p, b, age)
	return p
}

func (h *fakeHome) run(args ...string) result {
	h.t.Helper()
	return start(h.t, nil, h.env, append([]string{"--storage", h.stor}, args...)...).wait(h.t, hangBound)
}

func (h *fakeHome) ok(args ...string) result {
	h.t.Helper()
	r := h.run(args...)
	if r.code != 0 {
		h.t.Fatalf("twasm %v: %v", args, r)
	}
	return r
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	return clitest.ReadFile(t, p)
}

// outcomes parses sync's stdout: action, run id, provider, path per line.
func outcomes(out string) map[string][]string { return clitest.Outcomes(out) }

// --watch keeps archiving as sessions appear and grow, and ends cleanly
// on Ctrl-C.
func TestSyncWatch(t *testing.T) {
	t.Parallel()
	h := newFakeHome(t)
	session := readFile(t, golden("claude", "session_log.jsonl"))
	other := readFile(t, golden("claude", "session_log_sidechain.jsonl"))
	lines := bytes.SplitAfter(other, []byte("\n"))
	h.put(".claude/projects/p/a.jsonl", session, time.Hour)
	p := start(t, nil, h.env, "--storage", h.stor, "sync", "--watch", "--interval", "100ms")
	count := func(action string) int { return strings.Count(p.out.String(), action+"\t") }
	waitFor(t, "the first session archived", hangBound, func() bool { return count("new") == 1 })
	h.put(".claude/projects/p/b.jsonl", bytes.Join(lines[:len(lines)/2], nil), time.Hour)
	waitFor(t, "a new session archived", hangBound, func() bool { return count("new") == 2 })
	h.put(".claude/projects/p/b.jsonl", other, 50*time.Minute)
	waitFor(t, "the grown session archived", hangBound, func() bool { return count("grown") == 1 })
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	r := p.wait(t, hangBound)
	if r.code != 0 {
		t.Errorf("watch interrupted: %v", r)
	}
	files, _ := filepath.Glob(filepath.Join(h.stor, "transcripts", "*.jsonl"))
	validate(t, files...)
}

// A pass of --watch that changes nothing prints nothing: the progress of
// a long scan is shown in the first pass only, and a later pass that
// archives something says so once, in its summary (issue #30: the same
// progress lines every pass, about 1,200 lines an hour).
func TestSyncWatchQuietWhenNothingChanged(t *testing.T) {
	t.Parallel()
	h := newFakeHome(t)
	session := string(readFile(t, golden("claude", "session_log.jsonl")))
	const id = "7f3e9a10-0000-4000-8000-00000000bb01"
	const n = 24 // progress is shown for 20 sessions or more
	for i := range n {
		h.put(fmt.Sprintf(".claude/projects/p/s%02d.jsonl", i), []byte(strings.ReplaceAll(session, id, fmt.Sprintf("7f3e9a10-0000-4000-8000-0000000000%02d", i))), time.Hour)
	}
	p := start(t, nil, h.env, "--storage", h.stor, "sync", "--watch", "--interval", "50ms")
	count := func(action string) int { return strings.Count(p.out.String(), action+"\t") }
	// The first pass is over when its summary is printed (after its
	// last progress line, which may come after stdout lists every
	// session: the two streams are written apart).
	waitFor(t, "the first pass's summary", hangBound, func() bool {
		return count("new") == n && strings.Contains(p.errOut.String(), fmt.Sprintf("%d new,", n))
	})
	first := p.errOut.String()
	if !strings.Contains(first, fmt.Sprintf("sync: %d/%d sessions", n, n)) {
		t.Errorf("the first pass shows no progress:\n%s", first)
	}
	// Passes with nothing new may run now (every 50 ms); then one finds
	// a new session among more than 20, which showed progress before.
	h.put(".claude/projects/p/late.jsonl", []byte(strings.ReplaceAll(session, id, "7f3e9a10-0000-4000-8000-0000000000ff")), time.Hour)
	waitFor(t, "the late session archived", hangBound, func() bool { return count("new") == n+1 })
	waitFor(t, "its summary", hangBound, func() bool { return strings.Contains(strings.TrimPrefix(p.errOut.String(), first), "1 new,") })
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	r := p.wait(t, hangBound)
	if r.code != 0 {
		t.Fatalf("watch interrupted: %v", r)
	}
	later := strings.TrimPrefix(r.errOut, first)
	if strings.Contains(later, "sessions\n") {
		t.Errorf("a later pass printed progress:\n%s", later)
	}
	if c := strings.Count(later, "1 new,"); c != 1 {
		t.Errorf("the pass that archived the late session said so %d times:\n%s", c, later)
	}
	if strings.Contains(later, "0 new, 0 grown") {
		t.Errorf("a pass that changed nothing printed a summary:\n%s", later)
	}
}

// TestSyncWaitsForTheLock: while another sync holds the archive, sync
// says which process runs and exits 2, and sync --wait says it waits and
// ends once the other is done.
func TestSyncWaitsForTheLock(t *testing.T) {
	t.Parallel()
	h := newFakeHome(t)
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

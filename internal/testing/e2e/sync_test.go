package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/archive"
	"github.com/twasm/twasm/internal/testing/clitest"
	"github.com/twasm/twasm/transcript"
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

func TestSyncStores(t *testing.T) {
	t.Parallel()
	h := newFakeHome(t)
	session := readFile(t, golden("claude", "session_log.jsonl"))
	lines := bytes.SplitAfter(session, []byte("\n"))
	half := bytes.Join(lines[:len(lines)/2], nil)
	claudeFile := h.put(".claude/projects/-home-me-app/5f1c.jsonl", half, time.Hour)
	h.put(".claude/settings.json", []byte(`{"cleanupPeriodDays": 20}`), time.Hour)
	rollout := readFile(t, golden("codex", "rollout_exec_command_v0143.jsonl"))
	h.put(".codex/sessions/2025/10/26/rollout-2025-10-26T10-00-00-abc.jsonl", rollout, 30*24*time.Hour)
	h.put(".codex/sessions/2025/10/26/notes.txt", []byte("not a session\n"), time.Hour)

	// doctor: both stores found, nothing archived, the old claude
	// retention warned about.
	r := h.ok("doctor")
	for _, want := range []string{"Claude Code projects", "Codex sessions", "not found", "not archived", "after 20 days"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("doctor lacks %q:\n%s", want, r.out)
		}
	}

	// --dry-run says what it would do and writes nothing.
	r = h.ok("sync", "--dry-run")
	if got := outcomes(r.out); len(got["new"]) != 2 {
		t.Errorf("dry run: %v", r)
	}
	if _, err := os.Stat(filepath.Join(h.stor, "transcripts")); err == nil {
		t.Errorf("dry run wrote transcripts")
	}

	r = h.ok("sync")
	got := outcomes(r.out)
	if len(got["new"]) != 2 || !strings.Contains(r.errOut, "2 new") {
		t.Fatalf("first sync: %v", r)
	}
	var claudeRun string
	for _, l := range strings.Split(r.out, "\n") {
		if strings.Contains(l, "\tclaude\t") {
			claudeRun = strings.Split(l, "\t")[1]
		}
	}
	var files []string
	for _, id := range got["new"] {
		files = append(files, transcriptPath(h.stor, id))
	}
	validate(t, files...)
	evs := readRun(t, transcriptPath(h.stor, claudeRun))
	if y := evs[0].Timestamp.Year(); y == time.Now().Year() && evs[0].Timestamp.After(time.Now().Add(-2*time.Hour)) {
		t.Errorf("run.started dated %v: the sync's time, not the session's", evs[0].Timestamp)
	}
	var src archive.SourceRef
	if err := json.Unmarshal(evs[0].Step().Extra["source"], &src); err != nil || src.Path != claudeFile {
		t.Errorf("run.started source: %s (%v)", evs[0].Step().Extra["source"], err)
	}

	// Twice: nothing new.
	r = h.ok("sync")
	if got := outcomes(r.out); len(got) != 0 || !strings.Contains(r.errOut, "0 new") {
		t.Errorf("second sync: %v", r)
	}

	// The session grows: one more part in the same run.
	h.put(".claude/projects/-home-me-app/5f1c.jsonl", session, 50*time.Minute)
	r = h.ok("sync", "--provider", "claude")
	if got := outcomes(r.out); len(got["grown"]) != 1 || got["grown"][0] != claudeRun {
		t.Fatalf("grown sync: %v", r)
	}
	evs = readRun(t, transcriptPath(h.stor, claudeRun))
	checkSeq(t, evs)
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
	r = h.ok("import", "--provider", "claude", claudeFile)
	if !strings.Contains(r.errOut, "already imported as run "+claudeRun) {
		t.Errorf("import of synced bytes: %v", r)
	}
	entries, _ := filepath.Glob(filepath.Join(h.stor, "transcripts", "*.jsonl"))
	if len(entries) != 2 {
		t.Errorf("%d transcripts, want 2", len(entries))
	}

	// The agent deletes the session: its run is ended.
	if err := os.Remove(claudeFile); err != nil {
		t.Fatal(err)
	}
	r = h.ok("sync")
	if got := outcomes(r.out); len(got["closed"]) != 1 {
		t.Errorf("deleted session: %v", r)
	}
	evs = readRun(t, transcriptPath(h.stor, claudeRun))
	if last := evs[len(evs)-1]; last.Type != transcript.RunCompleted {
		t.Errorf("run not ended: %s", last.Type)
	}
	validate(t, transcriptPath(h.stor, claudeRun))
	r = h.ok("doctor", "--json")
	if !strings.Contains(r.out, `"archived":1`) {
		t.Errorf("doctor after sync: %s", r.out)
	}
}

func TestSyncBadInput(t *testing.T) {
	t.Parallel()
	h := newFakeHome(t)
	session := readFile(t, golden("claude", "session_log.jsonl"))
	lines := bytes.SplitAfter(session, []byte("\n"))
	// Garbage in the middle and a last line cut short: archived as far
	// as it goes, the rest counted, nothing refused.
	var corrupt []byte
	corrupt = append(corrupt, bytes.Join(lines[:3], nil)...)
	corrupt = append(corrupt, []byte("\x00\x01 not json at all\n")...)
	corrupt = append(corrupt, bytes.Join(lines[3:len(lines)-1], nil)...)
	corrupt = append(corrupt, lines[len(lines)-1][:len(lines[len(lines)-1])/2]...)
	h.put(".claude/projects/p/corrupt.jsonl", corrupt, time.Hour)
	// Being written right now, its last line incomplete: only complete
	// lines are taken.
	writing := h.put(".claude/projects/p/writing.jsonl", append(bytes.Join(lines[:4], nil), lines[4][:20]...), 0)
	r := h.ok("sync", "--json")
	var pending int64
	for _, l := range strings.Split(strings.TrimSpace(r.out), "\n") {
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
	lock, err := archive.AcquireLock(context.Background(), h.stor, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	r = h.run("sync")
	lock.Release()
	if r.code != 2 || !strings.Contains(r.errOut, "another twasm sync or import is running") {
		t.Errorf("concurrent sync: %v", r)
	}

	// A store given in the config that does not exist is reported, not
	// fatal; a bad config is an error that names the file.
	h.put(".config/twasm/sync.json", []byte(`{"stores":[{"provider":"claude","dir":"~/gone"}]}`), time.Hour)
	r = h.ok("doctor")
	if !strings.Contains(r.out, filepath.Join(h.dir, "gone")) {
		t.Errorf("doctor does not list the config store: %s", r.out)
	}
	h.put(".config/twasm/sync.json", []byte(`{"stores":[{"dir":"x"}]}`), time.Hour)
	r = h.run("sync")
	if r.code != 2 || !strings.Contains(r.errOut, "sync.json") {
		t.Errorf("bad config: %v", r)
	}
}

// Import is idempotent by content and a grown file adds only its new part.
func TestImportIdempotent(t *testing.T) {
	t.Parallel()
	h := newFakeHome(t)
	session := readFile(t, golden("claude", "session_log.jsonl"))
	lines := bytes.SplitAfter(session, []byte("\n"))
	f := h.put("saved/s.jsonl", bytes.Join(lines[:len(lines)/2], nil), time.Hour)
	r := h.ok("import", "--provider", "auto", "--json", f)
	var first struct {
		RunID  string `json:"run_id"`
		Action string `json:"action"`
	}
	if err := json.Unmarshal([]byte(r.out), &first); err != nil || first.Action != "new" {
		t.Fatalf("first import: %v", r)
	}
	r = h.ok("import", "--provider", "auto", f)
	if !strings.Contains(r.errOut, "already imported") {
		t.Errorf("second import: %v", r)
	}
	h.put("saved/s.jsonl", session, time.Hour)
	r = h.ok("import", "--provider", "auto", "--json", f)
	var second struct {
		RunID  string `json:"run_id"`
		Action string `json:"action"`
	}
	if err := json.Unmarshal([]byte(r.out), &second); err != nil || second.Action != "continued" || second.RunID == first.RunID {
		t.Fatalf("grown import: %v", r)
	}
	a := readRun(t, transcriptPath(h.stor, first.RunID))
	b := readRun(t, transcriptPath(h.stor, second.RunID))
	seen := map[string]bool{}
	for _, ev := range a {
		if ev.Type == transcript.ToolCall {
			seen[ev.Tool().CallID] = true
		}
	}
	for _, ev := range b {
		if ev.Type == transcript.ToolCall && seen[ev.Tool().CallID] {
			t.Errorf("call %s imported twice", ev.Tool().CallID)
		}
	}
	validate(t, transcriptPath(h.stor, first.RunID), transcriptPath(h.stor, second.RunID))
}

func TestSearchAndViewAtHit(t *testing.T) {
	t.Parallel()
	h := newFakeHome(t)
	session := readFile(t, golden("claude", "session_log.jsonl"))
	h.put(".claude/projects/p/s.jsonl", session, time.Hour)
	h.ok("sync")
	// sync indexed what it wrote
	if _, err := os.Stat(filepath.Join(h.stor, "index.db")); err != nil {
		t.Fatalf("no index after sync: %v", err)
	}
	r := h.ok("search", "--json", "--tool", "Bash", "go test")
	var hit struct {
		RunID   string `json:"run_id"`
		Seq     uint64 `json:"seq"`
		Path    string `json:"path"`
		Kind    string `json:"kind"`
		Snippet string `json:"snippet"`
		Time    string `json:"time"`
	}
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
	if err := json.Unmarshal([]byte(lines[0]), &hit); err != nil || hit.RunID == "" || hit.Seq == 0 || hit.Path != "agent" || !strings.Contains(hit.Snippet, "«test»") || !strings.HasPrefix(hit.Time, "2026-01-05") {
		t.Fatalf("search --json: %v (%v)", r, err)
	}
	r = h.ok("view", hit.RunID, "--seq", itoa(int(hit.Seq)))
	if !strings.HasPrefix(r.out, "> seq "+itoa(int(hit.Seq))) || !strings.Contains(r.out, "go test") {
		t.Errorf("view --seq: %v", r)
	}
	r = h.run("view", hit.RunID, "--seq", "99999")
	if r.code != 2 || !strings.Contains(r.errOut, "no event with that seq") {
		t.Errorf("view --seq of a seq not in the run: %v", r)
	}

	// Nothing matches: exit 1, as grep.
	if r := h.run("search", "xylophone-never-said"); r.code != 1 || !strings.Contains(r.errOut, "no match") {
		t.Errorf("no match: %v", r)
	}
	if r := h.run("search", "--since", "yesterdayish", "x"); r.code != 2 {
		t.Errorf("bad --since: %v", r)
	}

	// The index is derived: deleted, it comes back; damaged, it is
	// rebuilt and said so.
	idx := filepath.Join(h.stor, "index.db")
	for _, s := range []string{"", "-wal", "-shm"} {
		os.Remove(idx + s)
	}
	h.ok("search", "go test")
	for _, s := range []string{"", "-wal", "-shm"} {
		os.Remove(idx + s)
	}
	if err := os.WriteFile(idx, bytes.Repeat([]byte("not sqlite "), 100), 0o600); err != nil {
		t.Fatal(err)
	}
	r = h.ok("search", "--json", "--tool", "Bash", "go test")
	if !strings.Contains(r.errOut, "rebuilt") || !strings.Contains(r.out, hit.RunID) {
		t.Errorf("damaged index: %v", r)
	}
}

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

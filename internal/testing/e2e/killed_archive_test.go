package e2e

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
	"github.com/twasm/twasm/lifecycle"
	"github.com/twasm/twasm/transcript"
)

// subRunsOf lists the sub-runs of a storage root's runs (storageRuns)
// that no link supersedes (lifecycle.SupersedesField), each as its
// sorted messages, sorted.
func subRunsOf(runs map[string][]*transcript.Event) []string {
	gone := map[string]bool{}
	subs := map[string][]string{}
	for _, p := range slices.Sorted(maps.Keys(runs)) {
		evs := runs[p]
		for _, ev := range evs {
			if sp := ev.Step(); ev.Type == transcript.StepCallWorkflowStarted && sp != nil {
				var old string
				if raw := sp.Extra[lifecycle.SupersedesField]; raw != nil && json.Unmarshal(raw, &old) == nil {
					gone[old] = true
				}
			}
		}
		if evs[0].ParentRunID == "" {
			continue
		}
		var msgs []string
		for _, ev := range evs {
			if m := ev.Message(); m != nil {
				b, _ := json.Marshal(m.Blocks)
				msgs = append(msgs, string(ev.Type)+" "+m.Role+" "+m.ID+" "+string(b))
			}
		}
		sort.Strings(msgs)
		subs[evs[0].RunID] = msgs
	}
	var out []string
	for id, msgs := range subs {
		if !gone[id] {
			out = append(out, strings.Join(msgs, "\n"))
		}
	}
	sort.Strings(out)
	return out
}

// subRunPhrases are search phrases of the sub-runs' messages: the first
// words of each text block.
func subRunPhrases(subs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range subs {
		for _, l := range strings.Split(r, "\n") {
			_, blocks, _ := strings.Cut(l, " [")
			var bs []transcript.Block
			if json.Unmarshal([]byte("["+blocks), &bs) != nil {
				continue
			}
			for _, b := range bs {
				w := strings.Fields(strings.Map(func(r rune) rune {
					if r == '"' || r < ' ' {
						return ' '
					}
					return r
				}, b.Text))
				if len(w) < 4 {
					continue
				}
				if p := strings.Join(w[:6], " "); len(w) >= 6 && !seen[p] && len(out) < 6 {
					seen[p] = true
					out = append(out, p)
				}
			}
		}
	}
	return out
}

// searchCounts is how many hits twasm search finds (every hit, none
// folded) for each phrase.
func searchCounts(t *testing.T, h *fakeHome, phrases []string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, p := range phrases {
		r := h.run("search", "--json", "--every", "--limit", "1000", `"`+p+`"`)
		if r.code != 0 && r.code != 1 {
			t.Fatalf("search: %v", r)
		}
		out[p] = strings.Count(r.out, "\n")
	}
	return out
}

// lineWatch counts the lines of the transcript of a session as they are
// written, reading only what is new.
type lineWatch struct {
	stor, name string
	// provider names the run ("<provider> session <name>"): claude when
	// empty.
	provider string
	file     string
	off      int64
	lines    int
}

func (w *lineWatch) count() int {
	if w.file == "" {
		paths, _ := filepath.Glob(filepath.Join(w.stor, "transcripts", "*.jsonl"))
		for _, p := range paths {
			f, err := os.Open(p)
			if err != nil {
				continue
			}
			first, _ := bufio.NewReader(f).ReadString('\n')
			f.Close()
			if strings.Contains(first, `"name":"`+cmp.Or(w.provider, "claude")+` session `+w.name+`"`) {
				w.file = p
			}
		}
		if w.file == "" {
			return 0
		}
	}
	f, err := os.Open(w.file)
	if err != nil {
		return w.lines
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for {
		n, _ := f.ReadAt(buf, w.off)
		if n == 0 {
			return w.lines
		}
		w.lines += bytes.Count(buf[:n], []byte("\n"))
		w.off += int64(n)
	}
}

// signalAt sends sig to p once w counts n lines of its transcript, and
// waits for p to exit; p ending first is sent nothing. The lines are
// polled, the signal sent on the count reached, never after a delay.
func signalAt(t *testing.T, p *proc, w *lineWatch, n int, sig syscall.Signal) {
	t.Helper()
	exited := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(exited) }()
	deadline := time.Now().Add(hangBound)
	for w.count() < n {
		select {
		case <-exited:
			return // it ended first: nothing to signal
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the transcript never reached %d lines: %d", n, w.count())
		}
		time.Sleep(time.Millisecond)
	}
	_ = p.cmd.Process.Signal(sig)
	<-exited
}

// unfinishedPart reports whether a killed command left the transcript at
// path with a part begun and not completed (its last line neither a
// step's nor the run's completion).
func unfinishedPart(t *testing.T, path string) bool {
	t.Helper()
	if path == "" {
		return false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The last event is among the last lines: they are decoded from the
	// start of a line in the last 64 KiB, the whole file only when no
	// event is there (decoding 15,000 lines under -race for each kill
	// cost seconds).
	tail := b
	if len(b) > 64<<10 {
		tail = b[len(b)-64<<10:]
		if i := bytes.IndexByte(tail, '\n'); i >= 0 {
			tail = tail[i+1:]
		}
	}
	evs, _, err := transcript.ReadAll(bytes.NewReader(tail))
	if err == nil && len(evs) == 0 && len(tail) < len(b) {
		evs, _, err = transcript.ReadAll(bytes.NewReader(b))
	}
	if err != nil || len(evs) == 0 {
		return false
	}
	last := evs[len(evs)-1].Type
	return last != transcript.StepCompleted && last != transcript.RunCompleted
}

// TestKilledArchiveSettled: `twasm sync` and `twasm import` killed with
// SIGKILL at many points while they archive a session (a first part, or
// a part of a session that grew), each kill sent once the transcript
// holds a given number of lines of it, and then run again: every session
// is one run, holding every message once (as a sync or import never
// killed holds them), with its raw capture holding the session once; ls
// lists no run as running, doctor says every session is archived and
// nothing is interrupted (and, before the second run, that the archive
// was interrupted), and every transcript is valid. Before the fix the
// next run archived the session again (a second run, the first left
// "running") or opened the open step again (an invalid transcript).
func TestKilledArchiveSettled(t *testing.T) {
	t.Parallel()
	big := clitest.ClaudeSession("big", 3000) // 15,003 transcript lines
	grown := clitest.ClaudeSession("big", 3600)
	small := clitest.ClaudeSession("small", 20)
	// A session whose sub-agents (agent_progress records) come first: a
	// kill in the lines after them leaves a step with sub-runs.
	agents, err := os.ReadFile(filepath.Join(root, "testdata", "captures", "claude", "spotter_session_log_v2.1.38_agent_progress.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	withAgents := append(append([]byte(nil), agents...), big...)
	type step struct {
		cmd  string // sync or import
		big  []byte // the big session's bytes at this step
		kill bool
	}
	for _, tc := range []struct {
		name  string
		steps []step
		// at are the line counts of the big session's transcript at
		// which the kill is sent (counted from the lines it held before
		// the killed command).
		at []int
	}{
		{"sync", []step{{"sync", big, true}}, []int{1, 2, 40, 3000, 9000, 14900}},
		{"sync of a grown session", []step{{"sync", big, false}, {"sync", grown, true}}, []int{1, 30, 1500, 2900}},
		{"import", []step{{"import", big, true}}, []int{1, 2, 500, 7000, 14900}},
		{"sync of a session with sub-agents", []step{{"sync", withAgents, true}}, []int{400, 9000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Each case has its own homes and storages; its kill points
			// run one after the other. Each sync or import runs on one
			// core, so the cases share the cores with each other and
			// with the other tests.
			t.Parallel()
			setup := func(h *fakeHome, b []byte) []string {
				var files []string
				if tc.steps[0].cmd == "import" {
					files = append(files, h.put("saved/a-small.jsonl", small, time.Hour), h.put("saved/big.jsonl", b, time.Hour))
				} else {
					h.put(".claude/projects/-w/a-small.jsonl", small, time.Hour)
					h.put(".claude/projects/-w/big.jsonl", b, time.Hour)
				}
				return files
			}
			args := func(cmd string, files []string) []string {
				if cmd == "import" {
					return append([]string{"import", "--provider", "claude"}, files...)
				}
				return []string{"sync"}
			}
			// What a run never killed archives.
			ref := newFakeHome(t)
			var files []string
			for _, s := range tc.steps {
				files = setup(ref, s.big)
				ref.ok(args(s.cmd, files)...)
			}
			refRuns := clitest.StorageRuns(t, ref.stor)
			want := clitest.ArchivedOf(t, refRuns)
			if len(want) != 2 || len(want["big.jsonl"]) != 1 {
				t.Fatalf("reference: %v", want)
			}
			wantSubs := subRunsOf(refRuns)
			phrases := subRunPhrases(wantSubs)
			wantHits := searchCounts(t, ref, phrases)

			// The steps before the killed one (the last) run once: each
			// kill point starts from a copy of what they left, restored
			// at the same paths (the ledger and the index name them).
			var base *fakeHome
			var baseHome, baseStor string
			if len(tc.steps) > 1 {
				base = newFakeHome(t)
				for _, s := range tc.steps[:len(tc.steps)-1] {
					if s.kill {
						t.Fatal("only the last step of a case is killed")
					}
					base.ok(args(s.cmd, setup(base, s.big))...)
				}
				baseHome, baseStor = snapshotTree(t, base.dir), snapshotTree(t, base.stor)
			}

			landed := 0
			for _, at := range tc.at {
				t.Run(fmt.Sprintf("at_line_%d", at), func(t *testing.T) {
					var h *fakeHome
					if base == nil {
						h = newFakeHome(t)
					} else {
						restoreTree(t, baseHome, base.dir)
						restoreTree(t, baseStor, base.stor)
						at := *base
						at.t = t // the same home and storage, failing this test
						h = &at
					}
					w := &lineWatch{stor: h.stor, name: "big"}
					var files []string
					for _, s := range tc.steps[len(tc.steps)-1:] {
						files = setup(h, s.big)
						if !s.kill {
							h.ok(args(s.cmd, files)...)
							continue
						}
						base := w.count()
						p := start(t, nil, h.env, append([]string{"--storage", h.stor}, args(s.cmd, files)...)...)
						signalAt(t, p, w, base+at, syscall.SIGKILL)
						if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
							landed++
							t.Logf("killed at %d lines of the part", w.count()-base)
							d := h.run("doctor", "--json")
							if unfinishedPart(t, w.file) && !strings.Contains(d.out, "was interrupted") {
								t.Errorf("doctor does not say the archive was interrupted: %s", d.out)
							}
						} else {
							t.Logf("ended before the kill (exit %d)", p.cmd.ProcessState.ExitCode())
						}
					}
					last := tc.steps[len(tc.steps)-1]
					r := h.ok(args(last.cmd, files)...)
					t.Logf("settled: %s%s", r.out, r.errOut)
					if last.cmd == "sync" {
						// The summary counts what the sync did, the
						// settled session included: as many new, grown,
						// closed and settled as outcome lines say.
						did := 0
						for _, l := range strings.Split(strings.TrimSpace(r.out), "\n") {
							if a, _, _ := strings.Cut(l, "\t"); a == "new" || a == "grown" || a == "closed" || a == "settled" || a == "continued" {
								did++
							}
						}
						m := regexp.MustCompile(`(\d+) new, (\d+) grown, (\d+) continued, \d+ unchanged, (\d+) closed(?:, (\d+) settled)?`).FindStringSubmatch(r.errOut)
						if m == nil {
							t.Fatalf("no summary: %s", r.errOut)
						}
						sum := 0
						for _, n := range m[1:] {
							v, _ := strconv.Atoi(n)
							sum += v
						}
						if sum != did {
							t.Errorf("the summary counts %d changes where sync printed %d:\n%s%s", sum, did, r.out, r.errOut)
						}
					}
					again := h.ok(args(last.cmd, files)...)
					if last.cmd == "sync" && strings.TrimSpace(again.out) != "" {
						t.Errorf("a second sync still changed something: %s", again.out)
					}

					stored := clitest.StorageRuns(t, h.stor)
					got := clitest.ArchivedOf(t, stored)
					for name, runs := range want {
						if len(got[name]) != len(runs) {
							var desc []string
							for _, r := range got[name] {
								desc = append(desc, fmt.Sprintf("%s (%d messages, ended %v)", r.ID, len(r.Messages), r.Finished))
							}
							t.Fatalf("%s: %d run(s), want %d (one per session): %s", name, len(got[name]), len(runs), strings.Join(desc, ", "))
						}
						g, wr := got[name][0], runs[0]
						if strings.Join(g.Messages, "\n") != strings.Join(wr.Messages, "\n") {
							t.Errorf("%s: %d messages, want %d as a run never killed holds them (each once)", name, len(g.Messages), len(wr.Messages))
						}
						if g.Raw == nil || g.Raw.SHA256 != wr.Raw.SHA256 || g.Raw.Bytes != wr.Raw.Bytes {
							t.Errorf("%s: raw capture %+v, want %+v", name, g.Raw, wr.Raw)
						}
						if ents, _ := os.ReadDir(filepath.Join(h.stor, "raw", g.ID)); len(ents) != 1 {
							t.Errorf("%s: %d raw captures, want 1", name, len(ents))
						}
						if g.Finished != wr.Finished {
							t.Errorf("%s: ended %v, want %v", name, g.Finished, wr.Finished)
						}
					}
					// Each sub-agent once: one sub-run not superseded
					// per sub-agent of a sync never killed, and search
					// finds its messages as often.
					if got := subRunsOf(stored); strings.Join(got, "\n") != strings.Join(wantSubs, "\n") {
						t.Errorf("%d sub-runs not superseded, want %d (one per sub-agent), with their messages as a sync never killed holds them", len(got), len(wantSubs))
					}
					if got := searchCounts(t, h, phrases); fmt.Sprint(got) != fmt.Sprint(wantHits) {
						t.Errorf("search finds the sub-agents' messages %v times, want %v", got, wantHits)
					}
					ls := h.ok("ls", "--json")
					for _, l := range strings.Split(strings.TrimSpace(ls.out), "\n") {
						var row struct {
							RunID  string `json:"run_id"`
							Status string `json:"status"`
						}
						if err := json.Unmarshal([]byte(l), &row); err != nil {
							t.Fatalf("ls: %v: %s", err, l)
						}
						if row.Status == "running" {
							t.Errorf("ls lists run %s as running", row.RunID)
						}
					}
					d := h.ok("doctor", "--json")
					if strings.Contains(d.out, "interrupted") {
						t.Errorf("doctor still sees an interrupted archive: %s", d.out)
					}
					if last.cmd == "sync" && !strings.Contains(d.out, `"not_archived":0`) {
						t.Errorf("doctor: sessions not archived: %s", d.out)
					}
					paths, _ := filepath.Glob(filepath.Join(h.stor, "transcripts", "*.jsonl"))
					if v := h.run(append([]string{"validate"}, paths...)...); v.code != 0 {
						t.Errorf("validate: %v", v)
					}
				})
			}
			t.Logf("%d of %d kills landed before the command ended", landed, len(tc.at))
		})
	}
}

// snapshotTree copies the tree at dir (directories, regular files with
// their modes and modification times) into a new directory, for
// restoreTree.
func snapshotTree(t *testing.T, dir string) string {
	t.Helper()
	snap := filepath.Join(t.TempDir(), "snapshot")
	copyTree(t, dir, snap)
	return snap
}

// restoreTree makes dst what snap holds again: what is there is removed,
// and snap's tree is copied in at the same path.
func restoreTree(t *testing.T, snap, dst string) {
	t.Helper()
	if err := os.RemoveAll(dst); err != nil {
		t.Fatal(err)
	}
	copyTree(t, snap, dst)
}

// copyTree copies src's directories and regular files to dst, keeping
// modes and modification times (sync decides by a file's age; a
// directory's time is set once its files are in).
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	type dirTime struct {
		path string
		mod  time.Time
	}
	var dirs []dirTime
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			if err := os.MkdirAll(to, info.Mode().Perm()|0o700); err != nil {
				return err
			}
			dirs = append(dirs, dirTime{to, info.ModTime()})
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if err := os.WriteFile(to, b, info.Mode().Perm()); err != nil {
				return err
			}
			if err := os.Chtimes(to, info.ModTime(), info.ModTime()); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s: not a directory or a regular file", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Chtimes(dirs[i].path, dirs[i].mod, dirs[i].mod); err != nil {
			t.Fatal(err)
		}
	}
}

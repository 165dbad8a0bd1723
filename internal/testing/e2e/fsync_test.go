package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// syscallLine is one fsync or write(2) of a traced twasm, in the order
// the calls started: the file or directory it went to, relative to the
// storage, with the run id as RUN and a raw capture's name as *.raw, and
// for a write to the transcript, the event types it carried.
type syscallLine struct {
	call, path string
	types      []string
}

var (
	straceCall = regexp.MustCompile(`^\d+\s+(fsync|fdatasync|write)\(\d+<([^>]*)>(.*)$`)
	eventType  = regexp.MustCompile(`\\"type\\":\\"([a-z_.]+)\\"`)
	runIDRe    = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}`)
	rawName    = regexp.MustCompile(`/[^/]+\.raw(\.zst)?$`)
)

// traceRecord runs `twasm record` of the bundled example under strace
// and returns its fsyncs and its writes into the storage.
func traceRecord(t *testing.T, storage string, args ...string) []syscallLine {
	t.Helper()
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace is not installed (.ci/run installs it)")
	}
	out := filepath.Join(t.TempDir(), "trace")
	argv := append([]string{"-f", "-y", "-s", "1000000", "-e", "trace=fsync,fdatasync,write", "-o", out, binary,
		"--storage", storage, "record", "--provider", "claude", "--input", example(), "--quiet"}, args...)
	cmd := exec.Command(strace, argv...)
	cmd.Env = env()
	cmd.Dir = t.TempDir()
	done := make(chan struct{})
	var b []byte
	go func() { b, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(hangBound):
		_ = cmd.Process.Kill()
		<-done
		t.Fatal("strace twasm record did not end")
	}
	if err != nil {
		if strings.Contains(string(b), "ptrace") || strings.Contains(string(b), "Operation not permitted") {
			t.Skipf("strace cannot trace here: %s", b)
		}
		t.Fatalf("strace twasm record: %v\n%s", err, b)
	}
	trace, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.EvalSymlinks(storage)
	if err != nil {
		t.Fatal(err)
	}
	var lines []syscallLine
	for l := range strings.SplitSeq(string(trace), "\n") {
		m := straceCall.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		rel, err := filepath.Rel(root, m[2])
		if err != nil || strings.HasPrefix(rel, "..") && m[1] == "write" {
			continue // stdout, stderr, pipes, the runtime's own
		}
		rel = rawName.ReplaceAllString(runIDRe.ReplaceAllString(filepath.ToSlash(rel), "RUN"), "/*.raw")
		sl := syscallLine{call: m[1], path: rel}
		if m[1] == "write" {
			for _, e := range eventType.FindAllStringSubmatch(m[3], -1) {
				if strings.Contains(e[1], ".") && (strings.HasPrefix(e[1], "run.") || strings.HasPrefix(e[1], "step.")) {
					sl.types = append(sl.types, e[1])
				}
			}
		}
		lines = append(lines, sl)
	}
	return lines
}

// fsyncs returns the paths fsynced, in order, up to the search index's
// (SQLite's own, when a new storage gets its index after the record).
func fsyncs(lines []syscallLine) []string {
	var out []string
	for _, l := range lines {
		if strings.HasPrefix(l.path, "index.db") {
			break
		}
		if l.call != "write" {
			out = append(out, l.path)
		}
	}
	return out
}

// TestRecordFsyncOrder traces the fsyncs of `twasm record` under each
// policy (issue 12): the raw capture and its directory entries are
// durable before the write of the step's completion, which names it (the
// entries synced once each, while the plugin loads); the
// step's completion and run.completed are one write and one fsync; the
// transcript's entry is synced (in the background from the open on, and
// by the first promise if that has not succeeded); directories that every
// run shares are synced in their parents when they are made; and --fsync
// never syncs nothing.
func TestRecordFsyncOrder(t *testing.T) {
	t.Parallel()
	const (
		transcript = "transcripts/RUN.jsonl"
		raw        = "raw/RUN/*.raw"
	)
	// The writes of the transcript: the completions come last, together.
	checkEnd := func(t *testing.T, lines []syscallLine) int {
		t.Helper()
		last := -1
		for i, l := range lines {
			if l.call == "write" && l.path == transcript {
				last = i
			}
		}
		if last < 0 || !slices.Equal(lines[last].types, []string{"step.completed", "run.completed"}) {
			t.Fatalf("the last write of the transcript is not step.completed with run.completed: %+v", lines)
		}
		return last
	}
	for _, tt := range []struct {
		name   string
		fresh  bool
		policy string
		want   []string // the fsyncs, in order
	}{
		{"boundary", false, "boundary", []string{raw, transcript}},
		{"boundary, new storage", true, "boundary", []string{"..", ".", ".", raw, transcript}},
		{"always", false, "always", nil},
		{"never", false, "never", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			storage := filepath.Join(t.TempDir(), "storage")
			if !tt.fresh {
				twasmOK(t, "--storage", storage, "record", "--provider", "claude", "--input", example(), "--quiet")
			}
			lines := traceRecord(t, storage, "--fsync", tt.policy)
			end := checkEnd(t, lines)
			got := fsyncs(lines)
			// The transcript's entry: synced in the background from the
			// open on, and again by the first promise when that sync had
			// not succeeded by then; compared apart, as its place among
			// the others depends on the scheduler.
			entry := 0
			got = slices.DeleteFunc(got, func(p string) bool {
				if p == "transcripts" {
					entry++
					return true
				}
				return false
			})
			if tt.policy != "never" && (entry < 1 || entry > 2) {
				t.Fatalf("transcripts/ synced %d times: %+v", entry, lines)
			}
			// The raw capture's entries (its own in raw/RUN, that
			// directory's in raw/): synced once each, in the background
			// from the capture's start on, while the plugin loads
			// (capture.Options.EarlyEntries); compared apart too. That
			// they come before the completion is checked below.
			entries := map[string]int{}
			got = slices.DeleteFunc(got, func(p string) bool {
				if p == "raw" || p == "raw/RUN" {
					entries[p]++
					return true
				}
				return false
			})
			if tt.policy == "boundary" && (entries["raw"] != 1 || entries["raw/RUN"] != 1) {
				t.Fatalf("raw/ synced %d times, raw/RUN %d times: %+v", entries["raw"], entries["raw/RUN"], lines)
			}
			switch tt.policy {
			case "never":
				if len(got) > 0 {
					t.Fatalf("--fsync never synced %q", got)
				}
				return
			case "always":
				// Every write of the transcript is synced before the
				// next one; its entry is synced before the second write.
				pending, writes, entrySynced := false, 0, false
				for _, l := range lines {
					switch {
					case l.call == "write" && l.path == transcript:
						if pending || writes == 1 && !entrySynced {
							t.Fatalf("a write of the transcript before the last, or its entry, was synced: %+v", lines)
						}
						pending = true
						writes++
					case l.call != "write" && l.path == transcript:
						pending = false
					case l.call != "write" && l.path == "transcripts":
						entrySynced = true
					}
				}
				if pending || writes < 3 {
					t.Fatalf("%d writes of the transcript, the last one synced: %v", writes, !pending)
				}
			default:
				if !slices.Equal(got, tt.want) {
					t.Fatalf("fsyncs\n got %q\nwant %q", got, tt.want)
				}
			}
			// The raw capture and its entries before the completion that
			// names it; the transcript's sync after it.
			for _, p := range []string{raw, "raw/RUN", "raw"} {
				i := slices.IndexFunc(lines, func(l syscallLine) bool { return l.call != "write" && l.path == p })
				if i < 0 || i > end {
					t.Errorf("%s is not synced before the step's completion is written: %+v", p, lines)
				}
			}
			if !slices.ContainsFunc(lines[end:], func(l syscallLine) bool { return l.call != "write" && l.path == transcript }) {
				t.Errorf("the completions are not synced: %+v", lines)
			}
		})
	}
}

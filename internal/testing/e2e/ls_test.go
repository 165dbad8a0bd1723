package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// recordID records input and returns the new run's id.
func recordID(t *testing.T, storage, provider, input string, extra ...string) string {
	t.Helper()
	r := twasmOK(t, append([]string{"--storage", storage, "record", "--provider", provider, "--json", "--input", input}, extra...)...)
	var s struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(r.out), &s); err != nil || s.RunID == "" {
		t.Fatalf("record --json: %v %s", err, r.out)
	}
	return s.RunID
}

// TestStorageRoot: without --storage or $TWASM_STORAGE runs go to
// $XDG_DATA_HOME/twasm, found from any working directory; a storage root
// that does not exist is an error naming it and the ways to set it.
func TestStorageRoot(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	xdg := []string{"XDG_DATA_HOME=" + data}
	r := start(t, nil, xdg, "record", "--provider", "claude", "--input", example()).wait(t, hangBound)
	if r.code != 0 {
		t.Fatal(r)
	}
	m, _ := filepath.Glob(filepath.Join(data, "twasm", "transcripts", "*.jsonl"))
	if len(m) != 1 {
		t.Fatalf("%d transcripts under $XDG_DATA_HOME/twasm", len(m))
	}
	// start runs every process in a new temporary working directory.
	if r := start(t, nil, xdg, "ls").wait(t, hangBound); r.code != 0 || !strings.Contains(r.out, strings.TrimSuffix(filepath.Base(m[0]), ".jsonl")) {
		t.Errorf("ls from elsewhere: %v", r)
	}
	if r := start(t, nil, append(xdg, "TWASM_STORAGE="+filepath.Join(data, "other")), "ls").wait(t, hangBound); r.code != 2 {
		t.Errorf("$TWASM_STORAGE is not honoured: %v", r)
	}

	missing := filepath.Join(t.TempDir(), "nosuch")
	for _, args := range [][]string{{"ls"}, {"view", "latest"}, {"tree", "0b6e8c0e"}, {"stats", "--all"},
		{"tools", "0b6e8c0e-5c1e-4f7e-9d8a-1f2e3d4c5b6a"}} {
		r := twasm(t, append([]string{"--storage", missing}, args...)...)
		if r.code != 2 || !strings.Contains(r.errOut, missing) || !strings.Contains(r.errOut, "--storage") ||
			!strings.Contains(r.errOut, "TWASM_STORAGE") || !strings.Contains(r.errOut, "does not exist") {
			t.Errorf("%v with a missing storage root: %v", args, r)
		}
	}
}

// TestReadersSeeRecordedRuns: record leaves the search index alone once
// it exists (it creates a missing one), so ls, stats --all and search
// must read the runs it lacks themselves: right after each record, in
// either order, every reader shows the new run (and a step appended to a
// run already indexed), and none of them reports a missing or rebuilt
// index.
func TestReadersSeeRecordedRuns(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	quiet := func(r result, what string) {
		t.Helper()
		if r.errOut != "" {
			t.Errorf("%s: stderr %q, want nothing", what, r.errOut)
		}
	}
	searchRuns := func(query string) []string {
		t.Helper()
		r := twasmOK(t, "--storage", storage, "search", "--json", "--every", query)
		quiet(r, "search "+query)
		var ids []string
		for _, l := range strings.Split(strings.TrimSpace(r.out), "\n") {
			var h struct {
				RunID string `json:"run_id"`
			}
			if l == "" {
				continue
			}
			if err := json.Unmarshal([]byte(l), &h); err != nil {
				t.Fatalf("search --json line %q: %v", l, err)
			}
			if !slices.Contains(ids, h.RunID) {
				ids = append(ids, h.RunID)
			}
		}
		slices.Sort(ids)
		return ids
	}
	lsRuns := func() []string {
		t.Helper()
		r := twasmOK(t, "--storage", storage, "ls")
		quiet(r, "ls")
		var ids []string
		for _, l := range strings.Split(strings.TrimSpace(r.out), "\n") {
			if l != "" {
				ids = append(ids, strings.Split(l, "\t")[0])
			}
		}
		slices.Sort(ids)
		return ids
	}
	statsRuns := func() int {
		t.Helper()
		r := twasmOK(t, "--storage", storage, "stats", "--all", "--json")
		quiet(r, "stats --all")
		var s struct {
			Runs int `json:"runs"`
		}
		if err := json.Unmarshal([]byte(r.out), &s); err != nil {
			t.Fatalf("stats --all --json: %v %s", err, r.out)
		}
		return s.Runs
	}
	sorted := func(ids ...string) []string { return slices.Sorted(slices.Values(ids)) }

	// A fresh storage: record creates the index with its run.
	first := recordID(t, storage, "claude", example())
	if _, err := os.Stat(filepath.Join(storage, "index.db")); err != nil {
		t.Fatalf("record into a storage without an index did not create it: %v", err)
	}
	if got := lsRuns(); !slices.Equal(got, []string{first}) {
		t.Fatalf("ls after the first record: %v, want %v", got, []string{first})
	}
	if got := searchRuns("hello.py"); !slices.Equal(got, []string{first}) {
		t.Fatalf("search after the first record: %v", got)
	}
	if n := statsRuns(); n != 1 {
		t.Fatalf("stats --all after the first record: %d runs", n)
	}

	// The index exists: the next record leaves it as it is, and each
	// reader, the first to run included, finds the new run.
	second := recordID(t, storage, "codex", golden("codex", "exec_command.jsonl"))
	if got := searchRuns("vitest"); !slices.Equal(got, []string{second}) {
		t.Errorf("search right after a record: %v, want %v", got, []string{second})
	}
	if got := lsRuns(); !slices.Equal(got, sorted(first, second)) {
		t.Errorf("ls after search: %v", got)
	}
	third := recordID(t, storage, "codex", golden("codex", "exec_command.jsonl"))
	if got := lsRuns(); !slices.Equal(got, sorted(first, second, third)) {
		t.Errorf("ls right after a record: %v", got)
	}
	if n := statsRuns(); n != 3 {
		t.Errorf("stats --all after ls: %d runs, want 3", n)
	}
	if got := searchRuns("vitest"); !slices.Equal(got, sorted(second, third)) {
		t.Errorf("search after ls: %v", got)
	}
	fourth := recordID(t, storage, "claude", example())
	if n := statsRuns(); n != 4 {
		t.Errorf("stats --all right after a record: %d runs, want 4", n)
	}

	// A step appended to an indexed run (the file grew) is found too.
	run := strings.TrimSpace(twasmOK(t, "--storage", storage, "run", "begin", "--name", "grown").out)
	twasmOK(t, "--storage", storage, "record", "--run-id", run, "--path", "one", "--provider", "claude", "--input", example())
	if got := searchRuns("vitest"); slices.Contains(got, run) {
		t.Fatalf("search found the codex words in a run holding only claude's: %v", got)
	}
	twasmOK(t, "--storage", storage, "record", "--run-id", run, "--path", "two", "--provider", "codex", "--input", golden("codex", "exec_command.jsonl"))
	if got := searchRuns("vitest"); !slices.Equal(got, sorted(second, third, run)) {
		t.Errorf("search after a step was appended to an indexed run: %v", got)
	}
	if got := lsRuns(); !slices.Equal(got, sorted(first, second, third, fourth, run)) {
		t.Errorf("ls after a step was appended: %v", got)
	}
}

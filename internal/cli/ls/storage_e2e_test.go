package ls_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// TestStorageRoot: without --storage or $TWASM_STORAGE runs go to
// $XDG_DATA_HOME/twasm, found from any working directory; a storage root
// that does not exist is an error naming it and the ways to set it.
func TestStorageRoot(t *testing.T) {
	// Not parallel: every command runs from a working directory of its
	// own (t.Chdir), as the binary is run from anywhere.
	data := t.TempDir()
	xdg := map[string]string{"XDG_DATA_HOME": data, "NO_COLOR": "1"}
	example, err := filepath.Abs(clitest.Example())
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	r := clitest.Run(t, xdg, "record", "--provider", "claude", "--input", example)
	if r.Code != 0 {
		t.Fatal(r)
	}
	m, _ := filepath.Glob(filepath.Join(data, "twasm", "transcripts", "*.jsonl"))
	if len(m) != 1 {
		t.Fatalf("%d transcripts under $XDG_DATA_HOME/twasm", len(m))
	}
	t.Chdir(t.TempDir())
	if r := clitest.Run(t, xdg, "ls"); r.Code != 0 || !strings.Contains(r.Out, strings.TrimSuffix(filepath.Base(m[0]), ".jsonl")) {
		t.Errorf("ls from elsewhere: %v", r)
	}
	xdg["TWASM_STORAGE"] = filepath.Join(data, "other")
	if r := clitest.Run(t, xdg, "ls"); r.Code != 2 {
		t.Errorf("$TWASM_STORAGE is not honoured: %v", r)
	}

	missing := filepath.Join(t.TempDir(), "nosuch")
	for _, args := range [][]string{{"ls"}, {"view", "latest"}, {"tree", "0b6e8c0e"}, {"stats", "--all"},
		{"tools", "0b6e8c0e-5c1e-4f7e-9d8a-1f2e3d4c5b6a"}} {
		r := clitest.Run(t, clitest.Plain(), append([]string{"--storage", missing}, args...)...)
		if r.Code != 2 || !strings.Contains(r.ErrOut, missing) || !strings.Contains(r.ErrOut, "--storage") ||
			!strings.Contains(r.ErrOut, "TWASM_STORAGE") || !strings.Contains(r.ErrOut, "does not exist") {
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
	quiet := func(r clitest.Result, what string) {
		t.Helper()
		if r.ErrOut != "" {
			t.Errorf("%s: stderr %q, want nothing", what, r.ErrOut)
		}
	}
	searchRuns := func(query string) []string {
		t.Helper()
		r := clitest.RunOK(t, clitest.Plain(), "--storage", storage, "search", "--json", "--every", query)
		quiet(r, "search "+query)
		var ids []string
		for _, l := range strings.Split(strings.TrimSpace(r.Out), "\n") {
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
		r := clitest.RunOK(t, clitest.Plain(), "--storage", storage, "ls")
		quiet(r, "ls")
		var ids []string
		for _, l := range strings.Split(strings.TrimSpace(r.Out), "\n") {
			if l != "" {
				ids = append(ids, strings.Split(l, "\t")[0])
			}
		}
		slices.Sort(ids)
		return ids
	}
	statsRuns := func() int {
		t.Helper()
		r := clitest.RunOK(t, clitest.Plain(), "--storage", storage, "stats", "--all", "--json")
		quiet(r, "stats --all")
		var s struct {
			Runs int `json:"runs"`
		}
		if err := json.Unmarshal([]byte(r.Out), &s); err != nil {
			t.Fatalf("stats --all --json: %v %s", err, r.Out)
		}
		return s.Runs
	}
	sorted := func(ids ...string) []string { return slices.Sorted(slices.Values(ids)) }

	// A fresh storage: record creates the index with its run.
	first := clitest.Record(t, storage, "claude", clitest.Example())
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
	second := clitest.Record(t, storage, "codex", clitest.Golden("codex", "exec_command.jsonl"))
	if got := searchRuns("vitest"); !slices.Equal(got, []string{second}) {
		t.Errorf("search right after a record: %v, want %v", got, []string{second})
	}
	if got := lsRuns(); !slices.Equal(got, sorted(first, second)) {
		t.Errorf("ls after search: %v", got)
	}
	third := clitest.Record(t, storage, "codex", clitest.Golden("codex", "exec_command.jsonl"))
	if got := lsRuns(); !slices.Equal(got, sorted(first, second, third)) {
		t.Errorf("ls right after a record: %v", got)
	}
	if n := statsRuns(); n != 3 {
		t.Errorf("stats --all after ls: %d runs, want 3", n)
	}
	if got := searchRuns("vitest"); !slices.Equal(got, sorted(second, third)) {
		t.Errorf("search after ls: %v", got)
	}
	fourth := clitest.Record(t, storage, "claude", clitest.Example())
	if n := statsRuns(); n != 4 {
		t.Errorf("stats --all right after a record: %d runs, want 4", n)
	}

	// A step appended to an indexed run (the file grew) is found too.
	run := strings.TrimSpace(clitest.RunOK(t, clitest.Plain(), "--storage", storage, "run", "begin", "--name", "grown").Out)
	clitest.RunOK(t, clitest.Plain(), "--storage", storage, "record", "--run-id", run, "--path", "one", "--provider", "claude", "--input", clitest.Example())
	if got := searchRuns("vitest"); slices.Contains(got, run) {
		t.Fatalf("search found the codex words in a run holding only claude's: %v", got)
	}
	clitest.RunOK(t, clitest.Plain(), "--storage", storage, "record", "--run-id", run, "--path", "two", "--provider", "codex", "--input", clitest.Golden("codex", "exec_command.jsonl"))
	if got := searchRuns("vitest"); !slices.Equal(got, sorted(second, third, run)) {
		t.Errorf("search after a step was appended to an indexed run: %v", got)
	}
	if got := lsRuns(); !slices.Equal(got, sorted(first, second, third, fourth, run)) {
		t.Errorf("ls after a step was appended: %v", got)
	}
}

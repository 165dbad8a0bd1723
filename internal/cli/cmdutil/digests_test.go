package cmdutil

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/twasm/twasm/internal/index"
	"github.com/twasm/twasm/internal/testing/viewstest"
	"github.com/twasm/twasm/internal/views"
)

// RunDigests gives each run's digest through the index, the same as
// reading the file; a missing index is built and said, a damaged one
// rebuilt and said, and a digest stored damaged is read from the file.
func TestRunDigests(t *testing.T) {
	ctx := context.Background()
	storage := t.TempDir()
	viewstest.WriteStore(t, storage)
	f := &Factory{StorageFlag: storage}
	ids, err := f.ListRuns()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*views.RunDigest{}
	for _, id := range ids {
		want[id] = views.DigestFile(filepath.Join(f.TranscriptDir(), id+".jsonl"))
	}
	check := func(stage, say string) {
		t.Helper()
		var w bytes.Buffer
		got, err := f.RunDigests(ctx, ids, &w)
		if err != nil {
			t.Fatalf("%s: %v", stage, err)
		}
		if say == "" && w.Len() > 0 || !strings.Contains(w.String(), say) {
			t.Errorf("%s: said %q, want %q", stage, w.String(), say)
		}
		for _, id := range ids {
			if a, b := mustJSON(t, got[id]), mustJSON(t, want[id]); a != b {
				t.Errorf("%s: digest of %s\n%s\nwant\n%s", stage, id, a, b)
			}
		}
	}
	check("missing", "was missing: built from the transcripts")
	check("cached", "")
	viewstest.WriteFile(t, index.File(storage), bytes.Repeat([]byte("damaged "), 600))
	for _, s := range []string{"-wal", "-shm"} {
		os.Remove(index.File(storage) + s)
	}
	check("damaged", "rebuilt from the transcripts")

	// A stored digest that is not JSON any more: read from the file.
	db, err := sql.Open("sqlite", "file:"+index.File(storage))
	if err != nil {
		t.Fatal(err)
	}
	if res, err := db.Exec(`UPDATE derived SET data = 'not json'`); err != nil {
		t.Fatal(err)
	} else if n, _ := res.RowsAffected(); n != int64(len(ids)) {
		t.Fatalf("%d entries damaged", n)
	}
	db.Close()
	check("unreadable entry", "")

	// An index that cannot be made: an error, for the caller to read the
	// files instead.
	bad := &Factory{StorageFlag: filepath.Join(index.File(storage), "sub")}
	if _, err := bad.RunDigests(ctx, nil, &bytes.Buffer{}); err == nil {
		t.Error("an index under a file was opened")
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteJSON(&b, v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestOutputHelpers(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSONLines(&b, []map[string]string{{"a": "<b>"}, {"c": "d"}}); err != nil || b.String() != "{\"a\":\"<b>\"}\n{\"c\":\"d\"}\n" {
		t.Errorf("json lines %q %v", b.String(), err)
	}
	if err := WriteJSON(&b, func() {}); err == nil {
		t.Error("a func was encoded")
	}
	if err := WriteJSONLines(&b, []any{func() {}}); err == nil {
		t.Error("a func was encoded")
	}
	cmd := &cobra.Command{Use: "x"}
	if err := ExactArgs(1, "RUN")(cmd, nil); ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "takes 1 argument (RUN), got 0") {
		t.Errorf("exact: %v", err)
	}
	if err := ExactArgs(1, "RUN")(cmd, []string{"a"}); err != nil {
		t.Error(err)
	}
	if err := MinimumArgs(2, "FILE")(cmd, []string{"a"}); ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "at least 2") {
		t.Errorf("minimum: %v", err)
	}
	if err := MinimumArgs(1, "FILE")(cmd, []string{"a"}); err != nil {
		t.Error(err)
	}
	if got := RedactedSummary(nil); got != "nothing matched a secret pattern" {
		t.Error(got)
	}
	if got := RedactedSummary(map[string]int{"bearer": 2, "aws_key": 1}); got != "3 value(s): aws_key 1, bearer 2" {
		t.Error(got)
	}
	if p := (&Factory{}).Producer(); p.Name != "twasm" || p.Version == "" {
		t.Errorf("producer %+v", p)
	}
}

// LoadRun and LoadTree read a RUN argument with the reasons a file
// cannot be used; completion offers the run ids.
func TestLoadRunAndCompletion(t *testing.T) {
	storage := t.TempDir()
	dir := viewstest.WriteStore(t, storage)
	f := &Factory{StorageFlag: storage}
	if err := f.RequireStorage(); err != nil {
		t.Fatal(err)
	}
	tree, err := f.LoadTree(viewstest.Root[:6])
	if err != nil || len(tree.Runs()) != 2 {
		t.Fatalf("tree: %v", err)
	}
	junk := filepath.Join(dir, "junk.jsonl")
	viewstest.WriteFile(t, junk, []byte("hello\n"))
	if _, _, err := f.LoadRun(junk); ExitCode(err) != ExitUsage || !errors.Is(err, views.ErrNotTranscript) {
		t.Errorf("junk: %v", err)
	}
	if _, err := f.LoadTree(filepath.Join(dir, "missing.jsonl")); ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "missing.jsonl") {
		t.Errorf("missing: %v", err)
	}
	if _, err := f.LoadTree("zz-not-a-run"); err == nil {
		t.Error("a bad argument was loaded")
	}
	pe := PathInputError("/p", &fs.PathError{Op: "open", Path: "/p", Err: fs.ErrPermission})
	if strings.Count(pe.Error(), "/p") != 1 {
		t.Errorf("path named twice: %v", pe)
	}
	got, _ := f.CompleteRuns(nil, nil, "cc")
	if len(got) != 1 || got[0] != viewstest.Child {
		t.Errorf("completion %v", got)
	}
	none := &Factory{StorageFlag: filepath.Join(storage, "nosuch")}
	if got, _ := none.CompleteRuns(nil, nil, ""); len(got) != 0 {
		t.Errorf("completion without storage %v", got)
	}
	if err := none.RequireStorage(); !errors.Is(err, ErrNoStorage) {
		t.Errorf("require: %v", err)
	}
}

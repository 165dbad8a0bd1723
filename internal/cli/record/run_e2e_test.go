package record_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/clitest"
	"github.com/twasm/twasm/transcript"
)

// TestContinueReadsTheEnd: record --run-id and run end read the run's
// checkpoint and what follows it, not the whole file: with the first line
// (run.started) blanked out in place, which a whole-file read refuses as
// "not a run", both still work.
func TestContinueReadsTheEnd(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	id := strings.TrimSpace(clitest.RunOK(t, clitest.Plain(), "--storage", storage, "run", "begin", "--name", "attacked").Out)
	clitest.RunOK(t, clitest.Plain(), "--storage", storage, "record", "--run-id", id, "--path", "one", "--provider", "claude", "--input", clitest.Example())
	file := clitest.TranscriptPath(storage, id)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	nl := bytes.IndexByte(b, '\n')
	first := bytes.Clone(b[:nl])
	blank := append(bytes.Repeat([]byte(" "), nl), b[nl:]...)
	if err := os.WriteFile(file, blank, 0o600); err != nil {
		t.Fatal(err)
	}
	clitest.RunOK(t, clitest.Plain(), "--storage", storage, "record", "--run-id", id, "--path", "two", "--provider", "claude", "--input", clitest.Example())
	clitest.RunOK(t, clitest.Plain(), "--storage", storage, "run", "end", id)
	// Put line 1 back: the whole run is valid.
	b, _ = os.ReadFile(file)
	copy(b, first)
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	evs := clitest.ReadRun(t, file)
	clitest.CheckSeq(t, evs)
	if len(clitest.OfType(evs, transcript.StepCompleted)) != 2 || evs[0].Type != transcript.RunStarted {
		t.Fatal("two steps in a run expected")
	}
	clitest.RunEnd(t, evs)
	clitest.Validate(t, file)
}

// TestStepPathValidated: a --path that cannot name a step (or its raw
// capture files) is refused before anything is written.
func TestStepPathValidated(t *testing.T) {
	t.Parallel()
	storage := t.TempDir()
	for _, p := range []string{"a/b", "a..b", "a b", `a\b`} {
		r := clitest.Run(t, clitest.Plain(), "--storage", storage, "record", "--provider", "claude", "--path", p, "--input", clitest.Example())
		if r.Code != 2 || !strings.Contains(r.ErrOut, "--path") {
			t.Errorf("--path %q: %v", p, r)
		}
	}
	if _, err := os.Stat(filepath.Join(storage, "transcripts")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("something was written for an invalid --path: %v", err)
	}
	id := strings.TrimSpace(clitest.RunOK(t, clitest.Plain(), "--storage", storage, "run", "begin", "--name", "attacked").Out)
	before, _ := os.ReadFile(clitest.TranscriptPath(storage, id))
	r := clitest.Run(t, clitest.Plain(), "--storage", storage, "run", "begin", "--parent", id, "--path", "a/b")
	if r.Code != 2 {
		t.Errorf("run begin --path a/b: %v", r)
	}
	if after, _ := os.ReadFile(clitest.TranscriptPath(storage, id)); !bytes.Equal(before, after) {
		t.Error("run begin with an invalid --path wrote to the parent")
	}
}

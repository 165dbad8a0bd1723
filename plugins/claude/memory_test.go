//go:build !wasip1

package claude

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/benchtest"
)

// distinctCopies is count distinct copies of the line-oriented claude
// golden inputs (benchtest.Copies: the ids of each copy its own), as
// `make bench`'s RSS record makes them.
func distinctCopies(t *testing.T, count int) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "golden", "claude", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var one bytes.Buffer
	for _, f := range files {
		if strings.HasSuffix(f, ".golden.jsonl") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		one.Write(bytes.TrimRight(b, "\n"))
		one.WriteByte('\n')
	}
	c := benchtest.NewCopies(one.Bytes())
	var out []byte
	for i := range count {
		out = c.Append(out, i)
	}
	return string(out)
}

// TestStateFlatOnDistinctCopies feeds 40 and then 80 distinct copies
// of the claude golden inputs, each run in one stream, and counts what
// the normalizer kept past the windows: the entries of calls (but the
// calls without a result, which are kept for their result however late:
// spec 6.3), taskCalls, scopeIDs and scopePrompt. Past the windows
// (1,024 answered calls) those must not grow with the copies but by the
// Task calls that never got a result (one a copy: their latest-call
// entry): an answered Task or Agent call once kept for the whole
// stream, and its scope id's copy and unclaimed prompt with it, 22
// entries a copy.
func TestStateFlatOnDistinctCopies(t *testing.T) {
	const k, maxPerCopy = 40, 4
	kept := func(raw string) (int, int) {
		_, n := runState(t, raw)
		unanswered := 0
		for _, c := range n.calls {
			if !c.resulted {
				unanswered++
			}
		}
		return len(n.calls) - unanswered + len(n.taskCalls) + len(n.scopeIDs) + len(n.scopePrompt), unanswered
	}
	k1, u1 := kept(distinctCopies(t, k))
	k2, u2 := kept(distinctCopies(t, 2*k))
	t.Logf("kept %d after %d copies, %d after %d (calls without a result: %d, %d)", k1, k, k2, 2*k, u1, u2)
	if grew := k2 - k1; grew > maxPerCopy*k {
		t.Errorf("the state kept grew by %d entries over %d more distinct copies (at most %d a copy)", grew, k, maxPerCopy)
	}
	if u2 != 2*u1 {
		t.Errorf("calls without a result: %d after %d copies, %d after %d: each copy's are kept", u1, k, u2, 2*k)
	}
}

//go:build !wasip1

package kimi_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/kimi"
)

// TestForkMarker: Kimi Code's /fork copies the session's directory, each
// agent's wire.jsonl whole, then appends {"type":"forked","time"} to
// every agent's journal (SessionStore.fork and appendForkedMarkers,
// MoonshotAI/kimi-code d723cc47,
// packages/agent-core/src/session/store/session-store.ts), and the fork
// goes on after it. The tokens the lines before the marker state are the
// parent's: the fork's step counts only what follows (the turns before
// stay shown, a warning says so). A journal without the marker is read
// as before, and so is the parent's run that the host grew by the fork's
// file (the part's facts line names another session than the first):
// the copy is what that run held already.
func TestForkMarker(t *testing.T) {
	read := func(name string) []byte { return goldenInput(t, name) }
	parent := read("code_tools_failed_turn.jsonl")
	_, own, _ := bytes.Cut(read("code_approval_rejected.jsonl"), []byte("\n")) // its turn, without its metadata line
	marker := []byte(`{"type":"forked","time":1785699999000}` + "\n")
	join := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	facts := func(session string) []byte {
		return []byte(`{"$twasm":"source","store":"Kimi Code sessions","path":"wd_proj_3f2a1b0c9d8e/` + session + `/agents/main/wire.jsonl","name":"wire.jsonl","size":1,"mtime":"2026-11-20T10:00:00Z"}` + "\n")
	}
	tests := []struct {
		name          string
		in            []byte
		input, output int64
		warned        bool
	}{
		{"the parent", parent, 10292, 64, false},
		{"a fork not yet continued", join(parent, marker), 0, 0, true},
		{"a fork and its own turn", join(parent, marker, own), 7864, 79, true},
		{"the same lines without the marker", join(parent, own), 10292 + 7864, 64 + 79, false},
		{"a fork of a fork: the last marker", join(parent, marker, own, marker, own), 7864, 79, true},
		{"synced, the fork's own run", join(facts("session_f"), parent, marker, own), 7864, 79, true},
		// A fork of a session that wrote nothing since starts with all
		// its bytes: the host archives the fork's file as more of that
		// session's run, the copy being the part it held already.
		{"synced, the parent's run grown by the fork's file", join(facts("session_p"), parent, facts("session_f"), marker, own), 10292 + 7864, 64 + 79, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkForkStep(t, tt.in, tt.input, tt.output, "forked from another session", tt.warned)
		})
	}
}

// TestCopiedLines: the Kimi CLI's /fork and /undo (kimi_cli/session_fork.py
// fork_session) write the parent's wire.jsonl lines, up to a turn, into a
// new session's journal with no mark; nothing in the session names its
// parent. The host finds such a copy (the new file starts with bytes a run
// of the same head holds, past the head) and says so in the facts line of
// the new run's first part ("copied": that run and how many lines): the
// lines are that run's, whose step counts their tokens. The fork's step
// counts only what follows (the copied turns stay shown, a warning says
// so), whether it follows at all, blank lines counted as the file has
// them. A facts line without the member (an older host), or one that is
// not the run's first, changes nothing.
func TestCopiedLines(t *testing.T) {
	read := func(name string) []byte { return goldenInput(t, name) }
	parent := read("legacy_side_question.jsonl")                                   // 8,700 input, 65 output
	_, own, _ := bytes.Cut(read("legacy_hook_blocked_prompt.jsonl"), []byte("\n")) // 2,092 input, 12 output; its metadata line left out
	lines := int64(bytes.Count(parent, []byte("\n")))
	join := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	facts := func(copied string) []byte {
		return []byte(`{"$twasm":"source","store":"Kimi CLI sessions","path":"3f2a1b0c9d8e/7c1e0d1a-0000-4000-8000-000000000002/wire.jsonl","name":"wire.jsonl","size":1,"mtime":"2026-11-20T10:00:00Z"` + copied + "}\n")
	}
	copied := func(n int64) string { return fmt.Sprintf(`,"copied":{"run":"01JRUNPARENT","lines":%d}`, n) }
	blank := bytes.Replace(parent, []byte("\n"), []byte("\n\n"), 1) // a blank second line
	tests := []struct {
		name          string
		in            []byte
		input, output int64
		warned        bool
	}{
		{"the parent", join(facts(""), parent), 8700, 65, false},
		{"a fork: the copied lines, then its own turn", join(facts(copied(lines)), parent, own), 2092, 12, true},
		{"a fork not yet continued", join(facts(copied(lines)), parent), 0, 0, true},
		{"a blank line in the copy", join(facts(copied(lines+1)), blank, own), 2092, 12, true},
		// Lines 1-9 copied: the first step's 4,200 input and 40 output
		// tokens; the second step's 4,500 and 25 follow.
		{"a copy that ends inside a turn", join(facts(copied(lines-6)), parent, own), 4500 + 2092, 25 + 12, true},
		{"no copy named (an older host)", join(facts(""), parent, own), 8700 + 2092, 65 + 12, false},
		{"a later part's facts line", join(facts(""), parent, facts(copied(lines)), own), 8700 + 2092, 65 + 12, false},
		{"a later part after the copy", join(facts(copied(lines)), parent, own, facts(""), own), 2 * 2092, 2 * 12, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkForkStep(t, tt.in, tt.input, tt.output, "lines are those run 01JRUNPARENT holds", tt.warned)
		})
	}
}

// goldenInput is a golden case's input.
func goldenInput(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../../testdata/golden/kimi", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkForkStep runs the plugin on in and checks the step's input and
// output tokens, that a warning holds warning exactly when warned says,
// and that every line is accounted for.
func checkForkStep(t *testing.T, in []byte, input, output int64, warning string, warned bool) {
	t.Helper()
	r, err := sdktest.Run(context.Background(), kimi.Plugin, "kimi", in)
	if err != nil {
		t.Fatal(err)
	}
	_, _, gotIn, gotOut := plugintest.FromResult(r).Summary(nil)
	if gotIn != input || gotOut != output {
		t.Errorf("usage in %d out %d; want %d, %d", gotIn, gotOut, input, output)
	}
	found := false
	for _, w := range r.Step.Warnings {
		found = found || strings.Contains(w, warning)
	}
	if found != warned {
		t.Errorf("warnings %q; want one holding %q: %v", r.Step.Warnings, warning, warned)
	}
	if len(r.Step.Unmapped) != 0 || r.SilentN != 0 {
		t.Errorf("unmapped %v, %d silent lines; want none", r.Step.Unmapped, r.SilentN)
	}
}

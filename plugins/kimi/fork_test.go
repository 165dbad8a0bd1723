//go:build !wasip1

package kimi_test

import (
	"bytes"
	"context"
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
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("../../testdata/golden/kimi", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
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
			r, err := sdktest.Run(context.Background(), kimi.Plugin, "kimi", tt.in)
			if err != nil {
				t.Fatal(err)
			}
			_, _, in, out := plugintest.FromResult(r).Summary(nil)
			if in != tt.input || out != tt.output {
				t.Errorf("usage in %d out %d; want %d, %d", in, out, tt.input, tt.output)
			}
			warned := false
			for _, w := range r.Step.Warnings {
				warned = warned || strings.HasPrefix(w, "forked from another session")
			}
			if warned != tt.warned {
				t.Errorf("warnings %q; want the fork's: %v", r.Step.Warnings, tt.warned)
			}
			if len(r.Step.Unmapped) != 0 || r.SilentN != 0 {
				t.Errorf("unmapped %v, %d silent lines; want none", r.Step.Unmapped, r.SilentN)
			}
		})
	}
}

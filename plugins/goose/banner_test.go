//go:build !wasip1

package goose_test

import (
	"context"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/goose"
)

// TestBannerSession: goose run prints, unless --quiet, a banner before its
// output (goose-cli's session/output.rs display_session_info, printed by
// session/builder.rs build_session), which names the session and the
// working directory: "    session id: <id>" and "    working directory:
// <dir>" under "starting session | provider: ... model: ..." (block/goose
// 2025), or, in later builds, "    <id> · <dir>" under "  ● new session ·
// <provider> <model>" (the id left out for a run without a session,
// "● ephemeral"). They are the run's session id and working directory;
// the banner's header is known too (its provider and model not read). Both were unmapped before: no session id,
// no cwd.
func TestBannerSession(t *testing.T) {
	events := `{"type":"message","message":{"id":null,"role":"user","created":1771715530,"content":[{"type":"text","text":"hi"}],"metadata":{"userVisible":true,"agentVisible":true}}}` + "\n" +
		`{"type":"message","message":{"id":"chatcmpl-1","role":"assistant","created":1771715535,"content":[{"type":"text","text":"hello"}],"metadata":{"userVisible":true,"agentVisible":true}}}` + "\n" +
		`{"type":"complete","total_tokens":null}` + "\n"
	tests := []struct {
		name, banner, session, cwd string
		unmapped                   int
	}{
		{"2025 banner", "starting session | provider: openai model: gpt-4o\n    session id: 20260101_3\n    working directory: /home/me/proj\n", "20260101_3", "/home/me/proj", 0},
		{"2025 banner, resumed", "resuming session | provider: openai model: gpt-4o\n    session id: 20260101_3\n    working directory: /home/me/my proj\n", "20260101_3", "/home/me/my proj", 0},
		{"2025 banner, no session", "running without session | provider: openai model: gpt-4o\n    working directory: /home/me/proj\n", "", "/home/me/proj", 0},
		{"later banner", "\n  ● new session · openai gpt-4o\n    20260101_3 · /home/me/proj\n", "20260101_3", "/home/me/proj", 0},
		{"later banner, ephemeral", "\n  ● ephemeral · openai gpt-4o\n        /home/me/proj\n", "", "/home/me/proj", 0},
		{"colours forced", "\x1b[2mstarting session |\x1b[0m \x1b[2mprovider:\x1b[0m openai\n    \x1b[2msession id:\x1b[0m \x1b[36m20260101_3\x1b[0m\n    \x1b[2mworking directory:\x1b[0m \x1b[36m/home/me/proj\x1b[0m\n", "20260101_3", "/home/me/proj", 0},
		{"quiet: no banner", "", "", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := sdktest.Run(context.Background(), goose.Plugin, "goose", []byte(tt.banner+events))
			if err != nil {
				t.Fatal(err)
			}
			if r.Step.SessionID != tt.session || r.Step.Cwd != tt.cwd {
				t.Errorf("session %q cwd %q, want %q %q", r.Step.SessionID, r.Step.Cwd, tt.session, tt.cwd)
			}
			if got := r.Step.Unmapped["non_json"]; got != tt.unmapped {
				t.Errorf("unmapped non_json %d, want %d (%v)", got, tt.unmapped, r.Step.Unmapped)
			}
			if r.Step.Status != "ok" || !strings.Contains(r.Step.Format, "stream") {
				t.Errorf("status %q format %q, want ok, stream-json", r.Step.Status, r.Step.Format)
			}
		})
	}
}

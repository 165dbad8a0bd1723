//go:build !wasip1

package goose_test

import (
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/goose"
)

// TestRecordedAndSynced: goose run writes its session into sessions.db
// (unless --no-session), and its stream-json output names neither the
// session nor its id, so a run recorded from that output and the run
// twasm sync archives from the database are two runs of the same
// session, nothing tying them. Where the stream states the session's
// counters (the usage it reports), a warning says that the database's
// run holds those tokens too; before, usage added them twice silently.
// The json output reports no usage (its total is the last call's), so
// no tokens of its are counted twice. Without --quiet, the banner before
// the events names the session and its directory: the run states them,
// which ties it to the database's run, and no warning is needed (before,
// the banner was unmapped and the session unnamed); a resumed session's
// counters are said to hold its earlier runs'.
func TestRecordedAndSynced(t *testing.T) {
	const (
		msg      = `{"type":"message","message":{"id":"m1","role":"assistant","created":1772359201,"content":[{"type":"text","text":"Done."}],"metadata":{"userVisible":true,"agentVisible":true}}}`
		counters = `{"type":"complete","total_tokens":120,"input_tokens":100,"output_tokens":20}`
		total    = `{"type":"complete","total_tokens":120}`
	)
	// goose run without --quiet prints a banner before its events
	// (session/output.rs, display_session_info), in dim text on a
	// terminal: it names the session, which ties the run to the
	// database's (the host counts the session once there).
	const (
		banner   = "starting session | provider: anthropic model: claude-sonnet-4-5\n    session id: 20251102_1\n    working directory: /home/me/proj\n"
		dim      = "\x1b[2mstarting session |\x1b[0m \x1b[2mprovider:\x1b[0m \x1b[36manthropic\x1b[0m\n    \x1b[2msession id:\x1b[0m \x1b[2;36m20251102_1\x1b[0m\n    \x1b[2mworking directory:\x1b[0m \x1b[2;36m/home/me/proj\x1b[0m\n"
		resuming = "resuming session | provider: anthropic model: claude-sonnet-4-5\n    session id: 20251102_1\n    working directory: /home/me/proj\n"
	)
	for _, tc := range []struct {
		name, raw     string
		warn, resumed bool
		session, cwd  string
	}{
		{"stream-json stating the session's counters", msg + "\n" + counters, true, false, "", ""},
		{"stream-json stating a total alone (no usage)", msg + "\n" + total, false, false, "", ""},
		{"json output (no usage)", `{"messages":[{"id":"m1","role":"assistant","created":1772359201,"content":[{"type":"text","text":"Done."}]}],"metadata":{"total_tokens":120,"status":"completed"}}`, false, false, "", ""},
		{"banner naming the session", banner + msg + "\n" + counters, false, false, "20251102_1", "/home/me/proj"},
		{"banner in a terminal's dim text", dim + msg + "\n" + counters, false, false, "20251102_1", "/home/me/proj"},
		{"banner of a resumed session", resuming + msg + "\n" + counters, false, true, "20251102_1", "/home/me/proj"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := plugintest.Run(t, goose.Plugin, []byte(tc.raw+"\n"), normalize.Options{Provider: "goose"})
			warned, resumed := false, false
			for _, w := range o.Result.Warnings {
				warned = warned || strings.Contains(w, "twasm sync archives it as a run of its own")
				resumed = resumed || strings.Contains(w, "earlier runs included")
			}
			if warned != tc.warn || resumed != tc.resumed {
				t.Errorf("warned %v, resumed %v, want %v, %v: %q (usage %+v)", warned, resumed, tc.warn, tc.resumed, o.Result.Warnings, o.Result.Usage)
			}
			if o.Result.SessionID != tc.session || o.Result.Cwd != tc.cwd {
				t.Errorf("session %q, cwd %q, want %q, %q", o.Result.SessionID, o.Result.Cwd, tc.session, tc.cwd)
			}
			if len(o.Result.Unmapped) != 0 {
				t.Errorf("unmapped %v, want none (the banner is known)", o.Result.Unmapped)
			}
			if !tc.warn && tc.session == "" && o.Result.Usage != nil && o.Result.Usage.InputTokens != nil {
				t.Errorf("usage %+v, want none", o.Result.Usage)
			}
		})
	}
}

//go:build !wasip1

package kimi_test

import (
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/kimi"
)

// TestPrintResumeHint: the Kimi CLI's print mode (kimi --print
// --output-format stream-json) writes kosong messages one a line, then
// "To resume this session: kimi -r <id>": that line names the session
// (it was counted unmapped as non_json, the step without a session id),
// and the messages are read as a context file's, a failed command an
// error.
func TestPrintResumeHint(t *testing.T) {
	raw := []byte(`{"role":"assistant","content":[{"type":"think","think":"Let me run it.","encrypted":null},{"type":"text","text":"I'll run it."}],"tool_calls":[{"type":"function","id":"tool_1","function":{"name":"Shell","arguments":"{\"command\": \"false\"}"}}]}
{"role":"tool","content":[{"type":"text","text":"<system>ERROR: Command failed with exit code: 1.</system>"}],"tool_call_id":"tool_1"}
{"role":"assistant","content":[{"type":"text","text":"The command failed."}]}
To resume this session: kimi -r 4b1c6a2e-1111-4222-8333-944445555666
`)
	o := plugintest.Run(t, kimi.Plugin, raw, normalize.Options{Provider: "kimi"})
	r := o.Result
	if r.SessionID != "4b1c6a2e-1111-4222-8333-944445555666" {
		t.Errorf("session %q; want the resume hint's", r.SessionID)
	}
	if len(r.Unmapped) != 0 {
		t.Errorf("unmapped %v; want none", r.Unmapped)
	}
	if st, ok := o.ResultStatus("tool_1"); !ok || st != "error" {
		t.Errorf("tool_1 result %q (%v); want error", st, ok)
	}
}

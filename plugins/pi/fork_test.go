//go:build !wasip1

package pi_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/pi"
	"github.com/twasm/twasm/transcript"
)

// TestForkCopiedHistory: a fork's file starts with a header naming the
// session it was forked from (parentSession, v1 branchedFrom) and dated
// when the fork was made, then the parent's entries copied as they were
// (pi-mono's SessionManager.createBranchedSession and forkFrom,
// badlogic/pi-mono 83378aad). Those entries are the parent's turns: the
// fork's run holds, and its usage counts, only the entries dated from the
// header on. The real v1 capture is a fork whose 1001 copied entries are
// all it holds but one; the same bytes with the header's branchedFrom
// taken out are a session of its own, read whole as before (its
// compactions, aborted response, errors and 56 million input tokens).
func TestForkCopiedHistory(t *testing.T) {
	capture, err := os.ReadFile("../../testdata/captures/pi/pimono_session_v1_fork_compactions.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	header, rest, _ := bytes.Cut(capture, []byte("\n"))
	i := bytes.Index(header, []byte(`,"branchedFrom":`))
	if i < 0 {
		t.Fatal("the capture's header names no branchedFrom")
	}
	unforked := append(append(append([]byte{}, header[:i]...), '}', '\n'), rest...)

	golden, err := os.ReadFile("../../testdata/golden/pi/session_fork_branch_summary.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name          string
		in            []byte
		calls         int
		input, output int64 // -1: no usage
		prompt        string
		errors        bool
		warningCopied string
	}{
		{"v1 fork: the copy is the parent's", capture, 0, -1, -1, "", false, "1001 entries are dated before"},
		{"v1 session of its own", unforked, 457, 56382684, 187895, "alright, read @packages/coding-agent/src/main.ts", true, ""},
		{"v3 fork: its own turns only", golden, 3, 1180, 67, "Read main.go and run the tests.", false, "3 entries are dated before"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := sdktest.Run(context.Background(), pi.Plugin, "pi", tt.in)
			if err != nil {
				t.Fatal(err)
			}
			calls, prompt := 0, ""
			for _, e := range r.Events {
				if e.Type == transcript.ToolCall {
					calls++
				}
				if m := e.Event.Message(); m != nil && prompt == "" && m.Role == "user" {
					for _, b := range m.Blocks {
						if b.Origin == transcript.OriginPrompt {
							prompt = b.Text
						}
					}
				}
			}
			if calls != tt.calls {
				t.Errorf("%d tool calls; want %d", calls, tt.calls)
			}
			if !strings.HasPrefix(prompt, tt.prompt) || (tt.prompt == "") != (prompt == "") {
				t.Errorf("first prompt %.60q; want it to start %q", prompt, tt.prompt)
			}
			in, out := int64(-1), int64(-1)
			if u := r.Step.Usage; u != nil && u.InputTokens != nil {
				in, out = *u.InputTokens, *u.OutputTokens
			}
			if in != tt.input || out != tt.output {
				t.Errorf("usage in %d out %d; want %d, %d", in, out, tt.input, tt.output)
			}
			if (len(r.Step.Errors) > 0) != tt.errors {
				t.Errorf("errors %v; want some: %v", r.Step.Errors, tt.errors)
			}
			copied := ""
			for _, w := range r.Step.Warnings {
				if strings.Contains(w, "dated before the session began") {
					copied = w
				}
			}
			if !strings.Contains(copied, tt.warningCopied) || (tt.warningCopied == "") != (copied == "") {
				t.Errorf("copied-entries warning %q; want one containing %q", copied, tt.warningCopied)
			}
			if len(r.Step.Unmapped) != 0 || r.SilentN != 0 {
				t.Errorf("unmapped %v, %d silent lines; want none", r.Step.Unmapped, r.SilentN)
			}
		})
	}
}

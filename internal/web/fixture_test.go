package web

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/index"
	"github.com/twasm/twasm/internal/testing/browsertest"
	"github.com/twasm/twasm/internal/testing/viewstest"
	"github.com/twasm/twasm/transcript"
)

// Run ids of the tests' runs beside viewstest's (Root with its Child).
const (
	hostileID = "eeeeeeee-eeee-4eee-8eee-eeeeeeeeeeee"
	secretID  = "ffffffff-ffff-4fff-8fff-ffffffffffff"
)

var payloads = browsertest.Payloads

var hostile = strings.Join(payloads, " ")

// secret is a GitHub token shape every redaction rule set knows.
var secret = "ghp_" + strings.Repeat("a1B2", 9)

// hostileRun is a run whose name, prompt, answer, tool name, input (a
// file name), output, error and project are hostile; a day after
// viewstest's runs.
func hostileRun(t testing.TB) *viewstest.Builder {
	b := viewstest.NewBuilder(hostileID, "")
	b.Add(viewstest.Started(hostile))
	b.Add(viewstest.Step(transcript.StepStarted, "agent", 0, &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent}))
	b.Add(viewstest.Msg(transcript.MessageUser, "agent", transcript.Block{Type: transcript.BlockText, Fidelity: transcript.FidelityAgentEmitted, Text: hostile}))
	b.Add(viewstest.Msg(transcript.MessageAssistant, "agent", transcript.TextBlock(hostile),
		transcript.Block{Type: transcript.BlockToolUse, Fidelity: transcript.FidelityAgentEmitted, ToolName: payloads[2], ToolID: "h1",
			ToolInput: mustJSON(t, map[string]string{"file_path": "/work/" + payloads[1] + "\u202egpj.exe"})}))
	b.Add(viewstest.Tool(transcript.ToolCall, "agent", &transcript.ToolPayload{Name: payloads[2], CallID: "h1", Kind: transcript.ToolRead,
		Input: mustJSON(t, map[string]string{"file_path": "/work/" + payloads[1] + "\u202egpj.exe"})}))
	b.Add(viewstest.Tool(transcript.ToolResult, "agent", &transcript.ToolPayload{Name: payloads[2], CallID: "h1", Output: hostile, Error: hostile, Status: transcript.StatusError}))
	b.Add(viewstest.Tool(transcript.ToolCall, "agent", &transcript.ToolPayload{Name: "Bash", CallID: "h2", Kind: transcript.ToolExecute, Command: "echo " + hostile,
		Input: mustJSON(t, map[string]string{"command": "echo " + hostile})}))
	b.Add(viewstest.Tool(transcript.ToolResult, "agent", &transcript.ToolPayload{Name: "Bash", CallID: "h2", Output: hostile, Status: transcript.StatusOK}))
	res := mustJSON(t, map[string]any{"provider": "claude", "model": "claude-sonnet-4", "status": "ok", "project": "/work/" + payloads[0],
		"usage": map[string]int{"input_tokens": 300, "output_tokens": 40}, "cost_usd": 0.5, "final_text": hostile})
	b.Add(viewstest.Step(transcript.StepCompleted, "agent", 0, &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent, Status: transcript.StatusOK, Result: res}))
	b.Add(viewstest.Completed(hostile, transcript.StatusOK, ""))
	later(b, 24*time.Hour)
	return b
}

// secretRun holds the secret in its prompt, a tool's input and output,
// and its answer, two days after viewstest's runs.
func secretRun(t testing.TB) *viewstest.Builder {
	b := viewstest.NewBuilder(secretID, "")
	b.Add(viewstest.Started(""))
	b.Add(viewstest.Step(transcript.StepStarted, "agent", 0, &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent}))
	b.Add(viewstest.Msg(transcript.MessageUser, "agent", transcript.TextBlock("deploy with token "+secret+" please")))
	b.Add(viewstest.Tool(transcript.ToolCall, "agent", &transcript.ToolPayload{Name: "Bash", CallID: "s1", Kind: transcript.ToolExecute,
		Command: "gh auth login --with-token " + secret, Input: mustJSON(t, map[string]string{"command": "gh auth login --with-token " + secret})}))
	b.Add(viewstest.Tool(transcript.ToolResult, "agent", &transcript.ToolPayload{Name: "Bash", CallID: "s1", Output: "logged in as me with " + secret, Status: transcript.StatusOK}))
	b.Add(viewstest.Msg(transcript.MessageAssistant, "agent", transcript.TextBlock("Deployed: the token "+secret+" works.")))
	res := mustJSON(t, map[string]any{"provider": "codex", "model": "gpt-5", "status": "ok", "project": "/work/deploy"})
	b.Add(viewstest.Step(transcript.StepCompleted, "agent", 0, &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent, Status: transcript.StatusOK, Result: res}))
	b.Add(viewstest.Completed("", transcript.StatusOK, ""))
	later(b, 48*time.Hour)
	return b
}

func later(b *viewstest.Builder, d time.Duration) {
	for _, ev := range b.Events() {
		ev.Timestamp = ev.Timestamp.Add(d)
	}
}

func mustJSON(t testing.TB, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// store writes viewstest's runs, the hostile run and the secret run
// under a new storage root, and returns the root.
func store(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	dir := viewstest.WriteStore(t, root)
	viewstest.WriteFile(t, filepath.Join(dir, hostileID+".jsonl"), hostileRun(t).Bytes(t))
	viewstest.WriteFile(t, filepath.Join(dir, secretID+".jsonl"), secretRun(t).Bytes(t))
	return root
}

// newServer returns a server over root with opts (Root and Index set
// here), its index closed with the test.
func newServer(t testing.TB, root string, opts Options) *Server {
	t.Helper()
	ix, _, err := index.Open(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	opts.Root, opts.Index = root, ix
	if opts.DigestKind == "" {
		opts.DigestKind = "test/1"
	}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// serve runs s on a loopback port until the test ends, and returns its
// base address; the test fails if Serve does not return cleanly.
func serve(t testing.TB, s *Server) string {
	t.Helper()
	base, stop := serveUntil(t, s)
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return base
}

// serveUntil runs s on a loopback port and returns its base address and
// a stop that ends Serve's context and returns what Serve returned.
func serveUntil(t testing.TB, s *Server) (string, func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	return "http://" + ln.Addr().String(), func() error { cancel(); return <-done }
}

// appendLines appends events to a run's transcript as a writer does.
func appendLines(t testing.TB, path string, lines ...[]byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, l := range lines {
		if _, err := f.Write(l); err != nil {
			t.Fatal(err)
		}
	}
}

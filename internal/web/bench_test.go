package web

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/twasm/twasm/internal/testing/viewstest"
	"github.com/twasm/twasm/transcript"
)

// BenchmarkSessionPage serves the page of a run of 20,000 events (5,000
// turns of a prompt, an answer, a tool call and its result): the
// issue's bound is a first screen within a second.
func BenchmarkSessionPage(b *testing.B) {
	root := b.TempDir()
	const id = "77777777-7777-4777-8777-777777777777"
	rb := viewstest.NewBuilder(id, "")
	rb.Add(viewstest.Started("big"))
	rb.Add(viewstest.Step(transcript.StepStarted, "agent", 0, &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent}))
	for i := range 5000 {
		n := strconv.Itoa(i)
		rb.Add(viewstest.Msg(transcript.MessageUser, "agent", transcript.TextBlock("step "+n+": run the tests again")))
		rb.Add(viewstest.Msg(transcript.MessageAssistant, "agent", transcript.TextBlock("Running them now, turn "+n+".")))
		rb.Add(viewstest.Tool(transcript.ToolCall, "agent", &transcript.ToolPayload{Name: "Bash", CallID: "c" + n, Kind: transcript.ToolExecute,
			Command: "go test ./...", Input: json.RawMessage(`{"command":"go test ./..."}`)}))
		rb.Add(viewstest.Tool(transcript.ToolResult, "agent", &transcript.ToolPayload{Name: "Bash", CallID: "c" + n, Output: "ok  \tpkg\t0.1s\n", Status: transcript.StatusOK}))
	}
	viewstest.WriteStore(b, root)
	viewstest.WriteFile(b, filepath.Join(root, "transcripts", id+".jsonl"), rb.Bytes(b))
	s := newServer(b, root, Options{})
	h := s.Handler()
	b.ResetTimer()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodGet, "/s/"+id, nil)
		r.Host = "127.0.0.1"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 {
			b.Fatal(w.Code)
		}
		b.ReportMetric(float64(w.Body.Len())/(1<<20), "MiB/page")
	}
}

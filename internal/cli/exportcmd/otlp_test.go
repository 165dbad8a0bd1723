package exportcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/cli/iostreams"
	"github.com/twasm/twasm/transcript"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// The endpoint follows the OpenTelemetry specification, not the Go SDK's
// TLS default; a malformed value is an error naming its source.
func TestResolveEndpoint(t *testing.T) {
	for _, c := range []struct {
		name, flag, proto string
		env               func(string) string
		want, from, err   string
	}{
		{name: "default http", proto: "http/protobuf", env: env(), want: "http://localhost:4318/v1/traces", from: "the default"},
		{name: "default grpc", proto: "grpc", env: env(), want: "http://localhost:4317", from: "the default"},
		{name: "flag without path", flag: "http://c:4318", proto: "http/protobuf", env: env(), want: "http://c:4318/v1/traces", from: "--endpoint"},
		{name: "flag with path", flag: "https://c/otlp/traces", proto: "http/protobuf", env: env(), want: "https://c/otlp/traces", from: "--endpoint"},
		{name: "flag before env", flag: "http://f:1", proto: "http/protobuf", env: env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://e:2"), want: "http://f:1/v1/traces", from: "--endpoint"},
		{name: "base env gets the signal path", proto: "http/protobuf", env: env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://e:4318/base/"), want: "http://e:4318/base/v1/traces", from: "$OTEL_EXPORTER_OTLP_ENDPOINT"},
		{name: "traces env as it is", proto: "http/protobuf", env: env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t:9/x", "OTEL_EXPORTER_OTLP_ENDPOINT", "http://e:2"), want: "http://t:9/x", from: "$OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"},
		{name: "grpc env", proto: "grpc", env: env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://g:4317"), want: "http://g:4317", from: "$OTEL_EXPORTER_OTLP_ENDPOINT"},
		{name: "malformed env", proto: "http/protobuf", env: env("OTEL_EXPORTER_OTLP_ENDPOINT", "localhost:4318"), err: "$OTEL_EXPORTER_OTLP_ENDPOINT \"localhost:4318\" is not an http or https URL"},
		{name: "env without host", proto: "grpc", env: env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://"), err: "$OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"},
		{name: "env bad scheme", proto: "http/protobuf", env: env("OTEL_EXPORTER_OTLP_ENDPOINT", "ftp://x"), err: "not an http or https URL"},
		{name: "flag malformed", flag: "::", proto: "http/protobuf", env: env(), err: "--endpoint"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := &OTLPOptions{Endpoint: c.flag}
			got, from, err := o.ResolveEndpoint(c.proto, c.env)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %q, %v; want an error with %q", got, err, c.err)
				}
				if cmdutil.ExitCode(err) != cmdutil.ExitUsage {
					t.Fatalf("exit %d for %v, want %d", cmdutil.ExitCode(err), err, cmdutil.ExitUsage)
				}
				return
			}
			if err != nil || got != c.want || from != c.from {
				t.Fatalf("got %q from %s, %v; want %q from %s", got, from, err, c.want, c.from)
			}
		})
	}
}

// collector is an OTLP/HTTP trace receiver that counts the spans it is
// sent and answers each request with reject(n) spans rejected, as a
// partial success.
type collector struct {
	srv    *httptest.Server
	mu     sync.Mutex
	spans  int
	reject func(n int) int
	// runs are the run ids the spans taken name (twasm.run.id).
	runs map[string]bool
}

func newCollector(t *testing.T, reject func(int) int) *collector {
	c := &collector{reject: reject, runs: map[string]bool{}}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(body, &req)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		n := 0
		var runs []string
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				n += len(ss.Spans)
				for _, sp := range ss.Spans {
					for _, kv := range sp.Attributes {
						if kv.Key == "twasm.run.id" {
							runs = append(runs, kv.Value.GetStringValue())
						}
					}
				}
			}
		}
		resp := &coltracepb.ExportTraceServiceResponse{}
		rej := 0
		if c.reject != nil {
			rej = c.reject(n)
		}
		if rej > 0 {
			resp.PartialSuccess = &coltracepb.ExportTracePartialSuccess{RejectedSpans: int64(rej), ErrorMessage: "span too large"}
		}
		c.mu.Lock()
		c.spans += n - rej
		if rej == 0 {
			for _, id := range runs {
				c.runs[id] = true
			}
		}
		c.mu.Unlock()
		out, _ := proto.Marshal(resp)
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *collector) received() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.spans
}

// writeRun writes a transcript of a run with steps agent steps, each with
// a prompt, an answer and a tool call with its result, and returns its
// path; more steps are appended by appendSteps.
func writeRun(t *testing.T, storage, id string, steps int, completed bool) string {
	t.Helper()
	dir := filepath.Join(storage, "transcripts")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, id+".jsonl")
	appendEvents(t, p, id, 0, []*transcript.Event{{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "demo", Kind: transcript.KindWorkflow, Schema: "twasm.transcript/1"}}})
	appendSteps(t, p, id, 0, steps, completed)
	return p
}

func appendSteps(t *testing.T, p, id string, from, steps int, completed bool) {
	t.Helper()
	var evs []*transcript.Event
	for i := from; i < from+steps; i++ {
		res, _ := json.Marshal(transcript.AgentResult{Provider: "claude", Model: "claude-sonnet-4-5", Status: "ok"})
		evs = append(evs,
			&transcript.Event{Type: transcript.StepStarted, Path: "agent", Iteration: i, Payload: &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent}},
			&transcript.Event{Type: transcript.MessageUser, Path: "agent", Iteration: i, Payload: &transcript.MessagePayload{Role: "user", Blocks: []transcript.Block{{Type: transcript.BlockText, Fidelity: transcript.FidelityAgentEmitted, Text: "go on", Origin: transcript.OriginPrompt}}}},
			&transcript.Event{Type: transcript.MessageAssistant, Path: "agent", Iteration: i, Payload: &transcript.MessagePayload{Role: "assistant", Model: "claude-sonnet-4-5", Blocks: []transcript.Block{{Type: transcript.BlockText, Fidelity: transcript.FidelityAgentEmitted, Text: "done"}}}},
			&transcript.Event{Type: transcript.ToolCall, Path: "agent", Iteration: i, Payload: &transcript.ToolPayload{Name: "Bash", Fidelity: transcript.FidelityAgentEmitted, CallID: "c" + string(rune('a'+i))}},
			&transcript.Event{Type: transcript.ToolResult, Path: "agent", Iteration: i, Payload: &transcript.ToolPayload{Name: "Bash", Fidelity: transcript.FidelityAgentEmitted, CallID: "c" + string(rune('a'+i)), Status: "ok"}},
			&transcript.Event{Type: transcript.StepCompleted, Path: "agent", Iteration: i, Payload: &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent, Status: "ok", Result: res}},
		)
	}
	if completed {
		evs = append(evs, &transcript.Event{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: "demo", Kind: transcript.KindWorkflow, Status: "ok"}})
	}
	appendEvents(t, p, id, 0, evs)
}

func appendEvents(t *testing.T, p, id string, _ int, evs []*transcript.Event) {
	t.Helper()
	old, _ := os.ReadFile(p)
	seq := uint64(bytes.Count(old, []byte("\n")))
	var buf bytes.Buffer
	for _, ev := range evs {
		seq++
		ev.Seq, ev.RunID = seq, id
		ev.Timestamp = time.Date(2026, 11, 1, 10, 0, int(seq), 0, time.UTC)
		line, err := transcript.AppendEvent(nil, ev)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(buf.Bytes()); err != nil {
		t.Fatal(err)
	}
}

func exportOTLP(t *testing.T, storage string, getenv func(string) string, opts *OTLPCmdOptions) (string, error) {
	t.Helper()
	ios, _, _, errOut := iostreams.Test()
	f := &cmdutil.Factory{IOStreams: ios, Getenv: getenv, StorageFlag: storage}
	err := runOTLP(context.Background(), f, opts)
	return errOut.String(), err
}

// A partial success (the collector took some spans and rejected others)
// fails the export and counts what was taken, once.
func TestOTLPPartialSuccess(t *testing.T) {
	storage := t.TempDir()
	writeRun(t, storage, "0a1b2c3d-0000-4000-8000-000000000001", 3, true)
	c := newCollector(t, func(n int) int { return min(n, 2) })
	stderr, err := exportOTLP(t, storage, env("OTEL_EXPORTER_OTLP_ENDPOINT", c.srv.URL), &OTLPCmdOptions{All: AllRuns{On: true}})
	if err == nil {
		t.Fatalf("a partial success passed for a full one: %s", stderr)
	}
	got := c.received()
	if got == 0 {
		t.Fatal("the collector took no span")
	}
	msg := err.Error()
	want := "(" + itoa(got) + " of " + itoa(got+2) + " spans sent)"
	if !strings.Contains(msg, "span too large") || !strings.Contains(msg, want) || !strings.Contains(msg, c.srv.URL) {
		t.Fatalf("error %q; want the collector's reason, %q and the endpoint", msg, want)
	}
	if strings.Count(msg, "span too large") != 1 {
		t.Fatalf("the failure is said more than once: %q", msg)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// --new sends what an earlier --new export to the same endpoint did not:
// nothing when nothing changed, only a run's new steps when it grew, up to
// its last completed step, and everything again to another endpoint.
func TestOTLPNew(t *testing.T) {
	storage := t.TempDir()
	id := "0a1b2c3d-0000-4000-8000-000000000002"
	p := writeRun(t, storage, id, 2, false)
	c := newCollector(t, nil)
	ev := env("OTEL_EXPORTER_OTLP_ENDPOINT", c.srv.URL)
	newOnly := func() *OTLPCmdOptions { return &OTLPCmdOptions{All: AllRuns{On: true}, New: true} }

	if _, err := exportOTLP(t, storage, ev, newOnly()); err != nil {
		t.Fatal(err)
	}
	first := c.received()
	if first == 0 {
		t.Fatal("the first --new export sent nothing")
	}
	stderr, err := exportOTLP(t, storage, ev, newOnly())
	if err != nil || c.received() != first || !strings.Contains(stderr, "1 runs had nothing new") {
		t.Fatalf("unchanged: %d spans more, %v, %s", c.received()-first, err, stderr)
	}

	// A step started but not completed is not sent yet...
	appendEvents(t, p, id, 0, []*transcript.Event{{Type: transcript.StepStarted, Path: "agent", Iteration: 2, Payload: &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent}}})
	if _, err := exportOTLP(t, storage, ev, newOnly()); err != nil || c.received() != first {
		t.Fatalf("an open step was sent in part: %d spans more, %v", c.received()-first, err)
	}
	// ...and is sent whole once it completed, with the run's end.
	b, _ := os.ReadFile(p)
	if err := os.WriteFile(p, b[:bytes.LastIndexByte(b[:len(b)-1], '\n')+1], 0o600); err != nil {
		t.Fatal(err)
	}
	appendSteps(t, p, id, 2, 1, true)
	if _, err := exportOTLP(t, storage, ev, newOnly()); err != nil {
		t.Fatal(err)
	}
	grown := c.received() - first
	// One step: its span, a chat span and a tool span; the run's span
	// went with the first export and is not sent twice.
	if grown != 3 {
		t.Fatalf("the grown run sent %d spans, want the new step's 3", grown)
	}

	// Without --new, everything; another endpoint has its own cursor.
	other := newCollector(t, nil)
	if _, err := exportOTLP(t, storage, env("OTEL_EXPORTER_OTLP_ENDPOINT", other.srv.URL), newOnly()); err != nil {
		t.Fatal(err)
	}
	if other.received() != first+grown {
		t.Fatalf("a new endpoint got %d spans, want all %d", other.received(), first+grown)
	}
	if _, err := exportOTLP(t, storage, ev, &OTLPCmdOptions{All: AllRuns{On: true}}); err != nil || c.received() != 2*(first+grown) {
		t.Fatalf("without --new: %d spans in all, want %d (%v)", c.received(), 2*(first+grown), err)
	}

	// An export the collector refused in part does not move the cursor:
	// the next one sends the run again, whole.
	writeRun(t, storage, "0a1b2c3d-0000-4000-8000-000000000003", 1, true)
	c.mu.Lock()
	c.reject = func(n int) int { return n }
	c.mu.Unlock()
	before := c.received()
	if _, err := exportOTLP(t, storage, ev, newOnly()); err == nil {
		t.Fatal("an export whose spans were all rejected passed")
	}
	c.mu.Lock()
	c.reject = nil
	c.mu.Unlock()
	stderr, err = exportOTLP(t, storage, ev, newOnly())
	if err != nil || c.received()-before != 4 || !strings.Contains(stderr, "1 runs had nothing new") {
		t.Fatalf("after a refused export: %d spans sent, want the new run's 4 (%v): %s", c.received()-before, err, stderr)
	}
}

package e2e

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/twasm/twasm/internal/testing/clitest"
	"github.com/twasm/twasm/internal/testing/syncbuf"
	"github.com/twasm/twasm/transcript"
)

// The OTLP export is tested against a real OpenTelemetry Collector, built
// by .ci/install-otelcol (make otelcol) into the user's cache, once per
// machine, with the collector builder
// from the Go module proxy: OTLP receiver in, file exporter out. The test
// records runs of every provider, exports them over HTTP and gRPC, and
// checks the spans the collector wrote against the transcripts.

// otelcolBinary finds the collector; without one the test is skipped
// with the way to build it, except in CI, which must build it.
func otelcolBinary(t *testing.T) string {
	t.Helper()
	p := os.Getenv("TWASM_OTELCOL")
	if p == "" {
		// The install script knows where it puts the collector (the
		// user's cache, once per machine).
		out, err := exec.Command(filepath.Join(root, ".ci", "install-otelcol"), "--path").Output()
		if err != nil {
			t.Fatalf(".ci/install-otelcol --path: %v", err)
		}
		p = strings.TrimSpace(string(out))
	}
	if _, err := os.Stat(p); err != nil {
		msg := fmt.Sprintf("no OpenTelemetry Collector at %s: build it with .ci/install-otelcol (make otelcol)", p)
		if os.Getenv("CI") != "" {
			t.Fatal(msg + "; CI must build it (.ci/run does)")
		}
		t.Skip(msg)
	}
	return p
}

type collector struct {
	grpc, http string // endpoint URLs
	out        string // the file exporter's output
}

// startCollector runs the collector on loopback ports until the test ends.
func startCollector(t *testing.T) *collector {
	t.Helper()
	bin := otelcolBinary(t)
	dir := t.TempDir()
	gp, hp := clitest.FreePort(t), clitest.FreePort(t)
	c := &collector{grpc: fmt.Sprintf("http://127.0.0.1:%d", gp), http: fmt.Sprintf("http://127.0.0.1:%d", hp),
		out: filepath.Join(dir, "spans.jsonl")}
	cfg := fmt.Sprintf(`receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
      http:
        endpoint: 127.0.0.1:%d
exporters:
  file:
    path: %s
    flush_interval: 100ms
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [file]
`, gp, hp, c.out)
	cfgPath := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	log := &syncbuf.Buffer{}
	cmd := exec.Command(bin, "--config", cfgPath)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("collector log:\n%s", log)
		}
	})
	deadline := time.Now().Add(hangBound)
	for _, port := range []int{gp, hp} {
		for {
			conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
			if err == nil {
				conn.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("collector did not listen on %d: %v\n%s", port, err, log)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return c
}

// otlpSpan is a span as the file exporter writes it (OTLP JSON).
type otlpSpan struct {
	TraceID      string `json:"traceId"`
	SpanID       string `json:"spanId"`
	ParentSpanID string `json:"parentSpanId"`
	Name         string `json:"name"`
	Kind         int    `json:"kind"`
	Start        string `json:"startTimeUnixNano"`
	End          string `json:"endTimeUnixNano"`
	Attributes   []struct {
		Key   string         `json:"key"`
		Value map[string]any `json:"value"`
	} `json:"attributes"`
	Status struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"status"`
	resource map[string]string
}

func (s *otlpSpan) attr(k string) (string, bool) {
	for _, a := range s.Attributes {
		if a.Key != k {
			continue
		}
		for _, v := range a.Value {
			switch v := v.(type) {
			case string:
				return v, true
			case bool:
				return strconv.FormatBool(v), true
			case float64:
				return strconv.FormatFloat(v, 'f', -1, 64), true
			default:
				b, _ := json.Marshal(v)
				return string(b), true
			}
		}
	}
	return "", false
}

func nanos(t *testing.T, s string) time.Time {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("time %q: %v", s, err)
	}
	return time.Unix(0, n).UTC()
}

// readSpans reads every span the collector wrote.
func readSpans(t *testing.T, path string) []*otlpSpan {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []*otlpSpan
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var req struct {
			ResourceSpans []struct {
				Resource struct {
					Attributes []struct {
						Key   string            `json:"key"`
						Value map[string]string `json:"value"`
					} `json:"attributes"`
				} `json:"resource"`
				ScopeSpans []struct {
					Spans []*otlpSpan `json:"spans"`
				} `json:"scopeSpans"`
			} `json:"resourceSpans"`
		}
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			// The exporter may be mid-write; the caller polls again.
			continue
		}
		for _, rs := range req.ResourceSpans {
			res := map[string]string{}
			for _, a := range rs.Resource.Attributes {
				res[a.Key] = a.Value["stringValue"]
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					s.resource = res
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// waitSpans polls the collector's output until it holds at least n spans.
func waitSpans(t *testing.T, c *collector, n int) []*otlpSpan {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		spans := readSpans(t, c.out)
		if len(spans) >= n || time.Now().After(deadline) {
			return spans
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// otlpCases are recordings of every bundled provider, with tools, failed
// tools, and sub-agents as child runs.
var otlpCases = []struct{ provider, file string }{
	{"claude", "testdata/golden/claude/stream_json_tool_kinds.jsonl"},
	{"claude", "testdata/golden/claude/session_log_agent_progress.jsonl"},
	{"claude", "testdata/golden/claude/stream_json_background_agent.jsonl"},
	{"codex", "testdata/golden/codex/exec_command_failed.jsonl"},
	{"codex", "testdata/golden/codex/rollout_usage_restart.jsonl"},
	{"gemini", "testdata/golden/gemini/stream_parallel_tools.jsonl"},
	{"copilot", "testdata/golden/copilot/json_tools_out_of_order.jsonl"},
	{"openai", "testdata/golden/openai/chat_sse_tool_calls_parallel.sse"},
	{"openai", "testdata/golden/openai/responses_stream_multistep.jsonl"},
	{"pi", "testdata/golden/pi/session_subagent.jsonl"},
	{"opencode", "testdata/golden/opencode/rows_session_tools_errors.jsonl"},
	{"cline", "testdata/golden/cline/task_native_tools.jsonl"},
	{"qwen", "testdata/golden/qwen/session_subagents.jsonl"},
	{"goose", "testdata/golden/goose/rows_session_tools_errors.jsonl"},
	{"amp", "testdata/golden/amp/thread_task_summary_error.json"},
	{"kimi", "testdata/golden/kimi/legacy_subagent_denied.jsonl"},
	{"droid", "testdata/golden/droid/session_settings_rewritten.jsonl"},
	{"crush", "testdata/golden/crush/rows_agent_bash_shell.jsonl"},
	{"cursor", "testdata/golden/cursor/transcript_tools_subagent.jsonl"},
}

func TestOTLPExportToCollector(t *testing.T) {
	c := startCollector(t)
	storage := t.TempDir()
	var ids []string
	for _, tc := range otlpCases {
		r := twasm(t, "--storage", storage, "record", "--json", "--provider", tc.provider, "--input", filepath.Join(root, tc.file))
		if r.code != 0 && r.code != 1 {
			t.Fatalf("record %s: %v", tc.file, r)
		}
		var out struct {
			RunID string `json:"run_id"`
		}
		if err := json.Unmarshal([]byte(clitest.LastLine(r.out)), &out); err != nil || out.RunID == "" {
			t.Fatalf("record %s --json: %v\n%v", tc.file, err, r)
		}
		ids = append(ids, out.RunID)
	}
	// A multi-step run with a sub-run begun from the shell.
	parent := strings.TrimSpace(twasmOK(t, "--storage", storage, "run", "begin", "--name", "release").out)
	twasmOK(t, "--storage", storage, "record", "--run-id", parent, "--path", "plan", "--provider", "claude",
		"--input", filepath.Join(root, "testdata/golden/claude/stream_json_tool_kinds.jsonl"))
	sub := strings.TrimSpace(twasmOK(t, "--storage", storage, "run", "begin", "--parent", parent, "--path", "fixes", "--name", "fixes").out)
	twasmOK(t, "--storage", storage, "record", "--run-id", sub, "--path", "fix", "--provider", "codex",
		"--input", filepath.Join(root, "testdata/golden/codex/exec_command.jsonl"))
	twasmOK(t, "--storage", storage, "run", "end", sub)
	twasmOK(t, "--storage", storage, "run", "end", parent)
	ids = append(ids, parent)

	// Everything over HTTP without content, the multi-step run again over
	// gRPC with content: the same span ids, now with content attributes.
	r := twasmOK(t, "--storage", storage, "export", "otlp", "--all", "--endpoint", c.http)
	if !strings.Contains(r.errOut, "spans of") {
		t.Fatalf("export otlp says nothing of what it sent: %v", r)
	}
	want := expectedSpans(t, storage, ids)
	spans := waitSpans(t, c, want.total)
	checkSpans(t, storage, ids, spans, want, false)

	before := len(spans)
	r = twasmOK(t, "--storage", storage, "export", "otlp", "--protocol", "grpc", "--endpoint", c.grpc, "--content", parent[:8])
	grpcWant := expectedSpans(t, storage, []string{parent})
	spans = waitSpans(t, c, before+grpcWant.total)
	if len(spans) != before+grpcWant.total {
		t.Fatalf("grpc export: collector holds %d spans, want %d", len(spans), before+grpcWant.total)
	}
	checkSpans(t, storage, []string{parent}, spans[before:], grpcWant, true)
}

// wantSpans is what the transcripts say the collector must hold.
type wantSpans struct {
	total int
	files map[string][]*transcript.Event // run id → events, children included
	roots map[string]string              // run id → root run id
}

// expectedSpans reads each run and its linked children and counts the
// spans the export must produce: one per run, step, assistant message and
// tool call (a result without a call is a span of its own).
func expectedSpans(t *testing.T, storage string, ids []string) wantSpans {
	t.Helper()
	w := wantSpans{files: map[string][]*transcript.Event{}, roots: map[string]string{}}
	var walk func(id, rootID string)
	walk = func(id, rootID string) {
		evs := readRun(t, transcriptPath(storage, id))
		w.files[id] = evs
		w.roots[id] = rootID
		calls := map[string]bool{}
		for _, ev := range evs {
			switch ev.Type {
			case transcript.RunStarted, transcript.StepStarted, transcript.StepCallWorkflowStarted, transcript.MessageAssistant:
				w.total++
			case transcript.ToolCall:
				w.total++
				calls[ev.Tool().CallID] = true
			case transcript.ToolResult:
				if !calls[ev.Tool().CallID] {
					w.total++
				}
			}
			if ev.Type == transcript.StepCallWorkflowStarted && ev.ChildRunID != "" {
				walk(ev.ChildRunID, rootID)
			}
		}
	}
	for _, id := range ids {
		walk(id, id)
	}
	return w
}

func spanHex(t *testing.T, s string) string {
	t.Helper()
	if _, err := hex.DecodeString(s); err != nil {
		t.Fatalf("span id %q is not hex: %v", s, err)
	}
	return s
}

// checkSpans checks the spans against the transcripts.
func checkSpans(t *testing.T, storage string, ids []string, spans []*otlpSpan, w wantSpans, content bool) {
	t.Helper()
	if len(spans) != w.total {
		names := map[string]int{}
		for _, s := range spans {
			names[strings.Fields(s.Name)[0]]++
		}
		t.Fatalf("collector holds %d spans, the transcripts make %d (by operation: %v)", len(spans), w.total, names)
	}
	byID := map[string]*otlpSpan{}
	for _, s := range spans {
		byID[spanHex(t, s.SpanID)] = s
		if s.resource["service.name"] != "twasm" {
			t.Fatalf("span %q: resource service.name %q, want twasm", s.Name, s.resource["service.name"])
		}
		for _, k := range []string{"gen_ai.tool.call.arguments", "gen_ai.tool.call.result", "gen_ai.output.messages", "gen_ai.input.messages", "twasm.tool.command"} {
			if _, ok := s.attr(k); ok && !content {
				t.Fatalf("span %q carries %s without --content", s.Name, k)
			}
		}
	}
	withContent := 0
	for id, evs := range w.files {
		u, _ := uuid.Parse(w.roots[id])
		traceID := hex.EncodeToString(u[:])
		var runSpan *otlpSpan
		for _, s := range spans {
			if v, _ := s.attr("twasm.run.id"); v == id {
				runSpan = s
			}
		}
		if runSpan == nil {
			t.Fatalf("run %s: no run span", id)
		}
		if runSpan.TraceID != traceID {
			t.Fatalf("run %s: trace id %s, want the root run's %s", id, runSpan.TraceID, traceID)
		}
		if !nanos(t, runSpan.Start).Equal(evs[0].Timestamp) {
			t.Fatalf("run %s: span starts %v, run.started says %v (backfill keeps original times)", id, nanos(t, runSpan.Start), evs[0].Timestamp)
		}
		if id == w.roots[id] && runSpan.ParentSpanID != "" {
			t.Fatalf("root run %s has a parent span", id)
		}
		if id != w.roots[id] {
			p := byID[runSpan.ParentSpanID]
			if p == nil || p.TraceID != traceID {
				t.Fatalf("child run %s hangs under no exported span of its trace (parent %q)", id, runSpan.ParentSpanID)
			}
			if v, _ := p.attr("twasm.step.kind"); v != string(transcript.KindCallWorkflow) {
				t.Fatalf("child run %s hangs under %q, not the call_workflow step that started it", id, p.Name)
			}
		}
		// Agent steps: provider, model and usage as the result says.
		results := map[string]*transcript.AgentResult{}
		for _, ev := range evs {
			if ev.Type == transcript.StepCompleted && ev.Step().Kind == transcript.KindAgent {
				r, err := ev.Step().AgentResult()
				if err != nil {
					t.Fatal(err)
				}
				results[ev.Path] = r
			}
		}
		for path, r := range results {
			var sp *otlpSpan
			for _, s := range spans {
				if s.TraceID != traceID {
					continue
				}
				if p, _ := s.attr("twasm.step.path"); p == path && strings.HasPrefix(s.Name, "invoke_agent") {
					if v, _ := s.attr("twasm.run.id"); v == "" && byID[s.ParentSpanID] != nil {
						sp = s
					}
				}
			}
			if sp == nil {
				t.Fatalf("run %s: no invoke_agent span for step %q", id, path)
			}
			if v, _ := sp.attr("twasm.provider"); v != r.Provider {
				t.Fatalf("step %q: twasm.provider %q, want %q", path, v, r.Provider)
			}
			if _, ok := sp.attr("gen_ai.provider.name"); !ok {
				t.Fatalf("step %q: no gen_ai.provider.name", path)
			}
			if r.Model != "" {
				if v, _ := sp.attr("gen_ai.response.model"); v != r.Model {
					t.Fatalf("step %q: gen_ai.response.model %q, want %q", path, v, r.Model)
				}
			}
			if r.Usage != nil && r.Usage.InputTokens != nil {
				if v, _ := sp.attr("gen_ai.usage.input_tokens"); v != strconv.FormatInt(*r.Usage.InputTokens, 10) {
					t.Fatalf("step %q: input tokens %q, want %d", path, v, *r.Usage.InputTokens)
				}
			}
			if r.Status == transcript.StatusError && sp.Status.Code != 2 {
				t.Fatalf("step %q failed but its span status is %d", path, sp.Status.Code)
			}
		}
		// Tool calls: one execute_tool span each, from call to result,
		// failed results as errors.
		callTimes := map[string]time.Time{}
		for _, ev := range evs {
			tp := ev.Tool()
			switch ev.Type {
			case transcript.ToolCall:
				callTimes[tp.CallID] = ev.Timestamp
			case transcript.ToolResult:
				var sp *otlpSpan
				for _, s := range spans {
					if v, _ := s.attr("gen_ai.tool.call.id"); v == tp.CallID && s.TraceID == traceID && strings.HasPrefix(s.Name, "execute_tool") {
						sp = s
					}
				}
				if sp == nil {
					t.Fatalf("run %s: no execute_tool span for call %s", id, tp.CallID)
				}
				if ct, ok := callTimes[tp.CallID]; ok && !nanos(t, sp.Start).Equal(ct) {
					t.Fatalf("call %s: span starts %v, tool.call at %v", tp.CallID, nanos(t, sp.Start), ct)
				}
				if !nanos(t, sp.End).Equal(ev.Timestamp) {
					t.Fatalf("call %s: span ends %v, tool.result at %v", tp.CallID, nanos(t, sp.End), ev.Timestamp)
				}
				failed := tp.Status != "" && tp.Status != transcript.StatusOK && tp.Status != "completed"
				if failed != (sp.Status.Code == 2) {
					t.Fatalf("call %s: result status %q, span status %d", tp.CallID, tp.Status, sp.Status.Code)
				}
				if content && tp.Output != "" {
					if _, ok := sp.attr("gen_ai.tool.call.result"); ok {
						withContent++
					}
				}
			}
		}
	}
	if content && withContent == 0 {
		t.Fatal("--content exported no tool result content")
	}
}

// record --otlp sends what it recorded; into a run begun by run begin, only
// its own step, which hangs under the run's span by id.
func TestRecordOTLP(t *testing.T) {
	c := startCollector(t)
	storage := t.TempDir()
	in := filepath.Join(root, "testdata/golden/codex/exec_command_failed.jsonl")
	r := twasm(t, "--storage", storage, "record", "--json", "--provider", "codex", "--input", in, "--otlp", "--otlp-endpoint", c.http)
	if strings.Contains(r.errOut, "otlp: not sent") {
		t.Fatalf("%v", r)
	}
	var out struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(clitest.LastLine(r.out)), &out); err != nil {
		t.Fatal(err)
	}
	want := expectedSpans(t, storage, []string{out.RunID})
	spans := waitSpans(t, c, want.total)
	checkSpans(t, storage, []string{out.RunID}, spans, want, false)

	run := strings.TrimSpace(twasmOK(t, "--storage", storage, "run", "begin", "--name", "multi").out)
	twasmOK(t, "--storage", storage, "record", "--run-id", run, "--path", "one", "--provider", "codex", "--input", in,
		"--otlp", "--otlp-protocol", "grpc", "--otlp-endpoint", c.grpc)
	before := len(waitSpans(t, c, want.total+1))
	step := readRun(t, transcriptPath(storage, run))
	n := 0
	for _, ev := range step {
		switch ev.Type {
		case transcript.StepStarted, transcript.MessageAssistant, transcript.ToolCall:
			n++
		}
	}
	spans = waitSpans(t, c, want.total+n)
	if len(spans) != want.total+n || before < want.total+1 {
		t.Fatalf("record --otlp into a run sent %d spans, want its step's %d (no run span while the run is open)", len(spans)-want.total, n)
	}
	for _, s := range spans[want.total:] {
		if strings.HasPrefix(s.Name, "invoke_workflow") {
			t.Fatalf("the open run's span was sent: %q", s.Name)
		}
	}
	// Nobody listening: the run is recorded, the failure is said.
	r = twasm(t, "--storage", storage, "record", "--provider", "codex", "--input", in, "--otlp", "--otlp-endpoint", fmt.Sprintf("http://127.0.0.1:%d", clitest.FreePort(t)))
	if !strings.Contains(r.errOut, "otlp: not sent") || !strings.Contains(r.errOut, "sends it again") {
		t.Fatalf("a failed export is not said: %v", r)
	}
}

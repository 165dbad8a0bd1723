package codex

import (
	"bytes"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/internal/wire"
)

// value indexes one JSON document for the helper tests.
func value(t *testing.T, doc string) abi.Value {
	t.Helper()
	d, ok := sdk.Parse([]byte(doc))
	if !ok {
		t.Fatalf("not JSON: %s", doc)
	}
	return d.Root()
}

func TestShellJoin(t *testing.T) {
	tests := []struct{ argv, want string }{
		{`["bash","-lc","ls"]`, `bash -lc ls`},
		{`["bash","-lc","ls -1"]`, `bash -lc 'ls -1'`},
		{`["rg","-n","it's",""]`, `rg -n 'it'\''s' ''`},
		{`["sed","-n","1,20p","a/b.go"]`, `sed -n 1,20p a/b.go`},
		{`["echo","$HOME","*"]`, `echo '$HOME' '*'`},
	}
	for _, tt := range tests {
		if got := shellJoin(value(t, `{"a":`+tt.argv+`}`).Get("a")).String(); got != tt.want {
			t.Errorf("shellJoin(%s) = %q, want %q", tt.argv, got, tt.want)
		}
	}
}

func TestExitCodeInText(t *testing.T) {
	tests := []struct {
		text string
		want int64
		ok   bool
	}{
		{"Process exited with code 0\nOutput:\n", 0, true},
		{"Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 127\nOutput:\nx", 127, true},
		{`Chunk ID: 1\nProcess exited with code 2\nOutput:`, 2, true}, // still escaped
		{"Exit code: 1\nWall time: 0 seconds\n", 1, true},
		{"Exit code: -9\n", -9, true},
		{"the output says Process exited with code 3", 0, false}, // not at a line start
		{"Exit code: none", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		got, ok := exitCodeInText([]byte(tt.text)).Value()
		if got != tt.want || ok != tt.ok {
			t.Errorf("exitCodeInText(%q) = %d, %v; want %d, %v", tt.text, got, ok, tt.want, tt.ok)
		}
	}
}

func TestErrorText(t *testing.T) {
	tests := []struct{ msg, want string }{
		{`"Reconnecting... 2/5 (stream disconnected)"`, "Reconnecting... 2/5 (stream disconnected)"},
		{`"{\"type\":\"error\",\"status\":400,\"error\":{\"type\":\"invalid_request_error\",\"message\":\"bad model\"}}"`, "bad model (status 400, invalid_request_error)"},
		{`"{\"message\":\"quota exceeded\"}"`, "quota exceeded"},
		{`"{not json"`, "{not json"},
		{`"{\"detail\":\"no message field\"}"`, `{"detail":"no message field"}`},
	}
	for _, tt := range tests {
		if got := errorText(value(t, `{"m":`+tt.msg+`}`).Get("m")).String(); got != tt.want {
			t.Errorf("errorText(%s) = %q, want %q", tt.msg, got, tt.want)
		}
	}
}

func TestIsInjected(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{`"<environment_context>\n  <cwd>/x</cwd>\n</environment_context>"`, true},
		{`"\n<user_instructions>\n# AGENTS.md\n</user_instructions>"`, true},
		{`"# AGENTS.md instructions for /x\n\n<INSTRUCTIONS>"`, true},
		{`"Why does the build fail? See <environment_context> in the docs"`, false},
		{`"# Context from my IDE setup:\n\n## My request for Codex:\nfix it"`, false},
	}
	for _, tt := range tests {
		if got := isInjected(value(t, `{"t":`+tt.text+`}`).Get("t")); got != tt.want {
			t.Errorf("isInjected(%s) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

// records runs lines through the plugin natively and renders the
// records of interest as "op field=value ..." strings.
func records(t *testing.T, lines ...string) []string {
	t.Helper()
	d := Plugin.Driver()
	d.Begin(nil)
	batch := wire.AppendBatchHeader(nil, len(lines))
	for i, l := range lines {
		toks, ok := wire.BuildTape(nil, []byte(l))
		if !ok {
			toks = nil
		}
		batch = wire.AppendBatchLine(batch, i+1, []byte(l), toks)
	}
	if st, msg := d.Feed(batch); st != wire.StatusOK {
		t.Fatalf("feed: %d %s", st, msg)
	}
	out := render(t, d.Output(), batch)
	if st, msg := d.End(); st != wire.StatusOK {
		t.Fatalf("end: %d %s", st, msg)
	}
	return append(out, render(t, d.Output(), nil)...)
}

var opNames = map[wire.Op]string{wire.OpUsage: "usage", wire.OpStatus: "status", wire.OpFinal: "final", wire.OpUnmapped: "unmapped", wire.OpMeta: "meta", wire.OpError: "error", wire.OpWarning: "warning"}

var tagNames = map[wire.Tag]string{
	wire.TInputTokens: "in", wire.TCacheReadTokens: "cache_read", wire.TOutputTokens: "out", wire.TReasoningTokens: "reasoning",
	wire.TMode: "mode", wire.TStatus: "status", wire.TLevel: "level", wire.TError: "error", wire.TText: "text", wire.TNative: "native", wire.TCode: "code",
	wire.TSessionID: "session", wire.TModel: "model", wire.TFormat: "format", wire.TProviderVersion: "version",
}

func render(t *testing.T, out, input []byte) []string {
	var lines []string
	dec := wire.NewDecoder(out)
	for {
		rec, err := dec.Next()
		if err != nil {
			t.Fatal(err)
		}
		if rec == nil {
			return lines
		}
		name, ok := opNames[rec.Op]
		if !ok {
			continue
		}
		var b strings.Builder
		b.WriteString(name)
		for _, f := range rec.Fields {
			tag, ok := tagNames[f.Tag]
			if !ok {
				continue
			}
			b.WriteString(" " + tag + "=")
			switch f.Kind {
			case wire.VStr, wire.VJSON:
				b.Write(f.Bytes)
			case wire.VSpan:
				raw := input[f.Off : f.Off+f.N]
				if f.Mode == wire.SpanString {
					raw, _ = wire.Unescape(nil, raw)
				}
				b.Write(bytes.Clone(raw))
			case wire.VInt:
				b.WriteString(itoa(f.Int))
			}
		}
		lines = append(lines, b.String())
	}
}

// TestStatusAndUsage pins the record-level decisions that the golden
// files show only through the host: usage modes and status levels.
func TestStatusAndUsage(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{{
		name:  "exec usage is cumulative: set, never add",
		lines: []string{`{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":4,"output_tokens":3,"reasoning_output_tokens":1}}`},
		want:  []string{"meta format=exec-json", "usage in=10 cache_read=4 out=3 reasoning=1 mode=set", "status status=ok level=3"},
	}, {
		name:  "exec error lines are non-fatal, turn.failed is terminal",
		lines: []string{`{"type":"error","message":"Reconnecting... 1/5"}`, `{"type":"turn.failed","error":{"message":"boom"}}`},
		want:  []string{"meta format=exec-json", "error text=Reconnecting... 1/5", "status status=error error=boom level=3"},
	}, {
		name:  "no terminal event, no terminal status",
		lines: []string{`{"type":"thread.started","thread_id":"t1"}`, `{"type":"turn.started"}`},
		want:  []string{"meta format=exec-json", "meta session=t1"},
	}, {
		name:  "legacy token_count is per response: add",
		lines: []string{`{"id":"1","msg":{"type":"token_count","input_tokens":5,"output_tokens":2}}`},
		want:  []string{"meta format=legacy-json", "usage in=5 out=2 mode=add"},
	}, {
		name:  "rollout token_count total: set; null info: nothing",
		lines: []string{`{"timestamp":"t","type":"event_msg","payload":{"type":"token_count","info":null}}`, `{"timestamp":"t","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":7,"output_tokens":1},"last_token_usage":{"input_tokens":3}}}}`},
		want:  []string{"meta format=rollout", "usage in=7 out=1 mode=set"},
	}, {
		name: "0.158 token_usage_record repeats the token_count beside it: ignored, never counted",
		lines: []string{`{"timestamp":"t","type":"session_meta","payload":{"id":"s1","cli_version":"0.158.0"}}`,
			`{"ordinal":1,"timestamp":"t","type":"token_usage_record","payload":{"usage":{"input_tokens":3,"output_tokens":1},"turn_token_usage":{"input_tokens":9,"output_tokens":4},"thread_token_usage":{"input_tokens":9,"output_tokens":4}}}`,
			`{"ordinal":2,"timestamp":"t","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":9,"output_tokens":4},"last_token_usage":{"input_tokens":3,"output_tokens":1}}}}`},
		want: []string{"meta format=rollout", "meta session=s1 version=0.158.0", "usage in=9 out=4 mode=set"},
	}, {
		name:  "a rollback is a warning naming the turns removed from the model's context",
		lines: []string{`{"timestamp":"t","type":"session_meta","payload":{"id":"s1"}}`, `{"timestamp":"t","type":"event_msg","payload":{"type":"thread_rolled_back","num_turns":2}}`},
		want:  []string{"meta format=rollout", "meta session=s1", "warning text=codex rolled the thread back by 2 user turn(s): they were removed from the conversation the model sees (they stay in this transcript)"},
	}, {
		name: "tool definitions, the goal and a review's start are state: ignored, not unmapped",
		lines: []string{`{"timestamp":"t","type":"session_meta","payload":{"id":"s1"}}`,
			`{"timestamp":"t","type":"response_item","payload":{"type":"additional_tools","tools":[{"type":"function","name":"calendar_create"}]}}`,
			`{"timestamp":"t","type":"event_msg","payload":{"type":"thread_goal_updated","goal":{"objective":"ship"}}}`,
			`{"timestamp":"t","type":"event_msg","payload":{"type":"entered_review_mode","target":{"type":"uncommittedChanges"}}}`},
		want: []string{"meta format=rollout", "meta session=s1"},
	}, {
		name:  "rollout meta",
		lines: []string{`{"timestamp":"t","type":"session_meta","payload":{"id":"s1","cli_version":"0.40.0"}}`, `{"timestamp":"t","type":"turn_context","payload":{"model":"gpt-5-codex"}}`},
		want:  []string{"meta format=rollout", "meta session=s1 version=0.40.0", "meta model=gpt-5-codex"},
	}, {
		name:  "unmapped natives are named by format",
		lines: []string{`banner`, `{"type":"thread.renamed"}`, `{"type":"item.completed","item":{"id":"i","type":"image_generation"}}`, `{"id":"1","msg":{"type":"turn_diff"}}`, `{"timestamp":"t","type":"event_msg","payload":{"type":"turn_diff"}}`},
		want:  []string{"unmapped native=non-json", "meta format=exec-json", "unmapped native=thread.renamed", "unmapped native=item/image_generation", "unmapped native=turn_diff", "unmapped native=event_msg/turn_diff"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := records(t, tt.lines...)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

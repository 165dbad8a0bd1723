package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/twasm/twasm/internal/jsonstr"
	"github.com/twasm/twasm/internal/rawfile"
	"github.com/twasm/twasm/internal/testing/clitest"
	"github.com/twasm/twasm/internal/testing/secrettest"
)

// secretsInput is Claude Code stream-json with partial messages (the
// format that streams text in deltas) holding a secret of every shape
// in every field the plugin maps: a text answer streamed in deltas of 1
// to 3 bytes with \u escapes, its snapshot, a tool call named after a
// key whose input is streamed too, a tool result with every secret
// escaped, and the result line.
func secretsInput() []byte {
	var all strings.Builder
	for _, s := range secrettest.Secrets() {
		fmt.Fprintf(&all, "%s: %s\n", s.Name, s.Whole())
	}
	text := all.String()
	const sess = `"session_id":"5b1c2d3e-0000-4000-8000-00000000aa01","parent_tool_use_id":null,"uuid":"u-se"`
	q := func(s string) string { return string(jsonstr.AppendQuoted(nil, s)) }
	// every byte of s as a \u escape
	esc := func(s string) string {
		var b strings.Builder
		b.WriteByte('"')
		for _, c := range s {
			fmt.Fprintf(&b, `\u%04x`, c)
		}
		b.WriteByte('"')
		return b.String()
	}
	var lines []string
	add := func(l string) { lines = append(lines, l) }
	add(`{"type":"system","subtype":"init","cwd":"/work/demo","session_id":"5b1c2d3e-0000-4000-8000-00000000aa01","tools":["Bash"],"mcp_servers":[],"model":"claude-sonnet-4-5","permissionMode":"default","apiKeySource":"none","claude_code_version":"2.1.100","uuid":"i"}`)
	add(`{"type":"stream_event","event":{"type":"message_start","message":{"model":"claude-sonnet-4-5","id":"msg_P1","type":"message","role":"assistant","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}},` + sess + `}`)
	add(`{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}},` + sess + `}`)
	for i, n := 0, 0; i < len(text); i += n {
		n = min(1+i%3, len(text)-i)
		piece := q(text[i : i+n])
		if i%7 == 0 && len(piece) == 3 && piece[1] != '\\' {
			piece = fmt.Sprintf(`"\u%04x"`, piece[1])
		}
		add(`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":` + piece + `}},` + sess + `}`)
	}
	add(`{"type":"assistant","message":{"model":"claude-sonnet-4-5","id":"msg_P1","type":"message","role":"assistant","content":[{"type":"text","text":` + q(text) + `}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}},"session_id":"5b1c2d3e-0000-4000-8000-00000000aa01","parent_tool_use_id":null,"uuid":"a1"}`)
	add(`{"type":"stream_event","event":{"type":"content_block_stop","index":0},` + sess + `}`)
	// A tool named after a key, its input streamed.
	secs := secrettest.Secrets()
	name := secs[1].Value
	input, _ := json.Marshal(map[string]string{"command": text})
	add(`{"type":"stream_event","event":{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_P1","name":` + q(name) + `,"input":{}}},` + sess + `}`)
	for i, n := 0, 0; i < len(input); i += n {
		n = min(2+i%5, len(input)-i)
		add(`{"type":"stream_event","event":{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":` + q(string(input[i:i+n])) + `}},` + sess + `}`)
	}
	add(`{"type":"assistant","message":{"model":"claude-sonnet-4-5","id":"msg_P1","type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_P1","name":` + q(name) + `,"input":` + string(input) + `}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}},"session_id":"5b1c2d3e-0000-4000-8000-00000000aa01","parent_tool_use_id":null,"uuid":"a2"}`)
	add(`{"type":"stream_event","event":{"type":"content_block_stop","index":1},` + sess + `}`)
	add(`{"type":"stream_event","event":{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":61}},` + sess + `}`)
	add(`{"type":"stream_event","event":{"type":"message_stop"},` + sess + `}`)
	add(`{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_P1","type":"tool_result","content":` + esc(text) + `}]},"parent_tool_use_id":null,"session_id":"5b1c2d3e-0000-4000-8000-00000000aa01","uuid":"u1","tool_use_result":{"stdout":` + esc(text) + `,"stderr":"","interrupted":false}}`)
	add(`{"type":"assistant","message":{"model":"claude-sonnet-4-5","id":"msg_P2","type":"message","role":"assistant","content":[{"type":"text","text":` + q("Done. "+text) + `}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":4,"output_tokens":7}},"session_id":"5b1c2d3e-0000-4000-8000-00000000aa01","parent_tool_use_id":null,"uuid":"a3"}`)
	add(`{"type":"result","subtype":"success","is_error":false,"duration_ms":100,"num_turns":1,"result":` + q("Done. "+text) + `,"session_id":"5b1c2d3e-0000-4000-8000-00000000aa01","total_cost_usd":0.01,"usage":{"input_tokens":14,"output_tokens":68}}`)
	return []byte(strings.Join(lines, "\n") + "\n")
}

var uEscape = regexp.MustCompile(`\\u([0-9a-fA-F]{4})`)

// assertNoSecret fails when any secret's probe is in b, as it is or
// with its JSON escapes decoded.
func assertNoSecret(t *testing.T, where string, b []byte) {
	t.Helper()
	s := string(b)
	dec := uEscape.ReplaceAllStringFunc(s, func(m string) string {
		n, _ := strconv.ParseUint(m[2:], 16, 32)
		return string(rune(n))
	})
	dec = strings.NewReplacer(`\/`, "/", `\n`, "\n", `\"`, `"`, `\\`, `\`).Replace(dec)
	for _, sec := range secrettest.Secrets() {
		if p := sec.Leak(s + "\x00" + dec); p != "" {
			t.Errorf("%s: the %s survives (%q)", where, sec.Name, p)
		}
	}
}

// assertTreeClean checks every file under dir.
func assertTreeClean(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		assertNoSecret(t, p, b)
		if rawfile.Framed(p) {
			// A framed raw capture: its raw bytes, the whole frames (a
			// killed writer may have cut the last one short).
			r, err := rawfile.Open(p)
			if err != nil {
				return err
			}
			defer r.Close()
			b, err := io.ReadAll(r.Section(0, r.Size()))
			if err != nil {
				return err
			}
			assertNoSecret(t, p+" (raw bytes)", b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// otlpSink is an OTLP/HTTP endpoint that keeps the bodies it is sent.
func otlpSink(t *testing.T) (url string, bodies func() []byte) {
	var mu sync.Mutex
	var got []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, b...)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []byte {
		mu.Lock()
		defer mu.Unlock()
		return append([]byte(nil), got...)
	}
}

// exportAllRedacted exports run id of storage every way with --redact
// into out, and checks each export.
func exportAllRedacted(t *testing.T, storage, id, out string) {
	t.Helper()
	twasmOK(t, "--storage", storage, "export", "html", "--redact", "-o", filepath.Join(out, "run.html"), id)
	twasmOK(t, "--storage", storage, "export", "dir", "--redact", filepath.Join(out, "dir"), id)
	for _, f := range []string{"openai", "anthropic"} {
		twasmOK(t, "--storage", storage, "export", "messages", "--redact", "--dangling", "note", "--format", f, "-o", filepath.Join(out, f+".json"), id)
	}
	url, bodies := otlpSink(t)
	twasmOK(t, "--storage", storage, "export", "otlp", "--redact", "--content", "--endpoint", url, id)
	if len(bodies()) == 0 {
		t.Fatal("no span reached the endpoint")
	}
	assertNoSecret(t, "otlp spans", bodies())
	assertTreeClean(t, out)
}

// TestRedactEveryShape: with --redact, a secret of every shape given to
// twasm in any field, split across streamed deltas or escaped, survives
// in no stored byte (transcript, raw capture, index) nor in any export;
// and the exports of a run recorded without --redact, made with --redact,
// hold none either.
func TestRedactEveryShape(t *testing.T) {
	t.Parallel()
	in := filepath.Join(t.TempDir(), "stream.jsonl")
	if err := os.WriteFile(in, secretsInput(), 0o600); err != nil {
		t.Fatal(err)
	}

	// Recorded with --redact: from a file, from a command's output, and
	// imported.
	storage := t.TempDir()
	r := twasmOK(t, "--storage", storage, "record", "--json", "--provider", "claude", "--redact", "--input", in)
	s := clitest.ParseRecordSummary(t, r.out)
	assertNoSecret(t, "record output", []byte(r.out+r.errOut))
	twasmOK(t, "--storage", storage, "record", "--provider", "claude", "--redact", "--", "cat", in)
	twasmOK(t, "--storage", storage, "import", "--provider", "claude", "--redact", in)
	for _, sec := range secrettest.Secrets() {
		twasm(t, "--storage", storage, "search", strings.Fields(sec.Value)[0])
	}
	validate(t, s.Transcript)
	out := t.TempDir()
	exportAllRedacted(t, storage, s.RunID, out)
	assertTreeClean(t, storage)

	// A run begun, given a step and ended by hand, named and failed with
	// secrets.
	all := ""
	for _, sec := range secrettest.Secrets() {
		all += sec.Whole() + "\n"
	}
	hand := t.TempDir()
	id := strings.TrimSpace(twasmOK(t, "--storage", hand, "run", "begin", "--redact", "--name", all).out)
	twasmOK(t, "--storage", hand, "record", "--run-id", id, "--provider", "claude", "--redact", "--input", in)
	folder := t.TempDir()
	twasm(t, "--storage", hand, "run", "end", "--redact", "--error", all, "--export-dir", folder, id)
	assertTreeClean(t, hand)
	assertTreeClean(t, folder)

	// Recorded without --redact: the exports with --redact hold no
	// secret, nor does a run renormalized from it with --redact.
	plain := t.TempDir()
	r = twasmOK(t, "--storage", plain, "record", "--json", "--provider", "claude", "--input", in)
	s = clitest.ParseRecordSummary(t, r.out)
	exportAllRedacted(t, plain, s.RunID, t.TempDir())
	newID := clitest.LastLine(twasmOK(t, "--storage", plain, "renormalize", "--redact", s.RunID).out)
	b, err := os.ReadFile(transcriptPath(plain, newID))
	if err != nil {
		t.Fatal(err)
	}
	assertNoSecret(t, "renormalized transcript", b)
	assertTreeClean(t, filepath.Join(plain, "raw", newID))
}

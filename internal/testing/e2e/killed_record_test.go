package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/jsonstr"
	"github.com/twasm/twasm/internal/rawfile"
	"github.com/twasm/twasm/internal/testing/secrettest"
	"github.com/twasm/twasm/transcript"
)

// streamedSecrets is Claude Code stream-json with partial messages: a
// first message whose text, every secret shape, streams in deltas of 1
// to 3 bytes (so that every secret is split across deltas, "sk-pro" then
// "j-..."), closed; then a second message that starts streaming the
// same text and stops in the middle of a secret. It returns the lines
// and how many of them the first message takes (up to its message_stop).
func streamedSecrets() (lines []string, first int) {
	var all strings.Builder
	for _, s := range secrettest.Secrets() {
		fmt.Fprintf(&all, "%s: %s\n", s.Name, s.Whole())
	}
	text := all.String()
	const sess = `"session_id":"5b1c2d3e-0000-4000-8000-00000000bb01","parent_tool_use_id":null`
	q := func(s string) string { return string(jsonstr.AppendQuoted(nil, s)) }
	add := func(l string) { lines = append(lines, l+"\n") }
	add(`{"type":"system","subtype":"init","cwd":"/work/demo","session_id":"5b1c2d3e-0000-4000-8000-00000000bb01","tools":["Bash"],"mcp_servers":[],"model":"claude-sonnet-4-5","permissionMode":"default","apiKeySource":"none","claude_code_version":"2.1.100","uuid":"i"}`)
	message := func(id, text string, stop bool) {
		add(`{"type":"stream_event","event":{"type":"message_start","message":{"model":"claude-sonnet-4-5","id":"` + id + `","type":"message","role":"assistant","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}},` + sess + `}`)
		add(`{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}},` + sess + `}`)
		for i, n := 0, 0; i < len(text); i += n {
			n = min(1+i%3, len(text)-i)
			add(`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":` + q(text[i:i+n]) + `}},` + sess + `}`)
		}
		if !stop {
			return
		}
		add(`{"type":"stream_event","event":{"type":"content_block_stop","index":0},` + sess + `}`)
		add(`{"type":"stream_event","event":{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":61}},` + sess + `}`)
		add(`{"type":"stream_event","event":{"type":"message_stop"},` + sess + `}`)
	}
	message("msg_K1", text, true)
	first = len(lines)
	// The second message stops inside the openai key ("sk-pro|j-...").
	cut := strings.Index(text, "sk-"+"proj-") + len("sk-pro")
	message("msg_K2", "Again: "+text[:cut], false)
	return lines, first
}

// TestKilledRecordRedactRaw: `twasm record --redact`, fed a stream on
// its stdin and killed with SIGKILL once its transcript holds the first
// message, leaves a raw capture that holds every line that message
// comes from (the transcript names nothing the raw capture lacks), and
// no secret, not even one streaming split across deltas, in the raw
// capture (read as it is and with the deltas joined) nor anywhere else
// in the storage. Before, the redacting raw writer held up to 4,096
// lines back, so the killed step's raw capture was empty while its
// transcript held the message.
func TestKilledRecordRedactRaw(t *testing.T) {
	lines, first := streamedSecrets()
	stor := t.TempDir()
	cmd := exec.Command(binary, "--storage", stor, "record", "--provider", "claude", "--redact", "--name", "killed-redact")
	cmd.Env = env()
	cmd.Dir = t.TempDir()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	// The whole stream goes in while twasm reads it; stdin stays open,
	// as an agent still running would leave it.
	if _, err := stdin.Write([]byte(strings.Join(lines, ""))); err != nil {
		t.Fatal(err)
	}
	var tr string
	deadline := time.Now().Add(hangBound)
	for {
		select {
		case <-exited:
			t.Fatalf("record ended before the kill: %s", errOut.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the transcript never held the first message")
		}
		paths, _ := filepath.Glob(filepath.Join(stor, "transcripts", "*.jsonl"))
		if len(paths) == 1 {
			if b, _ := os.ReadFile(paths[0]); bytes.Contains(b, []byte(`"msg_K1"`)) {
				tr = paths[0]
				break
			}
		}
		time.Sleep(time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-exited
	stdin.Close()

	// What the transcript acknowledged: every event and the raw line it
	// names.
	maxLine := 0
	for _, ev := range readRun(t, tr) {
		switch p := ev.Payload.(type) {
		case *transcript.MessagePayload:
			maxLine = max(maxLine, p.RawLine)
		case *transcript.ToolPayload:
			maxLine = max(maxLine, p.RawLine)
		}
	}
	runID := strings.TrimSuffix(filepath.Base(tr), ".jsonl")
	raws, _ := filepath.Glob(filepath.Join(stor, "raw", runID, "*.raw*"))
	if len(raws) != 1 {
		t.Fatalf("%d raw captures, want 1", len(raws))
	}
	// The whole frames: a kill may cut the frame being written short,
	// never one the transcript's events come from.
	rf, err := rawfile.Open(raws[0])
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(rf.Section(0, rf.Size()))
	rf.Close()
	if err != nil {
		t.Fatal(err)
	}
	got := bytes.SplitAfter(raw, []byte("\n"))
	if len(got[len(got)-1]) == 0 {
		got = got[:len(got)-1]
	}
	if len(got) < first || len(got) < maxLine {
		t.Fatalf("the raw capture holds %d lines; the transcript holds the first message (its lines 1 to %d, raw_line up to %d)", len(got), first, maxLine)
	}
	// Line for line, the stream as it came except what is masked: the
	// same lines, the same JSON outside the text.
	var joined strings.Builder
	for i, l := range got[:first] {
		var v struct {
			Event struct {
				Type  string `json:"type"`
				Delta struct {
					Text string `json:"text"`
				} `json:"delta"`
			} `json:"event"`
		}
		if err := json.Unmarshal(l, &v); err != nil {
			t.Fatalf("raw line %d is not JSON: %v", i+1, err)
		}
		var want struct {
			Event struct {
				Type string `json:"type"`
			} `json:"event"`
		}
		_ = json.Unmarshal([]byte(lines[i]), &want)
		if v.Event.Type != want.Event.Type {
			t.Fatalf("raw line %d is a %q, the stream's a %q", i+1, v.Event.Type, want.Event.Type)
		}
		joined.WriteString(v.Event.Delta.Text)
	}
	if !strings.Contains(joined.String(), "[REDACTED:") {
		t.Errorf("the raw capture's joined deltas hold no mask: %q", joined.String())
	}
	assertNoSecret(t, "raw capture, deltas joined", []byte(joined.String()))
	assertTreeClean(t, stor)
}

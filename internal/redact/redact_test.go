package redact

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/twasm/twasm/internal/runid"
	"github.com/twasm/twasm/recorder"
	"github.com/twasm/twasm/transcript"
)

// Fake secrets, assembled at run time so that no secret scanner flags
// this file.
var (
	alnum40    = strings.Repeat("aB3dE6gH9k", 4)
	anthropic  = "sk-" + "ant-api03-" + alnum40 + "_-xyz"
	openai     = "sk-" + alnum40[:32]
	openaiProj = "sk-" + "proj-" + alnum40 + "-Q_z"
	ghp        = "gh" + "p_" + alnum40[:36]
	ghs        = "gh" + "s_" + alnum40[:36]
	gho        = "gh" + "o_" + alnum40
	ghPAT      = "github" + "_pat_" + "11ABCDEFG0" + alnum40 + "_" + alnum40
	aws        = "AK" + "IA" + "IOSFODNN7EXAMPLE"
	google     = "AI" + "za" + "SyA1234567890abcdefghijklmnopqrstu"
	slack      = "xo" + "xb-" + "1234567890-0987654321-" + alnum40[:24]
	jwt        = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	pemKey     = "-----BEGIN RSA " + "PRIVATE KEY-----\nMIIEowIBAAKCAQEA" + alnum40 + alnum40 + "\nabc+/=\n-----END RSA " + "PRIVATE KEY-----"
)

func TestMaskString(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		want  string
		kinds map[string]int
	}{
		{"anthropic", "key=" + anthropic + " end", "key=[REDACTED:anthropic_api_key] end", map[string]int{"anthropic_api_key": 1}},
		{"openai", "OPENAI_API_KEY=" + openai, "OPENAI_API_KEY=[REDACTED:openai_api_key]", map[string]int{"openai_api_key": 1}},
		{"openai project", "\"" + openaiProj + "\"", "\"[REDACTED:openai_api_key]\"", map[string]int{"openai_api_key": 1}},
		{"github tokens", ghp + " " + ghs + "\n" + gho, "[REDACTED:github_token] [REDACTED:github_token]\n[REDACTED:github_token]", map[string]int{"github_token": 3}},
		{"github pat", "token: " + ghPAT, "token: [REDACTED:github_pat]", map[string]int{"github_pat": 1}},
		{"aws", "aws_access_key_id = " + aws, "aws_access_key_id = [REDACTED:aws_access_key_id]", map[string]int{"aws_access_key_id": 1}},
		{"google", "?key=" + google + "&x", "?key=[REDACTED:google_api_key]&x", map[string]int{"google_api_key": 1}},
		{"slack", "SLACK=" + slack, "SLACK=[REDACTED:slack_token]", map[string]int{"slack_token": 1}},
		{"authorization header", "Authorization: Bearer " + jwt, "Authorization: Bearer [REDACTED:bearer_token]", map[string]int{"bearer_token": 1}},
		{"lower-case bearer", "curl -H 'authorization: bearer abc123def456ghi'", "curl -H 'authorization: bearer [REDACTED:bearer_token]'", map[string]int{"bearer_token": 1}},
		{"pem block", "key:\n" + pemKey + "\nafter", "key:\n[REDACTED:private_key]\nafter", map[string]int{"private_key": 1}},
		{"pem cut off", "-----BEGIN " + "PRIVATE KEY-----\nMIIEvQIBADANBg", "[REDACTED:private_key]", map[string]int{"private_key": 1}},
		{"two pem blocks", pemKey + " and " + pemKey, "[REDACTED:private_key] and [REDACTED:private_key]", map[string]int{"private_key": 2}},
		// Negatives: shapes that are not secrets stay as they are.
		{"task- is not sk-", "task-" + alnum40, "task-" + alnum40, nil},
		{"short sk-", "sk-short", "sk-short", nil},
		{"bearer prose", "the bearer instrument is negotiable", "the bearer instrument is negotiable", nil},
		{"public key", "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----", "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----", nil},
		{"plain text", "nothing to see", "nothing to see", nil},
		{"AKIA too short", "AKIA1234", "AKIA1234", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := New()
			if got := r.MaskString(tc.in); got != tc.want {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
			got := r.Counts()
			if len(got) != len(tc.kinds) {
				t.Fatalf("counts %v, want %v", got, tc.kinds)
			}
			for k, n := range tc.kinds {
				if got[k] != n {
					t.Fatalf("counts %v, want %v", got, tc.kinds)
				}
			}
		})
	}
}

func TestMaskBytesRawJSON(t *testing.T) {
	r := New()
	raw := []byte(`{"type":"result","text":"line1\n` + openaiProj + `\nAuthorization: Bearer ` + jwt + `","pem":"` +
		strings.ReplaceAll(pemKey, "\n", `\n`) + `","cut":"-----BEGIN EC ` + `PRIVATE KEY-----\nMHcC","n":1}` + "\n")
	out := r.MaskBytes(raw)
	for _, secret := range []string{openaiProj, jwt, "MIIEowIBAAKCAQEA", "MHcC"} {
		if strings.Contains(string(out), secret) {
			t.Fatalf("secret %q left in %s", secret, out)
		}
	}
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("masked capture is no longer JSON: %v\n%s", err, out)
	}
	if v["n"] != 1.0 || !strings.HasPrefix(v["text"].(string), "line1\n[REDACTED:openai_api_key]\n") {
		t.Fatalf("%v", v)
	}
	clean := []byte(`{"a":"b"}`)
	if got := r.MaskBytes(clean); &got[0] != &clean[0] {
		t.Fatal("unchanged input was copied")
	}
	c := r.Counts()
	if c["openai_api_key"] != 1 || c["bearer_token"] != 1 || c["private_key"] != 2 {
		t.Fatalf("counts %v", c)
	}
}

func TestMaskEvent(t *testing.T) {
	input := json.RawMessage(`{"command":"curl -H \"Authorization: Bearer ` + jwt + `\"","n":[1,"` + aws + `"]}`)
	extra := map[string]json.RawMessage{"env": json.RawMessage(`{"K":"` + anthropic + `"}`), "num": json.RawMessage(`7`)}
	tests := []struct {
		name string
		ev   *transcript.Event
	}{
		{"message", &transcript.Event{Type: transcript.MessageAssistant, Extra: extra, Payload: &transcript.MessagePayload{
			Role: "assistant",
			Blocks: []transcript.Block{
				transcript.TextBlock("here: " + openai),
				{Type: transcript.BlockThinking, Fidelity: transcript.FidelityAgentEmitted, Thinking: "use " + ghp},
				{Type: transcript.BlockToolUse, Fidelity: transcript.FidelityAgentEmitted, ToolName: "Bash", ToolID: "t1", ToolInput: input},
				{Type: transcript.BlockToolResult, Fidelity: transcript.FidelityAgentEmitted, ToolID: "t1", ToolContent: google},
				{Type: transcript.BlockCommand, Fidelity: transcript.FidelityAgentEmitted, Command: "export T=" + slack},
				{Type: transcript.BlockStream, Fidelity: transcript.FidelityAgentEmitted, Chunk: ghPAT, Extra: extra},
			},
		}}},
		{"tool", &transcript.Event{Type: transcript.ToolResult, Payload: &transcript.ToolPayload{
			Name: "Bash", CallID: "c1", Input: input, Output: pemKey, Error: "bad " + gho, Command: "echo " + openai,
			Fidelity: transcript.FidelityRouter, Extra: extra,
		}}},
		{"step", &transcript.Event{Type: transcript.StepCompleted, Payload: &transcript.StepPayload{
			Name: "s", Kind: transcript.StepKind("agent"), Error: "failed with " + anthropic,
			Result: json.RawMessage(`{"final_text":"` + openai + `"}`), Extra: extra,
		}}},
		{"raw", &transcript.Event{Type: "x.y", Payload: &transcript.RawPayload{JSON: input}}},
	}
	secrets := []string{jwt, aws, anthropic, openai, ghp, google, slack, ghPAT, gho, "MIIEowIBAAKCAQEA"}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := New()
			r.Mask(tc.ev)
			tc.ev.RunID, tc.ev.Seq = "8f14e45f-ceea-467a-9575-3d8b4ee3a2b1", 1
			var line []byte
			if _, ok := tc.ev.Payload.(*transcript.RawPayload); ok {
				line = tc.ev.Payload.(*transcript.RawPayload).JSON
			} else {
				var err error
				if line, err = transcript.AppendEvent(nil, tc.ev); err != nil {
					t.Fatal(err)
				}
			}
			for _, s := range secrets {
				if strings.Contains(string(line), s) {
					t.Fatalf("secret %.12q... left in %s", s, line)
				}
			}
			if len(r.Counts()) == 0 {
				t.Fatal("no counts")
			}
		})
	}
	New().Mask(nil)
}

// TestWithRecorder wires the redactor into a recorder: nothing secret
// reaches the file and counts are kept.
func TestWithRecorder(t *testing.T) {
	red := New()
	dir := t.TempDir()
	st := recorder.NewStore(dir)
	rec, err := st.Open(context.Background(), runid.New(), recorder.Options{Mask: red.Mask})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				ev := &transcript.Event{Type: transcript.MessageAssistant, Payload: &transcript.MessagePayload{
					Role: "assistant", Blocks: []transcript.Block{transcript.TextBlock("key " + openai)}}}
				if err := rec.Record(context.Background(), ev); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(rec.Path())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), openai) || strings.Count(string(data), "[REDACTED:openai_api_key]") != 200 {
		t.Fatal("secret written or not masked")
	}
	if red.Counts()["openai_api_key"] != 200 {
		t.Fatalf("counts %v", red.Counts())
	}
	_ = filepath.Join
}

func BenchmarkMaskCleanText(b *testing.B) {
	r := New()
	s := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 5)[:200]
	for b.Loop() {
		r.MaskString(s)
	}
}

package views

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/transcript"
)

func TestToolInputs(t *testing.T) {
	tests := []struct {
		name, tool, command, input string
		want                       []string
	}{
		{"command field", "shell", "", `{"command":["bash","-lc","ls -la | wc"]}`, []string{"```sh\n$ ls -la | wc\n```"}},
		{"argv", "shell", "", `{"command":["git","commit","-m","a b"]}`, []string{"$ git commit -m 'a b'"}},
		{"cmd string", "exec", "", `{"cmd":"make"}`, []string{"$ make"}},
		{"payload command wins", "Bash", "go test", `{"command":"ignored"}`, []string{"$ go test"}},
		{"multiedit", "MultiEdit", "", `{"file_path":"/f.go","edits":[{"old_string":"x","new_string":"y"},{"old_string":"p\nq","new_string":"p"}]}`,
			[]string{"--- a/f.go\n+++ b/f.go\n@@ -1,1 +1,1 @@\n-x\n+y\n@@ -1,2 +1,1 @@\n p\n-q\n"}},
		{"aider edit", "edit", "", `{"path":"hello.py","edits":[{"search":"print(\"x\")\n","replace":"print(\"hello\")\n"},{"search":"","replace":"bye()\n"}]}`,
			[]string{"--- a/hello.py\n+++ b/hello.py\n@@ -1,1 +1,1 @@\n-print(\"x\")\n+print(\"hello\")\n", "+bye()"}},
		{"aider failed edit", "edit", "", `{"edits":[{"path":"a.go","search":"1\n","replace":"2\n"},{"path":"b.go","search":"3\n","replace":"4\n"}]}`,
			[]string{"--- a/a.go\n+++ b/a.go\n@@ -1,1 +1,1 @@\n-1\n+2\n--- a/b.go\n+++ b/b.go\n@@ -1,1 +1,1 @@\n-3\n+4\n"}},
		{"copilot edit", "edit", "", `{"path":"a.txt","old_str":"1","new_str":"2"}`, []string{"-1\n+2"}},
		{"create", "create", "", `{"path":"n.txt","file_text":"hi\n"}`, []string{"--- n.txt (written whole)", "+hi"}},
		{"changes map", "apply_patch", "", `{"changes":{"/b.go":{"type":"update","unified_diff":"@@ -1 +1 @@\n-a\n+b\n"},"/a.go":{"type":"add","content":"new\n"}}}`,
			[]string{"--- a/a.go\n+++ b/a.go\n@@ -0,0 +1,1 @@\n+new\n--- a/b.go\n+++ b/b.go\n@@ -1 +1 @@"}},
		{"changes list without diff", "file_change", "", `{"changes":[{"path":"/x","kind":"delete"}]}`, []string{"delete /x"}},
		{"patch in command", "shell", "", `{"command":["apply_patch","*** Begin Patch\n*** Delete File: old.txt\n*** Update File: m.go\n*** Move to: n.go\n@@ func\n-a\n+b\n*** End of File\n*** End Patch"]}`,
			[]string{"--- a/old.txt\n+++ /dev/null\n@@ file deleted @@\n--- a/m.go\n+++ b/m.go\nrename to n.go\n@@ func\n-a\n+b\n"}},
		{"patch field", "apply_patch", "", `{"input":"*** Begin Patch\n*** Add File: z\n+1\n*** End Patch"}`, []string{"+++ b/z\n@@ new file @@\n+1"}},
		{"other json", "Grep", "", `{"pattern":"x"}`, []string{"```json\n{\n  \"pattern\": \"x\"\n}\n```"}},
		{"string input", "t", "", `"just text"`, []string{"\"just text\""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			v := &viewer{d: &mdWriter{baseWriter{w: &buf}}, opts: ViewOptions{MaxOutput: -1}}
			v.input(tc.tool, tc.command, json.RawMessage(tc.input))
			contains(t, buf.String(), tc.want...)
		})
	}
}

func TestUnifiedBody(t *testing.T) {
	old := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n"
	nw := strings.Replace(strings.Replace(old, "2\n", "two\n", 1), "18\n", "eighteen\n", 1)
	got := unifiedBody(old, nw)
	eq(t, strings.Count(got, "@@ -"), 2, "two hunks for two distant changes:\n"+got)
	contains(t, got, "@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n", "@@ -15,6 +15,6 @@\n 15\n 16\n 17\n-18\n+eighteen\n 19\n 20\n")
	eq(t, unifiedBody("same\n", "same\n"), "", "no change")
}

func TestFooterStderrTail(t *testing.T) {
	storage := t.TempDir()
	if err := os.MkdirAll(filepath.Join(storage, "transcripts"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(storage, "e.stderr"), []byte("a\nb\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(storage, "transcripts", "r.jsonl")
	tail, n := stderrTail(run, "e.stderr")
	eq(t, tail, "a\nb", "tail")
	eq(t, n, 2, "lines")
	for _, bad := range []string{"../e.stderr", "/etc/passwd", "missing"} {
		if tail, _ := stderrTail(run, bad); tail != "" {
			t.Errorf("%s read: %q", bad, tail)
		}
	}
	if tail, _ := stderrTail(filepath.Join(storage, "elsewhere", "r.jsonl"), "e.stderr"); tail != "" {
		t.Error("a run outside a transcripts directory has no storage root")
	}
}

func TestFailed(t *testing.T) {
	for s, want := range map[string]bool{"ok": false, "completed": false, "": false, "error": true, "denied": true, "cancelled": true, "failed": true, "declined": true, "interrupted": true, "success": false} {
		eq(t, Failed(s), want, s)
	}
	eq(t, Failed(transcript.StatusOK), false, "ok constant")
}

// FuzzStripEscapes: whatever the input, nothing that starts a terminal
// sequence is left, the result is stripped already, and tool inputs of
// any shape render without panicking.
func FuzzStripEscapes(f *testing.F) {
	for _, s := range []string{"\x1b[31mred\x1b[0m", "\x1b]0;t\x07x", "\x1bP\x1b\\", "\u009b1m", "plain", "\x1b", "\u202eevil\u202c\x07", "*** Begin Patch\n*** Update File: a\n@@\n-x\n+y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := StripEscapes(s)
		for _, r := range out {
			if (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || (r >= 0x7f && r <= 0x9f) || isBidi(r) {
				t.Fatalf("%q left %q (%U)", s, out, r)
			}
		}
		if StripEscapes(out) != out {
			t.Fatalf("not idempotent on %q", s)
		}
		raw, _ := json.Marshal(s)
		v := &viewer{d: &textWriter{baseWriter{w: &bytes.Buffer{}}}, opts: ViewOptions{MaxOutput: 100}}
		v.input("apply_patch", "", raw)
		v.input("Edit", "", json.RawMessage(`{"file_path":"f","old_string":`+string(raw)+`,"new_string":"x\n"}`))
	})
}

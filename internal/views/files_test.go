package views

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/twasm/twasm/transcript"
)

func TestToolFiles(t *testing.T) {
	for _, c := range []struct {
		name    string
		tool    string
		kind    transcript.ToolKind
		input   string
		command string
		want    []FileChange
	}{
		{name: "claude edit", tool: "Edit", kind: transcript.ToolEdit, input: `{"file_path":"/w/a.go","old_string":"x","new_string":"y"}`, want: []FileChange{{"/w/a.go", "edit"}}},
		{name: "write", tool: "Write", input: `{"file_path":"/w/b.md","content":"hi"}`, want: []FileChange{{"/w/b.md", "write"}}},
		{name: "read is not a write", tool: "Read", kind: transcript.ToolRead, input: `{"file_path":"/w/a.go"}`},
		{name: "codex file_change list", tool: "file_change", kind: transcript.ToolEdit, input: `{"changes":[{"path":"/w/n.txt","kind":"add"},{"path":"/w/o.go","kind":{"type":"delete"}}]}`, want: []FileChange{{"/w/n.txt", "add"}, {"/w/o.go", "delete"}}},
		{name: "changes keyed by path", tool: "patch", kind: transcript.ToolEdit, input: `{"changes":{"/w/z.go":{},"/w/a.go":{}}}`, want: []FileChange{{"/w/a.go", "change"}, {"/w/z.go", "change"}}},
		{name: "apply_patch input", tool: "apply_patch", kind: transcript.ToolEdit, input: `{"input":"*** Begin Patch\n*** Update File: src/m.go\n@@\n-a\n+b\n*** Add File: src/n.go\n+x\n*** End Patch"}`, want: []FileChange{{"src/m.go", "update"}, {"src/n.go", "add"}}},
		{name: "apply_patch in a command", tool: "shell", command: "apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: old.txt\n*** End Patch\nEOF", want: []FileChange{{"old.txt", "delete"}}},
		{name: "unified diff", tool: "shell", command: "git apply <<'EOF'\n--- a/x.go\n+++ b/x.go\n@@ -1 +1 @@\nEOF", want: []FileChange{{"x.go", "diff"}}},
		{name: "nothing", tool: "Bash", kind: transcript.ToolExecute, input: `{"command":"ls"}`, command: "ls"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ToolFiles(&transcript.ToolPayload{Name: c.tool, Kind: c.kind, Input: json.RawMessage(c.input), Command: c.command})
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
}

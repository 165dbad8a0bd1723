package record_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// TestRecordSaysWhatWentWrong: after every record, one stderr line says
// what a user must know (a step that is not ok and why, unmapped lines,
// dangling calls, and a plugin that understood nothing, with what
// detection says the input is); a recording of which the plugin
// understood no line exits 1. The run is written either way. (With a
// wrapped agent: e2e's TestRecordWrappedAgentSaysWhatWentWrong.)
func TestRecordSaysWhatWentWrong(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	empty := write("empty.jsonl", nil)
	text := write("notes.txt", []byte("# notes\n\nnot an agent's output\n"))
	// Binary bytes with lines that happen to be JSON scalars, as a real
	// executable has.
	binary := write("blob.bin", []byte("\x7fELF\x02\x01\x00\x00\n        \"codex\"\n1\n\x00\x01\x02\xff\xfe\n"))

	tests := []struct {
		name     string
		args     []string
		code     int
		want     []string // substrings of the twasm: line
		silent   bool     // no twasm: line at all
		notWants []string
	}{
		{name: "ok", args: []string{"--provider", "claude", "--input", clitest.Example()}, silent: true},
		{name: "auth failure", args: []string{"--provider", "claude", "--input", clitest.Golden("claude", "stream_json_auth_failure.jsonl")},
			want: []string{"status error", "Not logged in"}},
		{name: "wrong provider", args: []string{"--provider", "codex", "--input", clitest.Example()}, code: 1,
			want: []string{"codex plugin understood none of the", "provider looks wrong", "detection says claude"}},
		{name: "empty", args: []string{"--provider", "claude", "--input", empty}, code: 1, want: []string{"the input was empty"}},
		{name: "text", args: []string{"--provider", "claude", "--input", text}, code: 1,
			want: []string{"claude plugin understood none of the 2 line(s)", "provider looks wrong"}},
		{name: "binary", args: []string{"--provider", "claude", "--input", binary}, code: 1, want: []string{"claude plugin", "provider looks wrong"}},
		{name: "dangling", args: []string{"--provider", "codex", "--input", clitest.Golden("codex", "exec_command_dangling.jsonl")},
			want: []string{"tool call(s) without a result"}, notWants: []string{"understood"}},
		{name: "unmapped", args: []string{"--provider", "codex", "--input", clitest.Golden("codex", "exec_unknown_and_garbage.jsonl")},
			want: []string{"unmapped line(s) ("}, notWants: []string{"understood"}},
		// An object of the provider's API the plugin does not know, or
		// one holding parts it does not know, is counted and what it
		// knows kept (spec §6.8): never refused as another provider's.
		{name: "responses compact body", args: []string{"--provider", "openai", "--input", clitest.Golden("openai", "responses_compact_body.json")},
			silent: true},
		{name: "unknown object and item", args: []string{"--provider", "openai", "--input", clitest.Golden("openai", "responses_unknown_object_and_item.jsonl")},
			want: []string{"4 unmapped line(s) (", "object/response.preview 1", "item/hologram_call 1", "object/list 1"}, notWants: []string{"understood", "looks wrong"}},
		{name: "anthropic unknown block", args: []string{"--provider", "anthropic", "--input", clitest.Golden("claude", "anthropic_response_unknown_block.json")},
			want: []string{"1 unmapped line(s) (block/storyboard 1)"}, notWants: []string{"understood", "looks wrong"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			storage := t.TempDir()
			r := clitest.Run(t, clitest.Plain(), append([]string{"--storage", storage, "record"}, tc.args...)...)
			if r.Code != tc.code {
				t.Fatalf("exit %d, want %d: %v", r.Code, tc.code, r)
			}
			var lines []string
			for _, l := range strings.Split(r.ErrOut, "\n") {
				if strings.HasPrefix(l, "twasm: ") {
					lines = append(lines, l)
				}
			}
			if tc.silent {
				if len(lines) != 0 {
					t.Fatalf("a clean recording said %q", lines)
				}
			} else if len(lines) != 1 {
				t.Fatalf("%d twasm: lines, want 1: %v", len(lines), r)
			}
			for _, w := range tc.want {
				if !strings.Contains(lines[0], w) {
					t.Errorf("%q lacks %q", lines[0], w)
				}
			}
			for _, w := range tc.notWants {
				if strings.Contains(r.ErrOut, w) {
					t.Errorf("stderr says %q: %s", w, r.ErrOut)
				}
			}
			clitest.Validate(t, clitest.TranscriptPath(storage, clitest.OnlyRun(t, storage)))
		})
	}

	t.Run("import", func(t *testing.T) {
		t.Parallel()
		storage := t.TempDir()
		r := clitest.Run(t, clitest.Plain(), "--storage", storage, "import", "--provider", "codex", clitest.Golden("codex", "exec_command.jsonl"), clitest.Example())
		if r.Code != 1 {
			t.Fatalf("exit %d, want 1: %v", r.Code, r)
		}
		if !strings.Contains(r.ErrOut, "twasm: "+clitest.Example()+": the codex plugin understood none") ||
			strings.Contains(r.ErrOut, "twasm: "+clitest.Golden("codex", "exec_command.jsonl")+":") {
			t.Errorf("stderr: %s", r.ErrOut)
		}
		if n := strings.Count(r.Out, "\n"); n != 2 {
			t.Errorf("%d runs listed, want both files imported:\n%s", n, r.Out)
		}
	})
}

package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGoldenCheckRefuses: golden check with zero cases fails (an empty
// directory, a wrong one, the parent of the per-provider directories); a
// .fault file on a case without a fault fails; a diff shows the fields
// that differ, not whole lines.
func TestGoldenCheckRefuses(t *testing.T) {
	t.Parallel()
	parent := filepath.Join(root, "testdata", "golden")
	wrong := t.TempDir()
	if err := os.Mkdir(filepath.Join(wrong, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{
		t.TempDir(): "no golden case",
		parent:      "subdirectories (",
		wrong:       "subdirectories (sub)",
	} {
		r := twasm(t, "golden", "check", "--provider", "claude", dir)
		if r.code != 2 || !strings.Contains(r.errOut, "no golden case") || !strings.Contains(r.errOut, want) {
			t.Errorf("golden check %s: %v", dir, r)
		}
	}

	cp := copyDir(t, filepath.Join(parent, "claude"))
	if err := os.WriteFile(filepath.Join(cp, "stream_json_tool_kinds.fault"), []byte("expects a fault\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := twasm(t, "golden", "check", cp)
	if r.code != 1 || !strings.Contains(r.out, "allows a fault but the case has none") {
		t.Errorf(".fault on a clean case: %v", r)
	}
	if err := os.Remove(filepath.Join(cp, "stream_json_tool_kinds.fault")); err != nil {
		t.Fatal(err)
	}

	g := filepath.Join(cp, "stream_json_tool_kinds.golden.jsonl")
	orig, err := os.ReadFile(g)
	if err != nil {
		t.Fatal(err)
	}
	// One field of a long line.
	var long []byte
	for _, l := range bytes.Split(orig, []byte("\n")) {
		if len(l) > 600 && bytes.Contains(l, []byte(`"fidelity":"agent_emitted"`)) {
			long = l
			break
		}
	}
	if long == nil {
		t.Fatal("no long line to tamper with")
	}
	tampered := bytes.Replace(orig, long, bytes.Replace(long, []byte(`"fidelity":"agent_emitted"`), []byte(`"fidelity":"inferred"`), 1), 1)
	if err := os.WriteFile(g, tampered, 0o600); err != nil {
		t.Fatal(err)
	}
	r = twasm(t, "golden", "check", cp)
	if r.code != 1 || !strings.Contains(r.out, `fidelity: "inferred" → "agent_emitted"`) {
		t.Fatalf("field diff: %v", r)
	}
	for _, l := range strings.Split(r.out, "\n") {
		if len(l) > 400 {
			t.Errorf("a diff line of %d bytes: %.200s…", len(l), l)
		}
	}
}

package goldencmd_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// goldenInputs lists the golden inputs of provider (every file that is
// not a .golden.jsonl).
func goldenInputs(t *testing.T, provider string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(clitest.Root, "testdata", "golden", provider, "*"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range m {
		// A README describes the cases (golden.Cases skips it).
		if !strings.HasSuffix(f, ".golden.jsonl") && !strings.HasPrefix(strings.ToUpper(filepath.Base(f)), "README") {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no golden inputs for %s", provider)
	}
	return out
}

// copyDir copies the regular files of src into a new directory named
// like src.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.Mkdir(dst, 0o700); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestGolden: check passes on the repository's cases, fails with a diff on
// a tampered copy, and update repairs the copy.
func TestGolden(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(clitest.Root, "testdata", "golden", "claude")
	n := len(goldenInputs(t, "claude"))
	r := clitest.RunOK(t, clitest.Plain(), "golden", "check", dir)
	want := "golden: " + strconv.Itoa(n) + " passed, 0 failed"
	if !strings.Contains(r.Out, want) {
		t.Errorf("golden check: %q, want %q", r.Out, want)
	}

	cp := copyDir(t, dir)
	g := filepath.Join(cp, "stream_json_tool_kinds.golden.jsonl")
	orig, err := os.ReadFile(g)
	if err != nil {
		t.Fatal(err)
	}
	tampered := bytes.Replace(orig, []byte(`"tool.call"`), []byte(`"tool.result"`), 1)
	if bytes.Equal(tampered, orig) {
		t.Fatal("nothing tampered")
	}
	if err := os.WriteFile(g, tampered, 0o600); err != nil {
		t.Fatal(err)
	}
	r = clitest.Run(t, clitest.Plain(), "golden", "check", cp)
	if r.Code != 1 || !strings.Contains(r.Out, "FAIL stream_json_tool_kinds") || !strings.Contains(r.Out, "golden: "+strconv.Itoa(n-1)+" passed, 1 failed") {
		t.Errorf("tampered: %v", r)
	}
	if !strings.Contains(r.Out, `event.type: "tool.result" → "tool.call"`) {
		t.Errorf("no diff: %s", r.Out)
	}
	r = clitest.RunOK(t, clitest.Plain(), "golden", "update", cp)
	if !strings.Contains(r.Out, "updated") {
		t.Errorf("golden update: %s", r.Out)
	}
	if b, _ := os.ReadFile(g); !bytes.Equal(b, orig) {
		t.Errorf("update did not restore the golden file")
	}
	clitest.RunOK(t, clitest.Plain(), "golden", "check", cp)
	r = clitest.Run(t, clitest.Plain(), "golden", "check", filepath.Join(t.TempDir(), "nope"))
	if r.Code != 2 {
		t.Errorf("check a missing dir: %v", r)
	}
}

// TestGoldenCheckRefuses: golden check with zero cases fails (an empty
// directory, a wrong one, the parent of the per-provider directories); a
// .fault file on a case without a fault fails; a diff shows the fields
// that differ, not whole lines.
func TestGoldenCheckRefuses(t *testing.T) {
	t.Parallel()
	parent := filepath.Join(clitest.Root, "testdata", "golden")
	wrong := t.TempDir()
	if err := os.Mkdir(filepath.Join(wrong, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{
		t.TempDir(): "no golden case",
		parent:      "subdirectories (",
		wrong:       "subdirectories (sub)",
	} {
		r := clitest.Run(t, clitest.Plain(), "golden", "check", "--provider", "claude", dir)
		if r.Code != 2 || !strings.Contains(r.ErrOut, "no golden case") || !strings.Contains(r.ErrOut, want) {
			t.Errorf("golden check %s: %v", dir, r)
		}
	}

	cp := copyDir(t, filepath.Join(parent, "claude"))
	if err := os.WriteFile(filepath.Join(cp, "stream_json_tool_kinds.fault"), []byte("expects a fault\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := clitest.Run(t, clitest.Plain(), "golden", "check", cp)
	if r.Code != 1 || !strings.Contains(r.Out, "allows a fault but the case has none") {
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
	r = clitest.Run(t, clitest.Plain(), "golden", "check", cp)
	if r.Code != 1 || !strings.Contains(r.Out, `fidelity: "inferred" → "agent_emitted"`) {
		t.Fatalf("field diff: %v", r)
	}
	for _, l := range strings.Split(r.Out, "\n") {
		if len(l) > 400 {
			t.Errorf("a diff line of %d bytes: %.200s…", len(l), l)
		}
	}
}

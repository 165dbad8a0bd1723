package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// goldenInputs lists the golden inputs of provider (every file that is
// not a .golden.jsonl).
func goldenInputs(t *testing.T, provider string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(root, "testdata", "golden", provider, "*"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range m {
		if !strings.HasSuffix(f, ".golden.jsonl") {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no golden inputs for %s", provider)
	}
	return out
}

// TestPlugins: plugins list and verify.
func TestPlugins(t *testing.T) {
	t.Parallel()
	r := twasmOK(t, "plugins", "list", "--json")
	var list []struct {
		Name      string   `json:"name"`
		Providers []string `json:"providers"`
		SHA256    string   `json:"sha256"`
		Origin    string   `json:"origin"`
	}
	for _, line := range strings.Split(strings.TrimSpace(r.out), "\n") {
		list = append(list, list[:0:0]...)
		var p struct {
			Name      string   `json:"name"`
			Providers []string `json:"providers"`
			SHA256    string   `json:"sha256"`
			Origin    string   `json:"origin"`
		}
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatalf("plugins list --json: %v\n%s", err, r.out)
		}
		list = append(list, p)
	}
	found := map[string]bool{}
	for _, p := range list {
		if p.Origin == "bundled" && len(p.SHA256) == 64 {
			found[p.Name] = true
		}
	}
	for _, want := range bundledPlugins {
		if !found[want] {
			t.Errorf("%s is not listed as bundled with a sha256: %s", want, r.out)
		}
	}
	r = twasmOK(t, "plugins", "list")
	if !strings.Contains(r.out, "claude") || !strings.Contains(r.out, "bundled") {
		t.Errorf("plugins list: %s", r.out)
	}

	good := filepath.Join(root, "internal", "bundled", "wasm", "claude.wasm")
	r = twasmOK(t, "plugins", "verify", good)
	if !strings.Contains(r.out, ": ok") || !strings.Contains(r.out, "sha256:") {
		t.Errorf("verify good: %s", r.out)
	}
	r = twasmOK(t, "plugins", "verify", "--json", good)
	if !json.Valid([]byte(r.out)) {
		t.Errorf("verify --json: %s", r.out)
	}
	bad := filepath.Join(t.TempDir(), "bad.wasm")
	if err := os.WriteFile(bad, []byte("#!/bin/sh\necho not wasm\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = twasm(t, "plugins", "verify", bad)
	if r.code == 0 || !strings.Contains(r.out+r.errOut, "not a valid WebAssembly module") {
		t.Errorf("verify a non-wasm file: %v", r)
	}
	r = twasm(t, "plugins", "verify", filepath.Join(t.TempDir(), "missing.wasm"))
	if r.code != 2 || !strings.Contains(r.errOut, "missing.wasm") {
		t.Errorf("verify a missing file: %v", r)
	}
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
	dir := filepath.Join(root, "testdata", "golden", "claude")
	n := len(goldenInputs(t, "claude"))
	r := twasmOK(t, "golden", "check", dir)
	want := "golden: " + itoa(n) + " passed, 0 failed"
	if !strings.Contains(r.out, want) {
		t.Errorf("golden check: %q, want %q", r.out, want)
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
	r = twasm(t, "golden", "check", cp)
	if r.code != 1 || !strings.Contains(r.out, "FAIL stream_json_tool_kinds") || !strings.Contains(r.out, "golden: "+itoa(n-1)+" passed, 1 failed") {
		t.Errorf("tampered: %v", r)
	}
	if !strings.Contains(r.out, `event.type: "tool.result" → "tool.call"`) {
		t.Errorf("no diff: %s", r.out)
	}
	r = twasmOK(t, "golden", "update", cp)
	if !strings.Contains(r.out, "updated") {
		t.Errorf("golden update: %s", r.out)
	}
	if b, _ := os.ReadFile(g); !bytes.Equal(b, orig) {
		t.Errorf("update did not restore the golden file")
	}
	twasmOK(t, "golden", "check", cp)
	r = twasm(t, "golden", "check", filepath.Join(t.TempDir(), "nope"))
	if r.code != 2 {
		t.Errorf("check a missing dir: %v", r)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

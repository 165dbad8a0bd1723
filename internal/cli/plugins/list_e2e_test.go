package plugins_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// TestPlugins: plugins list and verify.
func TestPlugins(t *testing.T) {
	t.Parallel()
	r := clitest.RunOK(t, clitest.Plain(), "plugins", "list", "--json")
	var list []struct {
		Name      string   `json:"name"`
		Providers []string `json:"providers"`
		SHA256    string   `json:"sha256"`
		Origin    string   `json:"origin"`
	}
	for _, line := range strings.Split(strings.TrimSpace(r.Out), "\n") {
		list = append(list, list[:0:0]...)
		var p struct {
			Name      string   `json:"name"`
			Providers []string `json:"providers"`
			SHA256    string   `json:"sha256"`
			Origin    string   `json:"origin"`
		}
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatalf("plugins list --json: %v\n%s", err, r.Out)
		}
		list = append(list, p)
	}
	found := map[string]bool{}
	for _, p := range list {
		if p.Origin == "bundled" && len(p.SHA256) == 64 {
			found[p.Name] = true
		}
	}
	// Every plugin of the repository (plugins/*/wasm), as make bundles them.
	mains, err := filepath.Glob(filepath.Join(clitest.Root, "plugins", "*", "wasm", "main.go"))
	if err != nil || len(mains) == 0 {
		t.Fatalf("the repository's plugins: %v %v", mains, err)
	}
	for _, m := range mains {
		if want := filepath.Base(filepath.Dir(filepath.Dir(m))); !found[want] {
			t.Errorf("%s is not listed as bundled with a sha256: %s", want, r.Out)
		}
	}
	r = clitest.RunOK(t, clitest.Plain(), "plugins", "list")
	if !strings.Contains(r.Out, "claude") || !strings.Contains(r.Out, "bundled") {
		t.Errorf("plugins list: %s", r.Out)
	}

	good := filepath.Join(clitest.Root, "internal", "bundled", "wasm", "claude.wasm")
	r = clitest.RunOK(t, clitest.Plain(), "plugins", "verify", good)
	if !strings.Contains(r.Out, ": ok") || !strings.Contains(r.Out, "sha256:") {
		t.Errorf("verify good: %s", r.Out)
	}
	r = clitest.RunOK(t, clitest.Plain(), "plugins", "verify", "--json", good)
	if !json.Valid([]byte(r.Out)) {
		t.Errorf("verify --json: %s", r.Out)
	}
	bad := filepath.Join(t.TempDir(), "bad.wasm")
	if err := os.WriteFile(bad, []byte("#!/bin/sh\necho not wasm\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = clitest.Run(t, clitest.Plain(), "plugins", "verify", bad)
	if r.Code == 0 || !strings.Contains(r.Out+r.ErrOut, "not a valid WebAssembly module") {
		t.Errorf("verify a non-wasm file: %v", r)
	}
	r = clitest.Run(t, clitest.Plain(), "plugins", "verify", filepath.Join(t.TempDir(), "missing.wasm"))
	if r.Code != 2 || !strings.Contains(r.ErrOut, "missing.wasm") {
		t.Errorf("verify a missing file: %v", r)
	}
}

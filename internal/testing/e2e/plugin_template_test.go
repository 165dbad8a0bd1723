package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/tools/wasmbuild"
)

// TestPluginTemplate: examples/plugin-template is a plugin an author can
// copy out of the repository and use as it is. Copied to a directory
// outside the repository with its go.mod pointed at this checkout, its
// own `go test` passes (sdktest's checks over its golden cases and
// capture), its Makefile builds it with TinyGo (found as the Makefile
// finds it: $TINYGO, else the checkout's .ci/install-tinygo, else PATH)
// and with Go, and `twasm golden check --plugin` passes both modules;
// dropped into a plugin directory, `twasm doctor` lists the store its
// manifest declares and `twasm sync` archives a session from it, a valid
// transcript of the session's messages.
func TestPluginTemplate(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute) // bounds a hang only
	defer cancel()
	tmpl := filepath.Join(root, "examples", "plugin-template")
	if _, ok := wasmbuild.FindTinyGo(ctx, root); !ok {
		t.Skip("no TinyGo (.ci/install-tinygo installs it; CI always has it)")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make on PATH")
	}
	dir := filepath.Join(t.TempDir(), "twasm-plugin-myagent")
	if err := os.CopyFS(dir, os.DirFS(tmpl)); err != nil {
		t.Fatal(err)
	}
	for _, built := range []string{"myagent.wasm", "myagent-go.wasm"} {
		// Build output of a make run in the checkout: the copy builds its own.
		if err := os.Remove(filepath.Join(dir, built)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
	}

	// The author's module, outside this one: no workspace, no module
	// download (everything it needs is in this checkout and its go.sum).
	goEnv := append(os.Environ(), "GOWORK=off", "GOPROXY=off", "GOFLAGS=")
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir, cmd.Env = dir, goEnv
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("go", "mod", "edit", "-replace=github.com/twasm/twasm="+root)
	out := run("go", "test", "-count=1", "-v", "./...")
	for _, want := range []string{"--- PASS: TestPlugin/golden/session", "--- PASS: TestPlugin/conformance/session_edit.jsonl", "--- PASS: TestPlugin/batching/", "--- PASS: TestKeys"} {
		if !strings.Contains(out, want) {
			t.Errorf("the template's go test does not say %q:\n%s", want, out)
		}
	}
	out = run("make", "golden", "TWASM="+binary)
	if n := len(regexp.MustCompile(`golden: [1-9][0-9]* passed, 0 failed`).FindAllString(out, -1)); n != 2 {
		t.Errorf("make golden: want every case passed by both modules:\n%s", out)
	}
	wasm := readFile(t, filepath.Join(dir, "myagent.wasm"))

	h := newFakeHome(t)
	h.put(filepath.Join(".config", "twasm", "plugins", "myagent.wasm"), wasm, time.Hour)
	session := readFile(t, filepath.Join(dir, "testdata", "golden", "session.jsonl"))
	h.put(filepath.Join(".myagent", "sessions", "proj", "s-7f3a.jsonl"), session, time.Hour)

	r := h.ok("doctor", "--json")
	var doc struct {
		Stores []struct {
			Name, Provider, Plugin, Dir string
			Found                       bool
			Sessions                    int
			RetentionDays               int `json:"retention_days"`
		}
	}
	if err := json.Unmarshal([]byte(r.out), &doc); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, r.out)
	}
	found := false
	for _, s := range doc.Stores {
		if s.Name != "MyAgent sessions" {
			continue
		}
		found = true
		if !s.Found || s.Sessions != 1 || s.Provider != "myagent" || s.Plugin != "myagent" ||
			s.Dir != filepath.Join(h.dir, ".myagent", "sessions") || s.RetentionDays != 30 {
			t.Errorf("the template's store: %+v", s)
		}
	}
	if !found {
		t.Fatalf("doctor does not list the template's store:\n%s", r.out)
	}

	r = h.ok("sync")
	got := outcomes(r.out)
	if len(got["new"]) != 1 || !strings.Contains(r.out, "\tmyagent\t") {
		t.Fatalf("sync: %v", r)
	}
	f := transcriptPath(h.stor, got["new"][0])
	validate(t, f)
	b := string(readFile(t, f))
	for _, want := range []string{"How many Go files are there?", "There are 42 Go files.", `"call_id":"c1"`, `"session_id":"s-7f3a"`} {
		if !strings.Contains(b, want) {
			t.Errorf("the archived session's transcript has no %s", want)
		}
	}
}

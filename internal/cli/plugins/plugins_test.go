package plugins

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/bundled"
	"github.com/twasm/twasm/internal/testing/cmdtest"
)

func run(t *testing.T, e *cmdtest.Env, argv ...string) (string, error) {
	t.Helper()
	e.Out.Reset()
	e.ErrOut.Reset()
	cmd := NewCmdPlugins(e.F)
	cmd.SetArgs(argv)
	cmd.SetOut(e.ErrOut)
	cmd.SetErr(e.ErrOut)
	err := cmd.ExecuteContext(context.Background())
	return e.Out.String(), err
}

// list names every bundled plugin, as a table and as JSON Lines; an
// external plugin dropped in --plugin-path is listed with where it came
// from.
func TestList(t *testing.T) {
	ps, err := bundled.Plugins()
	if err != nil || len(ps) == 0 {
		t.Fatal("built without the bundled plugins (run make):", err)
	}
	e := cmdtest.New(t)
	dir := t.TempDir()
	ext, err := ps[0].Wasm()
	if err != nil {
		t.Fatal(err)
	}
	// A bundled module made another file: a custom section appended
	// (ignored by the runtime, but another sha256).
	ext = append(ext, 0x00, 0x05, 0x04, 'm', 'i', 'n', 'e')
	if err := os.WriteFile(filepath.Join(dir, "mine.wasm"), ext, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, e, "list", "--json", "--plugin-path", dir)
	if err != nil {
		t.Fatalf("list --json: %v\n%s", err, e.ErrOut)
	}
	items := cmdtest.JSONLines[infoJSON](t, []byte(out))
	names := map[string]bool{}
	external := 0
	for _, i := range items {
		names[i.Name] = true
		if strings.Contains(i.Origin, dir) {
			external++
		}
		if i.Error == "" && (i.SHA256 == "" || len(i.Providers) == 0) {
			t.Errorf("%s: incomplete entry %+v", i.Name, i)
		}
	}
	for _, p := range ps {
		if p.Recorded != nil && !names[p.Recorded.Manifest.Name] {
			t.Errorf("list --json does not name bundled plugin %s", p.Recorded.Manifest.Name)
		}
	}
	if external != 1 {
		t.Errorf("%d entries come from %s, want 1:\n%s", external, dir, out)
	}
	table, err := run(t, e, "list", "--plugin-path", dir)
	if err != nil || !strings.HasPrefix(table, "NAME") || strings.Count(table, "\n") != len(items)+1 {
		t.Errorf("list: %v\n%s", err, table)
	}
}

// verify accepts a bundled module and refuses a file that is not one,
// saying why.
func TestVerify(t *testing.T) {
	ps, err := bundled.Plugins()
	if err != nil || len(ps) == 0 {
		t.Fatal("built without the bundled plugins (run make):", err)
	}
	e := cmdtest.New(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.wasm")
	b, _ := ps[0].Wasm()
	if err := os.WriteFile(good, b, 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.wasm")
	if err := os.WriteFile(bad, []byte("\x00asm not really"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, e, "verify", good); err != nil {
		t.Errorf("verify of a bundled module: %v\n%s%s", err, out, e.ErrOut)
	}
	if out, err := run(t, e, "verify", bad); err == nil {
		t.Errorf("verify of a broken module passed:\n%s", out)
	}
	if _, err := run(t, e, "verify"); err == nil || !strings.Contains(err.Error(), "accepts 1 arg") {
		t.Errorf("verify without a file: %v", err)
	}
}

package views

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/viewstest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixtureTree writes the shared fixture and builds its tree.
func fixtureTree(t *testing.T) (*RunNode, string) {
	t.Helper()
	dir := viewstest.WriteStore(t, t.TempDir())
	run, err := LoadFile(filepath.Join(dir, viewstest.Root+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return BuildTree(Loader{Dir: dir}, run), dir
}

func writeRun(t *testing.T, dir string, b *viewstest.Builder) string {
	t.Helper()
	p := filepath.Join(dir, b.RunID+".jsonl")
	viewstest.WriteFile(t, p, b.Bytes(t))
	return p
}

func loadTree(t *testing.T, dir, id string) *RunNode {
	t.Helper()
	run, err := Loader{Dir: dir}.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	return BuildTree(Loader{Dir: dir}, run)
}

func eq[T comparable](t *testing.T, got, want T, what string) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

func contains(t *testing.T, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("output lacks %q\n--- output ---\n%s", sub, s)
		}
	}
}

func lacks(t *testing.T, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			t.Errorf("output has %q\n--- output ---\n%s", sub, s)
		}
	}
}

func appendFile(t *testing.T, path string, data string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
}

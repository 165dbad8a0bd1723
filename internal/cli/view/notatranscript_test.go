package view_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/clitest"
)

// TestNotATranscript: a file that is not a transcript (text, binary,
// empty, another program's JSON Lines) is refused with exit 2 by every
// read command, as is a --path that selects no step.
func TestNotATranscript(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string][]byte{
		"passwd":      []byte("root:x:0:0:root:/root:/bin/bash\n"),
		"blob.jsonl":  {0x7f, 'E', 'L', 'F', 0, 1, '\n'},
		"empty.jsonl": nil,
	}
	paths := []string{clitest.Example()}
	for name, b := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	for _, p := range paths {
		for _, cmd := range []string{"tree", "view", "tools", "stats"} {
			r := clitest.Run(t, clitest.Plain(), cmd, p)
			if r.Code != 2 || !strings.Contains(r.ErrOut, "not a twasm transcript") || r.Out != "" {
				t.Errorf("%s %s: %v", cmd, filepath.Base(p), r)
			}
		}
	}
	storage := t.TempDir()
	id := clitest.Record(t, storage, "claude", clitest.Example())
	r := clitest.Run(t, clitest.Plain(), "--storage", storage, "view", "--path", "nosuch", id)
	if r.Code != 2 || !strings.Contains(r.ErrOut, `--path "nosuch"`) || !strings.Contains(r.ErrOut, "agent") || r.Out != "" {
		t.Errorf("view --path nosuch: %v", r)
	}
	clitest.RunOK(t, clitest.Plain(), "--storage", storage, "view", "--path", "agent", id)
}

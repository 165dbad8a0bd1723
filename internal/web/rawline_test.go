package web

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/internal/rawfile"
)

// TestNthLineBothKinds: the raw line behind an event is read from a raw
// capture of either kind, an older twasm's plain one or a framed one
// spread over several frames; a framed capture cut short reports it.
func TestNthLineBothKinds(t *testing.T) {
	dir := t.TempDir()
	lines := []string{`{"a":1}`, `{"b":2}`, `{"c":3}`}
	for _, name := range []string{"agent.0.0.x.raw", "agent.0.0.x.raw.zst"} {
		p := filepath.Join(dir, name)
		w, err := rawfile.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			w.Write([]byte(l + "\n"))
			if err := w.Flush(); err != nil { // a frame per line
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		for i, want := range lines {
			if got, err := nthLine(p, i+1); err != nil || got != want {
				t.Errorf("%s line %d: %q, %v", name, i+1, got, err)
			}
		}
		if _, err := nthLine(p, 4); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s line 4: %v", name, err)
		}
	}
	p := filepath.Join(dir, "agent.0.0.x.raw.zst")
	st, _ := os.Stat(p)
	os.Truncate(p, st.Size()-2)
	if got, err := nthLine(p, 2); err != nil || got != lines[1] {
		t.Errorf("line 2 before the cut: %q, %v", got, err)
	}
	if _, err := nthLine(p, 3); !errors.Is(err, rawfile.ErrTorn) {
		t.Errorf("line 3, in the frame cut short: %v, want ErrTorn", err)
	}
}

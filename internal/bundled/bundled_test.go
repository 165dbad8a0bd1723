package bundled

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

func TestFilesAreWasmOnly(t *testing.T) {
	for name, b := range Files() {
		if !strings.HasSuffix(name, ".wasm") {
			t.Errorf("%s is not a .wasm file", name)
		}
		if !bytes.HasPrefix(b, []byte("\x00asm")) {
			t.Errorf("%s does not start with the wasm magic", name)
		}
	}
}

// TestRecordsMatchTheModules checks the build's manifests file against the
// embedded modules: a stale record would make the host refuse a plugin.
func TestRecordsMatchTheModules(t *testing.T) {
	ps, err := Plugins()
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) == 0 {
		t.Skip("no bundled plugins were built (run make)")
	}
	for _, p := range ps {
		if p.Recorded == nil {
			t.Skipf("%s has no record: the modules were built without make", p.File)
		}
		b, err := p.Wasm()
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if p.Recorded.SHA256 != hex.EncodeToString(sum[:]) || p.Recorded.Size != len(b) {
			t.Errorf("%s: recorded sha256 %s size %d, embedded %x size %d: rebuild with make", p.File, p.Recorded.SHA256, p.Recorded.Size, sum, len(b))
		}
		if strings.TrimSuffix(p.File, ".wasm") != p.Recorded.Manifest.Name {
			t.Errorf("%s: records plugin %q", p.File, p.Recorded.Manifest.Name)
		}
	}
}

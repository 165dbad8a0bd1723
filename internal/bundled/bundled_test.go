package bundled

import (
	"bytes"
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

//go:build !wasip1

package opencode_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/normalize"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/opencode"
)

// seeds are the golden inputs.
func seeds(t testing.TB) [][]byte {
	var out [][]byte
	files, _ := filepath.Glob(filepath.Join(goldenDir, "*.jsonl"))
	for _, f := range files {
		if strings.HasSuffix(f, ".golden.jsonl") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// FuzzOpenCode: arbitrary bytes never make the plugin fault, through the
// host pipeline or the bare driver (plugintest.Fuzz).
func FuzzOpenCode(f *testing.F) {
	plugintest.Fuzz(f, opencode.Plugin, normalize.Options{Provider: "opencode"}, append(seeds(f),
		[]byte(`{"$twasm":"row","table":"part","key":"p","version":1,"row":{"message_id":"m","message":{"role":"assistant","error":{"name":7}},"data":{"type":"tool","state":{"status":"completed","input":[1],"metadata":{"exit":"x"}}}}}`+"\n"),
		[]byte(`{"$twasm":"row","table":"part","key":"p","version":1,"row":{"message_id":"m","data":{"type":"step-finish","tokens":{"input":1e400,"cache":[]},"cost":"free"}}}`+"\n"),
		[]byte(`{"type":"text","part":{"messageID":null,"type":"text","text":7}}`+"\n"+`{"type":"error","error":null}`),
	))
}

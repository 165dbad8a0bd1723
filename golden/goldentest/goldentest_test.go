package goldentest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/golden"
)

type unmapAll struct{}

func (unmapAll) Line(_ *sdk.Line, out *sdk.Out) error { out.Unmapped(sdk.S("x")); return nil }
func (unmapAll) End(*sdk.Out) error                   { return nil }

var unmapAllPlugin = capture.NativePlugin(sdk.Plugin{Manifest: abi.Manifest{Name: "u"}, New: func(abi.BeginOptions) sdk.Normalizer { return unmapAll{} }})

func TestGoldenSubtests(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a.jsonl", "b.jsonl"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("line\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// First run writes the expectations, the second checks them.
	Test(t, dir, unmapAllPlugin, golden.Options{Provider: "p", Update: true})
	for _, n := range []string{"a", "b"} {
		if _, err := os.Stat(filepath.Join(dir, n+".golden.jsonl")); err != nil {
			t.Fatalf("expectation %s not written: %v", n, err)
		}
	}
	Test(t, dir, unmapAllPlugin, golden.Options{Provider: "p"})
}

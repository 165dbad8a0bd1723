//go:build !wasip1

package openai_test

import (
	"context"
	"os"
	"testing"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/golden"
	"github.com/twasm/twasm/plugins/openai"
)

// TestDebugRender prints the golden rendering of the file named by
// OPENAI_RENDER: a tool for reviewing a capture by eye.
func TestDebugRender(t *testing.T) {
	f := os.Getenv("OPENAI_RENDER")
	if f == "" {
		t.Skip("set OPENAI_RENDER to a raw capture")
	}
	raw, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	got, err := golden.Normalize(context.Background(), capture.NativePlugin(openai.Plugin), raw, golden.Options{Provider: "openai"})
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout.Write(got)
}

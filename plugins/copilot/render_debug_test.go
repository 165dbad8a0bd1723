//go:build !wasip1

package copilot_test

import (
	"context"
	"os"
	"testing"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/golden"
	"github.com/twasm/twasm/plugins/copilot"
)

// TestDebugRender prints the golden rendering of the file named by
// COPILOT_RENDER (a review aid for captures that are not golden cases).
func TestDebugRender(t *testing.T) {
	f := os.Getenv("COPILOT_RENDER")
	if f == "" {
		t.Skip("set COPILOT_RENDER=<file> to print its rendering")
	}
	raw, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	got, err := golden.Normalize(context.Background(), capture.NativePlugin(copilot.Plugin), raw, golden.Options{Provider: "copilot"})
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout.Write(got)
}

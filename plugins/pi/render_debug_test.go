//go:build !wasip1

package pi_test

import (
	"context"
	"os"
	"testing"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/golden"
	"github.com/twasm/twasm/plugins/pi"
)

// TestDebugRender prints the golden rendering of the file named by
// PI_RENDER (a review aid for captures that are not golden cases).
func TestDebugRender(t *testing.T) {
	f := os.Getenv("PI_RENDER")
	if f == "" {
		t.Skip("set PI_RENDER=<file> to print its rendering")
	}
	raw, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	got, err := golden.Normalize(context.Background(), capture.NativePlugin(pi.Plugin), raw, golden.Options{Provider: "pi"})
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout.Write(got)
}

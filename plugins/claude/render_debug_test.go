//go:build !wasip1

package claude_test

import (
	"context"
	"os"
	"testing"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/golden"
	"github.com/twasm/twasm/plugins/claude"
)

func TestDebugRender(t *testing.T) {
	f := os.Getenv("CLAUDE_RENDER")
	if f == "" {
		t.Skip()
	}
	raw, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	got, err := golden.Normalize(context.Background(), capture.NativePlugin(claude.Plugin), raw, golden.Options{Provider: "claude"})
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout.Write(got)
}

//go:build !wasip1

package aider_test

import (
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/testing/plugintest"
	"github.com/twasm/twasm/plugins/aider"
)

// captures are the Aider chat histories of testdata/captures/aider.
func captures(tb testing.TB) []string { return plugintest.Captures(tb, "aider", "*.md") }

// FuzzAider: arbitrary bytes never make the plugin fault, through the
// host pipeline or the bare driver (sdktest.Fuzz).
func FuzzAider(f *testing.F) {
	sdktest.Fuzz(f, aider.Plugin, sdktest.Options{Provider: "aider", Golden: goldenDir, Captures: captures(f)},
		[]byte("# aider chat started at 2024-01-01 00:00:00\n#### hi\n\nfile.go\n```go\n<<<<<<< SEARCH\n=======\n>>>>>>> REPLACE\n```\n> Tokens: 1e400k sent, -3 received, ,, 9.9M cache hit. Cost: $-1 message, $x session.\n> Applied edit to \xff\"\n> Commit abcdef0\n> (Y)es/(N)o ]:\n"),
		[]byte("> litellm.:Error\n>\n####\n#### \r\n\r\n{\"type\":\"x\"}\n"),
	)
}

//go:build !wasip1

package aider_test

import (
	"context"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/aider"
)

// runSession runs the plugin over a history of one session started at
// start (Aider's "YYYY-MM-DD HH:MM:SS") holding lines, through the host's
// pipeline, and fails the test on a line nothing accounted for.
func runSession(t *testing.T, start string, lines ...string) *sdktest.Result {
	t.Helper()
	raw := "# aider chat started at " + start + "\n\n" + strings.Join(lines, "\n") + "\n"
	r, err := sdktest.Run(context.Background(), aider.Plugin, "aider", []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if r.SilentN != 0 {
		t.Errorf("%d silent line(s)", r.SilentN)
	}
	return r
}

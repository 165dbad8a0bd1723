package plugintest

import (
	"context"
	"strconv"
	"testing"

	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/golden"
)

// CheckGoldenBatching runs every golden case of dir natively with p as a
// live agent's output arrives, one line a call, and in batches of three
// lines (a message, a document or a tool call cut across calls), and
// fails unless each gives the golden file's bytes, as the full batches of
// the golden run do. A plugin, or the SDK under it, that kept a value of
// one call into the next (a span, an abi.Value, a string aliasing the
// line) reads another line's bytes there and shows here.
func CheckGoldenBatching(t *testing.T, dir, provider string, p sdk.Plugin) {
	t.Helper()
	for _, lines := range []int{1, 3} {
		outs, err := golden.Check(context.Background(), dir, capture.NativePlugin(p), golden.Options{Provider: provider, BatchLines: lines})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range outs {
			t.Run(o.Name+"/batch"+strconv.Itoa(lines), func(t *testing.T) {
				switch {
				case o.Err != nil:
					t.Fatal(o.Err)
				case o.Diff != "":
					t.Errorf("%d lines a call differ from %s:\n%s", lines, o.Golden, o.Diff)
				}
			})
		}
	}
}

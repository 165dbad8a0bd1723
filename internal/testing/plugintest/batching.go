package plugintest

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/twasm/twasm/abi/sdk"
	"github.com/twasm/twasm/golden"
	"github.com/twasm/twasm/internal/normalize"
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
	cases, err := golden.Cases(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		want, err := os.ReadFile(c.Golden)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(c.Input)
		if err != nil {
			t.Fatal(err)
		}
		for _, lines := range []int{1, 3} {
			t.Run(c.Name+"/batch"+strconv.Itoa(lines), func(t *testing.T) {
				var col normalize.Collector
				res, err := normalize.Run(context.Background(), normalize.NativeInstance(p), bytes.NewReader(raw), &col, normalize.Options{
					Provider:   provider,
					Now:        func() time.Time { return golden.Epoch },
					BatchLines: lines,
				})
				if err != nil {
					t.Fatal(err)
				}
				got, err := golden.Render(col.Items, res)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(want, got) {
					t.Errorf("%d lines a call differ from %s:\n%s", lines, c.Golden, golden.Diff(want, got))
				}
			})
		}
	}
}

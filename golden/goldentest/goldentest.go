package goldentest

import (
	"context"
	"testing"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/golden"
)

// Test runs golden.Check of dir as subtests of t: one per case, failing
// with the diff. A plugin's test declares its own -update flag and passes
// it in opts.Update.
func Test(t *testing.T, dir string, p capture.Plugin, opts golden.Options) {
	t.Helper()
	outs, err := golden.Check(context.Background(), dir, p, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) == 0 {
		t.Fatalf("no golden cases in %s", dir)
	}
	for _, o := range outs {
		t.Run(o.Name, func(t *testing.T) {
			switch {
			case o.Err != nil:
				t.Fatal(o.Err)
			case o.Updated:
				t.Logf("updated %s", o.Golden)
			case o.Diff != "":
				t.Errorf("%s differs from the plugin's output (run with -update to accept, then review the diff):\n%s", o.Golden, o.Diff)
			}
		})
	}
}

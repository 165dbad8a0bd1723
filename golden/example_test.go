package golden_test

import (
	"context"
	"fmt"
	"log"

	"github.com/twasm/twasm/capture"
	"github.com/twasm/twasm/golden"
	"github.com/twasm/twasm/plugins/claude"
)

// A plugin author checks the plugin against its golden directory: here
// the Claude plugin, compiled in, against the repository's Claude cases.
// In a test, goldentest.Test does the same as subtests, and
// Options.Update from a -update flag rewrites the expectations.
func ExampleCheck() {
	outs, err := golden.Check(context.Background(), "../testdata/golden/claude",
		capture.NativePlugin(claude.Plugin), golden.Options{Provider: "claude"})
	if err != nil {
		log.Fatal(err)
	}
	failed := 0
	for _, o := range outs {
		if !o.OK() {
			failed++
			fmt.Println("FAIL", o.Name, o.Err, o.Diff)
		}
	}
	fmt.Println("cases checked:", len(outs) > 0, "failed:", failed)
	// Output:
	// cases checked: true failed: 0
}

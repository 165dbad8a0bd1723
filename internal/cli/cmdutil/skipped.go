package cmdutil

import (
	"fmt"
	"io"

	"github.com/twasm/twasm/internal/runtree"
)

// WarnSkipped says on w which child runs linked from the run at parent an
// export left out and why (runtree's rules); the rest of the tree was
// exported.
func WarnSkipped(w io.Writer, parent string, skipped []*runtree.ChildError) {
	for _, ce := range skipped {
		fmt.Fprintf(w, "warning: %s: child run %s not exported: %s\n", parent, ce.Child, ce)
	}
}

//go:build wasip1 && twasm.boundarygc

package sdk

import "runtime"

// collect runs at the end of every export, the one point where no Go frame
// holds a heap pointer that globals do not: a runtime built with
// twasm.boundarygc (see RATIONALE) never collects inside a call, only
// here, and only when the heap ran out since the last collection.
func collect() { runtime.GC() }

//go:build wasip1 && !twasm.boundarygc

package sdk

// collect does nothing: the runtime collects whenever it runs out of heap.
func collect() {}

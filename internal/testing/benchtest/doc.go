// Package benchtest holds what benchmarks share to report honest
// figures on a busy machine: the process's CPU time (the wall clock
// counts the other processes' work too) and the median of samples.
package benchtest

// Package benchtest holds what benchmarks share to report honest
// figures on a busy machine: the process's CPU time (the wall clock
// counts the other processes' work too), the median of samples, and
// distinct copies of a corpus of real fixtures (Copies: each copy's ids
// its own), so that a figure or a memory bound measured on a long input
// is not measured on replays a plugin skips and keeps no state for.
package benchtest

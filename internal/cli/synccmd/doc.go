// Package synccmd implements `twasm sync` (archive every agent's native
// session stores into runs, once, growing a run as its session grows) and
// `twasm doctor` (which stores exist, what is not archived yet, and what
// an agent's retention will delete soon). The archive itself is package
// internal/archive.
package synccmd

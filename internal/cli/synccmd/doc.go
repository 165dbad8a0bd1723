// Package synccmd implements `twasm sync` (archive every agent's native
// session stores into runs, once, growing a run as its session grows) and
// `twasm doctor` (which stores exist, what is not archived yet, and what
// an agent's retention will delete soon). The archive itself is package
// internal/archive. Sync first settles what a killed sync or import left
// unfinished (archive.Archiver.Recover) and prints it as any outcome;
// doctor names it. A part whose plugin understood none of its lines is
// said on stderr, as record and import say it, and makes sync exit 1.
// Doctor checks every session run's raw capture against its source
// (archive.CheckRaw) and reports each damaged run as an error; sync
// --repair archives those whose file holds their bytes again
// (archive.Archiver.Repair) and exits 1 when one is kept damaged.
package synccmd

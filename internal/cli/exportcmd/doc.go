// Package exportcmd implements `twasm export FORMAT RUN...`: the command
// side of package export (flag parsing, run resolution, the OTLP exporter
// set up from flags and the standard OTEL_* environment). The OTLP
// pipeline is also what `record --otlp` uses.
//
// `export otlp --all` and `export dir --all` export the top-level runs ls
// lists (Targets, allTargets: each run's digest from the index, as ls
// reads it, and views.Superseded over them), their child runs with them:
// a run another stands for (a recorded run whose session sync archived,
// a renormalize original, a damaged archive repaired) is left out, and
// how many is said on stderr, so that a collector counts a session once,
// as ls, stats, usage and search do. --superseded (only with --all)
// exports every top-level run; a run named as an argument is exported
// whatever stands for it.
package exportcmd
